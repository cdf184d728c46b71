"""The letter body as Markdown, with code fences that never guess their language.

Textual's ``MarkdownFence`` asks Pygments to guess the language of an unlabelled fence,
which imports every lexer (seconds, the first time) and runs every one of them over the
code: a hostile body could make that slow on purpose. Here an unlabelled or very long
fence is shown as plain text; a labelled one is highlighted as labelled.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownFence

MAX_HIGHLIGHT = 20_000


class LetterFence(MarkdownFence):
    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        if not language or len(code) > MAX_HIGHLIGHT:
            return Content(code)
        return super().highlight(code, language, ansi=ansi, dark=dark)


class LetterBody(Markdown):
    BLOCKS = {**Markdown.BLOCKS, "fence": LetterFence, "code_block": LetterFence}

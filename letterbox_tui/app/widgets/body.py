"""The letter body: as written by default, as Markdown on request.

Letters are records, so the body is shown as its writer wrote it: every line where it was,
wrapped to the pane, sanitized, nothing interpreted (``[link](http://…)`` stays those
characters). ``M`` toggles a Markdown rendering, which is kept honest and bounded:

- a link's target is always shown beside its text (``link ⟨http://…⟩``): a rendering
  never hides where a link goes;
- a table with more than ``MAX_TABLE_CELLS`` cells is shown as the text it was written as
  (a fence), because Textual mounts a widget per cell (a 20 KB table took 2.3 s on the UI
  thread here); parsing itself runs in Textual's executor;
- an unlabelled or very long code fence is never handed to Pygments to guess its
  language (that imports every lexer and runs each over the code).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual.content import Content
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownFence

MAX_HIGHLIGHT = 20_000
#: tables with more cells than this are shown as written (one fence), not as a grid
MAX_TABLE_CELLS = 240


class LetterFence(MarkdownFence):
    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        if not language or len(code) > MAX_HIGHLIGHT:
            return Content(code)
        return super().highlight(code, language, ansi=ansi, dark=dark)


def _show_link_targets(state) -> None:
    """After every link, the target as text; after every image, its source."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        out: list[Token] = []
        stack: list[tuple[str, int]] = []
        for child in block.children:
            out.append(child)
            if child.type == "link_open":
                stack.append((str(child.attrs.get("href", "")), len(out)))
            elif child.type == "link_close" and stack:
                href, start = stack.pop()
                text = "".join(t.content for t in out[start:-1] if t.type in ("text", "code_inline"))
                if href and text.strip() != href and text.strip() != href.removeprefix("mailto:"):
                    out.append(_text(f" ⟨{href}⟩"))
            elif child.type == "image":
                src = str(child.attrs.get("src", ""))
                if src:
                    out.append(_text(f" ⟨{src}⟩"))
        block.children = out


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _bound_tables(state) -> None:
    """A table over ``MAX_TABLE_CELLS`` cells becomes a fence of its source lines."""
    tokens = state.tokens
    lines = state.src.split("\n")
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type != "table_open":
            out.append(tok)
            i += 1
            continue
        j = i
        cells = 0
        while j < len(tokens) and tokens[j].type != "table_close":
            if tokens[j].type in ("td_open", "th_open"):
                cells += 1
            j += 1
        if cells <= MAX_TABLE_CELLS or not tok.map:
            out.extend(tokens[i:j + 1])
        else:
            fence = Token("fence", "code", 0, block=True)
            fence.info = ""
            fence.map = tok.map
            fence.content = "\n".join(lines[tok.map[0]:tok.map[1]]) + "\n"
            out.append(fence)
        i = j + 1
    state.tokens = out


def letter_markdown_parser() -> MarkdownIt:
    parser = MarkdownIt("gfm-like")
    parser.core.ruler.push("letterbox_bound_tables", _bound_tables)
    parser.core.ruler.push("letterbox_link_targets", _show_link_targets)
    return parser


class LetterBody(Markdown):
    """A body rendered as Markdown (toggled on by ``M``); see the module docstring."""

    BLOCKS = {**Markdown.BLOCKS, "fence": LetterFence, "code_block": LetterFence}

    def __init__(self, markdown: str | None = None, **kw) -> None:
        kw.setdefault("parser_factory", letter_markdown_parser)
        super().__init__(markdown, **kw)
        #: what ``show`` was given before the widget was mounted (rendered once it is)
        self._wanted: str | None = None

    def show(self, markdown: str) -> None:
        """Render ``markdown``; before the widget is mounted, once it is (an ``update``
        then would be overwritten by the rendering of what it was made with)."""
        if self.is_mounted:
            self._wanted = None  # (the newest text wins)
            self.update(markdown)
        else:
            self._wanted = markdown

    def on_mount(self) -> None:
        # (called before ``Markdown``'s own, which renders what the widget was made with:
        # the wanted text is rendered after it, from this widget's queue)
        self.call_later(self._show_wanted)

    def _show_wanted(self) -> None:
        if self._wanted is not None:
            wanted, self._wanted = self._wanted, None
            self.update(wanted)

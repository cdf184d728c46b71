"""The Thread tab: the reply tree as a list a reader moves through.

``j``/``k`` move from letter to letter, ``h`` (or left) jumps to the letter the highlighted
one replies to, ``Enter`` opens the highlighted letter (the app selects it and shows its
body). A tree has at most a few hundred lines (``letter_text.MAX_TREE_LINES``), so an
``OptionList`` is fine here. Prompts are ``Content`` (never markup).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from .letter_text import ThreadLine


class ThreadView(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="thread.down"),
        Binding("k", "cursor_up", "Up", show=False, id="thread.up"),
        Binding("h,left", "parent", "Parent", show=False, id="thread.parent"),
        Binding("l,right", "select", "Open", show=False, id="thread.open"),
    ]

    DEFAULT_CSS = """
    ThreadView { border: none; height: 1fr; background: $surface; padding: 0 1; }
    ThreadView:focus { border: none; }
    """

    class Open(Message):
        """Open this letter (Enter on a line of the tree)."""

        def __init__(self, letter) -> None:
            super().__init__()
            self.letter = letter

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.lines: list[ThreadLine] = []

    def show_lines(self, lines: list[ThreadLine], selected=None) -> None:
        self.lines = lines
        self.set_options([Option(line.content, disabled=line.letter is None) for line in lines])
        index = next((i for i, line in enumerate(lines) if line.letter is selected and selected is not None), None)
        if index is None:
            index = next((i for i, line in enumerate(lines) if line.letter is not None), None)
        self.highlighted = index

    @property
    def text(self) -> str:
        """The tree as plain text, one line a letter or caption."""
        return "\n".join(line.content.plain for line in self.lines)

    @property
    def highlighted_letter(self):
        i = self.highlighted
        return self.lines[i].letter if i is not None and 0 <= i < len(self.lines) else None

    def action_parent(self) -> None:
        i = self.highlighted
        if i is None or not (0 <= i < len(self.lines)):
            return
        parent = self.lines[i].parent
        if parent is None:
            self.app.notify("This letter replies to nothing in the thread.", timeout=2)
            return
        for j, line in enumerate(self.lines):
            if line.letter is parent:
                self.highlighted = j
                return

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        letter = self.lines[event.option_index].letter if 0 <= event.option_index < len(self.lines) else None
        if letter is not None:
            self.post_message(self.Open(letter))

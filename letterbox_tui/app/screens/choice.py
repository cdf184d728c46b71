"""A small question with a few answers (buttons), e.g. what to do with a changed form on
Esc, or whether to send with a deadline in the past. Esc gives the safe answer."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ChoiceScreen(ModalScreen[str]):
    """Dismissed with the chosen answer's key; Esc dismisses with ``safe``."""

    BINDINGS = [Binding("escape", "safe", "Back", id="choice.back")]
    DEFAULT_CSS = """
    ChoiceScreen { align: center middle; }
    ChoiceScreen > Vertical {
        width: 100%; max-width: 72; height: auto; border: round $warning; background: $surface; padding: 0 1;
    }
    ChoiceScreen #choice-text { height: auto; padding: 1 0; }
    ChoiceScreen #choice-buttons { height: auto; align-horizontal: right; }
    ChoiceScreen Button { margin-left: 1; }
    """

    def __init__(self, title: str, text: Content, answers: list[tuple[str, str]], *, safe: str, focus: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.answers = answers
        self.safe = safe
        self.first = focus or safe

    def compose(self) -> ComposeResult:
        with Vertical() as v:
            v.border_title = self.title_text
            yield Static(self.text, id="choice-text")
            with Horizontal(id="choice-buttons"):
                for key, label in self.answers:
                    yield Button(label, id=f"choice-{key}", compact=True,
                                 variant="primary" if key == self.first else "default")

    def on_mount(self) -> None:
        self.query_one(f"#choice-{self.first}", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_safe(self) -> None:
        self.dismiss(self.safe)

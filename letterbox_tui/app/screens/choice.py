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

from ..widgets import footer
from ..widgets.footer import ContextFooter


class ChoiceScreen(ModalScreen[str]):
    """Dismissed with the chosen answer's key; Esc dismisses with ``safe``."""

    #: the footer's keys here (``widgets.footer``): the screen beneath showed its own,
    #: which the question does not take (its answers' keys are on their buttons)
    FOOTER_KEYS = footer.CHOICE
    BINDINGS = [
        Binding("escape", "safe", "Back", id="choice.back"),
        Binding("left", "app.focus_previous", "Previous", show=False, id="choice.left"),
        Binding("right", "app.focus_next", "Next", show=False, id="choice.right"),
    ]
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
                    hot = self.hotkeys.get(key)
                    yield Button(f"{label} ({hot})" if hot else label, id=f"choice-{key}", compact=True,
                                 variant="primary" if key == self.first else "default")
        yield ContextFooter()

    @property
    def hotkeys(self) -> dict[str, str]:
        """Each answer's first letter, when no other answer starts with it: one key
        answers, as mutt's y/n prompts (only Tab reached the buttons)."""
        firsts = [label[:1].lower() for _, label in self.answers]
        return {key: f for (key, _), f in zip(self.answers, firsts)
                if f.isalpha() and firsts.count(f) == 1}

    def on_mount(self) -> None:
        self.query_one(f"#choice-{self.first}", Button).focus()

    def on_key(self, event) -> None:
        for key, hot in self.hotkeys.items():
            if event.key == hot:
                event.stop()
                self.dismiss(key)
                return

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_safe(self) -> None:
        self.dismiss(self.safe)

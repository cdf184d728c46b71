"""A progress note on the selected letter (``P``), as ``letterbox-tui progress`` writes it:
one line into the ack sidecar of a letter the holder accepted. The holder is the letter's
recipient; the write gate (``core.write.progress``) checks everything else (own inbox,
sidecar present, one clean line) and refuses in one line, shown here. The note is written in
a thread worker: the lifecycle lock may make it wait."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from ..sanitize import cleans
from .write_parts import FIELD_KEYS, FieldInput


class ProgressScreen(ModalScreen[str | None]):
    """Dismissed with the letter's id once the note is written, None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="progress.cancel"), *FIELD_KEYS]
    DEFAULT_CSS = """
    ProgressScreen { align: center middle; }
    ProgressScreen > Vertical {
        width: 100%; max-width: 90; height: auto; border: round $accent; background: $surface; padding: 0 1;
    }
    ProgressScreen #progress-about, ProgressScreen #progress-error { height: auto; padding: 1 0 0 0; }
    ProgressScreen #progress-buttons { height: auto; align-horizontal: right; padding-top: 1; }
    ProgressScreen Button { margin-left: 1; }
    """

    def __init__(self, root: str, letter, current: str = "") -> None:
        super().__init__()
        self.root = root
        self.letter = letter
        self.current = current

    def compose(self) -> ComposeResult:
        x = self.letter
        with Vertical() as v:
            v.border_title = "Progress note"
            about = cleans(("As ", "$text-muted"), (x.recipient, "bold"), (" on ", "$text-muted"), (x.id, ""))
            if self.current:
                about += cleans(("\nNow: ", "$text-muted"), (self.current, ""))
            yield Static(about, id="progress-about")
            yield FieldInput(placeholder="one line: what is done, what is next", id="progress-note")
            yield Static("", id="progress-error")
            with Horizontal(id="progress-buttons"):
                yield Button("Write (enter)", id="progress-write", variant="primary", compact=True)
                yield Button("Cancel (esc)", id="progress-cancel", compact=True)

    def on_mount(self) -> None:
        self.set_focus(self.query_one("#progress-note", Input))  # now: keys typed behind P land here

    @on(Input.Submitted, "#progress-note")
    @on(Button.Pressed, "#progress-write")
    def _write(self, event) -> None:
        event.stop()
        note = self.query_one("#progress-note", Input).value
        self.query_one("#progress-write", Button).disabled = True
        self._run(note)

    @on(Button.Pressed, "#progress-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @work(thread=True, exclusive=True, group="progress", exit_on_error=False)
    def _run(self, note: str) -> None:
        from letterbox_tui.core.errors import LetterboxError
        from letterbox_tui.core.write.progress import write_progress

        try:
            write_progress(self.root, self.letter.id, note, seat=self.letter.recipient)
        except LetterboxError as exc:
            self.app.call_from_thread(self._refused, str(exc))
            return
        except OSError as exc:
            self.app.call_from_thread(self._refused, f"{type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self.dismiss, self.letter.id)

    def _refused(self, why: str) -> None:
        self.query_one("#progress-error", Static).update(
            Content.styled("Refused: ", "bold $error") + cleans((why, "")))
        self.query_one("#progress-write", Button).disabled = False

"""Chasing the selected task (``C``), as ``letterbox-tui chase`` does: an ``info`` letter
``re:`` it to the seat that owes it, saying what is asked (the note, "status?" by default).

The form holds the seat to chase as and the note. As it is filled, ``core.chase.chase_draft``
(the command line's own rules) says whether the chase would be refused and why (closed,
answered, superseded, not a task, an unknown seat, the owing seat itself); Send is then
refused with that line and nothing is written. A second chase within the silence setting
asks first (a ``ChoiceScreen``, as quitting with a draft does) and is sent with ``again``
only when the answer is to send it. The letter goes through the one write gate
(``core.write.deliver``) in a thread worker; the screen returns the new letter's id.
"""

from __future__ import annotations

from datetime import datetime

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static
from textual.worker import Worker, WorkerState

from letterbox_tui.core.chase import DEFAULT_ASK, ChasedRecently, chase_draft, chases
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.model import Letter
from letterbox_tui.core.text import span
from letterbox_tui.core.views.attention import Rules
from letterbox_tui.core.write import Draft

from ..sanitize import cleans
from ..widgets import footer
from ..widgets.footer import ContextFooter
from .choice import ChoiceScreen
from .write_parts import FIELD_KEYS, FieldInput, bound_keys, writer_seat


def open_chase(app) -> ChaseScreen | None:
    """The chase form for the selected letter, or None (with a notice) when none is selected."""
    m = app.model
    x: Letter | None = app.selected_letter()
    if x is None:
        app.notify("Select a task to chase first (Owed & late, key 1, lists them).", severity="warning")
        return None
    if not m.snapshot.seats:
        app.notify("This letterbox has no seats to chase as.", severity="warning")
        return None
    return ChaseScreen(m, x, chase_seat(app, list(m.snapshot.seats), x))


def chase_seat(app, seats: list[str], x: Letter) -> str:
    """The seat to chase as: the forms' own (``writer_seat``), unless that is the seat that
    owes the task (a seat does not chase itself): then the seat that asked."""
    seat = writer_seat(app, seats, app.model.snapshot.letters)
    if seat != x.recipient:
        return seat
    others = [s for s in seats if s != x.recipient]
    return x.sender if x.sender in others else (others[0] if others else seat)


class ChaseScreen(ModalScreen[str | None]):
    """Dismissed with the chase letter's id once it is written, None when cancelled."""

    #: the footer's keys here (``widgets.footer``)
    FOOTER_KEYS = footer.CHASE
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="chase.cancel"),
        Binding("ctrl+s", "send", "Send", id="chase.send"),
        *FIELD_KEYS,
    ]
    DEFAULT_CSS = """
    ChaseScreen { align: center middle; }
    ChaseScreen > Vertical {
        width: 100%; max-width: 100; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ChaseScreen #chase-about { height: auto; padding: 0 1; background: $panel; }
    ChaseScreen .row { height: 1; margin-top: 1; }
    ChaseScreen .row Label { width: 10; padding: 0 1 0 0; text-align: right; color: $text-muted; }
    ChaseScreen .row Input, ChaseScreen .row Select { width: 1fr; }
    ChaseScreen #chase-error { height: auto; padding: 1 1 0 1; }
    ChaseScreen #chase-buttons { height: 1; margin-top: 1; align-horizontal: right; }
    ChaseScreen Button { margin-left: 2; }
    ChaseScreen Select.-textual-compact > SelectOverlay { border: round $accent !important; background: $panel; }
    """

    def __init__(self, model, letter: Letter, seat: str) -> None:
        super().__init__()
        self.model = model
        self.letter = letter
        self.seat = seat
        self.rules = Rules.of(model.settings)
        self._sending = False

    def compose(self) -> ComposeResult:
        seats = list(self.model.snapshot.seats)
        with Vertical() as v:
            v.border_title = "Chase"
            yield Static(self._about(), id="chase-about")
            with Horizontal(classes="row"):
                yield Label("As seat")
                yield Select([(s, s) for s in seats], value=self.seat if self.seat in seats else seats[0],
                             allow_blank=False, id="chase-as", compact=True)
            with Horizontal(classes="row"):
                yield Label("Note")
                yield FieldInput(value=DEFAULT_ASK, id="chase-note", compact=True,
                                 placeholder=f"what is asked (empty: {DEFAULT_ASK})")
            yield Static(Content(""), id="chase-error")
            with Horizontal(id="chase-buttons"):
                yield Button(f"Cancel ({bound_keys(self, 'chase.cancel')})", id="chase-cancel", compact=True)
                yield Button(f"Send ({bound_keys(self, 'chase.send')})", id="chase-send", variant="primary",
                             compact=True)
        yield ContextFooter()

    def _about(self) -> Content:
        x = self.letter
        lines = [
            cleans(("Chasing ", "$text-muted"), (x.recipient, "bold"), (" on ", "$text-muted"), (x.id, "bold")),
            cleans((f"{x.type} from {x.sender} to {x.recipient}", "$text-muted"),
                   ((": " + x.subject) if x.subject else "", "")),
        ]
        on_record = [c for c in chases(x, self.model.res) if c.sent_at is not None]
        if on_record:
            last = on_record[-1]
            n = len(on_record)
            lines.append(cleans((f"Chased {n} time{'s' if n != 1 else ''}; last by ", "$text-muted"), (last.sender, ""),
                                (f", {span(self.app.clock() - last.sent_at)} ago", "$text-muted")))
        lines.append(Content.styled("An info letter re: it to the seat that owes it, saying the note.", "$text-muted"))
        return Content("\n").join(lines)

    def on_mount(self) -> None:
        note = self.query_one("#chase-note", FieldInput)
        if self.app.is_headless:
            note.cursor_blink = False
        self.set_focus(note)  # now, not later: keys typed behind C land here
        self.validate()

    # --- the check, as the form is filled -------------------------------------------
    def values(self) -> tuple[str, str]:
        """The seat to chase as and the note, as typed."""
        seat = self.query_one("#chase-as", Select).value
        return ("" if seat is Select.NULL else str(seat)), self.query_one("#chase-note", FieldInput).value

    def check(self, now: datetime) -> tuple[Draft | None, ChasedRecently | None, LetterboxError | None]:
        """The chase the form holds at ``now`` by ``core.chase``'s rules: (the draft, the
        chase on record when this one would be a second within the silence, the refusal)."""
        seat, note = self.values()
        res = self.model.res.with_clock(now)
        try:
            return chase_draft(res, self.letter.id, seat, note, rules=self.rules), None, None
        except ChasedRecently as recent:
            try:
                return chase_draft(res, self.letter.id, seat, note, rules=self.rules, again=True), recent, None
            except LetterboxError as exc:
                return None, None, exc
        except LetterboxError as exc:
            return None, None, exc

    def validate(self) -> bool:
        """Show what Send would do now; False when it would be refused."""
        draft, recent, refusal = self.check(self.app.clock())
        line = self.query_one("#chase-error", Static)
        if refusal is not None:
            line.update(self._refusal(refusal))
        elif recent is not None:
            line.update(Content.assemble(
                Content.styled("⚠ ", "bold $warning"),
                cleans((f"Chased {span(recent.ago)} ago by ", "$warning"), (recent.last.sender, "$warning"),
                       (f" (the silence setting is {span(recent.silence)}): Send asks first.", "$warning"))))
        else:
            line.update(cleans(("Ready to send: ", "$success"), (f"an info letter to {draft.recipient}", "")))
        self.query_one("#chase-send", Button).disabled = refusal is not None or self._sending
        return refusal is None

    @staticmethod
    def _refusal(exc: LetterboxError) -> Content:
        return cleans(("Refused: ", "bold $error"), (str(exc), "$error"), (" (nothing is written)", "$text-muted"))

    @on(Select.Changed, "#chase-as")
    @on(Input.Changed, "#chase-note")
    def _changed(self, event) -> None:
        if not self._sending:
            self.validate()

    # --- sending ------------------------------------------------------------------
    @on(Input.Submitted, "#chase-note")
    @on(Button.Pressed, "#chase-send")
    def _send_pressed(self, event) -> None:
        event.stop()
        self.action_send()

    def action_send(self) -> None:
        if self._sending:
            return
        now = self.app.clock()
        draft, recent, refusal = self.check(now)
        if refusal is not None:
            self.query_one("#chase-error", Static).update(self._refusal(refusal))
            return
        if recent is None:
            self._start(draft, now)
            return
        text = cleans(("This task was chased ", ""), (f"{span(recent.ago)} ago", "bold"), (" by ", ""),
                      (recent.last.sender, "bold"), (f", within the silence setting ({span(recent.silence)}). "
                                                     "Chase it again?", ""))
        self.app.push_screen(ChoiceScreen("Chase again?", text, [("send", "Send again"), ("back", "Back")], safe="back"),
                             lambda answer: self._again(answer))

    def _again(self, answer: str | None) -> None:
        if answer != "send":
            return
        now = self.app.clock()  # (the check again: the letterbox may have moved while it asked)
        seat, note = self.values()
        try:
            draft = chase_draft(self.model.res.with_clock(now), self.letter.id, seat, note, rules=self.rules, again=True)
        except LetterboxError as exc:
            self.query_one("#chase-error", Static).update(self._refusal(exc))
            return
        self._start(draft, now)

    def _start(self, draft: Draft, now: datetime) -> None:
        self._sending = True
        self.query_one("#chase-send", Button).disabled = True
        self.query_one("#chase-error", Static).update(Content.styled("Sending…", "$warning"))
        snapshot = None if self.model.snapshot.scope.partial else self.model.snapshot
        self._write(self.model.root, draft, now, snapshot)

    @work(thread=True, exclusive=True, group="write", exit_on_error=False)
    def _write(self, root: str, draft: Draft, now: datetime, snapshot) -> str:
        from letterbox_tui.core.write import deliver

        return deliver(root, draft, now=now, snapshot=snapshot).id

    @on(Worker.StateChanged)
    def _write_state(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "write":
            return
        if event.state == WorkerState.SUCCESS:
            self.app.last_seat = self.values()[0]
            self.dismiss(event.worker.result)
        elif event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self._sending = False
            err = event.worker.error
            line = self.query_one("#chase-error", Static)
            if isinstance(err, LetterboxError):
                line.update(self._refusal(err))
            else:
                why = getattr(err, "strerror", None) or f"{type(err).__name__}: {err}"
                line.update(cleans(("Could not write: ", "bold $error"), (str(why), "$error")))
            self.query_one("#chase-send", Button).disabled = False

    # --- leaving ------------------------------------------------------------------
    @on(Button.Pressed, "#chase-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()

    def action_cancel(self) -> None:
        """Leave; a note the user typed is not dropped without asking."""
        if self._sending:
            return
        if self.values()[1].strip() in ("", DEFAULT_ASK):
            self.dismiss(None)
            return
        self.app.push_screen(ChoiceScreen("Unsent chase", Content("Your note is not sent. Discard it?"),
                                          [("discard", "Discard"), ("keep", "Keep editing")], safe="keep"),
                             lambda answer: self.dismiss(None) if answer == "discard" else None)

"""Writing screens: compose, reply, supersede, dispute, rule and record review.

Each screen checks its fields as the user types and lists every problem at once (pointers
against the scanned letterbox, ``write_rules``), then hands a ``Draft`` to the one write
gate (``core.write.deliver`` / ``reply``) in a worker thread, so a slow disk never freezes
the app. The gate validates again and refuses with one line; the refusal is shown and
nothing is written. The screen returns the new letter's id.

What is typed is never lost: the form is kept as a draft in the user's state directory as
it changes (``core.draft_store``; never in the letterbox), Esc on a changed form asks
(discard, keep editing, save the draft), and kept drafts are offered back at the next start.
"""

from __future__ import annotations


from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea
from textual.worker import Worker, WorkerState

from letterbox_tui.core.draft_store import DraftStore, KeptDraft
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.grammar import PRIORITIES
from letterbox_tui.core.model import Letter

from ..widgets import footer
from ..widgets.footer import ContextFooter
from ..sanitize import clean, clean_str, cleans
from . import write_rules as rules
from .choice import ChoiceScreen
from .write_drafts import DraftKeeping
from .write_parts import FIELD_KEYS, FieldInput, IdSuggester, about_text, bound_keys, duplicates_text, writer_seat

KINDS = ("compose", "reply", "supersede", "dispute", "rule", "review")
TITLES = {
    "compose": "Compose a letter",
    "reply": "Reply",
    "supersede": "Supersede a letter",
    "dispute": "Raise a dispute",
    "rule": "Rule on a dispute",
    "review": "Record a review",
}
#: every field a form may hold, as its widget id is ``w-<name>``
FIELDS = ("as", "kind", "to", "type", "upholds", "slug", "subject", "priority", "deadline", "task",
          "thread", "re", "body")


def open_writer(app, kind: str, restore: KeptDraft | None = None) -> WriteScreen | None:
    """The screen for ``kind``, or None (with a notice) when the selection does not fit."""
    m = app.model
    if not m.snapshot.seats:
        app.notify("This letterbox has no seats to write as or to.", severity="warning")
        return None
    x: Letter | None = app.selected_letter()
    if kind in ("reply", "supersede") and x is None:
        app.notify("Select a letter first.", severity="warning")
        return None
    if kind == "rule":
        if x is None or x.type != "dispute":
            app.notify("Select a dispute letter to rule on (see Open disputes, key 2).", severity="warning")
            return None
    if kind == "dispute":
        marked = app.marked_letters()
        if len(marked) < 2:
            app.notify("Mark two or more letters with m first, then press d.", severity="warning")
            return None
        return WriteScreen(kind, m, target=None, marked=marked, restore=restore)
    target = x if kind != "compose" else None
    if restore is None and target is not None:
        # a kept draft of this very form (a reply to this letter...) is taken up again
        restore = next((d for d in DraftStore(m.root).kept() if d.kind == kind and d.target == target.id), None)
        if restore is not None:
            app.notify(f"Your kept draft of this {kind} (saved {restore.saved_at}) is restored.", timeout=4)
    return WriteScreen(kind, m, target=target, restore=restore)


class WriteScreen(DraftKeeping, ModalScreen[str | None]):
    #: the footer's keys here (``widgets.footer``)
    FOOTER_KEYS = footer.FORM
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="write.cancel"),
        Binding("ctrl+s", "send", "Send", id="write.send"),
        # not ctrl+e: that is end-of-line in every field (a priority ctrl+e took it away)
        Binding("ctrl+o", "editor", "Edit body in $EDITOR", id="write.editor"),
        *FIELD_KEYS,
    ]
    DEFAULT_CSS = """
    WriteScreen { align: center middle; }
    WriteScreen > Vertical {
        width: 100%; max-width: 110; height: 100%; max-height: 44;
        border: round $primary; background: $surface; padding: 0 1;
    }
    /* room for a dispute's letters and a reply's long id (they were cut at 4 lines: a
       fourth disputed letter hidden); past that it scrolls, never cut */
    WriteScreen #w-about { height: auto; max-height: 8; overflow-y: auto; padding: 0 1; background: $panel; }
    WriteScreen #w-warn { height: auto; max-height: 3; color: $warning; padding: 0 1; }
    WriteScreen #w-fields { height: auto; max-height: 12; }
    WriteScreen .row { height: 1; }
    WriteScreen .row Label { width: 10; padding: 0 1 0 0; text-align: right; color: $text-muted; }
    WriteScreen .row Input, WriteScreen .row Select { width: 1fr; }
    WriteScreen #w-body-label { height: 1; color: $text-muted; }
    WriteScreen #w-body { height: 1fr; min-height: 3; background: $boost; }
    WriteScreen #w-hint { height: auto; max-height: 2; color: $text-muted; padding: 0 1; }
    WriteScreen #w-error { height: auto; max-height: 4; color: $error; padding: 0 1; }
    WriteScreen #w-buttons { height: 1; align-horizontal: right; }
    WriteScreen Button { margin-left: 2; }
    /* a compact Select's open list had no edge: its options ran into the labels below */
    WriteScreen Select.-textual-compact > SelectOverlay { border: round $accent !important; background: $panel; }
    """

    def __init__(self, kind: str, model, *, target: Letter | None = None, marked: list[Letter] | None = None,
                 restore: KeptDraft | None = None) -> None:
        super().__init__()
        assert kind in KINDS
        self.kind = kind
        self.model = model
        self.target = target
        self.marked = marked or []
        self.written: str | None = None
        self.restore = restore
        self.pointers: rules.Pointers | None = rules.cached_pointers(model)  # else built in a worker
        self.store = DraftStore(model.root)
        self.draft_name = restore.name if restore is not None else DraftStore.new_name()
        self.duplicates = rules.duplicate_disputes(model.res, self.marked) if kind == "dispute" else []
        #: a reply's letter is already acked (a second ack is refused as the form is filled)
        self._accepted = kind == "reply" and target is not None and model.res.accepted(target).value == "yes"
        self._initial: dict | None = None
        self._latest: dict | None = None  # the form as last changed (kept when the app closes)
        self._task_auto: bool | None = None
        self._task_touched = False
        self._task_choice = True  # what the user last chose for "task", once they touched it
        self._sending = False
        self._done = False
        #: the field widgets by name, found once on mount (``_collect_fields``)
        self.fields: dict = {}
        #: the form's values as of the last change (each change reads only its own field)
        self._current: dict = {}
        #: the seat the review's body was written for (a review's body is made for its seat)
        self._review_seat = ""
        #: what the status line and Send button show now (each is updated only on a change)
        self._shown_status: tuple | None = None
        self._init_drafts()

    # --- layout -------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        seats = list(self.model.snapshot.seats)
        seat_options = [(s, s) for s in seats]
        x = self.target
        default_as = self._default_as(seats)
        self._review_seat = default_as
        with Vertical() as v:
            v.border_title = TITLES[self.kind]
            yield Static(self._about(), id="w-about")
            if self.duplicates:
                yield Static(self._duplicates_text(), id="w-warn")
            with VerticalScroll(id="w-fields"):
                yield from self._row("As seat", Select(seat_options, value=default_as, allow_blank=False, id="w-as", compact=True))
                if self.kind == "reply":
                    assert x is not None
                    kind = rules.reply_kind(x, default_as, self._accepted)
                    yield from self._row("Kind", Select([(k, k) for k in ("ack", "nack", "result", "info")], value=kind,
                                                        allow_blank=False, id="w-kind", compact=True))
                if self.kind in ("compose", "supersede", "dispute", "rule"):
                    to_default = self._default_to(default_as)
                    yield from self._row("To", Select(seat_options, value=to_default if to_default else Select.NULL,
                                                      prompt="choose a seat", id="w-to", compact=True))
                if self.kind == "compose":
                    from letterbox_tui.core.write import SENDABLE_TYPES

                    yield from self._row("Type", Select([(t, t) for t in SENDABLE_TYPES], value="request", allow_blank=False,
                                                        id="w-type", compact=True))
                if self.kind == "rule":
                    assert x is not None
                    options = [("none: close the dispute, settle nothing", "")] + [(clean(d, single_line=True), d) for d in x.disputes]
                    yield from self._row("Upholds", Select(options, prompt="choose: one letter, or none", id="w-upholds", compact=True))
                if self.kind != "review":
                    hint = "only for info replies" if self.kind == "reply" else "a-z0-9 and -"
                    yield from self._row("Slug", FieldInput(value=self._default_slug(), id="w-slug", placeholder=hint, compact=True))
                if self.kind in ("compose", "supersede"):
                    old = x if (x and self.kind == "supersede") else None
                    yield from self._row("Subject", FieldInput(value=clean_str(old.subject, single_line=True) if old else "",
                                                          id="w-subject", placeholder="optional, one line", compact=True))
                    yield from self._row("Priority", Select([(p, p) for p in PRIORITIES],
                                                            value=(old.priority if old and old.priority in PRIORITIES else "next"),
                                                            allow_blank=False, id="w-priority", compact=True))
                    yield from self._row("Deadline", FieldInput(value=old.deadline if old else "", id="w-deadline", compact=True,
                                                           placeholder="optional: 2026-12-01T17:00:00+01:00 or +2d"))
                    task = bool(old.task) if old else True  # compose starts as a request: a task
                    self._task_auto = task
                    with Horizontal(classes="row"):
                        yield Label("")
                        yield Checkbox("Task: the recipient owes an ack, nack or result", value=task, id="w-task", compact=True)
                if self.kind == "compose":
                    yield from self._row("Thread", FieldInput(id="w-thread", placeholder="optional: a thread label (id shape)",
                                                         suggester=IdSuggester(lambda: self.pointers, thread=True), compact=True))
                    yield from self._row("Re", FieldInput(id="w-re", placeholder="optional: the id this answers (→ completes)",
                                                     suggester=IdSuggester(lambda: self.pointers), compact=True))
            yield Label("Body (Markdown)" if self.kind != "review" else "Body (written for you: what is owed and late now)",
                        id="w-body-label")
            yield TextArea(self._default_body(), id="w-body", soft_wrap=True, show_line_numbers=False, compact=True)
            yield Static(Content(""), id="w-hint")
            yield Static(Content(""), id="w-error")
            with Horizontal(id="w-buttons"):
                yield Button(f"$EDITOR ({bound_keys(self, 'write.editor')})", id="w-editor", compact=True)
                yield Button(f"Cancel ({bound_keys(self, 'write.cancel')})", id="w-cancel", compact=True)
                yield Button(f"Send ({bound_keys(self, 'write.send')})", id="w-send", variant="primary", compact=True)
        yield ContextFooter()

    def _row(self, label: str, widget) -> ComposeResult:
        with Horizontal(classes="row"):
            yield Label(label)
            yield widget

    def on_mount(self) -> None:
        if self.app.is_headless:
            for w in self.query(Input):
                w.cursor_blink = False
            for t in self.query(TextArea):
                t.cursor_blink = False
        self._collect_fields()
        self._initial = self.values()
        self._current = dict(self._initial)
        if self.restore is not None:
            self._apply(self.restore.fields)
        self._sync_task()
        # now, not with ``focus()`` (a callback queued behind the keys the app already holds):
        # the keys typed right behind the key that opened the form land in its first field
        self.set_focus(self._first_field())
        if self.pointers is None:
            self._build_pointers()
        self.validate()

    @work(thread=True, exclusive=True, group="pointers", exit_on_error=False)
    def _build_pointers(self) -> rules.Pointers:
        return rules.pointers_for(self.model)

    def _first_field(self):
        for name in ("upholds", "to", "slug", "body"):  # a ruling's choice first
            if self.kind == "reply" and name == "slug":
                continue
            w = self.fields.get(name)
            if w is not None and not (name == "to" and w.value is not Select.NULL):
                return w
        return self.fields["body"]

    # --- defaults -----------------------------------------------------------------
    def _default_as(self, seats: list[str]) -> str:
        x = self.target
        if self.kind == "reply" and x is not None and x.recipient in seats:
            return x.recipient
        if self.kind == "supersede" and x is not None and x.sender in seats:
            return x.sender
        return writer_seat(self.app, seats, self.model.snapshot.letters)

    def _default_to(self, as_seat: str) -> str:
        """Compose starts empty (no recipient); the others follow their letter."""
        x = self.target
        if self.kind == "compose":
            return ""
        pick = as_seat
        if self.kind == "supersede" and x is not None:
            pick = x.recipient
        elif self.kind == "rule" and x is not None:
            pick = x.sender
        return pick if pick in self.model.snapshot.seats else as_seat

    def _default_slug(self) -> str:
        from letterbox_tui.core.write import default_slug

        x = self.target
        if self.kind == "supersede" and x is not None:
            return default_slug(x, "")
        if self.kind == "dispute":
            return default_slug(self.marked[0], "dispute")
        if self.kind == "rule" and x is not None:
            return default_slug(x, "ruling")
        return ""

    def _default_body(self) -> str:
        x = self.target
        if self.kind == "dispute":
            return "These letters disagree and cannot all hold:\n" + "".join(f"- {clean_str(d.id)}\n" for d in self.marked)
        if self.kind == "rule" and x is not None:
            return f"Ruling on dispute {x.id}.\n"
        if self.kind == "review":
            return self._review_draft(self._review_seat).body
        if self.kind == "supersede" and x is not None:
            return self._shown_body(x)
        return ""

    def _shown_body(self, x: Letter) -> str:
        """The old version's body to edit into the new one (it started empty), as the
        letter pane read it (sanitized; its worker read it, no file is read here); empty
        when the pane has not read all of it."""
        pane = getattr(self.app, "letter_pane", None)
        if pane is None or pane.letter is not x or pane.body_key != pane.shown_key or pane.body_truncated:
            return ""
        return pane.body_text

    def _review_draft(self, seat: str | None = None):
        from letterbox_tui.core.write import review_draft

        seat = seat or self._value("as") or (self.model.snapshot.seats[0] if self.model.snapshot.seats else "")
        return review_draft(self.model.snapshot, seat, self.app.clock())

    def _about(self) -> Content:
        x = self.target
        res = self.model.res
        newer = (sorted({y.id for y in res.superseders(x)}) if self.kind == "supersede" and x else
                 sorted({f"{y.id} (upholds {y.upholds or 'none'})" for y in res.rulings(x)})
                 if self.kind == "rule" and x else [])
        return about_text(self.kind, x, self.marked, newer)

    def _duplicates_text(self) -> Content:
        return duplicates_text(self.duplicates)

    # --- values, drafts and validation -------------------------------------------
    def _collect_fields(self) -> None:
        """Find the form's field widgets once (``self.fields``, by name; and the status
        line and Send button): the checks run on every keystroke, and a DOM query for
        each field there cost most of a keystroke's time."""
        self.fields = {w.id[2:]: w for w in self.query("Select, Input, Checkbox, TextArea")
                       if w.id and w.id.startswith("w-") and w.id[2:] in FIELDS}
        self._error_line = self.query_one("#w-error", Static)
        self._send_button = self.query_one("#w-send", Button)
        self._hint_line = self.query_one("#w-hint", Static)

    def _value(self, name: str) -> str:
        """The field ``name`` as plain text ("" when the form has no such field)."""
        w = self.fields.get(name)
        if isinstance(w, Select):
            v = w.value
            return "" if v is Select.NULL or v is None else str(v)
        if isinstance(w, Input):
            return w.value.strip()
        if isinstance(w, TextArea):
            return w.text
        return ""

    def _field_value(self, name: str):
        """One field as ``values()`` holds it."""
        w = self.fields[name]
        if isinstance(w, Checkbox):
            return bool(w.value)
        if name == "upholds" and isinstance(w, Select):
            return None if w.value is Select.NULL else str(w.value)
        return self._value(name)

    def values(self) -> dict:
        """Every field of this form, as plain values (``upholds`` None: not chosen yet),
        read from the widgets now."""
        return {name: self._field_value(name) for name in self.fields}

    def _apply(self, fields: dict) -> None:
        for name, value in fields.items():
            w = self.fields.get(name)
            if w is None:
                continue
            if isinstance(w, Checkbox) and isinstance(value, bool):
                w.value = value
                self._task_touched, self._task_choice = True, value
            elif isinstance(w, Select) and isinstance(value, str):
                try:
                    w.value = value
                except Exception:  # a seat or option that no longer exists
                    pass
            elif isinstance(w, Input) and isinstance(value, str):
                w.value = value
            elif isinstance(w, TextArea) and isinstance(value, str):
                w.text = value

    def changed(self) -> bool:
        return self._initial is not None and self.values() != self._initial

    def problems(self, values: dict | None = None) -> list[str]:
        """What is wrong with the form now, all at once (empty: ready to send);
        ``values``: the form as the change handler keeps it (else read from the widgets)."""
        x = self.target
        kind_type = {"compose": None, "supersede": x.type if x else "", "dispute": "dispute", "rule": "ruling",
                     "review": "review"}.get(self.kind)
        v = self.values() if values is None else values
        return rules.problems(self.kind, v, self.pointers, self.app.clock(), letter_type=kind_type,
                              reply_to=x if self.kind == "reply" else None, accepted=self._accepted)

    def validate(self, values: dict | None = None) -> bool:
        """Check the form and show the outcome; ``values`` as for ``problems``."""
        if values is None:
            values = self._current = self.values()
        probs = self.problems(values)
        note = "" if probs else rules.deadline_note(values.get("deadline", ""), self.app.clock())
        shown = (tuple(probs), note)
        if shown != self._shown_status:  # unchanged (most keystrokes): no new layout
            self._shown_status = shown
            if probs:
                self._error_line.update(cleans(("Not ready: ", "bold"), ("; ".join(probs), "")))
            else:
                self._error_line.update(Content.assemble(
                    Content.styled("Ready to send.", "$success"),
                    cleans(("  Deadline ", "$text-muted"), (note, "")) if note else Content("")))
        self._send_button.disabled = bool(probs) or self._sending
        return not probs

    def _sync_task(self) -> None:
        """Requests and delegates default to tasks; a delegate is always one."""
        box = self.fields.get("task")
        if box is None or self.kind != "compose":
            return
        kind = self._value("type")
        if kind in rules.MUST_BE_TASK:
            self._task_auto = True
            box.value = True
            box.disabled = True
            return
        box.disabled = False
        self._task_auto = self._task_choice if self._task_touched else kind in rules.TASK_TYPES
        box.value = self._task_auto

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def _changed(self, event) -> None:
        if (self.kind == "review" and isinstance(event, Select.Changed) and event.select.id == "w-as"
                and str(event.value) != self._review_seat):
            # another seat: the body is written again for it (the Select also reports the
            # seat it opened with, which changes nothing)
            self._review_seat = str(event.value)
            self.fields["body"].text = self._review_draft(self._review_seat).body
            self._current["body"] = self.fields["body"].text
        if isinstance(event, Select.Changed) and event.select.id == "w-type":
            self._sync_task()
        if isinstance(event, Checkbox.Changed) and event.checkbox.id == "w-task" and event.value != self._task_auto:
            self._task_touched = True
            self._task_choice = event.value
        if isinstance(event, Input.Changed) and event.input.id in ("w-re", "w-thread"):
            self._show_matches(event.input.id[2:], event.value.strip())
        # only the field that changed is read again (a keystroke in the body reads the
        # body, never the other fields' widgets)
        name = (event.control.id or "")[2:]
        if name in self.fields:
            self._current[name] = self._field_value(name)
        self.validate(self._current)
        if self._initial is not None and not self._done:
            self._latest = dict(self._current)
            self._schedule_autosave()

    def _show_matches(self, key: str, text: str) -> None:
        if self.pointers is None:
            return
        found = self.pointers.complete(text, 3, thread=key == "thread") if len(text) >= 3 else []
        hint = self._hint_line
        if not text or text in found[:1]:
            hint.update(Content(""))
        elif found:
            hint.update(cleans((f"{key}: ", "bold"), (", ".join(found), ""), ("  (→ completes the first)", "$text-muted")))
        elif key == "thread":
            hint.update(Content.styled("thread: a new label (no letter uses it yet)", "$text-muted"))
        else:
            hint.update(Content.styled(f"{key}: no id in the letterbox holds {clean_str(text)!r}", "$warning"))

    # --- $EDITOR -------------------------------------------------------------------
    def action_editor(self) -> None:
        """Edit the body in ``$VISUAL`` / ``$EDITOR``; the form's checks and the gate still apply."""
        from .editor import edit_body

        area = self.fields["body"]
        text = edit_body(self, area.text)
        if text is not None:
            area.text = text
        self.validate()

    # --- leaving ------------------------------------------------------------------
    @on(Button.Pressed, "#w-cancel")
    def action_cancel(self) -> None:
        if not self.changed():
            self._leave(None, discard=True)
            return
        text = Content("This form has changes. Discard them, keep editing, or save the draft "
                       "(kept in your state directory, offered back next time)?")
        self.app.push_screen(ChoiceScreen("Unsent changes", text, [("discard", "Discard"), ("keep", "Keep editing"),
                                                                   ("save", "Save draft")], safe="keep"), self._cancel_answer)

    def _cancel_answer(self, answer: str | None) -> None:
        if answer == "discard":
            self._leave(None, discard=True)
        elif answer == "save" and self.keep_draft():
            self.app.notify("Draft kept: it is offered back the next time the app starts.", timeout=4)
            self._leave(None, discard=False)

    def _leave(self, result: str | None, *, discard: bool) -> None:
        self._done = True
        if discard:
            self._forget_draft(close=True)
        self.dismiss(result)

    @on(Button.Pressed, "#w-editor")
    def _editor_pressed(self) -> None:
        self.action_editor()

    # --- sending ------------------------------------------------------------------
    @on(Button.Pressed, "#w-send")
    def _send_pressed(self) -> None:
        self.action_send()

    def action_send(self) -> None:
        if self._sending or not self.validate():
            return
        now = self.app.clock()
        when = rules.deadline_when(self._value("deadline"), now)
        if when is not None and when < now:
            note = rules.deadline_note(self._value("deadline"), now)
            text = cleans(("The deadline ", ""), (note, "bold"), (" is in the past: the letter is late the moment it "
                                                                   "arrives. Send it anyway?", ""))
            self.app.push_screen(ChoiceScreen("Deadline in the past", text, [("send", "Send anyway"), ("back", "Back")],
                                              safe="back"), lambda a: self._start_send() if a == "send" else None)
            return
        self._start_send()

    def _start_send(self) -> None:
        try:
            plan = self._plan()
        except LetterboxError as exc:
            self._refused(exc)
            return
        self._sending = True
        self._send_button.disabled = True
        self._shown_status = None
        self._error_line.update(Content.styled("Sending…", "$warning"))
        self._write_in_worker(plan)

    @work(thread=True, exclusive=True, group="write", exit_on_error=False)
    def _write_in_worker(self, plan) -> str:
        return plan()

    @on(Worker.StateChanged)
    def _write_state(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "draft" and event.state == WorkerState.ERROR:
            err = event.worker.error
            self.notify(clean(f"Could not keep the draft: {getattr(err, 'strerror', None) or err}"), severity="error")
            return
        if event.worker.group == "pointers" and event.state == WorkerState.SUCCESS:
            self.pointers = event.worker.result
            if not self._sending:
                self.validate()
            return
        if event.worker.group != "write":
            return
        if event.state == WorkerState.SUCCESS:
            self._sent(event.worker.result)
        elif event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self._sending = False
            self._refused(event.worker.error)
            self.validate_keep_error()

    def validate_keep_error(self) -> None:
        self._send_button.disabled = bool(self.problems())

    def _refused(self, exc) -> None:
        err = self._error_line
        self._shown_status = None  # the next check writes its line again
        if isinstance(exc, LetterboxError):
            err.update(cleans(("Refused: ", "bold $error"), (str(exc), "$error"), (" (nothing was written)", "$text-muted")))
        elif isinstance(exc, OSError):
            err.update(cleans(("Could not write: ", "bold $error"), (exc.strerror or str(exc), "$error")))
        else:
            err.update(cleans(("Could not write: ", "bold $error"), (f"{type(exc).__name__}: {exc}", "$error")))

    def _sent(self, new_id: str) -> None:
        self._sending = False
        self.app.last_seat = self._value("as")
        self.written = new_id
        note = rules.deadline_note(self._value("deadline"), self.app.clock())
        if note:
            self.app.notify(cleans(("Deadline as you typed it: ", "bold"), (note, "")), timeout=6)
        self._leave(new_id, discard=True)

    def write(self) -> str:
        """Build the draft and hand it to the write gate here (tests). Returns the new id."""
        return self._plan()()

    def _plan(self):
        """Read the form (on the UI thread) into a call of the write gate with plain values."""
        from letterbox_tui.core.write import Draft, deliver, reply

        root = self.model.root
        now = self.app.clock()
        snapshot = None if self.model.snapshot.scope.partial else self.model.snapshot
        v = self.values()
        as_seat, body, x = v["as"], v["body"], self.target
        if self.kind == "reply":
            assert x is not None
            kind, slug, target_id = v["kind"], v.get("slug", ""), x.id
            return lambda: reply(root, target_id, kind, seat=as_seat, body=body, now=now, slug=slug, snapshot=snapshot).id
        if self.kind == "review":
            draft = self._review_draft(as_seat)
            draft.body = body
        else:
            common = dict(sender=as_seat, recipient=v.get("to", ""), slug=v.get("slug", ""), body=body)
            deadline = v.get("deadline", "")  # as typed: the gate reads +2d against the same clock
            if self.kind == "compose":
                draft = Draft(type=v["type"], subject=v["subject"], priority=v["priority"] or "next",
                              requires_ack=v["task"], deadline=deadline, thread=v["thread"], re=v["re"], **common)
            elif self.kind == "supersede":
                assert x is not None
                draft = Draft(type=x.type, subject=v["subject"], priority=v["priority"] or "next",
                              requires_ack=v["task"], deadline=deadline, thread=x.thread_id, supersedes=x.id, **common)
            elif self.kind == "dispute":
                ids = [d.id for d in self.marked]
                if len(set(ids)) < 2:
                    raise LetterboxError("a dispute names two or more different letters")
                draft = Draft(type="dispute", disputes=ids, **common)
            else:  # rule
                assert x is not None
                draft = Draft(type="ruling", rules_on=x.id, upholds=v.get("upholds") or "", thread=x.thread_id, **common)
        return lambda: deliver(root, draft, now=now, snapshot=snapshot).id

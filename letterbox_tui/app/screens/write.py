"""Writing screens: compose, reply, supersede, dispute, rule and record review.

Each screen validates its fields as the user types (a one-line reason under the form),
then hands a ``Draft`` to the one write gate (``core.write.deliver`` / ``reply``). The
gate validates again and refuses with one line; the refusal is shown and nothing is
written. The screen returns the new letter's id.
"""

from __future__ import annotations


from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.grammar import PRIORITIES, SLUG_RE, parse_time, valid_id
from letterbox_tui.core.model import Letter

from ..sanitize import clean, clean_str, cleans

KINDS = ("compose", "reply", "supersede", "dispute", "rule", "review")
TITLES = {
    "compose": "Compose a letter",
    "reply": "Reply",
    "supersede": "Supersede a letter",
    "dispute": "Raise a dispute",
    "rule": "Rule on a dispute",
    "review": "Record a review",
}


def open_writer(app, kind: str) -> WriteScreen | None:
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
        return WriteScreen(kind, m, target=None, marked=marked)
    return WriteScreen(kind, m, target=x)


class WriteScreen(ModalScreen[str | None]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="write.cancel"),
        Binding("ctrl+s", "send", "Send", id="write.send"),
        Binding("ctrl+e", "editor", "Edit body in $EDITOR", id="write.editor"),
    ]
    DEFAULT_CSS = """
    WriteScreen { align: center middle; }
    WriteScreen > Vertical {
        width: 110; height: 90%; border: round $primary; background: $surface; padding: 0 1;
    }
    WriteScreen VerticalScroll { height: 1fr; }
    WriteScreen .row { height: auto; margin: 0 0 0 0; }
    WriteScreen .row Label { width: 12; padding: 1 1 0 0; text-align: right; color: $text-muted; }
    WriteScreen .row Input, WriteScreen .row Select { width: 1fr; }
    WriteScreen #w-body { height: 12; }
    WriteScreen #w-about { height: auto; padding: 0 1; background: $panel; }
    WriteScreen #w-error { height: auto; color: $error; padding: 0 1; }
    WriteScreen #w-buttons { height: 3; align-horizontal: right; }
    WriteScreen Button { margin-left: 2; }
    """

    def __init__(self, kind: str, model, *, target: Letter | None = None, marked: list[Letter] | None = None) -> None:
        super().__init__()
        assert kind in KINDS
        self.kind = kind
        self.model = model
        self.target = target
        self.marked = marked or []
        self.written: str | None = None

    # --- layout -------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        seats = list(self.model.snapshot.seats)
        seat_options = [(s, s) for s in seats]
        x = self.target
        default_as = self._default_as(seats)
        with Vertical() as v:
            v.border_title = TITLES[self.kind]
            yield Static(self._about(), id="w-about")
            with VerticalScroll():
                yield from self._row("As seat", Select(seat_options, value=default_as, allow_blank=False, id="w-as"))
                if self.kind == "reply":
                    yield from self._row("Kind", Select([(k, k) for k in ("ack", "nack", "result", "info")], value="ack", allow_blank=False, id="w-kind"))
                if self.kind in ("compose", "supersede", "dispute", "rule"):
                    to_default = self._default_to(default_as)
                    yield from self._row("To", Select(seat_options, value=to_default, allow_blank=False, id="w-to"))
                if self.kind == "compose":
                    from letterbox_tui.core.write import SENDABLE_TYPES

                    yield from self._row("Type", Select([(t, t) for t in SENDABLE_TYPES], value="request", allow_blank=False, id="w-type"))
                if self.kind == "rule":
                    assert x is not None
                    options = [("(none: close the dispute without settling it)", "")] + [(clean(d, single_line=True), d) for d in x.disputes]
                    yield from self._row("Upholds", Select(options, value=x.disputes[0] if x.disputes else "", allow_blank=False, id="w-upholds"))
                if self.kind != "review":
                    hint = "only for info replies (ack, nack and result take the letter's id)" if self.kind == "reply" else "a-z0-9 and -"
                    yield from self._row("Slug", Input(value=self._default_slug(), id="w-slug", placeholder=hint))
                if self.kind in ("compose", "supersede"):
                    yield from self._row("Subject", Input(value=clean_str(x.subject, single_line=True) if (x and self.kind == "supersede") else "", id="w-subject", placeholder="optional, one line"))
                    yield from self._row("Priority", Select([(p, p) for p in PRIORITIES], value=(x.priority if x and x.priority in PRIORITIES and self.kind == "supersede" else "next"), allow_blank=False, id="w-priority"))
                    yield from self._row("Deadline", Input(value=x.deadline if (x and self.kind == "supersede") else "", id="w-deadline", placeholder="RFC 3339 with offset, e.g. 2026-12-01T17:00:00Z (optional)"))
                    with Horizontal(classes="row"):
                        yield Label("")
                        yield Checkbox("Task: the recipient owes an ack, nack or result", value=bool(x.task) if (x and self.kind == "supersede") else False, id="w-task")
                if self.kind == "compose":
                    yield from self._row("Thread", Input(id="w-thread", placeholder="optional: thread id"))
                    yield from self._row("Re", Input(value=x.id if x else "", id="w-re", placeholder="optional: the letter this answers"))
                yield Label("Body (Markdown)" if self.kind != "review" else "Body (written for you: what is owed and late now)")
                yield TextArea(self._default_body(), id="w-body", soft_wrap=True, show_line_numbers=False)
            yield Static(Content(""), id="w-error")
            with Horizontal(id="w-buttons"):
                yield Button(f"$EDITOR ({bound_keys(self, 'write.editor')})", id="w-editor")
                yield Button(f"Cancel ({bound_keys(self, 'write.cancel')})", id="w-cancel")
                yield Button(f"Send ({bound_keys(self, 'write.send')})", id="w-send", variant="primary")

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
        self.validate()

    # --- defaults -----------------------------------------------------------------
    def _default_as(self, seats: list[str]) -> str:
        x = self.target
        if self.kind == "reply" and x is not None and x.recipient in seats:
            return x.recipient
        if self.kind == "supersede" and x is not None and x.sender in seats:
            return x.sender
        last = getattr(self.app, "last_seat", None)
        if last in seats:
            return last
        from letterbox_tui.core.write import agent_seat  # $LETTERBOX_AGENT, the protocol's identity

        if agent_seat() in seats:
            return agent_seat()
        if self.kind in ("rule", "review", "dispute"):
            auditor = _last_auditor(self.model.snapshot.letters)
            if auditor in seats:
                return auditor
        mb = getattr(self.app, "mailbox_id", "")
        if mb.startswith("seat:") and mb.split(":")[1] in seats:
            return mb.split(":")[1]
        return seats[0] if seats else ""

    def _default_to(self, as_seat: str) -> str:
        x = self.target
        pick = as_seat
        if self.kind == "supersede" and x is not None:
            pick = x.recipient
        elif self.kind == "rule" and x is not None:
            pick = x.sender
        elif self.kind == "compose" and x is not None:
            pick = x.sender if x.sender != as_seat else x.recipient
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
            return self._review_draft().body
        return ""

    def _review_draft(self, seat: str | None = None):
        from letterbox_tui.core.write import review_draft

        seat = seat or self._value("#w-as") or (self.model.snapshot.seats[0] if self.model.snapshot.seats else "")
        return review_draft(self.model.snapshot, seat, self.app.clock())

    def _about(self) -> Content:
        x = self.target
        if self.kind == "reply" and x is not None:
            return cleans(Content.styled("Replying to ", "$text-muted"), (x.id, "bold"),
                          (f"  ({x.type} from {x.sender} to {x.recipient})", "$text-muted"),
                          Content("\nack accepts it; nack refuses and closes it; result answers and closes it; info is a note."))
        if self.kind == "supersede" and x is not None:
            return cleans(Content.styled("The new letter supersedes ", "$text-muted"), (x.id, "bold"),
                          Content("\nThe old letter is never edited; the new one points at it."))
        if self.kind == "dispute":
            return Content("\n").join([Content.styled("The dispute names these letters (neither is edited):", "$text-muted")]
                                      + [cleans(Content("  ⚖ "), (d.id, "bold")) for d in self.marked])
        if self.kind == "rule" and x is not None:
            return cleans(Content.styled("Ruling on dispute ", "$text-muted"), (x.id, "bold"),
                          Content("\nUpholding one letter settles the fork in its favour; upholding none closes the dispute only."))
        if self.kind == "review":
            return Content("A review letter goes to the reviewer's own seat. It records what is owed and late now, by id.")
        return Content("A new letter, published into the recipient's inbox through the write gate.")

    # --- values and validation ----------------------------------------------------
    def _value(self, selector: str) -> str:
        try:
            w = self.query_one(selector)
        except Exception:
            return ""
        if isinstance(w, Select):
            v = w.value
            return "" if v is Select.BLANK or v is None else str(v)
        if isinstance(w, Input):
            return w.value.strip()
        if isinstance(w, TextArea):
            return w.text
        return ""

    def problems(self) -> list[str]:
        """What is wrong with the form now (empty: ready to send)."""
        out = []
        if not self._value("#w-as"):
            out.append("choose the seat you write as")
        if self.kind != "review":
            slug = self._value("#w-slug")
            if self.kind != "reply" and not slug:
                out.append("a slug is needed (a-z, 0-9 and -)")
            elif slug and SLUG_RE.fullmatch(slug) is None:
                out.append(f"slug {slug!r} may hold only a-z, 0-9 and - (not starting with -)")
        deadline = self._value("#w-deadline")
        if deadline and parse_time(deadline) is None:
            out.append("the deadline needs RFC 3339 with an offset, e.g. 2026-12-01T17:00:00Z")
        for sel, name in (("#w-thread", "thread"), ("#w-re", "re")):
            v = self._value(sel)
            if v and not valid_id(v):
                out.append(f"{name} is not a valid id")
        if "\n" in self._value("#w-subject") or len(self._value("#w-subject")) > 200:
            out.append("the subject is one line of at most 200 characters")
        if not self._value("#w-body").strip():
            out.append("the body is empty")
        return out

    def validate(self) -> bool:
        probs = self.problems()
        err = self.query_one("#w-error", Static)
        if probs:
            err.update(cleans(("Not ready: ", "bold"), ("; ".join(probs), "")))
        else:
            err.update(Content.styled("Ready to send.", "$success"))
        self.query_one("#w-send", Button).disabled = bool(probs)
        return not probs

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def _changed(self, event) -> None:
        if self.kind == "review" and isinstance(event, Select.Changed) and event.select.id == "w-as":
            self.query_one("#w-body", TextArea).text = self._review_draft(str(event.value)).body
        self.validate()

    # --- $EDITOR -------------------------------------------------------------------
    def action_editor(self) -> None:
        """Edit the body in ``$VISUAL`` / ``$EDITOR`` (a private temporary file, never in
        the letterbox); the form's validation and the gate still apply."""
        import os
        import shlex
        import subprocess
        import tempfile

        from textual.app import SuspendNotSupported

        area = self.query_one("#w-body", TextArea)
        command = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
        fd, path = tempfile.mkstemp(prefix="letterbox-tui-", suffix=".md")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(area.text)
            try:
                with self.app.suspend():
                    code = subprocess.call(command + [path])
            except SuspendNotSupported:
                if not self.app.is_headless:
                    self.notify("This terminal cannot hand over to an editor.", severity="warning")
                    return
                code = subprocess.call(command + [path], stdin=subprocess.DEVNULL)
            if code != 0:
                self.notify(f"The editor exited with status {code}; the body is unchanged.", severity="warning")
                return
            with open(path, encoding="utf-8", errors="replace") as fh:
                area.text = fh.read(1 << 20)
        except OSError as exc:
            self.notify(clean(f"Could not run the editor: {exc.strerror or exc}"), severity="error")
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        self.validate()

    # --- sending ------------------------------------------------------------------
    @on(Button.Pressed, "#w-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#w-editor")
    def _editor_pressed(self) -> None:
        self.action_editor()

    @on(Button.Pressed, "#w-send")
    def _send_pressed(self) -> None:
        self.action_send()

    def action_send(self) -> None:
        if not self.validate():
            return
        try:
            new_id = self.write()
        except LetterboxError as exc:
            self.query_one("#w-error", Static).update(cleans(("Refused: ", "bold $error"), (str(exc), "$error"), (" (nothing was written)", "$text-muted")))
            return
        except OSError as exc:
            self.query_one("#w-error", Static).update(cleans(("Could not write: ", "bold $error"), (exc.strerror or str(exc), "$error")))
            return
        self.app.last_seat = self._value("#w-as")
        self.written = new_id
        self.dismiss(new_id)

    def write(self) -> str:
        """Build the draft and hand it to the write gate. Returns the new id."""
        from letterbox_tui.core.write import Draft, deliver, reply

        root = self.model.root
        now = self.app.clock()
        snapshot = None if self.model.snapshot.scope.partial else self.model.snapshot
        as_seat = self._value("#w-as")
        body = self._value("#w-body")
        x = self.target
        if self.kind == "reply":
            assert x is not None
            published = reply(root, x.id, self._value("#w-kind"), seat=as_seat, body=body, now=now,
                              slug=self._value("#w-slug"), snapshot=snapshot)
            return published.id
        if self.kind == "review":
            draft = self._review_draft(as_seat)
            draft.body = body
            return deliver(root, draft, now=now, snapshot=snapshot).id
        common = dict(sender=as_seat, recipient=self._value("#w-to"), slug=self._value("#w-slug"), body=body)
        if self.kind == "compose":
            draft = Draft(type=self._value("#w-type"), subject=self._value("#w-subject"),
                          priority=self._value("#w-priority") or "next",
                          requires_ack=self.query_one("#w-task", Checkbox).value,
                          deadline=self._value("#w-deadline"), thread=self._value("#w-thread"),
                          re=self._value("#w-re"), **common)
        elif self.kind == "supersede":
            assert x is not None
            draft = Draft(type=x.type, subject=self._value("#w-subject"),
                          priority=self._value("#w-priority") or "next",
                          requires_ack=self.query_one("#w-task", Checkbox).value,
                          deadline=self._value("#w-deadline"), thread=x.thread_id, supersedes=x.id, **common)
        elif self.kind == "dispute":
            ids = [d.id for d in self.marked]
            if len(set(ids)) < 2:
                raise LetterboxError("a dispute names two or more different letters")
            draft = Draft(type="dispute", disputes=ids, **common)
        else:  # rule
            assert x is not None
            draft = Draft(type="ruling", rules_on=x.id, upholds=self._value("#w-upholds"), thread=x.thread_id, **common)
        return deliver(root, draft, now=now, snapshot=snapshot).id


def bound_keys(node, binding_id: str) -> str:
    """The keys that run ``binding_id`` on ``node`` now, with the user's keymap applied, as
    the footer shows them: a button's label never claims a key that does something else."""
    bindings = node._bindings.copy()
    keymap = getattr(node.app, "_keymap", None)
    if keymap:
        bindings.apply_keymap(keymap)
    keys = [k for k, found in bindings.key_to_bindings.items() if any(b.id == binding_id for b in found)]
    return ", ".join(node.app.get_key_display(Binding(k, "")) for k in keys) or "no key"


def _last_auditor(letters) -> str | None:
    """The seat that wrote the latest review or ruling: who audits this letterbox, the
    natural author of the next ruling, review or dispute. None when there is none."""
    best = None
    for x in letters:
        if x.type in ("review", "ruling") and x.sent_at is not None and (best is None or x.sent_at > best.sent_at):
            best = x
    return best.sender if best is not None else None

"""Small pieces of the writing forms: id completion, the keys a button names, the seat that
audits this letterbox."""

from __future__ import annotations

from textual.binding import Binding
from textual.content import Content
from textual.geometry import Size
from textual.reactive import Reactive
from textual.suggester import Suggester
from textual.widgets import Input

from ..sanitize import cleans
from .write_rules import agent_seat

#: Tab and shift+Tab move between a form's fields with priority: they run as the key
#: arrives, before the keys typed behind them, so those land in the field Tab moved to. As
#: the screen's ordinary binding, Tab ran only once it had bubbled up from the focused
#: field, and the keys typed right after it went into the field it was leaving.
FIELD_KEYS = [
    Binding("tab", "app.focus_next", "Next field", show=False, priority=True, id="form.next_field"),
    Binding("shift+tab", "app.focus_previous", "Previous field", show=False, priority=True,
            id="form.previous_field"),
]

class FieldInput(Input):
    """A form's one-line field. Textual's ``Input`` sets its virtual size to the width of
    its text on every key, and that reactive asks for a layout of the whole screen: on a
    form of a dozen rows, that layout was most of a keystroke's time. A field's own size
    is fixed by the form's CSS (one line, the row's width), so a longer text needs only a
    repaint of the field; its horizontal scrolling reads the virtual size directly.
    (Only for a field with no ``auto`` width or height: the tests check each form's.)"""

    virtual_size = Reactive(Size(0, 0), layout=False)


class IdSuggester(Suggester):
    """Completes a pointer field with the letterbox's ids (newest first)."""

    def __init__(self, pointers, *, thread: bool = False) -> None:
        """``pointers``: a callable giving the form's ``Pointers`` (None until built)."""
        super().__init__(use_cache=False, case_sensitive=True)
        self.pointers = pointers
        self.thread = thread

    async def get_suggestion(self, value: str) -> str | None:
        pointers = self.pointers()
        if pointers is None:
            return None
        found = [i for i in pointers.complete(value, 1, thread=self.thread) if i.startswith(value)]
        return found[0] if found else None


def bound_keys(node, binding_id: str) -> str:
    """The keys that run ``binding_id`` on ``node`` now, with the user's keymap applied, as
    the footer shows them: a button's label never claims a key that does something else."""
    bindings = node._bindings.copy()
    keymap = getattr(node.app, "_keymap", None)
    if keymap:
        bindings.apply_keymap(keymap)
    keys = [k for k, found in bindings.key_to_bindings.items() if any(b.id == binding_id for b in found)]
    return ", ".join(node.app.get_key_display(Binding(k, "")) for k in keys) or "no key"


def last_auditor(letters) -> str | None:
    """The seat that wrote the latest review or ruling: who audits this letterbox, the
    natural author of the next ruling, review or dispute. None when there is none."""
    best = None
    for x in letters:
        if x.type in ("review", "ruling") and x.sent_at is not None and (best is None or x.sent_at > best.sent_at):
            best = x
    return best.sender if best is not None else None


def writer_seat(app, seats, letters) -> str:
    """The seat a form writes as when nothing about its letter says: ``$LETTERBOX_AGENT``,
    else the seat the user last wrote as, else the auditor (``last_auditor``), else the
    seat whose mailbox is open, else the first seat."""
    agent = agent_seat(seats)
    if agent:
        return agent
    last = getattr(app, "last_seat", None)
    if last in seats:
        return last
    # the app's user is the auditor: the seat that last wrote a review or ruling (compose
    # fell to the first seat by name, an agent's, in the demo "builder")
    auditor = last_auditor(letters)
    if auditor in seats:
        return auditor
    mb = getattr(app, "mailbox_id", "")
    if mb.startswith("seat:") and mb.split(":")[1] in seats:
        return mb.split(":")[1]
    return seats[0] if seats else ""


def about_text(kind: str, x, marked, newer: list[str] = ()) -> Content:
    """What the form is about, above its fields. ``newer``: the ids of the letters that
    supersede ``x`` already (supersede: another makes a fork), or rule on it already (rule)."""
    if kind == "reply" and x is not None:
        return cleans(Content.styled("Replying to ", "$text-muted"), (x.id, "bold"),
                      (f"  ({x.type} from {x.sender} to {x.recipient})", "$text-muted"),
                      Content("\nack accepts it; nack refuses and closes it; result answers and closes it; info is a note."))
    if kind == "supersede" and x is not None:
        return _warned(cleans(Content.styled("The new letter supersedes ", "$text-muted"), (x.id, "bold"),
                              Content("\nThe old letter is never edited; the new one points at it.")),
                       "⑂ Already superseded by ", newer,
                       ": this makes a fork (a dispute and a ruling settle it; or supersede the newest instead).")
    if kind == "dispute":
        none = "neither" if len(marked) == 2 else "none"
        return Content("\n").join([Content.styled(f"The dispute names these letters ({none} is edited):", "$text-muted")]
                                  + [cleans(Content("  ⚖ "), (d.id, "bold")) for d in marked])
    if kind == "rule" and x is not None:
        return _warned(cleans(Content.styled("Ruling on dispute ", "$text-muted"), (x.id, "bold"),
                              Content("\nUpholding one letter settles the fork in its favour; upholding none "
                                      "closes the dispute only.")),
                       "⚖ Ruled already by ", newer,
                       ": a ruling that upholds another letter leaves the rulings disagreeing, settling no fork.")
    if kind == "review":
        return Content("A review letter goes to the reviewer's own seat. It records what is owed and late now, by id.")
    return Content("A new letter, published into the recipient's inbox through the write gate.")


def _warned(about: Content, lead: str, ids: list[str], then: str) -> Content:
    """``about``, and a warning line naming ``ids`` when there are any."""
    if not ids:
        return about
    return Content("\n").join([about, cleans((lead, "bold $warning"), (", ".join(ids), "bold"), (then, "$warning"))])


def duplicates_text(duplicates) -> Content:
    """The warning that open disputes already name the marked letters."""
    parts = [Content.styled("⚠ An open dispute already names these letters: ", "bold")]
    for d in duplicates[:3]:
        parts.append(cleans((d.id, "bold"), (f" (by {d.sender}) ", "")))
    if len(duplicates) > 3:
        parts.append(Content(f"and {len(duplicates) - 3} more"))
    parts.append(Content("— rule on it (u) rather than raise another?"))
    return Content("").join(parts)

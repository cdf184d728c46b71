"""What a writing form checks and shows, apart from its widgets: every problem at once
(pointers checked against the scanned letterbox with the gate's own index), warnings that
do not stop a send (an open dispute already names these letters), how a deadline reads
back, and id completion. No Textual here: the screen passes plain values."""

from __future__ import annotations

import weakref
from bisect import bisect_left
from datetime import datetime, timezone

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.grammar import SLUG_RE, valid_id
from letterbox_tui.core.model import Letter, Snapshot
from letterbox_tui.core.query import parse_when
from letterbox_tui.core.text import span

#: types whose letters are tasks unless the writer says otherwise; a delegate always is one
#: (protocol v0.5: ``delegate`` needs ``--ack``)
TASK_TYPES = ("request", "delegate")
MUST_BE_TASK = ("delegate",)
#: pointer fields checked against the letterbox (a thread is a free label of id shape)
POINTERS = ("re", "supersedes")


def agent_seat(seats: list[str] | tuple[str, ...], environ=None) -> str | None:
    """``$LETTERBOX_AGENT`` when it names a seat of this letterbox (the protocol's default
    writer, read by the gate's own ``agent_seat``), else None."""
    from letterbox_tui.core.write import agent_seat as from_env

    agent = from_env(environ)
    return agent if agent and agent in seats else None


class Completer:
    """Names (ids, thread labels) to complete from, newest first: a prefix is found by
    bisection, a part anywhere by one pass over casefolded names that stops at ``limit``
    (a few milliseconds at 100,000 letters)."""

    def __init__(self, names) -> None:
        self.folded = sorted((n.casefold(), n) for n in set(names))

    def complete(self, text: str, limit: int = 5) -> list[str]:
        """Names that start with ``text`` (newest first), then names that hold it."""
        if not text:
            return []
        low = text.casefold()
        lo = bisect_left(self.folded, (low,))
        hi = bisect_left(self.folded, (low + "\U0010ffff",), lo)
        out = [self.folded[i][1] for i in range(hi - 1, max(lo, hi - limit) - 1, -1)]
        if len(out) < limit and len(low) >= 3:
            for i in range(len(self.folded) - 1, -1, -1):
                folded, name = self.folded[i]
                if low in folded and not folded.startswith(low):
                    out.append(name)
                    if len(out) >= limit:
                        break
        return out


class Pointers:
    """The letterbox's ids, for checking and completing pointers as they are typed, with
    the write gate's own index so the form and the gate agree. Built once per scan, off the
    UI thread (``for_model``): at 100,000 letters it takes a few tenths of a second."""

    def __init__(self, snapshot: Snapshot) -> None:
        from letterbox_tui.core.write import IdIndex

        self.index = IdIndex(snapshot)
        self.partial = snapshot.scope.partial
        self.ids = Completer(self.index.letters)
        self.labels = Completer(set(self.index.thread_labels) | set(self.index.letters))

    def problem(self, key: str, value: str) -> str | None:
        """Why ``value`` cannot be the ``key`` pointer, or None."""
        if not value:
            return None
        if key == "thread":
            return None if valid_id(value) else (
                f"thread {value[:40]!r} is not of id shape (A-Z a-z 0-9 _ . : -, at most 128)")
        if not valid_id(value):
            return f"{key} {value[:40]!r} is not a valid id"
        try:
            self.index.one(key, value)
        except LetterboxError as exc:
            if self.partial and not self.index.letters.get(value):
                return None  # other seats were not scanned: the gate checks the whole letterbox
            return str(exc)
        return None

    def complete(self, text: str, limit: int = 5, *, thread: bool = False) -> list[str]:
        """Ids (``thread``: thread labels too) that start with ``text``, then those that
        hold it (case-insensitive)."""
        return (self.labels if thread else self.ids).complete(text, limit)


#: the last scan's model (weakly: an old scan is never kept alive) and its Pointers, so
#: every form after the first is instant
_LAST: list = []


def cached_pointers(model) -> Pointers | None:
    return _LAST[1] if _LAST and _LAST[0]() is model else None


def pointers_for(model) -> Pointers:
    """The model's ``Pointers`` (built now unless cached; call it in a worker)."""
    found = cached_pointers(model)
    if found is None:
        found = Pointers(model.snapshot)
        _LAST[:] = [weakref.ref(model), found]
    return found


def deadline_when(value: str, now: datetime) -> datetime | None:
    """The deadline typed (RFC 3339 with an offset, or relative: ``+2d``), or None: read
    with the query language's ``parse_when``, as the write gate reads it."""
    if not value:
        return None
    return parse_when(value, now)


def _relative(value: str) -> bool:
    from letterbox_tui.core.query import is_relative

    return is_relative(value)


def deadline_note(value: str, now: datetime) -> str:
    """The deadline read back as the user typed it, with UTC (what the letter holds) and
    how far off it is: ``2026-12-01T17:00:00+02:00 (15:00Z UTC), in 2d 2h``."""
    when = deadline_when(value, now)
    if when is None:
        return ""
    utc = when.astimezone(timezone.utc)
    # a relative time read back to the second (it showed microseconds: 10:10:34.158374)
    shown = value if not _relative(value) else f"{value} = {when.isoformat(timespec='seconds')}"
    same = when.utcoffset() == utc.utcoffset()
    stamp = utc.strftime("%Y-%m-%dT%H:%M:%SZ")
    left = utc - now.astimezone(timezone.utc)
    far = f"in {span(left)}" if left.total_seconds() >= 0 else f"{span(left)} ago"
    return f"{shown}" + ("" if same else f" (written in UTC: {stamp})") + f", {far}"


def reply_kind(x: Letter, seat: str, accepted: bool) -> str:
    """The reply kind a reply form starts with: the first the gate's rule allows this seat
    (``ack`` on a task not yet acked; ``result`` once it is, or on a letter that is not a
    task; ``info`` when the seat may not close it)."""
    from letterbox_tui.core.write import REPLY_ORDER, reply_refusal

    return next((k for k in REPLY_ORDER if reply_refusal(x, k, seat, accepted=accepted) is None), "info")


def problems(kind: str, v: dict, pointers: Pointers | None, now: datetime, *, letter_type: str | None = None,
             reply_to: Letter | None = None, accepted: bool = False) -> list[str]:
    """Everything that stops this form from being sent, at once (empty: ready).
    ``letter_type``: the type the letter will have when the form has no Type field;
    ``reply_to``: the letter a reply form answers (``accepted``: whether it is acked),
    checked with the write gate's own rule as the seat and kind are chosen."""
    out = []
    if not v.get("as"):
        out.append("choose the seat you write as")
    elif kind == "reply" and reply_to is not None:
        from letterbox_tui.core.write import reply_refusal

        why = reply_refusal(reply_to, str(v.get("kind") or ""), v["as"], accepted=accepted)
        if why:
            out.append(why)
    if kind in ("compose", "supersede", "dispute", "rule") and not v.get("to"):
        out.append("choose the seat it goes to")
    if kind == "rule" and v.get("upholds") is None:
        out.append("choose the letter to uphold, or none")
    if kind != "review":
        slug = v.get("slug", "")
        if kind != "reply" and not slug:
            out.append("a slug is needed (a-z, 0-9 and -)")
        elif slug and SLUG_RE.fullmatch(slug) is None:
            out.append(f"slug {slug!r} may hold only a-z, 0-9 and - (not starting with -)")
        elif slug and kind != "reply":
            from letterbox_tui.core.write import id_room_problem  # the gate's rule (issue 18.12)

            why = id_room_problem(v.get("as", ""), v.get("to") or v.get("as", ""),
                                  str(v.get("type") or letter_type or ""), slug, bool(v.get("task")))
            if why:
                out.append(why)
    deadline = v.get("deadline", "")
    if deadline and deadline_when(deadline, now) is None:
        out.append("the deadline needs RFC 3339 with an offset (2026-12-01T17:00:00Z) or +2d, +36h")
    if kind == "compose" and v.get("type") in MUST_BE_TASK and not v.get("task"):
        out.append(f"a {v.get('type')} is a task (protocol v0.5)")
    if pointers is not None:
        for key in ("re", "thread", "supersedes"):
            why = pointers.problem(key, v.get(key, ""))
            if why:
                out.append(why)
    subject = v.get("subject", "")
    if "\n" in subject or len(subject) > 200:
        out.append("the subject is one line of at most 200 characters")
    if not str(v.get("body", "")).strip():
        out.append("the body is empty")
    return out


def duplicate_disputes(res, marked: list[Letter]) -> list[Letter]:
    """Open disputes that already name every one of the marked letters."""
    wanted = {x.id for x in marked}
    return [d.dispute for d in res.open_disputes() if wanted <= set(d.dispute.disputes or ())]

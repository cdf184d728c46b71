"""A seat's inbox as the protocol's ``letterbox check`` lists it (SPEC 7 ``inbox``), with
our answers beside each letter.

Every readable letter in ``<seat>/inbox/``, live work first and stale work last, each part
newest activity first. A letter's *activity* is, as the protocol reckons it, the latest of:
the time its id begins with (``YYYY-MM-DDTHHMMSS``, UTC), else its file's modification
time; the ack sidecar's ``acked_at``; its ``progress_at``. A letter is *stale* when its
activity is more than ``stale_days`` days before the clock: exactly that old is still live
(the protocol's ``age > LETTERBOX_CHECK_STALE_DAYS * 86400``). ``recent`` hides the stale
ones and counts them. Unreadable files in that inbox are listed apart (the protocol's
``MALFORMED`` lines).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import LetterboxError
from ..grammar import id_time, parse_time
from ..model import Letter
from ..references import display_id
from ..resolve import Resolution
from ..rows import row
from ..sidecar import age, progress_of, read_sidecar
from ..text import clean

#: the protocol's default for ``LETTERBOX_CHECK_STALE_DAYS``
STALE_DAYS = 14


@dataclass(frozen=True)
class InboxItem:
    letter: Letter
    activity: datetime
    activity_from: str  # "id", "mtime", "acked_at" or "progress_at": what set the activity
    stale: bool


@dataclass(frozen=True)
class InboxView:
    seat: str
    at: datetime
    stale_days: int
    items: list[InboxItem]  # live first, then stale (none when ``recent``)
    hidden: int  # stale letters ``recent`` left out
    unreadable: list[dict[str, str]]

    @property
    def live(self) -> int:
        return sum(not i.stale for i in self.items)

    @property
    def stale(self) -> int:
        return sum(i.stale for i in self.items) + self.hidden


def _activity(root: str, letter: Letter, res: Resolution) -> tuple[datetime, str]:
    when = id_time(letter.id)
    basis = "id"
    if when is None:
        when = datetime.fromtimestamp(letter.mtime_ns / 1e9, timezone.utc)
        basis = "mtime"
    if res.snapshot.has_sidecar(letter):
        fields = read_sidecar(root, letter) or {}
        for key in ("acked_at", "progress_at"):
            stamp = parse_time(fields.get(key) or "")
            if stamp is not None and stamp > when:
                when, basis = stamp, key
    return when, basis


def inbox_view(res: Resolution, seat: str, at: datetime, *, stale_days: int = STALE_DAYS,
               recent: bool = False) -> InboxView:
    """``seat``'s inbox at the clock ``at`` (see the module's docstring)."""
    root = str(res.snapshot.root)
    bound = timedelta(days=stale_days)
    items = []
    for letter in res.snapshot.letters:
        if letter.seat != seat or letter.folder != "inbox":
            continue
        when, basis = _activity(root, letter, res)
        items.append(InboxItem(letter, when, basis, max(at - when, timedelta(0)) > bound))
    items.sort(key=lambda i: (i.stale, -i.activity.timestamp(), i.letter.path))
    hidden = 0
    if recent:
        hidden = sum(i.stale for i in items)
        items = [i for i in items if not i.stale]
    unreadable = [{"path": u.path, "error": u.error} for u in res.snapshot.unreadable
                  if u.seat == seat and u.folder == "inbox"]
    return InboxView(seat, at, stale_days, items, hidden, sorted(unreadable, key=lambda u: u["path"]))


def _utc(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def inbox_json(view: InboxView, res: Resolution) -> dict[str, Any]:
    """The ``inbox --json`` document (``core.schema.InboxDocument``)."""
    root = str(res.snapshot.root)
    letters = []
    for i in view.items:
        progress = progress_of(root, i.letter, res.snapshot)
        letters.append({
            "display_id": display_id(i.letter.id),
            "activity": _utc(i.activity),
            "activity_from": i.activity_from,
            "age": age(view.at, i.activity),
            "stale": i.stale,
            "progress": None if progress is None else progress.to_json(),
            "letter": row(i.letter, res),
        })
    return {
        "seat": view.seat,
        "at": _utc(view.at),
        "stale_days": view.stale_days,
        "counts": {"letters": len(view.items) + view.hidden, "live": view.live, "stale": view.stale,
                   "hidden": view.hidden},
        "letters": letters,
        "unreadable": view.unreadable,
        "scope": res.snapshot.scope.to_json(),
    }


def stale_days_from(environ: os._Environ[str] | dict[str, str]) -> int:
    """``LETTERBOX_CHECK_STALE_DAYS`` (default 14): a whole number of days, else
    ``LetterboxError`` saying so."""
    raw = environ.get("LETTERBOX_CHECK_STALE_DAYS", "")
    if raw == "":
        return STALE_DAYS
    if not raw.isascii() or not raw.isdigit():
        raise LetterboxError(f"LETTERBOX_CHECK_STALE_DAYS {clean(raw, single_line=True)!r}: "
                             "expected a whole number of days")
    return int(raw)

"""What is owed (SPEC 7 ``owed``): open tasks, not superseded, not answered, by the seat
that owes them (the recipient), late first (most overdue first), then by deadline, then
those without one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .model import Letter
from .views.order import time_key

if TYPE_CHECKING:  # (the app's first frame imports this module, not the resolver)
    from .resolve import Resolution


@dataclass(slots=True)
class OwedGroup:
    seat: str
    items: list[Letter]


def is_owed(letter: Letter, res: Resolution) -> bool:
    """A task whose state is not closed, not superseded, and not answered."""
    if not letter.task:
        return False
    if res.state(letter).value == "closed":
        return False
    if res.superseded(letter).yes:
        return False
    return not res.answered(letter).yes


def _order(letter: Letter, res: Resolution) -> tuple:
    late = res.late(letter).yes
    d = letter.deadline_at
    # late first (earliest deadline = most overdue); then by deadline; then ambiguous
    # deadlines; then no deadline. Ties by sent time, then id, then path.
    bucket = 0 if late else 1 if d is not None else 2 if letter.deadline else 3
    dkey = d.timestamp() if d is not None else 0.0
    return (bucket, dkey, *time_key(letter))


def owed(res: Resolution, seat: str | None = None) -> list[OwedGroup]:
    """Owed tasks grouped by the seat that owes them, seats in name order."""
    by_seat: dict[str, list[Letter]] = {}
    kept = getattr(res, "owed_letters", None)  # the store's: the letters owed when it kept the answers
    candidates = kept(seat) if kept is not None else None
    for letter in res.snapshot.letters if candidates is None else candidates:
        if seat is not None and letter.recipient != seat:
            continue
        if is_owed(letter, res):
            by_seat.setdefault(letter.recipient, []).append(letter)
    return [
        OwedGroup(s, sorted(items, key=lambda x: _order(x, res)))
        for s, items in sorted(by_seat.items())
    ]


def any_late(groups: list[OwedGroup], res: Resolution) -> bool:
    return any(res.late(x).yes for g in groups for x in g.items)


def format_time(at: datetime) -> str:
    """RFC 3339, ``Z`` for UTC."""
    return at.isoformat().replace("+00:00", "Z")

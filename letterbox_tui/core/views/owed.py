"""Owed & late (SPEC 7 ``owed``), as both faces show it: the groups and their order come
from ``core.owed``; this adds how each item stands at the clock, and each group's counts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import Answer, Letter
from ..owed import format_time, owed
from ..resolve import Resolution
from ..rows import row


@dataclass(slots=True, frozen=True)
class OwedItem:
    letter: Letter
    late: Answer
    answered: Answer
    #: "late" (``late`` yes), "uncertain" (late or answered unknown), "due" (a deadline
    #: ahead), "ambiguous-deadline", "no-deadline"
    standing: str
    #: late: how overdue; due: how long is left; else None
    delta: timedelta | None = None
    #: uncertain: the codes of the reasons (late's when late is unknown, else answered's)
    codes: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class OwedGroup:
    seat: str
    items: tuple[OwedItem, ...]

    @property
    def late(self) -> int:
        return sum(1 for i in self.items if i.late.yes)

    @property
    def uncertain(self) -> int:
        return sum(1 for i in self.items if i.late.unknown or i.answered.unknown)


@dataclass(slots=True, frozen=True)
class OwedView:
    at: datetime
    seat: str | None
    groups: tuple[OwedGroup, ...]
    res: Resolution

    @property
    def total(self) -> int:
        return sum(len(g.items) for g in self.groups)

    @property
    def late(self) -> int:
        return sum(g.late for g in self.groups)

    def most_overdue_first(self) -> tuple[OwedItem, ...]:
        """Every item across seats in the order ``owed`` keeps within a seat: late first,
        most overdue first; then by deadline; then ambiguous deadlines; then none. The
        first is the most urgent item."""
        from ..owed import _order

        items = [i for g in self.groups for i in g.items]
        return tuple(sorted(items, key=lambda i: _order(i.letter, self.res)))

    @property
    def any_late(self) -> bool:
        """What ``owed --fail-late`` exits 1 for: an item whose late is ``yes``."""
        return any(i.late.yes for g in self.groups for i in g.items)

    def to_json(self) -> dict:
        """The ``owed --json`` document."""
        res = self.res
        return {
            "at": format_time(self.at),
            "owed": [{"seat": g.seat, "items": [row(i.letter, res) for i in g.items]} for g in self.groups],
            "scope": res.snapshot.scope.to_json(),
        }


def standing(x: Letter, res: Resolution, at: datetime) -> OwedItem:
    late = res.late(x)
    answered = res.answered(x)
    if late.yes and x.deadline_at is not None:
        return OwedItem(x, late, answered, "late", at - x.deadline_at)
    if late.unknown or answered.unknown:
        reasons = late.reasons if late.unknown else answered.reasons
        return OwedItem(x, late, answered, "uncertain", codes=tuple(sorted({r.code for r in reasons})))
    if x.deadline_at is not None:
        return OwedItem(x, late, answered, "due", x.deadline_at - at)
    if x.deadline:
        return OwedItem(x, late, answered, "ambiguous-deadline")
    return OwedItem(x, late, answered, "no-deadline")


def owed_view(res: Resolution, seat: str | None = None) -> OwedView:
    """What is owed at the resolution's clock, by the seat that owes it."""
    groups = tuple(
        OwedGroup(g.seat, tuple(standing(x, res, res.at) for x in g.items)) for g in owed(res, seat)
    )
    return OwedView(res.at, seat, groups, res)

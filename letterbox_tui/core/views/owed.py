"""Owed & late (SPEC 7 ``owed``), as both faces show it: the items and their groups come
from ``core.owed``; this adds how each item stands at the clock, its attention codes
(``core.views.attention``), the order by them (most urgent code first, then ``owed``'s own
order), a filter by code, and the counts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..model import Answer, Letter
from ..owed import _order, format_time, owed
from ..records import Records
from ..resolve import Resolution
from ..rows import row
from .attention import CODES, Code, Rules, attention, counts_text, most_urgent


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
    #: the attention codes, most urgent first
    attention: tuple[Code, ...] = ()


@dataclass(slots=True, frozen=True)
class OwedGroup:
    seat: str
    items: tuple[OwedItem, ...]

    @property
    def late(self) -> int:
        return sum(1 for i in self.items if i.late.yes)

    @property
    def late_unknown(self) -> int:
        return sum(1 for i in self.items if i.late.unknown)

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
        """Every item across seats by deadline alone: late first, most overdue first; then
        by deadline; then ambiguous deadlines; then none."""
        items = [i for g in self.groups for i in g.items]
        return tuple(sorted(items, key=lambda i: _order(i.letter, self.res)))

    def by_urgency(self) -> tuple[OwedGroup, ...]:
        """The groups (seats in name order) with each seat's items by their most urgent
        attention code, then in ``core.owed``'s order: what ``owed`` prints as text.
        ``groups`` and the JSON keep the order SPEC 7 fixes (late first, then by deadline)."""
        # each seat's items are in ``core.owed``'s order already: a stable sort by the code
        # alone keeps it among items of the same code (``_urgency`` without asking again)
        return tuple(OwedGroup(g.seat, tuple(sorted(g.items, key=lambda i: most_urgent(i.attention))))
                     for g in self.groups)

    def most_urgent_first(self) -> tuple[OwedItem, ...]:
        """Every item across seats in the order ``owed`` keeps within a seat: by its most
        urgent attention code, then as ``most_overdue_first``. The first is the most urgent."""
        items = [i for g in self.groups for i in g.items]
        return tuple(sorted(items, key=lambda i: _urgency(i, self.res)))

    def only(self, codes: tuple[str, ...] | frozenset[str]) -> OwedView:
        """The items carrying one of ``codes`` (known or unknown), in the same order; a
        seat left with none is left out (``owed --attention``, the app's filter)."""
        wanted = frozenset(codes)
        groups = (OwedGroup(g.seat, tuple(i for i in g.items if carries(i, wanted))) for g in self.groups)
        return OwedView(self.at, self.seat, tuple(g for g in groups if g.items), self.res)

    def most_urgent_item(self) -> OwedItem | None:
        """The first of ``most_urgent_first``, without sorting them all nor ordering every
        item: each seat's items are in ``core.owed``'s order already, so a seat's first item
        of its most urgent code is the only one of it that can come first, and only those
        few are ordered (ties go to the earlier seat, as the whole order has them)."""
        firsts = []
        for g in self.groups:
            ranks = [most_urgent(i.attention) for i in g.items]
            if ranks:
                rank = min(ranks)
                firsts.append((rank, g.items[ranks.index(rank)]))
        if not firsts:
            return None
        top = min(rank for rank, _ in firsts)
        return min((i for rank, i in firsts if rank == top), key=lambda i: _order(i.letter, self.res))

    def counts(self) -> dict[str, dict[str, int]]:
        """How many items carry each code (``known``) and how many carry it unknown."""
        out = {code: {"known": 0, "unknown": 0} for code in CODES}
        for g in self.groups:
            for i in g.items:
                for c in i.attention:
                    out[c.code]["unknown" if c.unknown else "known"] += 1
        return out

    @property
    def any_late(self) -> bool:
        """What ``owed --fail-late`` exits 1 for: an item whose late is ``yes``."""
        return any(i.late.yes for g in self.groups for i in g.items)

    def to_json(self, rows: Callable[[Sequence[OwedItem], Callable[[OwedItem], dict]], Any] | None = None) -> dict:
        """The ``owed --json`` document. ``rows(items, make)``: what stands for a seat's list of
        ``make(item)`` (default: the list, made now; ``cli.output.Rows`` makes it as it is
        written)."""
        res = self.res

        def make(item: OwedItem) -> dict:
            return owed_row(item, res)

        return {
            "at": format_time(self.at),
            "owed": [{"seat": g.seat, "items": [make(i) for i in g.items] if rows is None else rows(g.items, make)}
                     for g in self.groups],
            "scope": res.snapshot.scope.to_json(),
        }


def carries(item: OwedItem, codes: frozenset[str]) -> bool:
    """Does ``item`` carry one of ``codes``, known or unknown?"""
    return any(c.code in codes for c in item.attention)


def owed_row(item: OwedItem, res: Resolution) -> dict:
    """An ``owed`` row: the query row and the item's ``attention``."""
    out = row(item.letter, res)
    out["attention"] = [c.to_json() for c in item.attention]
    return out


def _urgency(item: OwedItem, res: Resolution) -> tuple:
    return (most_urgent(item.attention), *_order(item.letter, res))


def standing(x: Letter, res: Resolution, at: datetime, attention: tuple[Code, ...] = ()) -> OwedItem:
    late = res.late(x)
    answered = res.answered(x)
    if late.yes and x.deadline_at is not None:
        return OwedItem(x, late, answered, "late", at - x.deadline_at, attention=attention)
    if late.unknown or answered.unknown:
        reasons = late.reasons if late.unknown else answered.reasons
        return OwedItem(x, late, answered, "uncertain", codes=tuple(sorted({r.code for r in reasons})), attention=attention)
    if x.deadline_at is not None:
        return OwedItem(x, late, answered, "due", x.deadline_at - at, attention=attention)
    if x.deadline:
        return OwedItem(x, late, answered, "ambiguous-deadline", attention=attention)
    return OwedItem(x, late, answered, "no-deadline", attention=attention)


def owed_view(res: Resolution, seat: str | None = None, *, rules: Rules | None = None,
              records: Records | None = None, codes: tuple[str, ...] = (),
              with_attention: bool = True) -> OwedView:
    """What is owed at the resolution's clock, by the seat that owes it (in SPEC 7's order,
    ``core.owed``'s; ``by_urgency`` orders each seat's items by their codes), each item with its
    attention codes (``rules``: default the letterbox's settings; ``records``: read from
    the snapshot's letterbox). ``codes``: keep only items carrying one of them (known or
    unknown); a seat left with none is left out. ``with_attention=False``: no codes, the
    items in ``core.owed``'s order (a face whose answers cannot give the codes yet)."""
    at = res.at
    if not with_attention:
        return OwedView(at, seat, tuple(OwedGroup(g.seat, tuple(standing(x, res, at) for x in g.items))
                                        for g in owed(res, seat)), res)
    if rules is None:
        rules = Rules.of_letterbox(str(res.snapshot.root))
    if records is None:
        records = Records(res.snapshot)
    found = owed(res, seat)
    items = [x for g in found for x in g.items]
    warm = getattr(res, "warm_children", None)  # the store's: every item's children found together
    if warm is not None:
        warm(items)
    records.warm_sidecars(items)
    groups = tuple(OwedGroup(g.seat, tuple(standing(x, res, at, attention(x, res, at, rules, records)) for x in g.items))
                   for g in found)
    view = OwedView(at, seat, groups, res)
    return view.only(codes) if codes else view


def attention_codes(values: list[str] | None, option: str = "--attention") -> tuple[str, ...]:
    """``--attention CODE`` (repeatable), each one of ``CODES``; else ``LetterboxError``
    naming ``option`` (the MCP tool's argument is ``attention``)."""
    from ..errors import LetterboxError

    out = []
    for value in values or ():
        if value not in CODES:
            raise LetterboxError(f"{option} {value!r}: one of {', '.join(CODES)}")
        out.append(value)
    return tuple(out)


def nothing_owed(scope, codes: tuple[str, ...] = ()) -> str:
    """What an empty ``owed`` says (``Scope.none_found``). ``codes``: the filter."""
    which = f" with attention {' or '.join(codes)}" if codes else ""
    return scope.none_found("nothing owed" + which)


def attention_line(item: OwedItem) -> str:
    """The item's codes on one line: ``late (due …, 2d overdue) · never-acked (…)``."""
    return " · ".join(f"{c.code} ({c.detail})" for c in item.attention)


def counts_line(view: OwedView) -> str:
    """``late 2, never-acked 3 (1 unknown), …``: each code some item carries."""
    return counts_text(view.counts())

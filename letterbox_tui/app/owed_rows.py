"""Owed & late as the reader arranges it: by owing seat (seats fold with ``z``, ``Z`` folds
or unfolds them all, ``{``/``}`` jump between them) or most overdue first across seats
(``o`` switches). Both orders come from the core's ``OwedView`` (``core.views.owed``);
here they only become list rows. The rows of a letter are the model's own (built in the
scan worker, with the holder's progress note), so switching costs no file read. Each
arrangement is made once per model (``model.arranged``): the default one in the scan
worker (``model.compute``), so opening or returning to the view rebuilds nothing.
"""

from __future__ import annotations

from textual.content import Content

from .sanitize import clean
from .widgets.letter_list import ListRow

BY_SEAT = "seat"
MOST_OVERDUE = "overdue"
ORDER_WORDS = {BY_SEAT: "by owing seat, late first", MOST_OVERDUE: "most overdue first, across seats"}


_LETTER = ListRow.__dict__["letter"]  # ListRow's slot for its letter


class LazyRow(ListRow):
    """A row whose letter is made from ``make(key)`` when first asked for: Owed & late from
    the derived index has 16,000 rows at 100,000 letters and draws a screenful."""

    __slots__ = ("_make",)

    def __init__(self, key: str, make, **kw) -> None:
        self._make = make
        super().__init__(key, None, **kw)

    @property  # type: ignore[override]
    def letter(self):
        x = _LETTER.__get__(self)
        if x is None and self._make is not None:
            x = self._make(self.key)
            _LETTER.__set__(self, x)
            self._make = None
        return x

    @letter.setter
    def letter(self, value) -> None:
        _LETTER.__set__(self, value)


def owed_rows(model, order: str = BY_SEAT, folded: frozenset[str] | set[str] = frozenset()) -> list[ListRow] | None:
    """The Owed & late rows in ``order``; None while the view is being computed."""
    if model.views.get("view:owed") is None or model.owed is None:
        return None
    key = (order, frozenset(folded))
    rows = model.arranged.get(key)
    if rows is None:
        rows = model.arranged[key] = _arranged(model, order, key[1])
    return rows


def _arranged(model, order: str, folded: frozenset[str]) -> list[ListRow]:
    base = model.views["view:owed"]
    view = model.owed
    by_path = {row.key: row for row in base if row.heading is None}
    if order == MOST_OVERDUE:
        items = view.most_overdue_first()
        seats = len(view.groups)
        head = Content.assemble(
            (" Most overdue first, across ", ""), (f"{seats} seat{'s' if seats != 1 else ''}", "bold"),
            (f": {len(items)} owed", ""), (f" · {view.late} late" if view.late else "", "$late"))
        rows = [ListRow("group:all", heading=head)]
        rows.extend(by_path[i.letter.path] for i in items if i.letter.path in by_path)
        return rows
    rows: list[ListRow] = []
    for group in view.groups:
        closed = group.seat in folded
        heading = Content.assemble(
            (" ▸ " if closed else " ▾ ", "$text-muted"), clean(group.seat, single_line=True, style="bold"),
            (" owes ", ""), (group_counts(group), "$late" if group.late else ""),
            ("   (z unfolds)" if closed else "", "$text-muted"),
        )
        rows.append(ListRow(f"group:{group.seat}", heading=heading, item=group, extra={"fold": group.seat}))
        if not closed:
            rows.extend(by_path[i.letter.path] for i in group.items if i.letter.path in by_path)
    return rows


def group_counts(group) -> str:
    """What a seat's heading counts: ``4 · 1 late · 2 uncertain``."""
    words = [f"{len(group.items)}"]
    if group.late:
        words.append(f"{group.late} late")
    if group.uncertain:
        words.append(f"{group.uncertain} uncertain")
    return " · ".join(words)


def most_urgent_key(model) -> str | None:
    """The row key of the most urgent owed item (the most overdue, else the soonest due)."""
    view = model.owed
    if view is None:
        return None
    key = ("most urgent",)
    if key not in model.arranged:
        # the first of ``view.most_overdue_first()``: each seat's items are in that order
        # already, so it is the first of the seats' first items in it (a stable sort's first)
        from letterbox_tui.core.owed import _order

        firsts = [g.items[0] for g in view.groups if g.items]
        first = min(firsts, key=lambda i: _order(i.letter, view.res)) if firsts else None
        model.arranged[key] = first.letter.path if first is not None else None
    return model.arranged[key]

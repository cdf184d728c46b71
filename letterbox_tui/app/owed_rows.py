"""Owed & late as the reader arranges it: by owing seat (seats fold with ``z``, ``Z`` folds
or unfolds them all, ``{``/``}`` jump between them) or most overdue first across seats
(``o`` switches). Both orders come from the core's ``OwedView`` (``core.views.owed``);
here they only become list rows. The rows of a letter are the model's own (built in the
worker that builds the view, with the holder's progress note), so switching costs no file
read. Each arrangement is made once per model (``model.arranged``): the default one where
the view is built (``model.compute``), so opening or returning to the view rebuilds
nothing.
"""

from __future__ import annotations

from textual.content import Content

from .sanitize import clean
from .widgets.letter_list import ListRow

BY_SEAT = "seat"
MOST_OVERDUE = "overdue"
ORDER_WORDS = {BY_SEAT: "by owing seat, late first", MOST_OVERDUE: "most overdue first, across seats"}


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
    tally = tallies(model)
    by_path = {row.key: row for row in base if row.heading is None}
    if order == MOST_OVERDUE:
        items = view.most_overdue_first()
        seats = len(view.groups)
        late = sum(n for n, _ in tally.values())  # (``view.late``)
        head = Content.assemble(
            (" Most overdue first, across ", ""), (f"{seats} seat{'s' if seats != 1 else ''}", "bold"),
            (f": {len(items)} owed", ""), (f" · {late} late" if late else "", "$late"))
        rows = [ListRow("group:all", heading=head)]
        rows.extend(by_path[i.letter.path] for i in items if i.letter.path in by_path)
        return rows
    rows: list[ListRow] = []
    for group in view.groups:
        closed = group.seat in folded
        heading = Content.assemble(
            (" ▸ " if closed else " ▾ ", "$text-muted"), clean(group.seat, single_line=True, style="bold"),
            (" owes ", ""), (group_counts(group, tally[group.seat]), "$late" if tally[group.seat][0] else ""),
            ("   (z unfolds)" if closed else "", "$text-muted"),
        )
        rows.append(ListRow(f"group:{group.seat}", heading=heading, item=group, extra={"fold": group.seat}))
        if not closed:
            rows.extend(by_path[i.letter.path] for i in group.items if i.letter.path in by_path)
    return rows


def tallies(model) -> dict[str, tuple[int, int]]:
    """Per owing seat, its late and uncertain items (``OwedGroup.late``, ``.uncertain``),
    counted once per model (each heading says them, and each walks the seat's items)."""
    key = ("tallies",)
    got = model.arranged.get(key)
    if got is None:
        got = model.arranged[key] = {
            g.seat: (sum(1 for i in g.items if i.late.yes),
                     sum(1 for i in g.items if i.late.unknown or i.answered.unknown)) for g in model.owed.groups}
    return got


def group_counts(group, tally: tuple[int, int] | None = None) -> str:
    """What a seat's heading counts: ``4 · 1 late · 2 uncertain`` (``tally``: its late and
    uncertain items, when counted already)."""
    late, uncertain = tally if tally is not None else (group.late, group.uncertain)
    words = [f"{len(group.items)}"]
    if late:
        words.append(f"{late} late")
    if uncertain:
        words.append(f"{uncertain} uncertain")
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

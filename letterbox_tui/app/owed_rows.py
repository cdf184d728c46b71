"""Owed & late as the reader arranges it: by owing seat (seats fold with ``z``, ``Z`` folds
or unfolds them all, ``{``/``}`` jump between them) or most overdue first across seats
(``o`` switches). Both orders come from the core's ``OwedView`` (``core.views.owed``);
here they only become list rows. The rows of a letter are the model's own (built in the
scan worker, with the holder's progress note), so switching costs no file read.
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
    base = model.views.get("view:owed")
    view = model.owed
    if base is None or view is None:
        return None
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
    items = view.most_overdue_first()
    return items[0].letter.path if items else None

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
#: a partial model (from the index) reads the letters and notes of this many rows each
#: side of the cursor the list opens on and of each seat's heading, before it is shown
#: (a terminal this high opens, and goes to the top, the bottom or a seat, without waiting
#: for the rest: ``AppModel.from_preview``)
WINDOW = 80
MOST_OVERDUE = "overdue"
ORDER_WORDS = {BY_SEAT: "by owing seat, late first", MOST_OVERDUE: "most overdue first, across seats"}


_SLOT = {name: ListRow.__dict__[name] for name in ("key", "letter", "heading", "note", "note_style", "depth",
                                                  "item", "extra")}  # ListRow's slots, each set as is
_LETTER, _EXTRA, _NOTE, _STYLE = _SLOT["letter"], _SLOT["extra"], _SLOT["note"], _SLOT["note_style"]


class LazyRow(ListRow):
    """A row whose letter and extra fields (the holder's progress note) are made by
    ``make.row(key)`` (a pair), and whose note and its style by ``make.note(item)``, each
    when first asked for: Owed & late from the derived index has 16,000 rows at 100,000
    letters and draws a screenful."""

    __slots__ = ("_make", "_item")

    def __init__(self, key: str, make, item) -> None:
        # (not ListRow's own: each field it set would go through the properties below)
        _SLOT["key"].__set__(self, key)
        _SLOT["heading"].__set__(self, None)
        _SLOT["depth"].__set__(self, 0)
        _SLOT["item"].__set__(self, None)
        _LETTER.__set__(self, None)
        _EXTRA.__set__(self, None)
        self._make = make
        self._item = item

    def _made(self) -> None:
        letter, extra = self._make.row(_SLOT["key"].__get__(self))
        _EXTRA.__set__(self, extra)
        _LETTER.__set__(self, letter)

    def _noted(self) -> None:
        note, style = self._make.note(self._item)
        _NOTE.__set__(self, note)
        _STYLE.__set__(self, style)
        self._item = None

    @property  # type: ignore[override]
    def letter(self):
        got = _LETTER.__get__(self)
        if got is None:
            self._made()
            got = _LETTER.__get__(self)
        return got

    @letter.setter
    def letter(self, value) -> None:
        _LETTER.__set__(self, value)

    @property  # type: ignore[override]
    def extra(self) -> dict:
        got = _EXTRA.__get__(self)
        if got is None:
            self._made()
            got = _EXTRA.__get__(self)
        return got

    @extra.setter
    def extra(self, value: dict) -> None:
        _EXTRA.__set__(self, value)

    @property  # type: ignore[override]
    def note(self) -> str:
        if self._item is not None:
            self._noted()
        return _NOTE.__get__(self)

    @note.setter
    def note(self, value: str) -> None:
        if self._item is not None:
            self._noted()
        _NOTE.__set__(self, value)

    @property  # type: ignore[override]
    def note_style(self) -> str:
        if self._item is not None:
            self._noted()
        return _STYLE.__get__(self)

    @note_style.setter
    def note_style(self, value: str) -> None:
        if self._item is not None:
            self._noted()
        _STYLE.__set__(self, value)


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

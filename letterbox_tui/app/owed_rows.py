"""Owed & late as the reader arranges it: by owing seat (seats fold with ``z``, ``Z`` folds
or unfolds them all, ``{``/``}`` jump between them) or most overdue first across seats
(``o`` switches), and filtered by one attention code (``a`` cycles through the codes
present, ``Esc`` clears). All of it comes from the core's ``OwedView``
(``core.views.owed``): each seat's items by their most urgent attention code, as ``owed``
prints them; the order across seats; the filter (``OwedView.only``) and the counts per
code. Here they only become list rows. The rows of a letter are the model's own (built in
the worker that builds the view, with the holder's progress note), so switching costs no
file read. Each arrangement is made once per model (``model.arranged``): the default one
where the view is built (``model.compute``), so opening or returning to the view rebuilds
nothing.

Each row shows its attention codes as badges with their age (``LATE 3d``, ``NO-ACK 2d``);
a narrow list folds them into one column of symbols (``BADGES``, the legend in help).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from textual.content import Content

from .sanitize import clean
from .widgets.letter_list import ListRow

if TYPE_CHECKING:  # (the status line, before the first frame, imports this module)
    from letterbox_tui.core.views.attention import Code

BY_SEAT = "seat"
MOST_OVERDUE = "overdue"
ORDER_WORDS = {BY_SEAT: "by owing seat, most urgent first", MOST_OVERDUE: "most overdue first, across seats"}


# --- badges -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Badge:
    """How one attention code is shown: its word on a wide row, its symbol in the narrow
    list's one column, its style, and what it means (the help's legend)."""

    word: str
    symbol: str
    style: str
    meaning: str


#: every code ``core.views.attention`` gives, most urgent first (``CODES``' order)
BADGES: dict[str, Badge] = {
    "late": Badge("LATE", "!", "bold $late", "late: past its deadline, unanswered; since the deadline"),
    "late-unknown": Badge("LATE?", "?", "bold $unknown", "late-unknown: the record cannot say whether it is late"),
    "never-acked": Badge("NO-ACK", "N", "bold $accent", "never-acked: no ack, sidecar or reply; since it was sent"),
    "accepted-silent": Badge("SILENT", "S", "$warning", "accepted-silent: acked, then silent for longer than silence"),
    "owner-blocked": Badge("BLOCKED", "B", "bold $error", "owner-blocked: the owing seat's status note says blocked"),
    "lease-silent": Badge("LEASE", "L", "$warning", "lease-silent: holds a lease, wrote nothing for over silence"),
    "due-soon": Badge("SOON", "D", "bold $due-soon", "due-soon: the deadline is within due_soon"),
    "waiting-on-human": Badge("HUMAN", "H", "$primary", "waiting-on-human: a person's seat owes it (human_seats)"),
    "owner-idle": Badge("IDLE", "I", "$text-muted", "owner-idle: the owing seat's status note says idle"),
    "chased": Badge("CHASED", "C", "$text-muted", "chased: asked how it stands (chase); since the last time"),
}
#: a code this version has no badge for: shown by its own name, never dropped
FOREIGN_SYMBOL = "*"
UNKNOWN_STYLE = "$unknown"


def badge_of(code: str) -> Badge:
    return BADGES.get(code) or Badge(code.upper(), FOREIGN_SYMBOL, UNKNOWN_STYLE, f"{code}: a code this version does not name")


def code_label(code: str) -> Content:
    """A code by its badge's word and its name: ``NO-ACK (never-acked)`` (a filter's label)."""
    b = badge_of(code)
    return Content.assemble(clean(b.word, single_line=True, style=b.style),
                            clean(f" ({code})", single_line=True, style="$text-muted"))


def age(since: datetime, at: datetime) -> str:
    """How long ago, in its largest unit: ``3d``, ``5h``, ``12m`` (``-2h``: ahead of the clock)."""
    delta = at - since
    sign = "-" if delta < timedelta(0) else ""
    secs = int(abs(delta).total_seconds())
    if secs >= 86400:
        return f"{sign}{secs // 86400}d"
    if secs >= 3600:
        return f"{sign}{secs // 3600}h"
    return f"{sign}{secs // 60}m"


def badge_text(c: Code, at: datetime) -> str:
    """One code as a badge's text: its word and age (``NO-ACK 2d``). A code whose record
    cannot be read says ``?`` for its age; a code with no time on record (a late that cannot
    be settled before its deadline) is its word alone."""
    word = badge_of(c.code).word
    if c.unknown:
        return f"{word} ?"
    return word if c.since is None else f"{word} {age(c.since, at)}"


def badge(c: Code, at: datetime) -> Content:
    """``badge_text`` in the code's style (an unknown one in the unknown style)."""
    return clean(badge_text(c, at), single_line=True, style=UNKNOWN_STYLE if c.unknown else badge_of(c.code).style)


def symbol(c: Code) -> Content:
    """One code as one cell: its symbol; lower case (or ``?``) in the unknown style when
    its record cannot be read."""
    b = badge_of(c.code)
    if c.unknown:
        return Content.styled(b.symbol.lower() if b.symbol.isalpha() else "?", UNKNOWN_STYLE)
    return Content.styled(b.symbol, b.style)


def attention_lines(codes: tuple[Code, ...], at: datetime) -> list[Content]:
    """An owed item's codes spelled out for the letter pane: each badge and its detail
    (the detail quotes the record, a status note's words included: sanitized)."""
    out = []
    for i, c in enumerate(codes):
        label = "Attention " if i == 0 else " " * 10
        shown = badge(c, at)
        out.append(Content.assemble((label, "$text-muted"), shown.pad_right(max(0, 11 - shown.cell_length)),
                                    (" ", ""), clean(c.detail, single_line=True, style="$unknown" if c.unknown else "")))
    return out


def fit(parts: list[Content], width: int, sep: str = " ") -> Content:
    """As many of ``parts`` as fit ``width`` whole, then ``+N`` for the rest."""
    for n in range(len(parts), 0, -1):
        shown = Content(sep).join(parts[:n])
        if n < len(parts):
            shown += Content.styled(f"{sep}+{len(parts) - n}", "$text-muted")
        if shown.cell_length <= width:
            return shown
    return Content(sep).join(parts).truncate(width, ellipsis=True)


def badges(codes: tuple[Code, ...], at: datetime, width: int) -> Content:
    """A row's codes as badges, most urgent first, in ``width`` cells."""
    return fit([badge(c, at) for c in codes], width, "  ")


def symbols(codes: tuple[Code, ...], width: int) -> Content:
    """A row's codes folded into one column of ``width`` symbols (``+`` when more)."""
    cells = [symbol(c) for c in codes]
    if len(cells) > width:
        cells = cells[:width - 1] + [Content.styled("+", "$text-muted")]
    return Content("").join(cells)


def counts_text(counts: dict[str, dict[str, int]], narrow: bool = False, active: str | None = None) -> Content:
    """Each code some owed item carries, with how many: ``LATE 2  NO-ACK 5 (1?)`` (narrow:
    ``!2 N5(1?)``); ``(1?)``: how many of them carry it unknown. ``active``: the filter's
    code, drawn reversed."""
    parts = []
    for code, n in counts.items():
        total = n["known"] + n["unknown"]
        if not total:
            continue
        b = badge_of(code)
        unknown = (f"({n['unknown']}?)" if narrow else f" ({n['unknown']}?)") if n["unknown"] else ""
        text = f"{b.symbol}{total}{unknown}" if narrow else f"{b.word} {total}{unknown}"
        style = b.style + (" reverse" if code == active else "")
        parts.append(clean(text, single_line=True, style=style))
    return Content(" " if narrow else "  ").join(parts)


def legend() -> list[Content]:
    """The help's legend: each code's badge and symbol, and what it means."""
    from letterbox_tui.core.views.attention import CODES

    lines = [Content.styled("Owed & late: attention (a cycles a filter by code, Esc clears it)", "bold")]
    for code in CODES:
        b = BADGES[code]
        lines.append(Content.assemble(("  ", ""), (b.symbol, b.style), ("  ", ""), (f"{b.word:<8}", b.style),
                                      (f" {b.meaning}", "")))
    lines.append(Content.styled(
        "  A badge's number is how long ago the record shows it began (LATE 3d: 3 days overdue; "
        "SOON: since due_soon before the deadline). From 110 columns the list shows the badges, "
        "below them one column of symbols. A lower-case symbol (or ?) and a badge ending in ? "
        "mean the record the code rests on cannot be read: unknown, with the reason in the "
        f"letter's Attention lines; {FOREIGN_SYMBOL} is a code this version does not name.", "$text-muted"))
    return lines


# --- the arrangements ---------------------------------------------------------------

def owed_rows(model, order: str = BY_SEAT, folded: frozenset[str] | set[str] = frozenset(),
              code: str | None = None) -> list[ListRow] | None:
    """The Owed & late rows in ``order``, only the items carrying ``code`` when given; None
    while the view is being computed."""
    if model.views.get("view:owed") is None or model.owed is None:
        return None
    key = (order, frozenset(folded), code)
    rows = model.arranged.get(key)
    if rows is None:
        rows = model.arranged[key] = _arranged(model, order, key[1], code)
    return rows


def shown_view(model, code: str | None):
    """The owed view the list shows: the whole, or only the items carrying ``code``."""
    if code is None:
        return model.owed
    key = ("only", code)
    got = model.arranged.get(key)
    if got is None:
        got = model.arranged[key] = model.owed.only((code,))
    return got


def _arranged(model, order: str, folded: frozenset[str], code: str | None) -> list[ListRow]:
    base = model.views["view:owed"]
    view = shown_view(model, code)
    tally = tallies(model)
    by_path = {row.key: row for row in base if row.heading is None}
    word = badge_of(code).word if code else ""
    if order == MOST_OVERDUE:
        items = view.most_overdue_first()
        seats = len(view.groups)
        late = sum(n for n, _ in tally.values())  # (``view.late``)
        if code:
            what = [(f": {model.owed.total} owed · {len(items)} with {word}", "")]
        else:
            what = [(f": {len(items)} owed", ""), (f" · {late} late" if late else "", "$late")]
        head = Content.assemble(
            (" Most overdue first, across ", ""), (f"{seats} seat{'s' if seats != 1 else ''}", "bold"), *what)
        rows = [ListRow("group:all", heading=head)]
        rows.extend(by_path[i.letter.path] for i in items if i.letter.path in by_path)
        return rows
    whole = {g.seat: g for g in model.owed.groups}
    rows: list[ListRow] = []
    for group in view.by_urgency():
        closed = group.seat in folded
        if code:
            counts = (f"{len(whole[group.seat].items)} · {len(group.items)} with {word}", "")
        else:
            counts = (group_counts(group, tally[group.seat]), "$late" if tally[group.seat][0] else "")
        heading = Content.assemble(
            (" ▸ " if closed else " ▾ ", "$text-muted"), clean(group.seat, single_line=True, style="bold"),
            (" owes ", ""), counts, ("   (z unfolds)" if closed else "", "$text-muted"),
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


def code_counts(model) -> dict[str, dict[str, int]]:
    """How many owed items carry each code (``OwedView.counts``), counted once per model."""
    key = ("counts",)
    got = model.arranged.get(key)
    if got is None:
        got = model.arranged[key] = model.owed.counts()
    return got


def codes_present(model) -> list[str]:
    """The codes some owed item carries, most urgent first: what ``a`` cycles through."""
    if model is None or model.owed is None:
        return []
    return [code for code, n in code_counts(model).items() if n["known"] or n["unknown"]]


def next_code(present: list[str], code: str | None, step: int = 1) -> str | None:
    """The filter after ``code`` (``step`` -1: before it): through ``present`` in order, then
    none (no filter), then round again."""
    ring: list[str | None] = [None, *present]
    i = ring.index(code) if code in ring else 0
    return ring[(i + step) % len(ring)]


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


def most_urgent_key(model, code: str | None = None) -> str | None:
    """The row key of the most urgent owed item (carrying ``code``, when given): the first
    of the most urgent code's items, the most overdue first (``OwedView.most_urgent_item``)."""
    if model.owed is None:
        return None
    key = ("most urgent", code)
    if key not in model.arranged:
        first = shown_view(model, code).most_urgent_item()
        model.arranged[key] = first.letter.path if first is not None else None
    return model.arranged[key]

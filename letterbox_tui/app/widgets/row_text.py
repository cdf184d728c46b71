"""One line of the letter list, laid out for the width it has.

From 110 columns a row has every column at full width; below, the time, the parties and
the type shrink so that the state mark, the subject and the deadline state always fit (at
80 columns the subject keeps ~24 cells). In Owed & late the row leads with its deadline
state (``LATE 2d 3h``, ``due in 5h``, ``due today 17:00``, ``no deadline``), then its
attention codes (badges from ``WIDE`` columns, one column of symbols below), and, when an
answer is uncertain, the reason, never instead of it. Its columns are fixed for the width
(``owed_columns``), whatever a row holds, under a header line (``owed_header``).

Everything here renders what the model holds; every string from a letter is sanitized.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo

from textual.content import Content

from letterbox_tui.core.check import Finding
from letterbox_tui.core.model import Letter
from letterbox_tui.core.times import clock_or_day, is_today, local

from ..model import DUE_SOON, MEASURES, letter_mark, short_time, span, status_note, status_style, type_style
from ..sanitize import clean, cleans
from .letter_list import ListRow

WIDE = 110
#: on a list too narrow for every column, the subject keeps this much: the note gives way
#: first, then the parties down to ``PARTIES_MIN`` (Owed & late's deadline to its widest,
#: its parties to their header)
SUBJECT_MIN = 12
PARTIES_MIN = 11


def deadline_state(x: Letter, at: datetime, late_yes: bool, zone: tzinfo | None = None) -> tuple[str, str]:
    """The deadline as it stands at ``at``: overdue by, due in, or none; "due today" is
    the display zone's today (``core.times.day_bounds``, as the query's ``today``)."""
    if x.deadline_at is None:
        return ("deadline ambiguous", "$unknown") if x.deadline else ("no deadline", "$text-muted")
    left = x.deadline_at - at
    if left.total_seconds() <= 0:
        return (f"LATE {span(-left)}", "bold $late") if late_yes else (f"past due {span(-left)}", "bold $late")
    if is_today(x.deadline_at, at, zone):
        return f"due today {local(x.deadline_at, zone):%H:%M}", "bold $due-soon"
    if left <= DUE_SOON:
        return f"due in {span(left)}", "bold $due-soon"
    return f"due in {span(left)}", ""


def describe(model, row: ListRow, width: int, owed: bool = False, fresh: bool = False) -> Content:
    x = row.letter
    f = row.item
    if isinstance(f, Finding) or not isinstance(x, Letter):
        if isinstance(f, Finding):
            sev = "!" if f.severity == "problem" else "·"
            code_w = 22 if width >= WIDE else 16
            return cleans(
                Content.styled(f"{sev} {f.code:<{code_w}} ", row.note_style or ""),
                (f.detail, ""),
                (("  " + ", ".join(f.paths[:2])) if f.paths else "", "$text-muted"),
            )
        return model.describe(row, width)  # anything else the model lists (a lease, ...)
    res = model.res
    mark, mstyle = letter_mark(x, res)
    wide = width >= WIDE
    indent = "  " * min(row.depth, 8) + ("└ " if row.depth else "")
    if x.sent_at is None:
        when = "?"
    elif wide:
        when = short_time(x.sent_at, model.at, model.zone)
    else:
        when = clock_or_day(x.sent_at, model.at, model.zone)
    when_w, parties_w, type_w = (12, 23, 9) if wide else (6, 15, 8)
    subject_text = x.subject or _slug(x)
    dim = "$text-muted" if res.current(x).no else ""
    new_mark = Content.styled("◆", "bold $success") if fresh else Content(" ")
    head = Content.assemble((mark, mstyle), new_mark, (indent, "$text-muted"))
    if owed:
        return owed_line(model, row, width, head)
    note = row.note or status_note(x, res)
    note_style = row.note_style or status_style(x, res)
    if x.type == "dispute":  # ruled and open disputes must not look alike
        rulings = res.rulings(x)
        if rulings:
            up = rulings[-1].upholds
            mark, mstyle = "⚖", "$text-muted"
            head = Content.assemble(("✓", "$closed"), new_mark, (indent, "$text-muted"))
            if not wide:
                note = "ruled"
            else:
                note = ("ruled: upholds " + up[:11] + "…") if up else "ruled: upholds nothing"
            note_style = "$closed"
            dim = "$text-muted"
        else:
            head = Content.assemble(("⚖", "bold $dispute"), new_mark, (indent, "$text-muted"))
            note, note_style = row.note or "OPEN dispute", "bold $dispute"
    note_w = 26 if wide else 16
    fixed = 2 + len(indent) + when_w + 1 + parties_w + 1 + type_w + 1
    if width - fixed - 2 - note_w < SUBJECT_MIN:  # a narrow list: the note gives way, then the parties
        note_w = max(0, width - fixed - 2 - SUBJECT_MIN)
        note_w = note_w if note_w >= 5 else 0
        if not note_w:
            parties_w = max(PARTIES_MIN, parties_w - max(0, SUBJECT_MIN - (width - fixed)))
            fixed = 2 + len(indent) + when_w + 1 + parties_w + 1 + type_w + 1
    subj_w = max(8, width - fixed - (2 + note_w if note_w else 0))
    return Content.assemble(
        head,
        (f"{when:<{when_w}} ", "$text-muted"),
        clean(f"{x.sender}→{x.recipient}", single_line=True).truncate(parties_w, ellipsis=True, pad=True), (" ", ""),
        clean(x.type, single_line=True, style=type_style(x.type)).truncate(type_w, ellipsis=True, pad=True), (" ", ""),
        clean(subject_text, single_line=True, style=dim).truncate(subj_w, ellipsis=True, pad=bool(note_w)),
        ("  " if note_w else "", ""),
        clean(note, single_line=True, style=note_style).truncate(note_w, ellipsis=True) if note_w else Content(""),
    )


@dataclass(frozen=True, slots=True)
class OwedColumns:
    """The widths of Owed & late's columns at one list width (the subject takes the rest):
    ``badges`` from ``WIDE`` columns, else one column of ``symbols``; ``note`` 0: no row
    has a reason or progress to show."""

    due: int
    badges: int
    symbols: int
    subject: int
    parties: int
    note: int


@dataclass(frozen=True, slots=True)
class OwedFill:
    """The cells Owed & late's widest row needs in each column, over the whole view (a
    filter moves no column): its badges, its symbols, its parties, its note, its deadline."""

    badges: int = 32
    symbols: int = 4
    parties: int = 22
    note: int = 24
    due: int = 18


def owed_note(model, row: ListRow) -> tuple[str, bool]:
    """An owed row's note: the codes of an uncertain answer's reasons (``OwedItem.codes``),
    then the holder's progress note; and whether it holds a reason."""
    why = row.item.codes
    progress = row.extra.get("progress") or ""
    reason = ("? " + ", ".join(why)) if why else ""
    return " · ".join(t for t in (reason, progress) if t), bool(why)


def owed_fill(model) -> OwedFill:
    """What the view's rows need (``OwedFill``), measured once per model."""
    from ..owed_rows import badge_text

    key = ("fill",)
    got = model.arranged.get(key)
    if got is None:
        badges = symbols = parties = note = due = 0
        pairs: set[tuple[str, str]] = set()  # (a few seats: each pair measured once)
        for row in model.views.get("view:owed") or ():
            if row.heading is not None or row.letter is None:
                continue
            codes = getattr(row.item, "attention", ())
            if codes:
                badges = max(badges, sum(len(badge_text(c, model.at)) + 2 for c in codes) - 2)
                symbols = max(symbols, len(codes))
            x = row.letter
            pairs.add((x.sender, x.recipient))
            due = max(due, len(deadline_state(x, model.at, model.res.late(x).yes, model.zone)[0]))
            text, _ = owed_note(model, row)
            if text:
                note = max(note, clean(text, single_line=True).cell_length)
        parties = max((clean(f"{a}→{b}", single_line=True).cell_length for a, b in pairs), default=0)
        got = model.arranged[key] = OwedFill(badges, symbols, parties, note, due)
    return got


MEASURES.append(owed_fill)


def owed_columns(width: int, fill: OwedFill = OwedFill()) -> OwedColumns:
    """Each column as wide as the view's widest row needs, up to a limit; on a wide list the
    reason or progress note may take what the subject can spare beyond its first 24 cells."""
    wide = width >= WIDE
    badge_w = min(32, max(len("attention"), fill.badges)) if wide else 0
    symbol_w = 0 if wide else min(4, max(len("att"), fill.symbols))
    parties = min(22 if wide else 15, max(len("from→to"), fill.parties))
    due = 18
    fixed = 2 + due + 1 + (badge_w or symbol_w) + 1 + 1 + parties
    limit = max(24, width - fixed - 2 - 24) if wide else 14
    note = min(limit, max(len("why · progress"), fill.note)) if fill.note else 0
    if width - fixed - (2 + note if note else 0) < SUBJECT_MIN:  # a narrow list: see SUBJECT_MIN
        due = min(due, max(len("deadline"), fill.due))
        fixed -= 18 - due
        note = max(0, width - fixed - 2 - SUBJECT_MIN) if note else 0
        note = note if note >= 5 else 0
        if not note:
            # (grouped by the owing seat, the parties' second name is the heading's)
            short = min(max(0, SUBJECT_MIN - (width - fixed)), max(0, parties - len("from→to")))
            parties -= short
            fixed -= short
    fixed += 2 + note if note else 0
    return OwedColumns(due, badge_w, symbol_w, max(8, width - fixed), parties, note)


def owed_header(width: int, fill: OwedFill = OwedFill()) -> Content:
    """The names of Owed & late's columns, over the rows' columns at ``width``."""
    c = owed_columns(width, fill)
    names = [("", 2), ("deadline", c.due), ("", 1), ("attention" if c.badges else "att", c.badges or c.symbols),
             ("", 1), ("subject", c.subject), ("", 1), ("from→to", c.parties)]
    if c.note:
        names += [("", 2), ("why · progress", c.note)]
    return Content("").join(Content(name).truncate(w, pad=True) for name, w in names).stylize("bold $text-muted")


def owed_line(model, row: ListRow, width: int, head: Content) -> Content:
    """One Owed & late row, in ``owed_columns``."""
    from ..owed_rows import badges, symbols

    x = row.letter
    res = model.res
    c = owed_columns(width, owed_fill(model))
    due, due_style = deadline_state(x, model.at, res.late(x).yes, model.zone)
    attention = getattr(row.item, "attention", ())
    marks = badges(attention, model.at, c.badges) if c.badges else symbols(attention, c.symbols)
    dim = "$text-muted" if res.current(x).no else ""
    parts = [
        head,
        Content.styled(due, due_style).truncate(c.due, ellipsis=True, pad=True), Content(" "),
        marks.truncate(c.badges or c.symbols, pad=True), Content(" "),
        clean(x.subject or _slug(x), single_line=True, style=dim).truncate(c.subject, ellipsis=True, pad=True),
        Content(" "),
        clean(f"{x.sender}→{x.recipient}", single_line=True).truncate(c.parties, ellipsis=True, pad=True),
    ]
    if c.note:
        note, why = owed_note(model, row)
        parts += [Content("  "), clean(note, single_line=True, style="$unknown" if why else "$text-muted")
                  .truncate(c.note, ellipsis=True)]
    return Content("").join(parts)


def _slug(x: Letter) -> str:
    from letterbox_tui.core.query import slug

    return slug(x)

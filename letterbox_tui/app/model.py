"""What the app shows, from one set of answers (``store.open_answers``): the core's views
as list rows, mailboxes, counts and row text.

Every view is computed in core (``letterbox_tui.core.views``), the same function the
command line prints; this module only turns them into rows and ``Content``. A built-in
view is built when it is first wanted (``compute``, in a worker: the opening view and All
letters with the scan, the others when first opened) and kept, with its count, for the
life of the model; the model keeps each view it rendered (``owed``, ``disputes``,
``truth``, ``problems``, ``digest``; ``thread()`` and ``query_view()`` on demand) so what
a face shows can be checked against the other face. Widgets only read it. Every string
that came from a letter is turned into ``Content`` through ``sanitize.clean``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from textual.content import Content

from typing import TYPE_CHECKING

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.text import span

if TYPE_CHECKING:
    # the app's first frame imports this module (its views' names): the letter model
    # and what rests on it are imported where the answers are used, after that frame;
    # the views themselves where they are built, in a worker
    from letterbox_tui.core.check import Finding
    from letterbox_tui.core.leases import Lease
    from letterbox_tui.core.model import Answer, Letter, Reason, Snapshot
    from letterbox_tui.core.settings import Settings
    from letterbox_tui.core.query import QueryResult
    from letterbox_tui.core.answers import Answers
    from letterbox_tui.core.views.disputes import DisputesView
    from letterbox_tui.core.views.exists import Exists
    from letterbox_tui.core.views.owed import OwedItem, OwedView
    from letterbox_tui.core.views.problems import ProblemsView
    from letterbox_tui.core.views.thread import ThreadView
    from letterbox_tui.core.views.truth import TruthView

from .sanitize import clean, cleans
from .widgets.letter_list import ListRow

#: Built-in views, in the order the mailboxes pane lists them (id, label, --view name).
VIEWS: tuple[tuple[str, str, str], ...] = (
    ("view:owed", "Owed & late", "owed"),
    ("view:disputes", "Open disputes", "disputes"),
    ("view:truth", "Current truth", "truth"),
    ("view:all", "All letters", "all"),
    ("view:problems", "Problems", "problems"),
)
VIEW_BY_NAME = {name: vid for vid, _, name in VIEWS}
#: the "Leases" mailbox (listed after the views when locks/ holds any lease)
LEASES = "view:leases"
SEAT_FOLDERS = (("inbox", "Inbox"), ("processed", "Processed"), ("sent", "Sent"))
DUE_SOON = timedelta(hours=24)
BODY_LIMIT = 256 * 1024
STATUS_LIMIT = 4096


@dataclass(slots=True)
class Mailbox:
    id: str
    label: str
    count: int | None = None
    late: int = 0
    late_unknown: int = 0  # (Owed & late: the items whose lateness is unknown)
    seat: str = ""
    status: Content | None = None  # the seat's status note, first line


@dataclass
class AppModel:
    root: str
    settings: Settings
    snapshot: Snapshot
    res: Answers
    at: datetime
    #: the zone times are shown in (``core.times``; None: the system's local zone)
    zone: tzinfo | None = None
    views: dict[str, list[ListRow]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    late_count: int = 0
    #: Owed & late's items whose lateness is unknown (the status line's ?N)
    late_unknown: int = 0
    warning_count: int = 0
    findings: list[Finding] = field(default_factory=list)
    last_review: Letter | None = None
    # the core's views, as rendered (None until computed)
    owed: OwedView | None = None
    disputes: DisputesView | None = None
    truth: TruthView | None = None
    problems: ProblemsView | None = None
    #: the protocol's leases under locks/ (the "Leases" mailbox, shown when there are any)
    leases: list[Lease] = field(default_factory=list)
    _threads: dict[str, ThreadView] = field(default_factory=dict)
    #: a letterbox in git: the paths other machines do not have yet (None outside git)
    unpushed: frozenset[str] | None = None
    #: a letterbox in git without an upstream: its repository's remotes (none: S cannot sync)
    remotes: list[str] | None = None
    _cache: dict[str, list[ListRow]] = field(default_factory=dict)
    #: each seat's mailboxes and status note, read in the scan worker (``build``)
    _seats: list | None = None
    #: Owed & late's rows per (order, folded seats), and its most urgent row
    #: (``owed_rows``): each made once, the default one where the view is built
    arranged: dict = field(default_factory=dict)
    #: what the UI thread asks again and again, made once (``dispute_letters``, ``letter_rows``)
    _once: dict = field(default_factory=dict)

    # --- building -----------------------------------------------------------------
    @classmethod
    def build(cls, root: str, settings: Settings, res: Answers, at: datetime,
              views: Sequence[str] = ("view:owed",), zone: tzinfo | None = None) -> AppModel:
        """The model of the answers ``res``: the cheap parts (seats and their status notes,
        the last review, leases, what is not pushed) and the built-in ``views`` named;
        every other view is built when first wanted (``compute``). Run in a worker: it
        reads the status notes and the leases."""
        from letterbox_tui.core.leases import read_leases
        from letterbox_tui.core.views.mailboxes import seat_mailboxes

        from letterbox_tui.core.lazy import with_field

        snapshot = res.snapshot
        model = cls(root, settings, snapshot, res, at, zone)
        model.counts = {"view:all": len(snapshot.letters)}
        model._seats = seat_mailboxes(snapshot)
        reviews = [x for x in with_field(snapshot.letters, "type", ["review"]) if x.sent_at is not None]
        model.last_review = max(reviews, key=lambda x: x.sent_at) if reviews else None
        model.leases = read_leases(root, snapshot.seats)[0]  # read, never taken or broken
        from letterbox_tui.core.sync import remotes, status, unpushed

        snapshot.scope.sync = status(root)  # taken here, in the scan worker
        if snapshot.scope.sync is not None:
            model.unpushed = unpushed(root)
            if snapshot.scope.sync.get("upstream") is None:
                model.remotes = remotes(root)
        for vid in views:
            if vid in BUILDERS and vid not in model.views:
                model.compute(vid)
        return model

    def built(self, vid: str) -> bool:
        """Is the built-in view ``vid`` built (its rows and count known)?"""
        return vid in self.views

    def compute(self, vid: str) -> list[ListRow]:
        """Build one built-in view and its count (in a worker: the UI thread only reads
        ``views``, which holds a view once it is whole)."""
        rows = BUILDERS[vid](self)
        if vid == "view:owed":
            from .owed_rows import code_counts, most_urgent_key, owed_rows

            self.counts[vid] = sum(1 for r in rows if r.heading is None)
            self.views[vid] = rows
            owed_rows(self)  # the arrangement the view opens with, and where its cursor starts
            most_urgent_key(self)
            for measure in MEASURES:  # the rows' own measures (their columns' widths), off the UI thread
                measure(self)
            code_counts(self)
        elif vid == "view:disputes":
            self.counts[vid] = sum(1 for r in rows if r.depth == 0 and r.letter is not None)
        elif vid == "view:truth":
            self.counts[vid] = sum(1 for r in rows if r.letter is not None)
        elif vid == "view:problems":
            self.counts[vid] = sum(1 for f in self.findings if f.severity == "problem")
            self.warning_count = sum(1 for f in self.findings if f.severity != "problem")
        self.views[vid] = rows
        return rows

    def _all_rows(self) -> list[ListRow]:
        from letterbox_tui.core.views.order import newest_first as by_newest

        return [ListRow(x.path, x) for x in by_newest(self.snapshot.letters)]

    def _owed_rows(self) -> list[ListRow]:
        from letterbox_tui.core.records import Records
        from letterbox_tui.core.views.attention import Rules
        from letterbox_tui.core.views.owed import owed_view

        from .owed_rows import group_counts, tallies

        # the records the attention codes rest on (ack sidecars, status notes, leases): read
        # once, for the codes and for each holder's progress note alike
        records = Records(self.snapshot)
        self.owed = view = owed_view(self.res, rules=Rules.of(self.settings), records=records)
        self.arranged.clear()  # (what was arranged from another view)
        tally = tallies(self)
        rows: list[ListRow] = []
        for group in view.groups:
            heading = Content.assemble(
                (" ", ""), clean(group.seat, single_line=True, style="bold"), (" owes ", ""),
                (group_counts(group, tally[group.seat]), "$late" if tally[group.seat][0] else ""),
            )
            rows.append(ListRow(f"group:{group.seat}", heading=heading))
            for item in group.items:
                note, style = owed_note(item)
                row = ListRow(item.letter.path, item.letter, note=note, note_style=style, item=item)
                progress = records.progress(item.letter)  # the holder's note, from its ack sidecar
                if progress is not None:
                    row.extra["progress"] = progress.line(self.at)
                rows.append(row)
        self.late_count = sum(late for late, _ in tally.values())  # (``view.late``)
        self.late_unknown = sum(g.late_unknown for g in view.groups)
        return rows

    def _dispute_rows(self) -> list[ListRow]:
        from letterbox_tui.core.views.disputes import disputes_view

        self.disputes = view = disputes_view(self.res)
        rows: list[ListRow] = []
        for od in view.disputes:
            rows.append(ListRow(od.dispute.path, od.dispute, note="open dispute", note_style="$dispute"))
            for x, cur in od.disputed:
                rows.append(ListRow(f"{od.dispute.path}>{x.path}", x, note=f"current: {cur.value}", depth=1))
        return rows

    def _truth_rows(self) -> list[ListRow]:
        """Current truth: decisions in force; then rulings and the heads of other
        supersession chains; then chains whose head the record cannot settle, each
        candidate head with its reasons (``core.views.truth``)."""
        from letterbox_tui.core.views.truth import truth_view

        self.truth = view = truth_view(self.res)
        out: list[ListRow] = []
        for key, title, items, style in (
            ("group:decisions", "Decisions in force", view.decisions, "bold"),
            ("group:others", "Rulings and other superseding letters in force", view.others, "bold"),
            ("group:doubt", "In doubt: the record cannot settle which is current", view.doubt, "bold $unknown"),
        ):
            if not items:
                continue
            out.append(ListRow(key, heading=Content.styled(f" {title} ({len(items)})", style)))
            for item in items:
                if key == "group:doubt":
                    note, nstyle = f"? {', '.join(item.codes) or 'unknown'}", "$unknown"
                else:
                    note, nstyle = ("in force (ruled)" if item.ruled else "in force"), "$current"
                out.append(ListRow(item.letter.path, item.letter, note=note, note_style=nstyle))
        return out

    def digest(self, seat: str | None = None) -> dict:
        """``digest``'s data at the model's clock (what ``letterbox-tui digest`` prints)."""
        from letterbox_tui.core.digest import digest

        return digest(self.res, seat)

    def thread(self, thread_id: str) -> ThreadView:
        """The thread's reply tree (``core.views.thread``), built once per scan."""
        from letterbox_tui.core.views.thread import thread_view

        view = self._threads.get(thread_id)
        if view is None:
            view = self._threads[thread_id] = thread_view(self.res, thread_id)
        return view

    def _problem_rows(self) -> list[ListRow]:
        from letterbox_tui.core.check import settings_findings
        from letterbox_tui.core.views.problems import problems_view

        self.problems = problems_view(self.res)
        if found := settings_findings(self.settings, self.snapshot.seats):  # (as ``check`` says them)
            self.problems = self.problems.with_findings(found)
        self.findings = list(self.problems.findings)
        from letterbox_tui.core.lazy import by_path

        rows = []
        found = by_path(self.snapshot.letters)
        for i, f in enumerate(self.findings):
            letter = next((x for x in map(found, f.paths) if x is not None), None)
            rows.append(ListRow(f"finding:{i}", letter, note=f.code, item=f,
                                note_style="$error" if f.severity == "problem" else "$warning"))
        return rows

    # --- asked on the UI thread: each made once per model -----------------------------
    def dispute_letters(self) -> list[Letter]:
        """The letters of type dispute, in scan order (the letter pane asks on every move)."""
        got = self._once.get("disputes")
        if got is None:
            from letterbox_tui.core.lazy import with_field

            got = self._once["disputes"] = with_field(self.snapshot.letters, "type", ["dispute"])
        return got

    def _unpushed_letters(self) -> list[Letter]:
        """The letters whose files are not pushed yet, by path."""
        got = self._once.get("unpushed")
        if got is None:
            from letterbox_tui.core.lazy import by_path

            found = by_path(self.snapshot.letters)
            got = self._once["unpushed"] = [x for x in map(found, sorted(self.unpushed or ())) if x is not None]
        return got

    def letter_rows(self, rows: Sequence[ListRow]) -> int:
        """How many of ``rows`` are not headings (a list's row count), counted once per list:
        switching back to a view of 100,000 rows counts nothing again."""
        key = ("rows", id(rows))
        got = self._once.get(key)
        if got is None or got[0] is not rows:
            if len(self._once) > 64:  # lists made afresh (a query, threaded rows) come and go
                self._once = {k: v for k, v in self._once.items() if k[0] != "rows"}
            got = self._once[key] = (rows, sum(1 for r in rows if r.heading is None))
        return got[1]

    # --- mailboxes ----------------------------------------------------------------
    def mailboxes(self) -> list[Mailbox]:
        # (a view not built yet has no count: None)
        out = [Mailbox(vid, label, self.counts.get(vid), late=self.late_count if vid == "view:owed" else 0,
                       late_unknown=self.late_unknown if vid == "view:owed" else 0)
               for vid, label, _ in VIEWS]
        if self.leases:
            out.append(Mailbox(LEASES, "Leases", len(self.leases)))
        if self.unpushed is not None:
            out.append(Mailbox("sync:unpushed", "Not pushed", len(self._unpushed_letters())))
        if self._seats is None:
            from letterbox_tui.core.views.mailboxes import seat_mailboxes

            self._seats = seat_mailboxes(self.snapshot)
        for seat in self._seats:
            status = clean(seat.status, single_line=True) if seat.status else None
            out.append(Mailbox(f"seat:{seat.seat}", seat.seat, seat=seat.seat, status=status))
            for folder, label in SEAT_FOLDERS:
                out.append(Mailbox(f"seat:{seat.seat}:{folder}", label, seat.counts[folder], seat=seat.seat))
        for name in self.settings.queries:
            out.append(Mailbox(f"query:{name}", name))
        return out

    def status_note(self, seat: str) -> Content | None:
        from letterbox_tui.core.views.letterfile import status_line

        line = status_line(self.root, self.snapshot.status_notes.get(seat), STATUS_LIMIT)
        return clean(line, single_line=True) if line else None

    def rows(self, mailbox_id: str) -> list[ListRow] | None:
        """The rows of a mailbox (None: a built-in view not built yet, see ``compute``);
        raises ``LetterboxError`` for a bad saved query."""
        if mailbox_id in self.views:
            return self.views[mailbox_id]
        if mailbox_id in BUILDERS:
            return None
        if mailbox_id in self._cache:
            return self._cache[mailbox_id]
        if mailbox_id == LEASES:
            rows = [ListRow(f"lease:{x.name}", None, item=x, note_style="$error" if x.problems else "")
                    for x in self.leases]
        elif mailbox_id.startswith("seat:"):
            from letterbox_tui.core.views.mailboxes import mailbox_letters

            _, seat, *rest = mailbox_id.split(":")
            folder = rest[0] if rest else "inbox"
            rows = [ListRow(x.path, x) for x in mailbox_letters(self.snapshot, seat, folder)]
        elif mailbox_id == "sync:unpushed":
            from letterbox_tui.core.views.order import newest_first as by_newest

            rows = [ListRow(x.path, x) for x in by_newest(self._unpushed_letters())]
        elif mailbox_id.startswith("query:"):
            name = mailbox_id.split(":", 1)[1]
            rows = self.query_rows(self.settings.queries.get(name, ""))
        else:
            rows = []
        self._cache[mailbox_id] = rows
        return rows

    def query_view(self, text: str) -> tuple[QueryResult, Exists]:
        """A query in SPEC 6 terms, and its ``exists`` verdict (as the command line has
        them); raises ``LetterboxError`` for a bad query."""
        import shlex

        from letterbox_tui.core.query import parse_query, run_query
        from letterbox_tui.core.views.exists import exists_view

        try:
            terms = shlex.split(text)
        except ValueError as exc:
            raise LetterboxError(f"cannot split query: {exc}") from None
        if not terms:
            raise LetterboxError("empty query: type terms such as type=request late=yes")
        query = parse_query(terms, self.at, self.zone)  # relative times (since=-7d) count from the scan's clock
        res = self.res
        if query.at is not None and query.at != self.at:
            res = res.with_clock(query.at)  # at=T: "now" for late
        result = run_query(query, res)
        return result, exists_view(result, self.snapshot)

    def query_rows(self, text: str) -> list[ListRow]:
        """Rows for a query in SPEC 6 terms: matches, then unknown rows with reasons."""
        from letterbox_tui.core.views.order import newest_first as by_newest

        result, _ = self.query_view(text)
        rows = [ListRow(x.path, x) for x in by_newest(result.matches)]
        if result.unknown:
            rows.append(ListRow("group:unknown", heading=Content.styled(
                f" Unknown ({len(result.unknown)}): the record cannot say whether these match", "bold $unknown")))
            for x, reasons in result.unknown:
                codes = ", ".join(sorted({r.code for r in reasons})) or "unknown"
                rows.append(ListRow(x.path, x, note=f"? {codes}", note_style="$unknown", extra={"reasons": reasons}))
        return rows

    # --- row text -----------------------------------------------------------------
    def describe(self, row: ListRow, width: int) -> Content:
        """One list line: marks, sent, parties, type, subject, status note."""
        from letterbox_tui.core.check import Finding
        from letterbox_tui.core.leases import Lease
        from letterbox_tui.core.model import Letter

        x = row.letter
        f = row.item
        if isinstance(f, Lease):
            return lease_line(f, self.at)
        if isinstance(f, Finding) or not isinstance(x, Letter):
            if isinstance(f, Finding):
                sev = "!" if f.severity == "problem" else "·"
                return cleans(
                    Content.styled(f"{sev} {f.code:<22} ", row.note_style or ""),
                    (f.detail, ""),
                    (("  " + ", ".join(f.paths[:2])) if f.paths else "", "$text-muted"),
                )
            return Content(row.key)
        res = self.res
        mark, mstyle = letter_mark(x, res)
        indent = "  " * row.depth + ("└ " if row.depth else "")
        when = short_time(x.sent_at, self.at, self.zone) if x.sent_at else "?"
        parties = f"{x.sender}→{x.recipient}"
        note = row.note or status_note(x, res)
        note_style = row.note_style or status_style(x, res)
        note_w = 26
        if row.extra.get("progress"):  # "due in 2h · in progress: NOTE, 2h ago"
            note = f"{note} · {row.extra['progress']}"
            note_w = max(26, min(len(note), width - 71))  # the subject keeps ~20 columns
        subj_w = max(8, width - 2 - 13 - 24 - 10 - note_w - len(indent) - 2)
        subject_text = x.subject or _slug(x)
        dim = "$text-muted" if res.current(x).no else ""
        line = Content.assemble(
            (mark + " ", mstyle),
            (indent, "$text-muted"),
            (f"{when:<12} ", "$text-muted"),
            clean(parties, single_line=True).truncate(23, ellipsis=True, pad=True), (" ", ""),
            clean(x.type, single_line=True, style=type_style(x.type)).truncate(9, ellipsis=True, pad=True), (" ", ""),
            clean(subject_text, single_line=True, style=dim).truncate(subj_w, ellipsis=True, pad=True),
            ("  ", ""),
            clean(note, single_line=True, style=note_style).truncate(note_w, ellipsis=True),
        )
        return line


#: How each built-in view is computed, in the order the worker computes them.
#: what the widgets measure of Owed & late's rows once per model; each widget module that
#: draws the rows adds its own (``widgets.row_text``), so the model never imports a widget
MEASURES: list = []

BUILDERS = {
    "view:owed": AppModel._owed_rows,
    "view:disputes": AppModel._dispute_rows,
    "view:problems": AppModel._problem_rows,
    "view:truth": AppModel._truth_rows,
    "view:all": AppModel._all_rows,
}


# --- helpers shared with the letter pane -----------------------------------------------

def _slug(x: Letter) -> str:
    from letterbox_tui.core.query import slug

    return slug(x)


def short_time(t: datetime, at: datetime, zone: tzinfo | None) -> str:
    """A time in a list, in the display zone (``core.times.short``)."""
    from letterbox_tui.core.times import short

    return short(t, at, zone)


def lease_line(x: Lease, at: datetime) -> Content:
    """One lease in the list: what is held, by whom (and session), since when; problems."""
    from letterbox_tui.core.sidecar import age

    taken = x.taken_at
    since = f"since {x.taken} ({age(at, taken)} ago)" if taken is not None else f"since {x.taken or '?'}"
    who = (x.owner or "?") + (f" session={x.session}" if x.session else "")
    return cleans(
        ("⚿ ", "$text-muted"), (f"{x.target}  ", "bold"), (f"{who}  ", ""), (since, "$text-muted"),
        (("  " + "; ".join(x.problems)) if x.problems else "", "$error"),
    )


def owed_note(item: OwedItem) -> tuple[str, str]:
    """How an owed task stands (``core.views.owed``): late by how much, due when, or
    unknown and why."""
    kind = item.standing
    if kind == "late":
        return f"LATE {span(item.delta)}", "bold $late"
    if kind == "uncertain":
        return f"? {', '.join(item.codes) or 'unknown'}", "$unknown"
    if kind == "due":
        return f"due in {span(item.delta)}", "bold $due-soon" if item.delta <= DUE_SOON else ""
    if kind == "ambiguous-deadline":
        return "deadline ambiguous", "$unknown"
    return "no deadline", "$text-muted"


def letter_mark(x: Letter, res: Answers) -> tuple[str, str]:
    """One glyph for the list's first column, in ``core.views.attention.standing``'s order
    (superseded, current unknown, then late: a superseded request that had passed its
    deadline showed "!" beside "superseded by …", and is owed by nobody)."""
    if res.current(x).no:
        return "~", "$superseded"
    if res.current(x).unknown:
        return "?", "bold $unknown"
    if res.late(x).yes:
        return "!", "bold $late"
    if x.type == "dispute":
        return "⚖", "$dispute"
    if x.task:
        st = res.state(x).value
        if st == "closed":
            return "✓", "$closed"
        if st == "unknown" or res.answered(x).unknown:
            return "?", "bold $unknown"
        return "●", "$accent"
    return " ", ""


def status_note(x: Letter, res: Answers) -> str:
    """The status column's word: ``core.views.attention`` (the rule lives there)."""
    from letterbox_tui.core.views.attention import standing

    return standing(x, res).word


_STANDING_STYLE = {"late": "bold $late", "unknown": "$unknown", "superseded": "$closed", "closed": "$closed"}


def status_style(x: Letter, res: Answers) -> str:
    from letterbox_tui.core.views.attention import standing

    return _STANDING_STYLE.get(standing(x, res).kind, "")


def type_style(kind: str) -> str:
    return {
        "request": "$primary", "delegate": "$primary", "blocker": "bold $error",
        "dispute": "$dispute", "ruling": "$dispute", "decision": "$success", "review": "$secondary",
        "ack": "$text-muted", "nack": "$warning", "result": "$success",
    }.get(kind, "")


def reason_lines(reasons: Sequence[Reason], brief: bool = False) -> list[Content]:
    """Each reason spelled out: code, what it is about, detail, and (unless ``brief``)
    the letters and files it names."""
    out = []
    for r in reasons:
        tail = ""
        if r.letters and not brief:
            tail += "  letters: " + ", ".join(r.letters[:6]) + (" …" if len(r.letters) > 6 else "")
        if r.paths and not brief:
            tail += "  files: " + ", ".join(r.paths[:4]) + (" …" if len(r.paths) > 4 else "")
        out.append(cleans(
            Content.styled(f"    {r.code}", "bold $unknown" if r.code not in ("answered-by", "accepted-by", "ruled") else "bold $success"),
            Content.styled(f" ({r.about}) ", "$text-muted"),
            (r.detail, ""),
            (tail, "$text-muted"),
        ))
    return out


def answer_text(a: Answer | object, name: str = "") -> tuple[str, str]:
    """An answer's value and its style: good news green, bad news in the alarm colour
    (``late: yes`` is bad, ``superseded: yes`` is old news), unknown always marked."""
    value = getattr(a, "value", "?")
    if value == "unknown":
        return value, "bold $unknown"
    if name == "late":
        return value, "bold $late" if value == "yes" else ""
    if name == "superseded":
        return value, "$superseded" if value == "yes" else ""
    if name == "current" and value == "no":
        return value, "$superseded"
    return value, {"yes": "$success", "open": "$accent", "closed": "$closed"}.get(value, "")

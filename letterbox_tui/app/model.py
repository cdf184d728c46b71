"""What the app shows, computed from one scan: views, mailboxes, counts and row text.

Built in the scan worker (a thread) from a ``Snapshot`` and its ``Resolution``; widgets
only read it. Nothing here imports a widget. Every string that came from a letter is
turned into ``Content`` through ``sanitize.clean`` before it leaves this module.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from textual.content import Content

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.files import TOO_LARGE_TO_HASH, read_file
from letterbox_tui.core.model import Answer, Letter, Reason, Snapshot
from letterbox_tui.core.resolve import Resolution
from letterbox_tui.core.settings import Settings

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
    seat: str = ""
    status: Content | None = None  # the seat's status note, first line


@dataclass(slots=True)
class Finding:
    """A problem or warning shown in the Problems view."""

    code: str
    severity: str
    detail: str
    letters: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()


@dataclass
class AppModel:
    root: str
    settings: Settings
    snapshot: Snapshot
    res: Resolution
    at: datetime
    views: dict[str, list[ListRow]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    late_count: int = 0
    warning_count: int = 0
    findings: list[Finding] = field(default_factory=list)
    last_review: Letter | None = None
    _cache: dict[str, list[ListRow]] = field(default_factory=dict)

    # --- building -----------------------------------------------------------------
    @classmethod
    def build(cls, root: str, settings: Settings, snapshot: Snapshot, res: Resolution, at: datetime,
              first: str = "view:owed") -> AppModel:
        """The cheap parts and the ``first`` view; ``finish()`` computes the other views."""
        model = cls(root, settings, snapshot, res, at)
        model.counts = {"view:all": len(snapshot.letters)}
        reviews = [x for x in snapshot.letters if x.type == "review" and x.sent_at is not None]
        model.last_review = max(reviews, key=lambda x: x.sent_at) if reviews else None
        if first in BUILDERS:
            model.compute(first)
        return model

    def finish(self, cancelled=lambda: False) -> None:
        """Every built-in view not computed yet (run in the scan worker)."""
        for vid in BUILDERS:
            if cancelled():
                return
            if vid not in self.views:
                self.compute(vid)

    @property
    def finished(self) -> bool:
        return all(vid in self.views for vid in BUILDERS)

    def compute(self, vid: str) -> list[ListRow]:
        """Compute one built-in view and its count (safe to call from a worker)."""
        rows = BUILDERS[vid](self)
        if vid == "view:owed":
            self.counts[vid] = sum(1 for r in rows if r.letter is not None)
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
        return [ListRow(x.path, x) for x in by_newest(self.snapshot.letters)]

    def _owed_rows(self) -> list[ListRow]:
        from letterbox_tui.core.owed import owed

        res, at = self.res, self.at
        rows: list[ListRow] = []
        late_total = 0
        for group in owed(res):
            lates = sum(1 for x in group.items if res.late(x).yes)
            late_total += lates
            unknown = sum(1 for x in group.items if res.late(x).unknown or res.answered(x).unknown)
            words = [f"{len(group.items)}"]
            if lates:
                words.append(f"{lates} late")
            if unknown:
                words.append(f"{unknown} uncertain")
            heading = Content.assemble(
                (" ", ""), clean(group.seat, single_line=True, style="bold"), (" owes ", ""),
                (" · ".join(words), "$late" if lates else ""),
            )
            rows.append(ListRow(f"group:{group.seat}", heading=heading))
            for x in group.items:
                note, style = owed_note(x, res, at)
                rows.append(ListRow(x.path, x, note=note, note_style=style))
        self.late_count = late_total
        return rows

    def _dispute_rows(self) -> list[ListRow]:
        rows: list[ListRow] = []
        for od in self.res.open_disputes():
            rows.append(ListRow(od.dispute.path, od.dispute, note="open dispute", note_style="$dispute"))
            for x in od.disputed:
                cur = self.res.current(x)
                rows.append(ListRow(f"{od.dispute.path}>{x.path}", x, note=f"current: {cur.value}", depth=1))
        return rows

    def _truth_rows(self) -> list[ListRow]:
        """Current truth, as ``digest`` has it: decisions in force; then rulings and the
        heads of other supersession chains; then chains whose head the record cannot
        settle, each candidate head with its reasons."""
        res = self.res
        seen_chains: set[str] = set()
        decisions: list[ListRow] = []
        others: list[ListRow] = []
        doubt: list[ListRow] = []
        for x in by_newest(self.snapshot.letters):
            in_chain = bool(x.supersedes) or bool(res.superseders(x))
            if not in_chain and x.type not in ("decision", "ruling"):
                continue
            cur = res.current(x)
            if cur.yes:
                note = "in force (ruled)" if any(r.code == "ruled" for r in cur.reasons) else "in force"
                row = ListRow(x.path, x, note=note, note_style="$current")
                (decisions if x.type == "decision" else others).append(row)
            elif cur.unknown:
                chain = res.chain(x) if in_chain else [x]
                key = min(c.path for c in chain) if chain else x.path
                if key in seen_chains:
                    continue
                seen_chains.add(key)
                for h in (res.heads(x) if in_chain else []) or [x]:
                    codes = ", ".join(sorted({r.code for r in res.current(h).reasons})) or "unknown"
                    doubt.append(ListRow(h.path, h, note=f"? {codes}", note_style="$unknown"))
        out: list[ListRow] = []
        for key, title, rows, style in (
            ("group:decisions", "Decisions in force", decisions, "bold"),
            ("group:others", "Rulings and other superseding letters in force", others, "bold"),
            ("group:doubt", "In doubt: the record cannot settle which is current", doubt, "bold $unknown"),
        ):
            if rows:
                out.append(ListRow(key, heading=Content.styled(f" {title} ({len(rows)})", style)))
                out.extend(rows)
        return out

    def _problem_rows(self) -> list[ListRow]:
        self.findings = findings_for(self.res)
        rows = []
        by_path = {x.path: x for x in self.snapshot.letters}
        for i, f in enumerate(self.findings):
            letter = next((by_path[p] for p in f.paths if p in by_path), None)
            rows.append(ListRow(f"finding:{i}", letter, note=f.code, item=f,
                                note_style="$error" if f.severity == "problem" else "$warning"))
        return rows

    # --- mailboxes ----------------------------------------------------------------
    def mailboxes(self) -> list[Mailbox]:
        out = [Mailbox(vid, label, self.counts.get(vid), late=self.late_count if vid == "view:owed" else 0)
               for vid, label, _ in VIEWS]
        counts: dict[tuple[str, str], int] = {}
        for x in self.snapshot.letters:
            counts[(x.seat, x.folder)] = counts.get((x.seat, x.folder), 0) + 1
            counts[(x.sender, "sent")] = counts.get((x.sender, "sent"), 0) + 1
        scoped = set(self.snapshot.scope.participants)
        for seat in self.snapshot.seats:
            if seat not in scoped:
                continue
            out.append(Mailbox(f"seat:{seat}", seat, seat=seat, status=self.status_note(seat)))
            for folder, label in SEAT_FOLDERS:
                out.append(Mailbox(f"seat:{seat}:{folder}", label, counts.get((seat, folder), 0), seat=seat))
        for name in self.settings.queries:
            out.append(Mailbox(f"query:{name}", name))
        return out

    def status_note(self, seat: str) -> Content | None:
        rel = self.snapshot.status_notes.get(seat)
        if not rel:
            return None
        text, _, err = read_letter_file(self.root, rel, STATUS_LIMIT)
        if err:
            return clean(f"status unreadable: {err}", single_line=True)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != "---"]
        lines = [ln for ln in lines if not ln.startswith("#")] or lines
        return clean(lines[0][:120], single_line=True) if lines else None

    def rows(self, mailbox_id: str) -> list[ListRow] | None:
        """The rows of a mailbox (None: a built-in view still being computed by the
        worker); raises ``LetterboxError`` for a bad saved query."""
        if mailbox_id in self.views:
            return self.views[mailbox_id]
        if mailbox_id in BUILDERS:
            return None
        if mailbox_id in self._cache:
            return self._cache[mailbox_id]
        if mailbox_id.startswith("seat:"):
            _, seat, *rest = mailbox_id.split(":")
            folder = rest[0] if rest else "inbox"
            if folder == "sent":
                pick = [x for x in self.snapshot.letters if x.sender == seat]
            else:
                pick = [x for x in self.snapshot.letters if x.seat == seat and x.folder == folder]
            rows = [ListRow(x.path, x) for x in by_newest(pick)]
        elif mailbox_id.startswith("query:"):
            name = mailbox_id.split(":", 1)[1]
            rows = self.query_rows(self.settings.queries.get(name, ""))
        else:
            rows = []
        self._cache[mailbox_id] = rows
        return rows

    def query_rows(self, text: str) -> list[ListRow]:
        """Rows for a query in SPEC 6 terms: matches, then unknown rows with reasons."""
        from letterbox_tui.core.query import parse_query, run_query

        try:
            terms = shlex.split(text)
        except ValueError as exc:
            raise LetterboxError(f"cannot split query: {exc}") from None
        if not terms:
            raise LetterboxError("empty query: type terms such as type=request late=yes")
        query = parse_query(terms, self.at)  # relative times (since=-7d) count from the scan's clock
        res = self.res
        if query.at is not None and query.at != self.at:
            from letterbox_tui.core.resolve import resolve

            res = resolve(self.snapshot, query.at)  # at=T: "now" for late
        result = run_query(query, res)
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
        x = row.letter
        f = row.item
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
        when = short_time(x.sent_at, self.at) if x.sent_at else "?"
        parties = f"{x.sender}→{x.recipient}"
        note = row.note or status_note(x, res)
        note_style = row.note_style or status_style(x, res)
        note_w = 26
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
BUILDERS = {
    "view:owed": AppModel._owed_rows,
    "view:disputes": AppModel._dispute_rows,
    "view:problems": AppModel._problem_rows,
    "view:truth": AppModel._truth_rows,
    "view:all": AppModel._all_rows,
}


# --- helpers shared with the letter pane -----------------------------------------------

def by_newest(letters: Sequence[Letter]) -> list[Letter]:
    """Newest first by ``sent``; letters without a time last, then by id."""
    timed = [x for x in letters if x.sent_at is not None]
    untimed = [x for x in letters if x.sent_at is None]
    timed.sort(key=lambda x: (x.sent_at, x.id), reverse=True)
    untimed.sort(key=lambda x: x.id)
    return timed + untimed


def _slug(x: Letter) -> str:
    from letterbox_tui.core.query import slug

    return slug(x)


def short_time(t: datetime, at: datetime) -> str:
    t = t.astimezone(at.tzinfo) if at.tzinfo else t
    if t.year == at.year:
        return t.strftime("%b %d %H:%M")
    return t.strftime("%Y-%m-%d")


def span(delta: timedelta) -> str:
    """A short human duration: 3d 4h, 5h 10m, 12m."""
    secs = int(abs(delta).total_seconds())
    d, rem = divmod(secs, 86400)
    h, rem = divmod(rem, 3600)
    m = rem // 60
    if d:
        return f"{d}d {h}h" if h else f"{d}d"
    if h:
        return f"{h}h {m}m" if m else f"{h}h"
    return f"{m}m"


def owed_note(x: Letter, res: Resolution, at: datetime) -> tuple[str, str]:
    """How an owed task stands: late by how much, due when, or unknown and why."""
    late = res.late(x)
    answered = res.answered(x)
    if late.yes and x.deadline_at is not None:
        return f"LATE {span(at - x.deadline_at)}", "bold $late"
    if late.unknown or answered.unknown:
        reasons = late.reasons if late.unknown else answered.reasons
        codes = ", ".join(sorted({r.code for r in reasons})) or "unknown"
        return f"? {codes}", "$unknown"
    if x.deadline_at is not None:
        left = x.deadline_at - at
        if left <= DUE_SOON:
            return f"due in {span(left)}", "bold $due-soon"
        return f"due in {span(left)}", ""
    if x.deadline:
        return "deadline ambiguous", "$unknown"
    return "no deadline", "$text-muted"


def letter_mark(x: Letter, res: Resolution) -> tuple[str, str]:
    """One glyph for the list's first column."""
    if res.late(x).yes:
        return "!", "bold $late"
    if res.current(x).unknown:
        return "?", "bold $unknown"
    if res.current(x).no:
        return "~", "$superseded"
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


def status_note(x: Letter, res: Resolution) -> str:
    if res.current(x).no:
        sup = res.superseders(x)
        return f"superseded by {sup[0].id[:14]}…" if sup else "superseded"
    if res.current(x).unknown:
        codes = ", ".join(sorted({r.code for r in res.current(x).reasons}))
        return f"current? {codes}"
    if not x.task:
        return ""
    st = res.state(x)
    late = res.late(x)
    if late.yes:
        return "late"
    if st.value == "unknown":
        return "state? " + ", ".join(sorted({r.code for r in st.reasons}))
    if st.value == "closed":
        return "closed"
    ans = res.answered(x)
    if ans.unknown:
        return "answered? " + ", ".join(sorted({r.code for r in ans.reasons}))
    return "accepted" if res.accepted(x).yes else "open"


def status_style(x: Letter, res: Resolution) -> str:
    note = status_note(x, res)
    if note.startswith("late"):
        return "bold $late"
    if "?" in note:
        return "$unknown"
    if note.startswith("superseded") or note == "closed":
        return "$closed"
    return ""


def type_style(kind: str) -> str:
    return {
        "request": "$primary", "delegate": "$primary", "blocker": "bold $error",
        "dispute": "$dispute", "ruling": "$dispute", "decision": "$success", "review": "$secondary",
        "ack": "$text-muted", "nack": "$warning", "result": "$success",
    }.get(kind, "")


def findings_for(res: Resolution) -> list[Finding]:
    """``check``'s findings, problems first (the order within each is check's)."""
    from letterbox_tui.core.check import check

    found = [Finding(f.code, f.severity, f.detail, tuple(f.letters), tuple(f.paths)) for f in check(res)]
    found.sort(key=lambda f: 0 if f.severity == "problem" else 1)
    return found


# --- reading files for the letter pane ----------------------------------------------------

def read_letter_file(root: str, rel: str, limit: int = BODY_LIMIT) -> tuple[str, bool, str]:
    """At most ``limit`` bytes of ``root/rel``, read through ``core.files`` (no symlink is
    followed, a FIFO never blocks). Returns (text, truncated, error); text is decoded with
    replacement, never raising."""
    f = read_file(root, rel, keep=limit, hashing=False)
    if f.error is not None:
        return "", False, f.error.removeprefix("cannot read: ")
    return f.data.decode("utf-8", errors="replace"), f.truncated, ""


def split_body(text: str) -> str:
    """The body: what follows the header's closing ``---`` line."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return text
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            return "\n".join(lines[i + 1:])
    return ""


def sha256_of(root: str, rel: str, limit: int = 64 * 1024 * 1024) -> str:
    """The file's sha256, or a parenthesised reason it has none (read through ``core.files``)."""
    f = read_file(root, rel, keep=0, hash_limit=limit)
    if f.sha256 is not None:
        return f.sha256
    if f.error == TOO_LARGE_TO_HASH:
        return "(file too large to hash here)"
    return f"({f.error})"


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

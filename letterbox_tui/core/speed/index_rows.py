"""What the persistent index (``index.py``) stores per letter, and the rows it serves.

A letter's *record* is made once from a ``Resolution``: its header columns (for SQL
filters), its row as JSON text up to ``fields`` (what never depends on the clock), every
clock-free derived answer as a value plus its reasons (each reason one compact JSON text,
joined by newlines, which compact JSON never holds raw), and ``late`` at two clocks: just
at the deadline and just after it (``late`` flips only when the clock passes the
deadline), so a row at any clock is spliced from stored text without the resolver.

The query evaluator here mirrors ``core.query`` term by term over those columns, in the
same three values with the same reasons, in the same order (the tests compare every
output with the from-scratch path).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

from letterbox_tui.core.grammar import tokens
from letterbox_tui.core.model import Letter, Reason
from letterbox_tui.core.query import Query, Term, slug, subject

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICRO = timedelta(microseconds=1)
#: the answers a row carries, in the order ``core.rows.answers`` gives them
ANSWERS = ("state", "answered", "accepted", "current", "superseded", "late")

#: the letters table's columns, in the order ``record`` returns them
COLUMNS = (
    "path", "seat", "folder", "name", "id", "sender", "recipient", "type", "re", "thread", "priority",
    "task", "has_deadline", "deadline_ns", "sent_ns", "slug_cf", "subject_cf", "legacy",
    "state", "state_r", "answered", "answered_r", "accepted", "accepted_r", "current", "current_r",
    "superseded", "superseded_r", "head", "late0", "late0_r", "late1", "late1_r", "keys", "comp",
    "digest", "size", "mtime_ns", "inode", "ctime_ns",
)


#: the narrow ``q`` table's columns (after ``n`` and ``tn``): what a query filters and judges
#: every row by, copied from ``COLUMNS`` (a query scans ``q`` whole: about 80 bytes a row)
Q_COLUMNS = (
    "type", "sender", "recipient", "priority", "task", "has_deadline", "deadline_ns", "sent_ns",
    "state", "answered", "accepted", "current", "superseded", "late0", "late1",
)
Q_AT = tuple(COLUMNS.index(c) for c in Q_COLUMNS)


def q_row(n: int, tn: int, tn1: int | None, row: tuple) -> tuple:
    """The ``q`` row of a letter whose ``letters`` row (``COLUMNS``) is ``row``."""
    return (n, tn, tn1, *(row[i] for i in Q_AT))


def ns(when: datetime) -> int:
    """Nanoseconds since the epoch, exactly (aware datetimes hold microseconds)."""
    return (when - _EPOCH) // _MICRO * 1000


def _encoder():
    """The C encoder of compact JSON, made once (``json.dumps`` makes one a call)."""
    from json.encoder import c_make_encoder, encode_basestring

    if c_make_encoder is None:  # pragma: no cover - every CPython build has _json
        enc = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
        return enc.encode
    def default(obj):
        raise TypeError(f"{type(obj).__name__} is not JSON")

    raw = c_make_encoder(None, default, encode_basestring, None, ":", ",", False, False, True)
    return lambda obj: "".join(raw(obj, 0))


_encode = _encoder()


def dumps(obj) -> str:
    """Compact JSON exactly as the command line prints it (``cli.output.dumps_json``)."""
    text = _encode(obj)
    if text.isascii() and "\x7f" not in text:
        return text
    from letterbox_tui.core import text as _text

    return _text.json_escape(text)


_REASONS: dict = {(): ""}


def _reasons_text(reasons: tuple[Reason, ...]) -> str:
    """Each reason as compact JSON, one a line (answers shared between letters share it)."""
    try:
        got = _REASONS.get(reasons)
    except TypeError:  # not hashable (a list): made afresh
        got = None
    if got is None:
        got = "\n".join(dumps(r.to_json()) for r in reasons)
        if len(_REASONS) < 100_000:
            _REASONS[tuple(reasons)] = got
    return got


def forget_reasons() -> None:
    """Drop the reasons' texts cached so far (a build does between slices: the cache keeps
    the reasons themselves alive)."""
    _REASONS.clear()
    _REASONS[()] = ""


def link_keys(letter: Letter) -> set[str]:
    """Every id or label through which another letter's answers may depend on this one's
    (or this one's on theirs): two letters sharing a key are in one component. Generous on
    purpose: a superset only costs re-deriving a little more."""
    keys = {letter.id, letter.thread or letter.id}
    for value in (letter.re, letter.supersedes, letter.rules_on, letter.upholds):
        if value:
            keys.add(value)
            if letter.malformed:
                keys.update(tokens(value))
    for d in letter.disputes or ():
        keys.add(d)
    return keys


def digest(letter: Letter) -> bytes:
    """BLAKE2b-128 of everything the letter was made of but its file's stat (its path, every
    field as written, its flags): two letters with one digest derive the same row, so a
    file whose stat changed and whose digest did not (a ``touch``, a git checkout that wrote
    the same bytes) keeps its stored row (``Index.refresh``). ``marshal`` at version 0
    writes equal plain values as equal bytes (no sharing or interning marks)."""
    import marshal

    from letterbox_tui.core.letters import state

    from .files import blake2b

    return blake2b(marshal.dumps(state(letter)[:-3], 0), digest_size=16).digest()


def _fields(letter: Letter) -> dict[str, str]:
    """The letter's fields as a dict, without pairing them up on the letter for good
    (``Letter.fields`` keeps the pairs it makes: at a million letters, a gigabyte kept)."""
    if letter._fields is None:
        return dict(zip(letter._field_keys, letter.field_values()))
    return dict(letter._fields)


def record(letter: Letter, res, comp: str, ctime_ns: int) -> tuple[tuple, tuple]:
    """The stored columns of one letter: its ``letters`` row (``COLUMNS``) and its ``texts``
    row (path, the row's JSON, the row's JSON past its deadline when that differs: kept
    apart, so a query reads the texts of the rows it prints only); ``comp`` names its component
    (the least path in it: see ``components``); ``ctime_ns``: its file's when read (-1:
    unknown, then any later look at it takes it as changed)."""
    state = res.state(letter)
    answered = res.answered(letter)
    accepted = res.accepted(letter)
    current = res.current(letter)
    superseded = res.superseded(letter)
    deadline_at = letter.deadline_at
    if letter.requires_ack != "true":
        late0 = late1 = res.late(letter)  # never late, at any clock
    elif deadline_at is not None:
        late0 = res.late(letter, deadline_at)  # deadline < clock is false
        late1 = res.late(letter, deadline_at + _MICRO)
    else:
        late0 = late1 = res.late(letter, _EPOCH)
    head = res.head(letter)
    made_slug = slug(letter)
    subj = letter.subject or made_slug
    lid = letter.id
    prefix = dumps({
        "id": lid, "path": letter.path, "seat": letter.seat, "folder": letter.folder,
        "from": letter.sender, "to": letter.recipient, "type": letter.type, "re": letter.re,
        "thread": letter.thread or lid, "supersedes": letter.supersedes, "priority": letter.priority,
        "requires_ack": letter.requires_ack, "deadline": letter.deadline, "sent": letter.sent,
        "slug": made_slug, "subject": subj, "fields": _fields(letter),
    })[:-1]
    flags = letter.flags
    legacy = dumps(list(flags)) if flags else "[]"
    head_text = dumps(head.id) if head is not None else "null"
    texts = [(a.value, _reasons_text(a.reasons)) for a in (state, answered, accepted, current, superseded)]
    late0_t, late1_t = _reasons_text(late0.reasons), _reasons_text(late1.reasons)
    row0 = row_json(prefix, legacy, head_text, (*texts, (late0.value, late0_t)))
    row1 = row0 if (late1.value, late1_t) == (late0.value, late0_t) else row_json(
        prefix, legacy, head_text, (*texts, (late1.value, late1_t)))
    return ((
        letter.path, letter.seat, letter.folder, letter.name, lid, letter.sender, letter.recipient,
        letter.type, letter.re, letter.thread or lid, letter.priority, 1 if letter.requires_ack == "true" else 0,
        1 if letter.deadline else 0, ns(deadline_at) if deadline_at is not None else None,
        ns(letter.sent_at) if letter.sent_at is not None else None,
        made_slug.casefold(), subj.casefold(), legacy,
        *(x for pair in texts for x in pair), head_text,
        late0.value, late0_t, late1.value, late1_t,
        "\n".join(sorted(link_keys(letter))), comp, digest(letter), letter.size, letter.mtime_ns, letter.inode,
        ctime_ns,
    ), (letter.path, row0, None if row1 is row0 else row1))


def components(letters) -> dict[str, str]:
    """Path -> the least path of its component: letters sharing a ``link_keys`` key, and
    transitively. A letter's answers depend on its component only (and on what bears on
    every letter: the unreadable and unsupported entries, the scope)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    owner: dict[str, str] = {}  # key -> a path holding it
    for x in letters:
        p = x.path
        parent.setdefault(p, p)
        for k in link_keys(x):
            other = owner.setdefault(k, p)
            if other != p:
                a, b = find(p), find(other)
                if a != b:
                    if a < b:
                        parent[b] = a
                    else:
                        parent[a] = b
    return {p: find(p) for p in parent}


def row_json(prefix: str, legacy: str, head: str, found, extra: tuple[str, ...] = ()) -> str:
    """A row as compact JSON from its parts: ``found`` is (value, reasons text) of each
    answer in ``ANSWERS`` order; ``extra``, a query's reasons, come after theirs."""
    reasons: list[str] = []
    for value, text in found:
        if value == "unknown" and text:
            reasons.extend(text.split("\n"))
    reasons.extend(extra)
    if len(reasons) > 1:
        reasons = list(dict.fromkeys(reasons))
    (st, _), (an, _), (ac, _), (cu, _), (su, _), (la, _) = found
    return (
        f'{prefix},"state":"{st}","answered":"{an}","accepted":"{ac}","current":"{cu}",'
        f'"head":{head},"superseded":"{su}","late":"{la}","legacy":{legacy},'
        f'"reasons":[{",".join(reasons)}]}}'
    )


# --- a stored row, read back -------------------------------------------------------

#: what a query reads of each candidate letter
ROW_COLUMNS = (
    "path", "id", "has_deadline", "deadline_ns", "sent_ns", "row0", "legacy",
    "state", "state_r", "answered", "answered_r", "accepted", "accepted_r", "current", "current_r",
    "superseded", "superseded_r", "head", "late0", "late0_r", "late1", "late1_r",
)
_I = {name: i for i, name in enumerate(ROW_COLUMNS)}


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split("\n")) if text else ()


class Stored:
    """One letter's stored row at a clock (``at_ns``): its answers and their reasons."""

    __slots__ = ("r", "late", "late_r")

    def __init__(self, r: tuple, at_ns: int) -> None:
        self.r = r
        d = r[3]
        if d is not None and d < at_ns:
            self.late, self.late_r = r[_I["late1"]], r[_I["late1_r"]]
        else:
            self.late, self.late_r = r[_I["late0"]], r[_I["late0_r"]]

    def answer(self, name: str) -> tuple[str, str]:
        """(value, reasons text) of the answer ``name``."""
        if name == "late":
            return self.late, self.late_r
        i = _I[name]
        return self.r[i], self.r[i + 1]

    def row_text(self, extra: tuple[str, ...] = ()) -> str:
        """The row of SPEC 6 as compact JSON (``core.rows.row``, spliced)."""
        r = self.r
        row0 = r[5]
        prefix = row0[: row0.rindex(',"state":')]  # the row up to its fields (the last such key)
        return row_json(prefix, r[6], r[17], ((r[7], r[8]), (r[9], r[10]), (r[11], r[12]), (r[13], r[14]),
                                            (r[15], r[16]), (self.late, self.late_r)), extra)

    def answers_json(self) -> dict:
        """``show``'s answers: each value with all its reasons (informational ones too)."""
        return {
            name: {"value": v, "reasons": [json.loads(x) for x in _split(t)]}
            for name in ANSWERS
            for v, t in (self.answer(name),)
        }


# --- the query, over stored rows ---------------------------------------------------

_HEADER = {"from": "sender", "to": "recipient", "type": "type", "re": "re", "id": "id",
           "priority": "priority", "thread": "thread"}
_LATE_SQL = "(CASE WHEN deadline_ns IS NOT NULL AND deadline_ns < :at THEN late1 ELSE late0 END)"


def sql_filter(query: Query, at_ns: int) -> tuple[str, dict]:
    """A WHERE clause over ``q`` no row outside it could match (what remains is judged in
    Python); a column ``q`` does not hold is asked of ``letters`` (by ``n``)."""
    where: list[str] = []
    params: dict = {"at": at_ns}
    for n, term in enumerate(query.terms):
        key, p = term.key, f"p{n}"
        if key in _HEADER:
            names = []
            for k, v in enumerate(term.values):
                params[f"{p}_{k}"] = v
                names.append(f":{p}_{k}")
            column = _HEADER[key]
            test = f"{column} IN ({','.join(names)})"
            where.append(test if column in Q_COLUMNS else f"q.n IN (SELECT n FROM letters WHERE {test})")
        elif key == "task":
            where.append(f"task = {1 if term.value == 'yes' else 0}")
        elif key in ("slug", "subject"):
            params[p] = term.value
            where.append(f"q.n IN (SELECT n FROM letters WHERE instr({key}_cf, :{p}) > 0)")
        elif key in ("since", "until"):
            params[p] = ns(term.when)
            where.append(f"(sent_ns IS NULL OR sent_ns {'>=' if key == 'since' else '<='} :{p})")
        elif key == "due":
            params[p] = ns(term.when)
            where.append(f"has_deadline = 1 AND (deadline_ns IS NULL OR deadline_ns {term.op} :{p})")
        else:
            column = _LATE_SQL if key == "late" else key
            wanted = term.value
            if key == "state" and wanted == "any":
                continue
            if key == "superseded" and wanted == "head":
                column, wanted = "current", "yes"
            if wanted == "unknown":
                where.append(f"{column} = 'unknown'")
            else:
                params[p] = wanted
                where.append(f"{column} IN (:{p}, 'unknown')")
    return (" AND ".join(where) or "1"), params


def sql_verdict(query: Query) -> str:
    """Each row's Kleene AND of every term as 0 (no), 1 (unknown) or 2 (yes), in SQL (the
    ``sql_filter`` already holds; a row it gives 1 is judged again by ``judge`` for its
    reasons). The same outcomes as ``outcome``."""
    parts: list[str] = []
    for n, term in enumerate(query.terms):
        key, p = term.key, f"p{n}"
        if key in ("since", "until"):
            parts.append("(CASE WHEN sent_ns IS NULL THEN 1 ELSE 2 END)")
        elif key == "due":
            parts.append("(CASE WHEN deadline_ns IS NULL THEN 1 ELSE 2 END)")
        elif key in _HEADER or key in ("task", "slug", "subject") or (key == "state" and term.value == "any"):
            continue
        else:
            column = _LATE_SQL if key == "late" else key
            wanted = term.value
            if key == "superseded" and wanted == "head":
                column, wanted = "current", "yes"
            if wanted == "unknown":
                parts.append(f"(CASE WHEN {column} = 'unknown' THEN 2 ELSE 0 END)")
            else:
                parts.append(f"(CASE WHEN {column} = :{p} THEN 2 WHEN {column} = 'unknown' THEN 1 ELSE 0 END)")
    if not parts:
        return "2"
    return parts[0] if len(parts) == 1 else f"min({', '.join(parts)})"


#: the number in ``texts`` of a ``q`` row's JSON at the query's clock: past its deadline,
#: the row kept for then (``tn1``) where it differs (joined as ``t``: its JSON is ``t.row0``)
TEXT_TN = "(CASE WHEN q.tn1 IS NOT NULL AND q.deadline_ns < :at THEN q.tn1 ELSE q.tn END)"


def _time_reason(term: Term, r: tuple, what: str) -> str:
    return dumps(Reason(
        "ambiguous-timestamp", "match", f"{term.raw}: the letter's {what} is ambiguous", (r[1],), (r[0],),
    ).to_json())


def spliced(query: Query, text: str | bytes, sent_null: int, due_null: int):
    """The row of an unknown match (``text``: its stored row at the query's clock, whose
    ``q`` row has no sent time or deadline as said) with the query's reasons, as
    ``Stored.row_text(judge(...)[1])`` makes it: a term on an answer is unknown for that
    answer's reasons, which the row's own reasons already hold (and ``row_json`` keeps a
    reason once), so only a time term's reason can be new. UTF-8 bytes in, bytes out."""
    if isinstance(text, bytes):
        return spliced(query, text.decode("utf-8"), sent_null, due_null).encode("utf-8")
    times = [(t, "deadline" if t.key == "due" else "sent time") for t in query.terms
             if (t.key in ("since", "until") and sent_null) or (t.key == "due" and due_null)]
    if not times:
        return text
    row = json.loads(text)
    have = {dumps(r) for r in row["reasons"]}
    r = (row["path"], row["id"])
    new = [x for x in dict.fromkeys(_time_reason(t, r, what) for t, what in times) if x not in have]
    if not new:
        return text
    head, _, rest = text.rpartition(',"reasons":[')
    return f'{head},"reasons":[{rest[:-2]}{"," if rest[:-2] else ""}{",".join(new)}]}}'


_YES = ("yes", ())
_NO = ("no", ())


def outcome(term: Term, s: Stored) -> tuple[str, tuple[str, ...]]:
    """One term on one stored row: (yes|no|unknown, reasons), as ``core.query`` gives it.
    Header, text and time bounds were settled by ``sql_filter`` where they are certain."""
    key = term.key
    r = s.r
    if key in _HEADER or key in ("task", "slug", "subject"):
        return _YES  # only rows passing the SQL filter are asked
    if key in ("since", "until"):
        if r[4] is None:
            return "unknown", (_time_reason(term, r, "sent time"),)
        return _YES
    if key == "due":
        if r[3] is None:
            return "unknown", (_time_reason(term, r, "deadline"),)
        return _YES
    wanted = term.value
    if key == "state" and wanted == "any":
        return _YES
    name = key
    if key == "superseded" and wanted == "head":
        name, wanted = "current", "yes"
    value, text = s.answer(name)
    if wanted == "unknown":
        return _YES if value == "unknown" else _NO
    if value == wanted:
        return _YES
    if value == "unknown":
        return "unknown", _split(text)
    return _NO


def judge(query: Query, s: Stored) -> tuple[str, tuple[str, ...]]:
    """Kleene AND of every term over one row (``core.query._kleene``)."""
    reasons: list[str] = []
    unknown = False
    for term in query.terms:
        value, why = outcome(term, s)
        if value == "no":
            return _NO
        if value == "unknown":
            unknown = True
            reasons.extend(why)
    if unknown:
        return "unknown", tuple(dict.fromkeys(reasons))
    return _YES

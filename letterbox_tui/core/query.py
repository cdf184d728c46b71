"""The query language (SPEC 6): terms parsed once, then evaluated per row in three values.

``parse_query(["type=request", "answered=no"])`` gives a ``Query``; ``run_query(query,
resolution)`` evaluates it over every readable letter and gives the matching letters and
the letters whose outcome is unknown, each with the reasons that made it so. Evaluation is
Kleene AND: every term yes is a match, any term no excludes the row, anything else leaves
the row unknown. Cheap header terms run first, so derived answers are computed only for
letters that survive them. Bodies are never read.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from datetime import datetime, timedelta, tzinfo
from operator import attrgetter

from .errors import LetterboxError
from .grammar import RELATIVE_TIME_RE, parse_time, slug_of
from .lazy import KeptLetters
from .model import Answer, Letter, Reason
from .times import day_bounds

if TYPE_CHECKING:  # the parser needs no resolver (settings check saved queries with it)
    from .resolve import Resolution

# key -> the operators it takes
_OPERATORS: dict[str, tuple[str, ...]] = {
    "from": ("=",), "to": ("=",), "type": ("=",), "re": ("=",), "id": ("=",), "priority": ("=",),
    "thread": ("=",),
    "state": ("=",),
    "answered": ("=",), "accepted": ("=",), "current": ("=",), "late": ("=",),
    "superseded": ("=",),
    "since": ("=",), "until": ("=",),
    "due": ("<=", "<", ">=", ">"),
    "slug": ("~=",), "subject": ("~=",),
    "task": ("=",),
    "at": ("=",),
}
_EQUALITY = ("from", "to", "type", "re", "id", "priority", "thread")
_YES_NO_UNKNOWN = ("yes", "no", "unknown")
_CHOICES: dict[str, tuple[str, ...]] = {
    "state": ("open", "closed", "any", "unknown"),
    "answered": _YES_NO_UNKNOWN,
    "accepted": _YES_NO_UNKNOWN,
    "current": _YES_NO_UNKNOWN,
    "late": _YES_NO_UNKNOWN,
    "superseded": ("yes", "no", "head", "unknown"),
    "task": ("yes", "no"),
}
_TIMES = ("since", "until", "due", "at")
# Header terms cost nothing; derived ones ask the resolver. Evaluated in this order.
_COST = {
    "from": 0, "to": 0, "type": 0, "re": 0, "id": 0, "priority": 0, "thread": 0, "task": 0,
    "slug": 1, "subject": 1, "since": 1, "until": 1, "due": 1,
    "accepted": 2, "current": 3, "superseded": 3, "answered": 4, "state": 5, "late": 6,
}
_TERM_RE = re.compile(r"([a-z_]+)(~=|<=|>=|<|>|=)(.*)", re.DOTALL)

#: Every key the query language knows (for help text and the app's query bar).
KEYS = tuple(_OPERATORS)


def operators(key: str) -> tuple[str, ...]:
    """The operators ``key`` takes (``due``: <= < >= >), empty for an unknown key."""
    return _OPERATORS.get(key, ())


def choices(key: str) -> tuple[str, ...]:
    """The fixed values ``key`` takes (``state``: open closed any unknown), else empty;
    time keys give the relative words and a few offsets (for completion)."""
    if key in _CHOICES:
        return _CHOICES[key]
    if key in _TIMES:
        return ("now", "today", "yesterday", "-7d", "-1d", "+1d", "+2d", "-36h", "-90m")
    return ()


@dataclass(slots=True, frozen=True)
class Term:
    """One parsed term: ``key``, ``op`` and its value(s) (``when`` for time terms)."""

    raw: str
    key: str
    op: str
    values: tuple[str, ...]
    when: datetime | None = None

    @property
    def value(self) -> str:
        return self.values[0]


@dataclass(slots=True, frozen=True)
class Query:
    """Parsed terms. ``at`` is the clock for ``late`` (None: the caller's now)."""

    terms: tuple[Term, ...]
    at: datetime | None = None
    #: a term's time was relative (``-7d``, ``today``): the answer depends on the clock
    relative: bool = False

    @property
    def state(self) -> str:
        """The ``state=`` term's value (default ``any``)."""
        for t in self.terms:
            if t.key == "state":
                return t.value
        return "any"


@dataclass(slots=True, frozen=True)
class Outcome:
    """The result of evaluating a query on one letter: yes, no or unknown, with reasons."""

    value: str
    reasons: tuple[Reason, ...] = ()


@dataclass(slots=True)
class QueryResult:
    matches: list[Letter]
    unknown: list[tuple[Letter, tuple[Reason, ...]]]


def _bad(raw: str, why: str) -> LetterboxError:
    return LetterboxError(f"invalid term {raw!r}: {why}")


_UNITS = {"d": "days", "h": "hours", "m": "minutes"}
_TIME_HELP = "a time is RFC 3339 with an offset (2026-10-04T00:00:00Z) or relative: now, today, yesterday, -7d, +2d, -36h, -90m"


def is_relative(value: str) -> bool:
    """``now``, ``today``, ``yesterday`` or ``[+-]N`` days, hours or minutes."""
    return RELATIVE_TIME_RE.fullmatch(value) is not None


def parse_when(value: str, now: datetime | None, tz: tzinfo | None = None) -> datetime | None:
    """A time in a term: RFC 3339 with an offset, or relative to ``now`` (SPEC 6): ``now``;
    ``today`` and ``yesterday`` are local midnight in the user's calendar (``tz``; None: the
    system's local time zone, daylight saving included); ``-7d``, ``+2d``, ``-36h``,
    ``-90m`` are that many days (of 24 hours), hours or minutes from ``now``. None when
    the value is neither (or lies outside the calendar)."""
    when = parse_time(value)
    if when is not None or not is_relative(value):
        return when
    if now is None:
        raise LetterboxError(f"relative time {value!r} needs a clock (an internal error: pass now=)")
    if value == "now":
        return now
    try:
        if value in ("today", "yesterday"):  # the one "today" (core.times), as the app's "due today"
            return day_bounds(now, tz, -1 if value == "yesterday" else 0)[0]
        amount = int(value[1:-1]) * (1 if value[0] == "+" else -1)
        return now + timedelta(**{_UNITS[value[-1]]: amount})
    except (OverflowError, ValueError, OSError):
        return None


def not_a_time(option: str, value: object) -> LetterboxError:
    """The refusal of ``option``'s value (``--at``, the MCP tools' ``at``) when
    ``parse_when`` reads no time in it: one sentence for every face."""
    return LetterboxError(f"{option} {value!r}: expected RFC 3339 with an offset (2026-10-04T00:00:00Z) "
                          "or a relative time (now, today, yesterday, -7d, +2d, -36h, -90m)")


def parse_term(raw: str, now: datetime | None = None, tz: tzinfo | None = None) -> Term:
    """One term, or ``LetterboxError`` naming it. ``now``: what relative times count from."""
    if not raw.strip():
        raise _bad(raw, "empty term")
    m = _TERM_RE.fullmatch(raw)
    if m is None:
        raise _bad(raw, "expected KEY=VALUE (or due<=T, slug~=S)")
    key, op, value = m.groups()
    if key not in _OPERATORS:
        raise _bad(raw, f"unknown key {key!r} (keys: {', '.join(KEYS)})")
    if op not in _OPERATORS[key]:
        raise _bad(raw, f"{key} takes {' '.join(key + o + 'VALUE' for o in _OPERATORS[key])}")
    if value != value.strip() or not value:
        raise _bad(raw, "empty value" if not value.strip() else "value has surrounding spaces")
    if key in _EQUALITY:
        values = tuple(value.split(","))
        if any(not v for v in values):
            raise _bad(raw, "empty alternative in a,b")
        return Term(raw, key, op, values)
    if key in _CHOICES:
        if value not in _CHOICES[key]:
            raise _bad(raw, f"{key} is one of {'|'.join(_CHOICES[key])}")
        return Term(raw, key, op, (value,))
    if key in _TIMES:
        when = parse_when(value, now, tz)
        if when is None:
            raise _bad(raw, _TIME_HELP)
        return Term(raw, key, op, (value,), when)
    # slug~= subject~=: case-insensitive substring
    return Term(raw, key, op, (value.casefold(),))


def parse_query(raw_terms: Sequence[str], now: datetime | None = None, tz: tzinfo | None = None) -> Query:
    """Parse every term; the same key with the same operator may not appear twice.

    Relative times count from ``at=T`` when the query has one (itself relative to ``now``),
    else from ``now``, the caller's clock (the core never reads one of its own); ``tz`` is
    the calendar of ``today`` and ``yesterday`` (None: the system's local time zone)."""
    terms: list[Term] = []
    seen: dict[tuple[str, str], str] = {}
    at: datetime | None = None
    relative = False
    for raw in raw_terms:
        m = _TERM_RE.fullmatch(raw)
        if m is not None and m.group(1) == "at" and m.group(2) == "=":
            at_term = parse_term(raw, now, tz)
            at = at_term.when
    clock = at if at is not None else now
    for raw in raw_terms:
        m = _TERM_RE.fullmatch(raw)
        if m is not None and m.group(1) in _TIMES and is_relative(m.group(3)):
            relative = True
        term = parse_term(raw, now if (m is not None and m.group(1) == "at") else clock, tz)
        slot = (term.key, term.op)
        if slot in seen:
            raise LetterboxError(f"repeated term {raw!r}: {term.key}{term.op} already given as {seen[slot]!r}")
        seen[slot] = raw
        if term.key == "at":
            at = term.when
            continue
        terms.append(term)
    _check_ranges(terms)
    terms.sort(key=lambda t: (_COST[t.key], t.key, t.op))  # any order of terms, one result
    return Query(tuple(terms), at, relative)


def _check_ranges(terms: list[Term]) -> None:
    """A time range that no instant can satisfy is a mistake, not an empty answer."""
    by = {(t.key, t.op): t for t in terms}
    pairs = [(by.get(("since", "=")), by.get(("until", "=")))]
    pairs += [(by.get(("due", lo)), by.get(("due", hi))) for lo in (">=", ">") for hi in ("<=", "<")]
    for low, high in pairs:
        if low is None or high is None:
            continue
        assert low.when is not None and high.when is not None
        strict = low.op == ">" or high.op == "<"
        if low.when > high.when or (strict and low.when == high.when):
            raise LetterboxError(f"invalid term {high.raw!r}: no time is both {low.raw} and {high.raw}")


def slug(letter: Letter) -> str:
    return slug_of(letter.id, letter.sender, letter.type)


def subject(letter: Letter) -> str:
    return letter.subject or slug(letter)


def _time_unknown(letter: Letter, term: Term, what: str) -> Outcome:
    return Outcome(
        "unknown",
        (Reason(
            "ambiguous-timestamp", "match",
            f"{term.raw}: the letter's {what} is ambiguous",
            (letter.id,), (letter.path,),
        ),),
    )


_YES = Outcome("yes")
_NO = Outcome("no")


def _select(answer: Answer, wanted: str) -> Outcome:
    """``answered=yes`` against an answer: unknown stays unknown unless asked for."""
    if wanted == "unknown":
        return _YES if answer.unknown else _NO
    if answer.value == wanted:
        return _YES
    if answer.unknown:
        return Outcome("unknown", tuple(answer.reasons))
    return _NO


def _term_fn(term: Term, res: Resolution) -> Callable[[Letter], Outcome]:
    """The term as a function of a letter (made once per query, called once per letter)."""
    key = term.key
    if key in _HEADER_ATTR or key == "thread" or key == "task":
        test = _header_test(term)
        assert test is not None
        return lambda x: _YES if test(x) else _NO
    if key == "slug":
        part = term.value
        return lambda x: _YES if part in slug(x).casefold() else _NO
    if key == "subject":
        part = term.value
        return lambda x: _YES if part in subject(x).casefold() else _NO
    when = term.when
    if key == "since" or key == "until":
        assert when is not None
        since = key == "since"

        def sent(x: Letter) -> Outcome:
            at = x.sent_at
            if at is None:
                return _time_unknown(x, term, "sent time")
            return _YES if (at >= when if since else at <= when) else _NO

        return sent
    if key == "due":
        assert when is not None
        compare = _COMPARE[term.op]

        def due(x: Letter) -> Outcome:
            if not x.deadline:
                return _NO
            if x.deadline_at is None:
                return _time_unknown(x, term, "deadline")
            return _YES if compare(x.deadline_at, when) else _NO

        return due
    if key == "state":
        wanted = term.value
        if wanted == "any":
            return lambda x: _YES
        state = res.state

        def in_state(x: Letter) -> Outcome:
            st = state(x)
            if wanted == "unknown":
                return _YES if st.value == "unknown" else _NO
            if st.value == wanted:
                return _YES
            if st.value == "unknown":
                return Outcome("unknown", tuple(st.reasons))
            return _NO

        return in_state
    if key == "superseded" and term.value == "head":
        current = res.current
        return lambda x: _select(current(x), "yes")
    answer = {
        "superseded": res.superseded, "answered": res.answered, "accepted": res.accepted,
        "current": res.current, "late": res.late,
    }.get(key)
    if answer is None:
        raise AssertionError(f"unhandled key {key}")  # parse_term admits no other key
    wanted = term.value
    return lambda x: _select(answer(x), wanted)


_COMPARE: dict[str, Callable[[datetime, datetime], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt,
}


def evaluate(query: Query, letter: Letter, res: Resolution) -> Outcome:
    """Kleene AND of every term: any no -> no; all yes -> yes; else unknown with reasons."""
    return _kleene([_term_fn(term, res) for term in query.terms], letter)


def _kleene(fns: list[Callable[[Letter], Outcome]], letter: Letter) -> Outcome:
    reasons: list[Reason] = []
    unknown = False
    for fn in fns:
        out = fn(letter)
        if out is _NO or out.value == "no":
            return _NO
        if out.value == "unknown":
            unknown = True
            reasons.extend(out.reasons)
    if unknown:
        return Outcome("unknown", dedupe(reasons))
    return _YES


def dedupe(reasons: Iterable[Reason]) -> tuple[Reason, ...]:
    return tuple(dict.fromkeys(reasons))


_HEADER_ATTR = {
    "from": "sender", "to": "recipient", "type": "type", "re": "re", "id": "id",
    "priority": "priority",
}


def _header_test(term: Term) -> Callable[[Letter], bool] | None:
    """A plain predicate for a header term (they are never unknown), else None."""
    if term.key in _HEADER_ATTR:
        get = attrgetter(_HEADER_ATTR[term.key])
        values = frozenset(term.values)
        return lambda x: get(x) in values
    if term.key == "thread":
        values = frozenset(term.values)
        return lambda x: (x.thread or x.id) in values
    if term.key == "task":
        want = term.value == "yes"
        return lambda x: (x.requires_ack == "true") == want
    return None


def _time_test(term: Term) -> Callable[[Letter], bool] | None:
    """For a time term: False when the term is surely no for a letter (its time is known
    and outside), True otherwise (yes, or unknown: left to the three-valued evaluation)."""
    when = term.when
    if term.key == "since":
        return lambda x: x.sent_at is None or x.sent_at >= when
    if term.key == "until":
        return lambda x: x.sent_at is None or x.sent_at <= when
    if term.key == "due":
        compare = _COMPARE[term.op]
        return lambda x: bool(x.deadline) and (x.deadline_at is None or compare(x.deadline_at, when))
    return None


#: the header terms whose key is a field ``KeptLetters.positions_with`` finds letters by
_FOUND_BY = {"from": "from", "to": "to", "type": "type"}


def _candidates(query: Query, letters: Iterable[Letter]) -> Iterable[Letter]:
    """``letters``, or when they can find letters without looking at every one
    (``core.lazy.KeptLetters``: by id, thread, sender, recipient, type) and terms name such
    values, the letters found for all of those terms: every letter those terms can be yes
    for, and maybe others (the terms then decide on each, as on any letter)."""
    if not isinstance(letters, KeptLetters):
        return letters
    sets: list[set[int]] = []
    for term in query.terms:
        if term.key == "id" or term.key == "thread":
            find = letters.letters_with_id if term.key == "id" else letters.letters_with_thread
            sets.append({letters.position(x.path) for v in term.values for x in find(v)})
        elif term.key in _FOUND_BY:
            found = letters.positions_with(_FOUND_BY[term.key], term.values)
            if found is not None:
                sets.append(set(found))
    if not sets:
        return letters
    return letters.many(sorted(set.intersection(*sets)))


def run_query(query: Query, res: Resolution, letters: Iterable[Letter] | None = None) -> QueryResult:
    """Evaluate over ``letters`` (default: every readable letter, one per file, scan order).

    Header terms filter first as plain predicates, then time terms drop the letters they
    surely exclude; the remaining terms are evaluated in three values only on the letters
    that pass them (a term that is no excludes a letter whatever the others say).
    """
    tests = []
    rest = []
    for term in query.terms:
        test = _header_test(term)
        (tests.append(test) if test is not None else rest.append(term))
    tests += [t for t in map(_time_test, rest) if t is not None]
    everyone = res.snapshot.letters if letters is None else letters
    pool = _candidates(query, everyone)
    for test in tests:
        pool = [x for x in pool if test(x)]
    fns = [_term_fn(term, res) for term in rest]
    if fns and pool is not everyone and (warm := getattr(res, "warm", None)) is not None:
        warm(pool)  # the store reads the answers the terms ask of the candidates together
    matches: list[Letter] = []
    unknown: list[tuple[Letter, tuple[Reason, ...]]] = []
    for letter in pool:
        out = _kleene(fns, letter)
        if out is _YES or out.value == "yes":
            matches.append(letter)
        elif out.value == "unknown":
            unknown.append((letter, out.reasons))
    return QueryResult(matches, unknown)

"""``letterbox-tui mcp``: the agents' face, a read-only MCP server over stdio.

One tool per reading command, each returning that command's ``--json`` document (its
``outputSchema`` is the command's JSON Schema, ``core.schema``), made by the same
documents (``core.documents``) from the same answers (``store.open_answers``).

The server keeps the answers between calls and re-opens them when ``watchfiles`` reports a
change under the letterbox; where no watcher runs (it could not start, or the letterbox
vanished), every call re-opens them (the store's stat proof). Between openings the watcher
vouches for the folders it reported nothing under (``core.listings``): an opening after a
change stats the files of the folders changed, not of every folder. A call made while
changes are still arriving says, in its result's ``_meta``, how many change events its
answers reflect and whether more are pending. Nothing here writes into a letterbox.

Each opening of the answers is a generation. While it is current, a tool's result for the
same arguments is the one already computed from it (``Memo``): a memory of the one
evaluator's output, never a second evaluator, dropped whole when the next generation is
opened. Only ``late`` depends on the clock in those results, and it changes only when the
clock passes a deadline, so a result is kept for the clock's place among the generation's
deadlines; a result that shows the clock itself (owed, digest) is kept for that exact
clock. ``show`` and ``leases`` read files each call and are never kept. A change event
opens the next generation at once, in the background, and answers there the last questions
asked of the one before (``REASK``), so that a repeated question finds its result ready.
"""

from __future__ import annotations

import bisect
import json
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from letterbox_tui.core import documents
from letterbox_tui.core.answers import Answers
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.lazy import deadlines
from letterbox_tui.core.listings import Listings
from letterbox_tui.core.model import forget_index
from letterbox_tui.core.paging import Page, page_of, part_said
from letterbox_tui.core.root import is_letterbox
from letterbox_tui.core.text import clean, json_escape
from letterbox_tui.core.views.attention import CODES

#: how much of a body ``show`` returns when asked for it
BODY_LIMIT = 64 * 1024
#: results kept for the current generation, at most this many and this many bytes (what a
#: result takes in memory, ``footprint``: its document and its JSON text); the least
#: recently asked go first, and one bigger than half of it is not kept
MEMO_SIZE = 64
MEMO_BYTES = 64 * 1024 * 1024
#: tools whose result is kept for the clock's place among the deadlines (only late reads the clock)
BY_DEADLINES = frozenset({"query", "exists", "current", "answered", "thread", "disputes"})
#: tools whose result shows the clock itself: kept for that exact clock only
BY_CLOCK = frozenset({"owed", "digest"})
#: how many of the last generation's most recently asked questions a new one answers at once
REASK = 2
#: how often (ms) the watcher looks up when nothing changed; its first look says it runs
READY_MS = 50
#: how long (s) the first opening waits for the watcher to run before it lists the letterbox
READY_WAIT = 5.0

INSTRUCTIONS = (
    "Every answer is yes, no or unknown: unknown always names its reasons, and no is only "
    "proof of absence when the result's scope says complete: true (an incomplete or partial "
    "scope is listed in scope.unreadable, scope.unsupported and scope.partial). These tools "
    "only read; write letters with the letterbox-tui command or the protocol's own tools."
)

_TERMS = {"type": "array", "items": {"type": "string"},
          "description": "query terms (SPEC 6), e.g. [\"state=open\", \"answered=no\"]"}
_AT = {"type": "string", "description": "the clock for late: RFC 3339 with an offset, or now, today, -7d, +2d"}
_SEAT = {"type": "string", "description": "a seat of the letterbox"}
_PARTICIPANT = {"type": "array", "items": {"type": "string"},
                "description": "restrict the scan to these seats (the scope is then partial)"}
_ID = {"type": "string", "description": "a letter: its id, display id, token or path"}
_ATTENTION = {"type": "array", "items": {"type": "string", "enum": list(CODES)},
              "description": "only the items carrying any of these attention codes (owed --attention)"}
_AS = {"type": "string", "description": "your own seat: what it owes is waiting-on-human (owed --as)"}
_PAGING = {
    "limit": {"type": "integer", "minimum": 1,
              "description": "at most this many rows (a long answer in parts: the result then carries page)"},
    "offset": {"type": "integer", "minimum": 0, "description": "skip this many rows first (page.next of the last part)"},
}


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": {**properties, "participant": _PARTICIPANT},
            "required": list(required), "additionalProperties": False}


#: tool -> (description, input schema)
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "query": ("Letters matching header terms, three-valued: matches, unknown rows with reasons, scope; "
              "limit/offset for a part (page says which, and how many rows in all).",
              _schema({"terms": _TERMS, "at": _AT, **_PAGING})),
    "exists": ("Did this ever happen? yes, no (only on a complete scope) or unknown, with reasons.",
               _schema({"terms": _TERMS, "at": _AT})),
    "show": ("One letter: headers, derived answers with reasons, provenance; the body only with body=true "
             f"(at most {BODY_LIMIT} bytes, body_truncated says when cut).",
             _schema({"id": _ID, "body": {"type": "boolean", "default": False}}, ("id",))),
    "current": ("Is this letter current? Its chain, head and candidate heads.", _schema({"id": _ID}, ("id",))),
    "answered": ("Is this letter answered? Its terminal replies, acks and progress note.",
                 _schema({"id": _ID}, ("id",))),
    "thread": ("The letter's thread as a reply tree.", _schema({"id": _ID}, ("id",))),
    "owed": ("Tasks still owed, by the seat that owes them, late first; limit/offset for a part (page says "
             "which, and how many items in all; give the first part's at to the others, so all are at one clock).",
             _schema({"seat": _SEAT, "at": _AT, "attention": _ATTENTION, "as": _AS, **_PAGING})),
    "disputes": ("Open disputes: where the letters still disagree.", _schema({})),
    "digest": ("Current truth: decisions in force, open disputes, owed and late, what is uncertain.",
               _schema({"seat": _SEAT, "at": _AT})),
    "check": ("Every problem and warning in the letterbox.", _schema({})),
    "leases": ("The protocol's leases under locks/: owner, session, since.", _schema({})),
    "inbox": ("A seat's inbox as the protocol's check lists it, with our answers: live first, stale last "
              "(no activity for LETTERBOX_CHECK_STALE_DAYS days, default 14); recent=true hides the stale ones.",
              _schema({"seat": _SEAT, "at": _AT, "recent": {"type": "boolean", "default": False}}, ("seat",))),
}


class Resident:
    """The answers kept between calls, re-opened after a change under the letterbox."""

    def __init__(self, root: str, opener: Callable[..., Answers] | None = None, *, source: str = "--root") -> None:
        from letterbox_tui.core.root import not_a_letterbox
        from letterbox_tui.store import open_answers

        self.root = root
        #: what a call says once the letterbox is gone or unreadable: the command line's
        #: refusal, naming where the root came from (``source``: --root, LETTERBOX_DIR, ...)
        self.gone = not_a_letterbox(root, source)
        self.open = opener or open_answers
        #: the folders the watcher vouches for between two openings (``core.listings``)
        self.listings = Listings(root)
        self._lock = threading.Lock()
        self._answers: Answers | None = None
        self.events = 0  # change events seen by the watcher
        self._reflected = -1  # the events the kept answers reflect
        self._watching = False
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._identity: tuple[int, int] | None = None  # the watched letterbox's (device, inode)
        self._ready = threading.Event()  # the watcher runs (or could not start)
        self.notices: list[str] = []
        self.generation = 0  # how many times the answers were opened
        self.memo = Memo()
        self._opening = threading.Lock()  # one opening of the answers at a time
        self._wake = threading.Event()  # an event came: re-open now, not at the next call
        #: the store's writing of the last answers computed: run after they are in use, and
        #: waited for by the next opening (which then finds them kept)
        self._writing: threading.Thread | None = None

    # --- watching ---------------------------------------------------------------------
    def watch(self) -> None:
        """Start watching the letterbox (again, when an earlier watcher ended)."""
        if self._watcher is not None and self._watcher.is_alive() and self._watching:
            return
        if not os.path.isdir(self.root):
            self._ready.set()  # no watcher to wait for
            return
        stop = self._stop = threading.Event()  # this watcher's, and its refresher's
        self._ready = threading.Event()
        self._watcher = threading.Thread(target=self._watch, args=(stop,), name="letterbox-watch", daemon=True)
        self._watching = True
        self._watcher.start()
        threading.Thread(target=self._refresher, args=(stop,), name="letterbox-refresh", daemon=True).start()

    def _refresher(self, stop: threading.Event) -> None:
        """Re-open the answers as soon as an event is in, so that the next call finds them
        open (or waits only for the rest of the opening); a failure here is the next call's
        to report, since it opens again."""
        while not stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if stop.is_set():
                return
            try:
                self._refresh(clock())
                for name, arguments in self.memo.asked[-REASK:]:  # the questions an agent repeats
                    if self._wake.is_set() or stop.is_set():
                        break  # more changes: open the answers again first
                    answer(self, name, arguments)
            except Exception:
                pass

    def _watch(self, stop: threading.Event) -> None:
        ready, listings = self._ready, self.listings
        try:
            from watchfiles import watch

            # the first (maybe empty) batch comes once the watches are in place: changes
            # from then on are reported, so what an opening after it lists is vouched for
            for changes in watch(self.root, stop_event=stop, debounce=20, step=10, rust_timeout=READY_MS,
                                 yield_on_timeout=True, raise_interrupt=False):
                if not ready.is_set():
                    listings.ready()
                    ready.set()
                if not changes:
                    continue
                listings.report([path for _, path in changes])
                with self._lock:
                    self.events += 1
                self._wake.set()
        except Exception:  # no native watcher, or the letterbox vanished: prove every call
            pass
        finally:
            listings.lost()
            with self._lock:
                if stop is self._stop:
                    self._watching = False
                self.events += 1  # what the watcher may have missed since
            ready.set()
            stop.set()  # its refresher ends with it
            self._wake.set()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()

    # --- answering --------------------------------------------------------------------
    def answers(self, at: datetime, participants: list[str] | None = None) -> tuple[Answers, dict[str, Any]]:
        """The answers at ``at`` and what they reflect (for the result's ``_meta``: with
        ``generation`` when they are the kept ones, whose results ``memo`` may hold)."""
        try:  # the letterbox itself moved, vanished or was replaced: nothing kept holds
            st = os.stat(self.root)
            here = (st.st_dev, st.st_ino)
        except OSError:
            here = None
        if here != self._identity:
            self.close()
            self._identity = here
            with self._lock:
                if self._answers is not None:
                    forget_index(self._answers.snapshot.letters)
                self._answers = None
                self._watching = False
                self._stop = threading.Event()
                self.listings = Listings(self.root)
        if here is None or not is_letterbox(Path(self.root)):
            raise LetterboxError(self.gone)
        if participants:  # a partial scope is asked afresh each time
            return self.open(self.root, at, participants=participants, notice=self.notices.append), {}
        self.watch()
        while True:
            self._refresh(at)
            with self._lock:
                if self._answers is not None:  # (another thread's opening may have failed since)
                    answers = self._answers.with_clock(at)
                    meta = {"generation": self.generation, "events_reflected": self._reflected,
                            "changes_pending": self.events != self._reflected, "watching": self._watching}
                    return answers, meta

    def _write_later(self, job: Callable[[], None]) -> None:
        def run() -> None:
            try:
                job()
            except Exception as exc:  # the store is only an optimisation: said, never fatal
                self.notices.append(f"the store could not be written ({type(exc).__name__}: {exc})")

        self._writing = threading.Thread(target=run, name="letterbox-store", daemon=False)
        self._writing.start()

    def _stale(self) -> bool:
        return self._answers is None or not self._watching or self.events != self._reflected

    def _refresh(self, at: datetime) -> None:
        """Open the answers again unless the kept ones reflect every event seen."""
        self._ready.wait(READY_WAIT)  # an opening after the watcher runs: its listings are vouched for
        with self._opening:
            with self._lock:
                if not self._stale():
                    return
                events = self.events
                if self._answers is not None:  # nothing kept holds the old answers while the new open
                    forget_index(self._answers.snapshot.letters)
                self._answers = None
                self.memo.begin(-1, None)
            if self._writing is not None:
                self._writing.join()
            answers = self.open(self.root, at, notice=self.notices.append, write=self._write_later,
                                watched=self.listings)
            with self._lock:
                self._answers, self._reflected = answers, events
                self.generation += 1
                self.memo.begin(self.generation, answers)


class Memo:
    """The results computed from one generation of the answers, by tool, arguments and
    clock key; dropped whole when another generation begins."""

    def __init__(self, size: int = MEMO_SIZE, budget: int = MEMO_BYTES) -> None:
        self.size, self.budget, self.held = size, budget, 0
        self.generation = -1
        self._deadlines: list[datetime] | None = None
        self._answers: Answers | None = None
        self._kept: OrderedDict[tuple, Any] = OrderedDict()
        self.asked: list[tuple[str, dict[str, Any]]] = []  # the questions kept, least recent first
        self._lock = threading.Lock()
        self._flights: dict[tuple, threading.Event] = {}  # (generation, key) being made, by whom waited for
        self.hits = self.misses = 0

    def begin(self, generation: int, answers: Answers | None) -> None:
        with self._lock:
            self.generation, self._answers, self._deadlines = generation, answers, None
            if self._kept:  # what was asked of the last generation stays known (``asked``)
                self.asked = [v[2] for v, _ in self._kept.values() if isinstance(v, tuple) and len(v) == 3]
            self._kept.clear()
            self.held = 0

    def place(self, at: datetime) -> int:
        """How many of the times the generation's deadlines name lie before ``at``: two
        clocks with the same place see every letter's ``late`` alike (late is ``deadline <
        at``)."""
        with self._lock:
            if self._deadlines is None:
                self._deadlines = deadlines(self._answers.snapshot.letters) if self._answers is not None else []
            times = self._deadlines
        return bisect.bisect_left(times, at)

    def once(self, generation: int, key: tuple, make: Callable[[], Any],
             size: Callable[[Any], int]) -> tuple[Any, bool]:
        """The value kept for ``key`` in ``generation``, or ``make()``'s, kept (about
        ``size(value)`` bytes); True when it was kept already. A value being made by
        another thread (a call, or the refresher asking again) is waited for, not made
        twice."""
        flight = (generation, key)
        while True:
            with self._lock:
                if (found := self._found(generation, key)) is not None:
                    return found[0], True
                waiting = self._flights.get(flight)
                if waiting is None:
                    done = self._flights[flight] = threading.Event()
                    self.misses += 1
            if waiting is None:
                break
            waiting.wait()  # then kept, or (failed, or of a generation gone) made here
        try:
            value = make()
            self.put(generation, key, value, size(value))
            return value, False
        finally:
            with self._lock:
                del self._flights[flight]
            done.set()

    def weight(self, *values: Any) -> int:
        """What ``values`` take in memory (``footprint``), counted only as far as this memo
        could keep them: past half its budget a value is not kept, however much more."""
        return footprint(*values, beyond=self.budget // 2)

    def get(self, generation: int, key: tuple) -> Any:
        """The value kept for ``key`` in ``generation``, or None."""
        with self._lock:
            found = self._found(generation, key)
            if found is None:
                self.misses += 1
            return None if found is None else found[0]

    def _found(self, generation: int, key: tuple) -> tuple[Any, int] | None:
        """(value, size) kept for ``key`` in ``generation`` (a hit), or None; the lock held."""
        if generation != self.generation or key not in self._kept:
            return None
        self.hits += 1
        self._kept.move_to_end(key)
        return self._kept[key]

    def put(self, generation: int, key: tuple, value: Any, size: int = 0) -> None:
        """Keep ``value`` (about ``size`` bytes) for ``generation``, if it is still current
        and takes at most half the budget: one that takes more would push out most others,
        each then made again at its next call, while its own call costs mostly its sending
        (at 100,000 letters the whole ``owed``: 4 s to make, 30 s to send and check)."""
        with self._lock:
            if generation != self.generation or 2 * size > self.budget:
                return  # computed from answers a newer generation replaced, or too big to keep
            if key in self._kept:
                self.held -= self._kept.pop(key)[1]
            self._kept[key] = (value, size)
            self.held += size
            while len(self._kept) > 1 and (len(self._kept) > self.size or self.held > self.budget):
                self.held -= self._kept.popitem(last=False)[1][1]


def _view_size(view) -> int:
    """What an owed view kept for its parts takes beyond the answers' own letters: its
    items and their attention codes."""
    size = sys.getsizeof
    return sum(size(item) + sum(size(c) + size(c.detail) for c in item.attention)
               for g in view.groups for item in g.items)


def footprint(*values: Any, beyond: int | None = None) -> int:
    """The bytes ``values`` take in memory: every dict, list, tuple and scalar in them,
    each object counted once (a string shared by two places of a document is one).
    ``beyond``: counting stops once the total is over it (a result that takes more than
    half the memo's budget is not kept, however much more)."""
    seen: set[int] = set()
    stack = list(values)
    total = 0
    size = sys.getsizeof
    limit = float("inf") if beyond is None else beyond
    while stack and total <= limit:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        total += size(x)
        kind = type(x)
        if kind is dict:
            stack.extend(x.keys())
            stack.extend(x.values())
        elif kind is list or kind is tuple:
            stack.extend(x)
    return total


def clock() -> datetime:
    """The server's one clock: now, in UTC (what ``at`` defaults to)."""
    return datetime.now(timezone.utc)


def _zone(root: str, values: list[str]):
    """The calendar of ``today`` and ``yesterday`` (``core.times``), as the CLI and the app
    count them: read only when a value names one."""
    if not any("today" in v or "yesterday" in v for v in values):
        return None
    from letterbox_tui.core.settings import display_zone, load_settings, load_user_settings

    return display_zone(load_settings(root), load_user_settings())


def _at(arguments: dict[str, Any], now: datetime, root: str) -> datetime:
    from letterbox_tui.core.query import not_a_time, parse_when

    value = arguments.get("at")
    if value is None:
        return now
    when = parse_when(str(value), now, _zone(root, [str(value)]))
    if when is None:
        raise not_a_time("at", value)
    return when


def _attention(arguments: dict[str, Any]) -> tuple[str, ...]:
    """``owed``'s ``attention`` (its ``--attention CODE``, repeatable): the codes, checked."""
    from letterbox_tui.core.views.owed import attention_codes

    codes = arguments.get("attention") or []
    if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
        raise LetterboxError(f"attention: a list of attention codes ({', '.join(CODES)})")
    return attention_codes(codes, option="attention")


def _owed_view(answers: Answers, seat: str | None, arguments: dict[str, Any]):
    """The owed view ``owed --seat --attention --as`` shows: the codes of the letterbox's
    settings, with ``as`` the reader's own seat (``waiting-on-human``)."""
    from letterbox_tui.core.views.attention import Rules
    from letterbox_tui.core.views.owed import owed_view

    rules = Rules.of_letterbox(str(answers.snapshot.root), arguments.get("as"))
    return owed_view(answers, seat, rules=rules, codes=_attention(arguments))


def _terms(arguments: dict[str, Any]) -> list[str]:
    terms = arguments.get("terms") or []
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise LetterboxError("terms: a list of strings (KEY=VALUE)")
    return terms


def call(resident: Resident, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document the tool ``name`` returns, and its ``_meta``; ``LetterboxError`` for
    bad input, with the command line's one-line message."""
    doc, meta, _text = answer(resident, name, arguments)
    return doc, meta


def answer(resident: Resident, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """``call``'s document and ``_meta``, with the document's JSON text (kept beside it)."""
    from letterbox_tui.core.query import parse_query

    if name not in TOOLS:
        raise LetterboxError(f"no tool {name!r}: one of {', '.join(TOOLS)}")
    allowed = set(TOOLS[name][1]["properties"])
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise LetterboxError(f"{name}: unknown argument {unknown[0]!r} (takes {', '.join(sorted(allowed))})")
    missing = [key for key in TOOLS[name][1]["required"] if key not in arguments]
    if missing:
        described = TOOLS[name][1]["properties"][missing[0]]["description"]
        raise LetterboxError(f"{name}: the argument {missing[0]!r} is required ({described})")
    participants = arguments.get("participant") or None
    if participants is not None and (not isinstance(participants, list)
                                     or not all(isinstance(p, str) for p in participants)):
        raise LetterboxError("participant: a list of seat names")
    now = clock()
    query = None
    if name in ("query", "exists"):
        terms = _terms(arguments)
        query = parse_query(terms, now, _zone(resident.root, terms))  # bad terms are refused before any scan
    at = (query.at if query is not None and query.at is not None else None) or _at(arguments, now, resident.root)
    for key in ("id", "seat", "as"):
        if key in arguments and not isinstance(arguments[key], str):
            raise LetterboxError(f"{key}: a string")
    _attention(arguments)
    for key in ("body", "recent"):  # ("no" is a true value to Python)
        if key in arguments and not isinstance(arguments[key], bool):
            raise LetterboxError(f"{key}: true or false, not {clean(repr(arguments[key]), single_line=True)}")
    page = page_of(arguments.get("limit"), arguments.get("offset"), option="")
    answers, meta = resident.answers(at, participants)
    seat = arguments.get("seat")
    for named in (seat, arguments.get("as")):
        if named is not None and named not in answers.snapshot.seats:
            raise LetterboxError(f"no seat {clean(named, single_line=True)!r} in {answers.snapshot.root}")
    generation = meta.get("generation")
    if generation is None:  # answers opened for this call alone (a partial scope): nothing kept
        doc = _document(name, answers, arguments, query, seat, page)
        return doc, meta, _json_text(doc)
    memo = resident.memo

    def made() -> tuple[dict[str, Any], str, tuple[str, dict[str, Any]]]:
        doc = _shared(name, answers, arguments, query, seat, page, at, memo, generation)
        return doc, _json_text(doc), (name, arguments)

    if name not in BY_DEADLINES | BY_CLOCK:
        doc, text, _ = made()
        return doc, {**meta, "reused": False}, text
    rest = {k: v for k, v in arguments.items() if k not in ("terms", "at")}
    when = ("at", at.isoformat()) if name in BY_CLOCK else ("place", memo.place(at))
    (doc, text, _), reused = memo.once(generation, (name, repr(query), json.dumps(rest, sort_keys=True), when),
                                       made, memo.weight)
    return doc, {**meta, "reused": reused}, text


def _json_text(doc: dict[str, Any]) -> str:
    """The document's JSON text, escaped as the command line's ``--json`` is (C1, bidi and
    invisible characters as ``\\uXXXX``, ``core.text.JSON_UNSAFE``): a client shows it, or
    hands it to a model, as it is."""
    return json_escape(json.dumps(doc, ensure_ascii=False))


def _shared(name: str, answers: Answers, arguments: dict[str, Any], query, seat: str | None,
            page: Page | None, at: datetime, memo: Memo, generation: int) -> dict[str, Any]:
    """The document, made from what every call of the generation shares (kept in ``memo``
    once made): the problems and temporaries ``check`` lists, the one result every part of
    a query is cut from, the one owed view of a clock every part of ``owed`` is cut from."""
    if name == "check":
        from letterbox_tui.core.temporaries import find_temporaries
        from letterbox_tui.core.views.problems import problems_view

        snapshot = answers.snapshot
        problems, _ = memo.once(generation, ("check-problems",), lambda: problems_view(answers),
                                lambda view: memo.weight(view.findings))
        # a temporary made, grown or removed is an event, and so a new generation: the
        # listing is kept, and each call counts their age on its own clock
        temporaries, _ = memo.once(generation, ("temporaries",),
                                   lambda: find_temporaries(str(snapshot.root), snapshot.seats), memo.weight)
        return documents.check_document(answers, problems, temporaries)
    if name == "query":
        # its letters are the answers' own: what it adds is its lists and the unknown rows' reasons
        result, _ = memo.once(generation, ("query-result", repr(query), memo.place(at)),
                              lambda: documents.query_result(answers, query),
                              lambda found: sys.getsizeof(found.matches) + memo.weight(found.unknown))
        return documents.query_document(answers, query, result, page)
    if name == "owed" and page is not None:
        # the parts of one owed at one clock (its ``at`` asked again) are cut from one view
        key = ("owed-view", seat, arguments.get("as"), _attention(arguments), at.isoformat())
        view, _ = memo.once(generation, key, lambda: _owed_view(answers, seat, arguments), _view_size)
        return documents.owed_document(answers, seat, page, view)
    return _document(name, answers, arguments, query, seat, page)


def _document(name: str, answers: Answers, arguments: dict[str, Any], query, seat: str | None,
              page: Page | None = None) -> dict[str, Any]:
    if name == "query":
        return documents.query_document(answers, query, page=page)
    if name == "exists":
        return documents.exists_document(answers, query)
    if name == "show":
        wanted = bool(arguments.get("body", False))
        doc = documents.show_document(answers, arguments["id"], BODY_LIMIT if wanted else 0)
        for item in doc["letters"]:
            if wanted:
                if item["body"] is not None:
                    item["body"], cut = _capped(clean(item["body"]), BODY_LIMIT)
                    item["body_truncated"] = item["body_truncated"] or cut
            else:
                item["body"], item["body_truncated"] = None, False
        return doc
    if name in ("current", "answered", "thread"):
        return getattr(documents, f"{name}_document")(answers, arguments["id"])
    if name == "owed":
        return documents.owed_document(answers, seat, page, _owed_view(answers, seat, arguments))
    if name == "digest":
        return documents.digest_document(answers, seat)
    if name == "inbox":  # (its staleness follows the clock: made afresh each call, as show's body)
        from letterbox_tui.core.views.inbox import inbox_json, inbox_view, stale_days_from

        view = inbox_view(answers, seat, answers.at, stale_days=stale_days_from(os.environ),
                          recent=bool(arguments.get("recent", False)))
        return inbox_json(view, answers)
    return getattr(documents, f"{name}_document")(answers)


def _capped(text: str, limit: int) -> tuple[str, bool]:
    """``text`` in at most ``limit`` bytes of UTF-8 (cut at a character), and whether it was
    cut: a sanitized body's placeholders are longer than the characters they replace."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", errors="ignore"), True


def _summary(doc: dict[str, Any]) -> str:
    scope = doc.get("scope") or {}
    return _scope_summary(scope) + _page_summary(doc.get("page"))


def _scope_summary(scope: dict[str, Any]) -> str:
    if scope.get("complete", True):
        return "complete scope"
    why = []
    if scope.get("unreadable"):
        why.append(f"{len(scope['unreadable'])} unreadable")
    if scope.get("unsupported"):
        why.append(f"{len(scope['unsupported'])} unsupported")
    if scope.get("partial"):
        why.append("partial")
    if not scope.get("atomic", True):
        why.append("files changed during the scan")
    return "INCOMPLETE scope (" + ", ".join(why) + "): a no here is not proof of absence"


def _page_summary(page: dict[str, Any] | None) -> str:
    """What a result cut to a part says of it ("" for a whole one)."""
    return "" if page is None else "; a part: " + part_said(page, option="")


def output_schema(name: str) -> dict[str, Any]:
    """The tool's result schema: its command's ``--json`` schema, an object at the top (as
    MCP requires of an ``outputSchema``; ``digest``'s is a choice of two objects)."""
    from letterbox_tui.core.schema import json_schema

    schema = json_schema(name)
    schema.setdefault("type", "object")
    return schema


def build_server(root: str, source: str = "--root"):
    """The MCP server over the letterbox at ``root``, chosen by ``source`` (and its
    resident answers)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from letterbox_tui import __version__

    resident = Resident(root, source=source)
    tools = [types.Tool(name=name, description=desc, inputSchema=schema, outputSchema=output_schema(name),
                        annotations=types.ToolAnnotations(readOnlyHint=True, idempotentHint=True,
                                                          openWorldHint=False))
             for name, (desc, schema) in TOOLS.items()]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        try:
            doc, meta, text = await anyio.to_thread.run_sync(answer, resident, params.name,
                                                             dict(params.arguments or {}))
        except LetterboxError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], isError=True)
        except Exception as exc:  # never die on one call: say what went wrong, keep serving
            message = f"internal error: {type(exc).__name__}: {clean(str(exc), single_line=True)}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=message)], isError=True)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=_summary(doc)), types.TextContent(type="text", text=text)],
            structuredContent=doc, _meta={"letterbox-tui": meta} if meta else None,
        )

    server = Server("letterbox-tui", version=__version__, instructions=INSTRUCTIONS,
                    on_list_tools=list_tools, on_call_tool=call_tool)
    return server, resident


def serve(root: str, source: str = "--root") -> None:
    """Serve the letterbox at ``root`` (chosen by ``source``) over stdio until the client
    closes it."""
    import anyio
    from mcp.server.stdio import stdio_server

    server, resident = build_server(root, source)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    except* (BrokenPipeError, ConnectionResetError):
        pass  # the client went away while answers were written to it: nobody is left to tell
    finally:
        resident.close()

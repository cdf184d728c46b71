"""Owed & late's letters from the derived index (``index.py``), for a face that shows that
view first and loads the rest of the letterbox after it (the app).

On an unchanged letterbox (the index's own proof: a ``stat`` of every directory and letter
file, ``Index.fresh``, run in a thread of its own while the rows are read) this reads only
the letters that may be owed: open, unanswered, unsuperseded tasks, by their stored
answers (chosen in the narrow ``q`` table). Each is an ``Owing``: what ``core.owed`` and
``core.views.owed`` ask of a letter (who owes it, its deadline, its time, id and path),
taken from the stored columns. ``StoredAnswers`` is the part of a ``Resolution`` those
views and a list row ask (state, answered, accepted, current, superseded, head, and late
at the clock: stored at the two clocks around the deadline, as ``index_rows`` keeps it);
an answer without reasons is a shared constant, one with reasons is parsed when asked.

What only a drawn row needs (its ``Letter``, made from its stored fields the way the scan
makes it, ``core.letters.build``; accepted, current, head; the holder's progress note from
its ack sidecar) is read for the rows a face names first (``OwedPreview.load``: the first
screen), then for all the others in a thread once it asks (``go``), in the same read
transaction: a list of 16,000 rows draws a screenful. Anything else is not answered from
here (it raises ``NotInPreview``): a face asks the whole letterbox for it once that is loaded.

Whatever cannot be vouched for gives None (then the face scans as usual): no index, one
made by other code or for another setting, a changed letterbox, a partial scope.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from letterbox_tui.core.header import HeaderResult
from letterbox_tui.core.letters import build
from letterbox_tui.core.model import Answer, Letter, Reason, Snapshot
from letterbox_tui.core.resolve.common import CLOSED, OPEN, StateAnswer, aware

from . import index_rows as ir
from .index import Index, Unusable

#: a superset of what ``core.owed.is_owed`` keeps (a task not closed, not superseded,
#: not answered), in the stored answers' terms; ``is_owed`` is asked again of each
OWED_WHERE = "task = 1 AND state != 'closed' AND superseded != 'yes' AND answered != 'yes'"
_Q_WHERE = " AND ".join(f"q.{term}" for term in OWED_WHERE.split(" AND "))  # (``q`` holds these columns)
#: what ``core.owed`` and ``core.views.owed`` ask of every owed letter: read for them all
_COLUMNS = (
    "path", "seat", "folder", "id", "sender", "recipient", "type", "task", "has_deadline", "deadline_ns",
    "sent_ns", "state", "state_r", "answered", "answered_r", "superseded", "superseded_r",
    "late0", "late0_r", "late1", "late1_r",
)
#: what only a drawn row asks (its ``Letter``, accepted, current, head): read for the rows
#: on the first screen, then for the others once it is drawn (``OwedPreview.go``)
_MORE = ("path", "row0", "name", "size", "mtime_ns", "inode", "head", "accepted", "accepted_r", "current",
         "current_r")
#: the answers' slots in an ``Owing`` (``Owing.made``) and their (value, reasons) columns,
#: in ``_COLUMNS`` (state, answered, superseded, late before / after the deadline) or
#: in ``_MORE`` (accepted, current: offset by ``_M``)
_M = 100
_SLOTS = ((11, 12), (13, 14), (_M + 7, _M + 8), (_M + 9, _M + 10), (15, 16), (17, 18), (19, 20))
#: how long the rest waits to be asked for (``go``) before it is read anyway
REST_AFTER_S = 3.0
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class NotInPreview(LookupError):
    """A question the stored answers of the owed letters cannot settle alone."""


def _when(value_ns: int | None) -> datetime | None:
    """The instant stored as nanoseconds (``index_rows.ns``), exactly (microseconds)."""
    return None if value_ns is None else _EPOCH + timedelta(microseconds=value_ns // 1000)


class Owing:
    """An owed letter as ``core.owed`` and ``core.views.owed`` see it (not a ``Letter``:
    ``OwedPreview.letter(path)`` makes that). ``deadline`` is only true or false: whether
    the letter has one (``deadline_at`` is None when it does not parse). ``made``: its
    answers by slot (``_SLOTS``), each made once; ``late`` is the one at the clock."""

    __slots__ = ("path", "seat", "folder", "id", "sender", "recipient", "type", "task", "deadline",
                 "deadline_at", "sent_at", "row", "made")

    def __init__(self, r: tuple, at_ns: int) -> None:
        (self.path, self.seat, self.folder, self.id, self.sender, self.recipient, self.type, task,
         has_deadline, deadline_ns, sent_ns) = r[:11]
        self.task = task == 1
        self.deadline = has_deadline == 1
        self.deadline_at = _when(deadline_ns)
        self.sent_at = _when(sent_ns)
        self.row = r
        # the answers with no reasons (nearly all) are shared; the others are parsed when asked
        late = 19 if deadline_ns is not None and deadline_ns < at_ns else 17  # late flips past the deadline
        self.made = [_STATES.get(r[11]) if not r[12] else None, _PLAIN.get(r[13]) if not r[14] else None,
                     None, None, _PLAIN.get(r[15]) if not r[16] else None,
                     _PLAIN.get(r[late]) if not r[late + 1] else None, late]

    def __repr__(self) -> str:
        return f"Owing({self.path!r})"


@dataclass(slots=True)
class OwedPreview:
    """The letters that may be owed (``snapshot.letters``, as ``Owing``; every other field
    of the snapshot is the whole letterbox's, as the index recorded it) and their answers."""

    snapshot: Snapshot
    res: StoredAnswers
    #: readable letters in the whole letterbox
    letters: int

    def letter(self, path: str) -> Letter:
        """The ``Letter`` at ``path`` (one of ``snapshot.letters``), made once."""
        return self.res.letter(path)

    def progress(self, path: str):
        """The holder's progress note on the letter at ``path`` (``core.sidecar.progress_of``)."""
        return self.res.progress(path)

    def load(self, paths) -> None:
        """Read now what drawing the rows of ``paths`` needs (the first screen)."""
        self.res.load(paths)

    def go(self, here: bool = False) -> None:
        """Read what drawing every other row needs now, in a thread of its own (``here``:
        in the caller's, which waits for it; else it is read ``REST_AFTER_S`` after the
        preview was made, or when a row needs it)."""
        self.res.go(here)


class StoredAnswers:
    """The stored answers of ``snapshot``'s letters (``Owing``) at the clock ``at``. What
    only a drawn row asks (its ``Letter``, accepted, current, head, its progress note) is
    read for the rows of the first screen (``load``), then for all the others in a thread
    (``go``), inside the read transaction the owed letters were read in: one state of the
    index. A row asked for before that is read waits for it."""

    def __init__(self, snapshot: Snapshot, at: datetime, utc: bool, ix: Index | None = None) -> None:
        self.snapshot = snapshot
        self.at = aware(at)
        self._at_ns = ir.ns(self.at)
        self._utc = utc
        self._owing: dict[str, Owing] = {}
        #: per path, its ``_MORE`` columns, and its progress note (None: none)
        self._more: dict[str, tuple] = {}
        self._notes: dict = {}
        self._letters: dict[str, Letter] = {}
        self._lock = threading.Lock()
        self._ix = ix  # in its read transaction until the rest is read
        self._db = threading.Lock()
        self._asked = threading.Event()
        self._done = threading.Event()
        self._started = False

    def owing(self, rows) -> list[Owing]:
        at_ns = self._at_ns
        made = [Owing(r, at_ns) for r in rows]
        self._owing = {x.path: x for x in made}
        return made

    # --- the answers ----------------------------------------------------------------
    def _of(self, x) -> Owing:
        if type(x) is Owing:
            return x
        got = self._owing.get(x.path)  # a ``Letter`` made from a row
        if got is None:
            raise NotInPreview(f"no stored answers for {x.path}")
        return got

    def _answer(self, x, slot: int):
        o = x if type(x) is Owing else self._of(x)
        got = o.made[slot]
        if got is None:
            if slot == 5:
                i = o.made[6]
                value, text = o.row[i], o.row[i + 1]
            else:
                i, j = _SLOTS[slot]
                if i >= _M:
                    more = self._more_of(o.path)
                    value, text = more[i - _M], more[j - _M]
                else:
                    value, text = o.row[i], o.row[j]
            reasons = _reasons(text)
            got = o.made[slot] = StateAnswer(value, reasons) if slot == 0 else _plain(value, reasons)
        return got

    # (each: an answer made already, else made now; ``x`` is an ``Owing``, or a ``Letter``
    # made from a row, which has no ``made``)
    def state(self, x) -> StateAnswer:
        try:
            return x.made[0] or self._answer(x, 0)
        except AttributeError:
            return self._answer(x, 0)

    def answered(self, x) -> Answer:
        try:
            return x.made[1] or self._answer(x, 1)
        except AttributeError:
            return self._answer(x, 1)

    def accepted(self, x) -> Answer:
        return self._answer(x, 2)

    def current(self, x) -> Answer:
        return self._answer(x, 3)

    def superseded(self, x) -> Answer:
        try:
            return x.made[4] or self._answer(x, 4)
        except AttributeError:
            return self._answer(x, 4)

    def late(self, x, at: datetime | None = None) -> Answer:
        if at is not None and aware(at) != self.at:
            raise NotInPreview("late at another clock")
        try:
            return x.made[5] or self._answer(x, 5)
        except AttributeError:
            return self._answer(x, 5)

    def head(self, x):
        o = self._of(x)
        head_id = json.loads(self._more_of(o.path)[6])
        if head_id is None:
            return None
        if head_id == x.id:
            return self.letter(x.path)
        raise NotInPreview("the head is another letter")

    def letter(self, path: str) -> Letter:
        got = self._letters.get(path)
        if got is None:
            more = self._more_of(path)
            with self._lock:
                got = self._letters.get(path)
                if got is None:
                    got = self._letters[path] = _letter(self._owing[path], more, self._utc)
        return got

    def progress(self, path: str):
        if path not in self._notes:
            self._more_of(path)
        return self._notes[path]

    def __getattr__(self, name: str):
        raise NotInPreview(f"{name} needs the whole letterbox")

    # --- what drawn rows need ---------------------------------------------------------
    def _more_of(self, path: str) -> tuple:
        got = self._more.get(path)
        if got is None:
            if path not in self._owing:
                raise NotInPreview(f"no stored answers for {path}")
            self.go()
            self._done.wait()
            got = self._more.get(path)
            if got is None:
                raise NotInPreview(f"{path} could not be read from the index")
        return got

    def load(self, paths) -> None:
        """``_MORE`` and the progress notes of ``paths`` (the first screen's rows), now."""
        want = [p for p in dict.fromkeys(paths) if p in self._owing and p not in self._more]
        with self._db:
            if self._ix is None or self._done.is_set():
                return
            got = []
            for i in range(0, len(want), 500):  # (SQLite's limit on bound values)
                part = want[i:i + 500]
                got += self._ix.db.execute(
                    f"SELECT {', '.join(_MORE)} FROM letters JOIN texts USING (tn) "
                    f"WHERE path IN ({', '.join('?' * len(part))})", part).fetchall()
            self._noted(got)

    def _noted(self, rows) -> None:
        from letterbox_tui.core.sidecar import progress_of

        root, snapshot, owing, notes = self.snapshot.root, self.snapshot, self._owing, self._notes
        for r in rows:
            notes[r[0]] = progress_of(root, owing[r[0]], snapshot)  # (only an inbox letter's sidecar is read)
        self._more.update((r[0], r) for r in rows)

    def go(self, here: bool = False) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        if here:
            self._rest()
        else:
            threading.Thread(target=self._rest, name="owed-rest", daemon=True).start()

    def start_rest(self) -> None:
        """The rest is read once asked for (``go``), or ``REST_AFTER_S`` from now."""

        def later() -> None:
            if not self._asked.wait(REST_AFTER_S):
                self.go()

        threading.Thread(target=later, name="owed-rest-timer", daemon=True).start()

    def _rest(self) -> None:
        self._asked.set()
        try:
            with self._db:
                ix, self._ix = self._ix, None
                if ix is None:
                    return
                try:
                    rows = [r for r in ix.db.execute(
                        f"SELECT {', '.join(_MORE)} FROM letters JOIN texts USING (tn) WHERE {OWED_WHERE}")
                        if r[0] not in self._more]
                    self._noted(rows)
                except sqlite3.Error:  # the rows not read say so when asked (``NotInPreview``)
                    pass
                finally:
                    _close(ix)
        finally:
            self._done.set()

    def close(self) -> None:
        """The rest never read: its transaction ended, its connection closed."""
        with self._db:
            ix, self._ix = self._ix, None
            if ix is not None:
                _close(ix)
        self._done.set()


def _close(ix: Index) -> None:
    """End ``ix``'s read transaction and close it."""
    if ix.db is not None:
        with contextlib.suppress(sqlite3.Error):
            ix.db.execute("COMMIT")
    ix.close()


_PLAIN = {"yes": Answer("yes"), "no": Answer("no"), "unknown": Answer("unknown")}
_STATES = {"open": OPEN, "closed": CLOSED, "unknown": StateAnswer("unknown")}


def _plain(value: str, reasons: tuple[Reason, ...]) -> Answer:
    return _PLAIN[value] if not reasons else Answer(value, reasons)  # type: ignore[arg-type]


def _reasons(text: str) -> tuple[Reason, ...]:
    if not text:
        return ()
    # one JSON object a line (``index_rows``): read as one array
    return tuple(Reason(d["code"], d["about"], d["detail"], tuple(d["letters"]), tuple(d["paths"]))
                 for d in json.loads(f"[{text.replace(chr(10), ',')}]"))


def _letter(o: Owing, more: tuple, utc: bool) -> Letter:
    row0 = more[1]
    # the row's JSON ends its fields with them (``index_rows.record``): only that object is parsed
    fields = json.loads(row0[row0.index(',"fields":') + 10: row0.rindex(',"state":')])
    x = build(HeaderResult(tuple(fields.items())), path=o.path, seat=o.seat, folder=o.folder, name=more[2],
              size=more[3], mtime_ns=more[4], inode=more[5], id_time_is_utc=utc)
    if not isinstance(x, Letter):  # stored as readable: never so, unless the row is damaged
        raise NotInPreview(f"stored letter {o.path} is not readable")
    return x


def owed_preview(root, *, id_time_is_utc: bool, now: datetime | None = None, min_letters: int = 0,
                 then=None):
    """The letters of ``root`` that may be owed, from a fresh index, or None. ``min_letters``:
    None as well for a letterbox with fewer readable letters (not worth it). ``then``: made
    of the preview while the proof is still running (what is returned instead of it; thrown
    away when the letterbox turns out changed)."""
    begun = begin_preview(root, id_time_is_utc=id_time_is_utc, now=now, min_letters=min_letters)
    return None if begun is None else begun.finish(then)


def begin_preview(root, *, id_time_is_utc: bool, now: datetime | None = None, min_letters: int = 0,
                  read_upto: int | None = None):
    """``owed_preview``'s first half (``Begun``; None when the index cannot serve): the proof
    started in a thread of its own, the owed letters' rows read (for a letterbox of more
    than ``read_upto`` letters, left to ``finish``). A face may read them where nothing else
    wants the interpreter (the app, before it imports Textual): SQLite gives up the
    interpreter lock for every row it steps to, and a thread doing that beside busy ones
    waits for the lock again at each row."""
    root = os.fspath(root)
    at = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    proof = Index(root, id_time_is_utc)
    fresh: list[bool] = []
    prover: threading.Thread | None = None
    try:
        try:
            if not (proof.open() and proof.why_not() is None):
                return _closed(proof)
            scope = proof.scope(at.isoformat().replace("+00:00", "Z"))
        except (sqlite3.Error, Unusable, KeyError, ValueError, TypeError):
            return _closed(proof)
        if scope.partial or scope.letters < min_letters:
            return _closed(proof)
        # the stat of every file runs without the interpreter lock, beside the reading
        prover = threading.Thread(target=lambda: fresh.append(proof.fresh()), name="index-proof", daemon=True)
        prover.start()
        reading = (root, id_time_is_utc, proof.file, scope.scanned_at, at)
        begun = Begun(proof, prover, fresh, reading, scope.letters)
        if read_upto is None or scope.letters <= read_upto:
            if not begun.read():
                return _closed(proof, prover)
        return begun
    except BaseException:
        _closed(proof, prover)
        raise


def _closed(proof: Index, prover: threading.Thread | None = None) -> None:
    if prover is not None:
        prover.join()
    proof.close()


class Begun:
    """The owed letters' rows read (or to be, ``read``), the proof running (``begin_preview``)."""

    def __init__(self, proof: Index, prover: threading.Thread, fresh: list, reading: tuple, letters: int) -> None:
        self._proof, self._prover, self._fresh = proof, prover, fresh
        self._reading, self._letters = reading, letters
        self._base: Snapshot | None = None
        self._res: StoredAnswers | None = None
        self._rows: list = []

    @property
    def rows_read(self) -> bool:
        """Whether the owed letters' rows are read already (``begin_preview``'s ``read_upto``)."""
        return self._res is not None

    def read(self) -> bool:
        """Read the owed letters' rows (``_owed_rows``); False when the index could not."""
        got = _owed_rows(*self._reading)
        if got is None:
            return False
        self._base, self._res, self._rows = got
        return True

    def finish(self, then=None):
        """The ``OwedPreview`` (or what ``then`` made of it while the proof ran), or None
        when the letterbox turned out changed or the index could not be read."""
        if self._res is None and not self.read():
            _closed(self._proof, self._prover)
            return None
        res: StoredAnswers | None = self._res
        try:
            self._base.letters = res.owing(self._rows)  # type: ignore[assignment, union-attr]
            self._rows = []
            preview = OwedPreview(self._base, res, self._letters)
            made = preview if then is None else then(preview)  # while the proof runs
            self._prover.join()
            if self._fresh != [True]:
                return None
            res.start_rest()
            res = None  # (kept open for the rest)
            return made
        finally:
            _closed(self._proof, self._prover)
            if res is not None:
                res.close()


def _owed_rows(root: str, utc: bool, generation: str | None, scanned_at: str, at: datetime):
    """(the snapshot without its letters, the ``StoredAnswers`` to be, the owed candidates'
    rows), from the index generation the proof is made against, or None. The read
    transaction stays open (``StoredAnswers`` reads the rest in it)."""
    ix = Index(root, utc)
    try:
        if not (ix.open() and ix.file == generation and ix.why_not() is None):
            ix.close()
            return None
        from .index import _meta

        ix.db.execute("BEGIN")
        ix.meta = _meta(ix.db)  # (as ``Index.reading``: one committed state from here on)
        base = ix.snapshot("0", (), scanned_at)  # every field but the letters
        # chosen in the narrow ``q`` (9 MB at 100k), then read from ``letters`` by number
        rows = ix.db.execute(f"SELECT {', '.join('l.' + c for c in _COLUMNS)} FROM q JOIN letters l USING (n) "
                             f"WHERE {_Q_WHERE}").fetchall()  # in no order: the views order what they show
        return base, StoredAnswers(base, at, utc, ix), rows
    except (sqlite3.Error, Unusable, KeyError, ValueError, TypeError):  # damaged: scan instead
        _close(ix)
        return None

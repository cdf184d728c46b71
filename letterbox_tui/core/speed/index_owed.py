"""Owed & late's letters from the derived index (``index.py``), for a face that shows that
view first and loads the rest of the letterbox after it (the app).

On an unchanged letterbox (the index's own proof: a ``stat`` of every directory and letter
file, ``Index.fresh``, run in a thread of its own while the rows are read) this reads only
the letters that may be owed: open, unanswered, unsuperseded tasks, by their stored
answers. Each is an ``Owing``: what ``core.owed`` and ``core.views.owed`` ask of a letter
(who owes it, its deadline, its time, id and path), taken from the stored columns; the
``Letter`` itself is made from its stored fields the way the scan makes it
(``core.letters.build``) only when asked for (``OwedPreview.letter``): a list draws a
screenful of 16,000 rows. ``StoredAnswers`` is the part of a ``Resolution`` those views
and a list row ask (state, answered, accepted, current, superseded, head, and late at the
clock: stored at the two clocks around the deadline, as ``index_rows`` keeps it), each
answer made when first asked. Anything else is not answered from here (it raises
``NotInPreview``): a face asks the whole letterbox for it once that is loaded.

Whatever cannot be vouched for gives None (then the face scans as usual): no index, one
made by other code or for another setting, a changed letterbox, a partial scope.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from letterbox_tui.core.header import HeaderResult
from letterbox_tui.core.letters import build
from letterbox_tui.core.model import Answer, Letter, Reason, Snapshot
from letterbox_tui.core.resolve.common import StateAnswer, aware

from . import index_rows as ir
from .index import Index, Unusable

#: a superset of what ``core.owed.is_owed`` keeps (a task not closed, not superseded,
#: not answered), in the stored answers' terms; ``is_owed`` is asked again of each
OWED_WHERE = "task = 1 AND state != 'closed' AND superseded != 'yes' AND answered != 'yes'"
_COLUMNS = (
    "path", "seat", "folder", "id", "sender", "recipient", "type", "task", "has_deadline", "deadline_ns",
    "sent_ns", "row0", "name", "size", "mtime_ns", "inode", "head",
    "state", "state_r", "answered", "answered_r", "accepted", "accepted_r", "current", "current_r",
    "superseded", "superseded_r", "late0", "late0_r", "late1", "late1_r",
)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class NotInPreview(LookupError):
    """A question the stored answers of the owed letters cannot settle alone."""


def _when(value_ns: int | None) -> datetime | None:
    """The instant stored as nanoseconds (``index_rows.ns``), exactly (microseconds)."""
    return None if value_ns is None else _EPOCH + timedelta(microseconds=value_ns // 1000)


class Owing:
    """An owed letter as ``core.owed`` and ``core.views.owed`` see it (not a ``Letter``:
    ``OwedPreview.letter(path)`` makes that). ``deadline`` is only true or false: whether
    the letter has one (``deadline_at`` is None when it does not parse)."""

    __slots__ = ("path", "seat", "folder", "id", "sender", "recipient", "type", "task", "deadline",
                 "deadline_at", "sent_at")

    def __init__(self, r: tuple) -> None:
        (self.path, self.seat, self.folder, self.id, self.sender, self.recipient, self.type, task,
         has_deadline, deadline_ns, sent_ns) = r[:11]
        self.task = task == 1
        self.deadline = has_deadline == 1
        self.deadline_at = _when(deadline_ns)
        self.sent_at = _when(sent_ns)

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


class StoredAnswers:
    """The stored answers of ``snapshot``'s letters at the clock ``at``, each made when
    first asked for (a reason is parsed only then)."""

    def __init__(self, snapshot: Snapshot, at: datetime, rows: dict[str, tuple], utc: bool) -> None:
        self.snapshot = snapshot
        self.at = aware(at)
        self._at_ns = ir.ns(self.at)
        self._rows = rows
        self._utc = utc
        #: per path, its answers as made: state, answered, accepted, current, superseded, late
        self._made: dict[str, list] = {}
        self._letters: dict[str, Letter] = {}
        self._lock = threading.Lock()

    def _answer(self, x, slot: int):
        made = self._made.get(x.path)
        if made is None:
            if x.path not in self._rows:
                raise NotInPreview(f"no stored answers for {x.path}")
            made = self._made[x.path] = [None] * 7
        got = made[slot]
        if got is None:
            r = self._rows[x.path]
            if slot == 5:  # late flips only when the clock passes the deadline
                i = 29 if r[9] is not None and r[9] < self._at_ns else 27
            else:
                i = 17 + 2 * slot
            value, text = r[i], r[i + 1]
            reasons = _reasons(text)
            got = made[slot] = StateAnswer(value, reasons) if slot == 0 else _plain(value, reasons)
        return got

    def state(self, x) -> StateAnswer:
        return self._answer(x, 0)

    def answered(self, x) -> Answer:
        return self._answer(x, 1)

    def accepted(self, x) -> Answer:
        return self._answer(x, 2)

    def current(self, x) -> Answer:
        return self._answer(x, 3)

    def superseded(self, x) -> Answer:
        return self._answer(x, 4)

    def late(self, x, at: datetime | None = None) -> Answer:
        if at is not None and aware(at) != self.at:
            raise NotInPreview("late at another clock")
        return self._answer(x, 5)

    def head(self, x):
        r = self._rows.get(x.path)
        if r is None:
            raise NotInPreview(f"no stored answers for {x.path}")
        head_id = json.loads(r[16])
        if head_id is None:
            return None
        if head_id == x.id:
            return self.letter(x.path)
        raise NotInPreview("the head is another letter")

    def letter(self, path: str) -> Letter:
        got = self._letters.get(path)
        if got is None:
            with self._lock:
                got = self._letters.get(path)
                if got is None:
                    got = self._letters[path] = _letter(self._rows[path], self._utc)
        return got

    def __getattr__(self, name: str):
        raise NotInPreview(f"{name} needs the whole letterbox")


_PLAIN = {"yes": Answer("yes"), "no": Answer("no"), "unknown": Answer("unknown")}


def _plain(value: str, reasons: tuple[Reason, ...]) -> Answer:
    return _PLAIN[value] if not reasons else Answer(value, reasons)  # type: ignore[arg-type]


def _reasons(text: str) -> tuple[Reason, ...]:
    if not text:
        return ()
    return tuple(Reason(d["code"], d["about"], d["detail"], tuple(d["letters"]), tuple(d["paths"]))
                 for d in map(json.loads, text.split("\n")))


def _letter(r: tuple, utc: bool) -> Letter:
    row0 = r[11]
    # the row's JSON ends its fields with them (``index_rows.record``): only that object is parsed
    fields = json.loads(row0[row0.index(',"fields":') + 10: row0.rindex(',"state":')])
    x = build(HeaderResult(tuple(fields.items())), path=r[0], seat=r[1], folder=r[2], name=r[12],
              size=r[13], mtime_ns=r[14], inode=r[15], id_time_is_utc=utc)
    if not isinstance(x, Letter):  # stored as readable: never so, unless the row is damaged
        raise NotInPreview(f"stored letter {r[0]} is not readable")
    return x


def owed_preview(root, *, id_time_is_utc: bool, now: datetime | None = None, min_letters: int = 0,
                 then=None):
    """The letters of ``root`` that may be owed, from a fresh index, or None. ``min_letters``:
    None as well for a letterbox with fewer readable letters (not worth it). ``then``: made
    of the preview while the proof is still running (what is returned instead of it; thrown
    away when the letterbox turns out changed)."""
    root = os.fspath(root)
    at = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    proof = Index(root, id_time_is_utc)
    fresh: list[bool] = []
    prover: threading.Thread | None = None
    try:
        try:
            if not (proof.open() and proof.why_not() is None):
                return None
            scope = proof.scope(at.isoformat().replace("+00:00", "Z"))
        except (sqlite3.Error, Unusable, KeyError, ValueError, TypeError):
            return None
        if scope.partial or scope.letters < min_letters:
            return None
        # the stat of every file runs without the interpreter lock, beside the reading
        prover = threading.Thread(target=lambda: fresh.append(proof.fresh()), name="index-proof", daemon=True)
        prover.start()
        got = _owed_rows(root, id_time_is_utc, proof.file, scope.scanned_at)
        if got is None:
            return None
        base, rows = got
        preview = OwedPreview(base, StoredAnswers(base, at, {r[0]: r for r in rows}, id_time_is_utc), scope.letters)
        made = preview if then is None else then(preview)  # while the proof runs
        prover.join()
        return made if fresh == [True] else None
    finally:
        if prover is not None:
            prover.join()
        proof.close()


def _owed_rows(root: str, utc: bool, generation: str | None, scanned_at: str):
    """(the snapshot without letters, the owed candidates' stored rows), from the index
    generation the proof is made against, or None."""
    ix = Index(root, utc)
    try:
        if not (ix.open() and ix.file == generation and ix.why_not() is None):
            return None
        with ix.reading():
            base = ix.snapshot("0", (), scanned_at)  # every field but the letters
            rows = ix.db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM letters JOIN texts USING (tn) WHERE {OWED_WHERE} "
                ).fetchall()  # in no order: the views order what they show
        base.letters = [Owing(r) for r in rows]  # type: ignore[misc]
        return base, rows
    except (sqlite3.Error, Unusable, KeyError, ValueError, TypeError):  # damaged: scan instead
        return None
    finally:
        ix.close()

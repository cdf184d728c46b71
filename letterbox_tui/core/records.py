"""The records an owed item's attention codes rest on besides the letters: each ack
sidecar's times, each seat's status note, the leases under ``locks/``, and when a seat last
wrote anything. Each is read once (through ``core.files``: no symlink followed, no FIFO
blocked on) and kept; a record that cannot be read is kept as its error, never skipped, so
a code resting on it can say it is unknown and why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime

from .files import NOT_REGULAR, FileRead, read_file, read_files
from .grammar import lines, parse_time
from .leases import Lease, read_leases
from .model import Letter, Snapshot
from .sidecar import MAX_SIDECAR, Progress, parse_sidecar, progress_in

#: a status note is a few lines; more is not read
MAX_STATUS = 16 * 1024
#: the states a status note names (the protocol's ``letterbox status``)
STATES = ("working", "idle", "blocked")


@dataclass(frozen=True, slots=True)
class Sign:
    """A sign of life: when, and what the record shows (``ack letter ID``, ``progress note``)."""

    at: datetime
    what: str


@dataclass(frozen=True, slots=True)
class SidecarRecord:
    """A letter's ``.md.ack`` sidecar: its signs of life, or why it cannot be read."""

    path: str
    signs: tuple[Sign, ...] = ()
    #: why a time it holds cannot be used (``progress_at`` that is no time), or why the file
    #: cannot be read at all (then ``unreadable``)
    problem: str = ""
    unreadable: bool = False
    #: the holder's progress note in it (``core.sidecar.progress_of``), None when none
    progress: Progress | None = None


@dataclass(frozen=True, slots=True)
class StatusRecord:
    """A seat's ``status.md``: ``state``, ``since`` and ``notes`` as the protocol writes them
    (``state`` None: the note names none, e.g. free prose)."""

    path: str
    state: str | None = None
    since: datetime | None = None
    since_raw: str = ""
    notes: str = ""
    #: why it cannot be read (then nothing else is known)
    error: str = ""


def _when(fields: dict[str, str], key: str, what: str) -> tuple[Sign | None, str]:
    raw = fields.get(key, "")
    if not raw:
        return None, ""
    t = parse_time(raw)
    if t is None:
        return None, f"its {key} {raw[:40]!r} is not a time with an offset"
    return Sign(t, what), ""


def parse_status(text: str) -> tuple[str | None, str, str]:
    """(state, since, notes) of a status note's ``key: value`` lines (first of each key,
    keys in any case, ``---`` lines skipped); state None when no line names one."""
    fields: dict[str, str] = {}
    for line in lines(text):
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if sep and key and key not in fields:
            fields[key] = value.strip()
    state = fields.get("state", "").lower() or None
    return state, fields.get("since", ""), fields.get("notes", "")


class Records:
    """The sidecars, status notes and leases of one snapshot's letterbox, read when first
    asked and kept. ``leases``: given (a test, a caller that read them), else read."""

    def __init__(self, snapshot: Snapshot, leases: list[Lease] | None = None) -> None:
        self.snapshot = snapshot
        self.root = str(snapshot.root)
        self._leases = leases
        self._sidecars: dict[str, SidecarRecord | None] = {}
        self._status: dict[str, StatusRecord | None] = {}
        self._written: dict[str, tuple[Sign | None, tuple[str, ...]]] = {}
        self._sent: dict[str, Sign] | None = None
        self._unreadable_re: dict[str, list] | None = None

    # --- sidecars -----------------------------------------------------------------
    def sidecar(self, letter: Letter) -> SidecarRecord | None:
        """The letter's ack sidecar, None when the scan saw none beside it."""
        if letter.path in self._sidecars:
            return self._sidecars[letter.path]
        out = None
        if letter.folder == "inbox" and self.snapshot.has_sidecar(letter):
            out = self._read_sidecar(letter.path + ".ack")
        self._sidecars[letter.path] = out
        return out

    def progress(self, letter: Letter) -> Progress | None:
        """The letter's progress note from the sidecar ``sidecar`` read (what ``progress_of``
        reads, without opening the file again)."""
        rec = self.sidecar(letter)
        return rec.progress if rec is not None else None

    def warm_sidecars(self, letters: list[Letter]) -> None:
        """Read the ack sidecars of ``letters`` ahead, each folder's together: they are
        about to be asked for."""
        todo = [x for x in letters if x.path not in self._sidecars]
        found = self._read_sidecars([x.path + ".ack" for x in todo if x.folder == "inbox"
                                     and self.snapshot.has_sidecar(x)])
        for x in todo:
            self._sidecars[x.path] = found.get(x.path + ".ack")

    def _read_sidecars(self, rels: list[str]) -> dict[str, SidecarRecord]:
        """rel -> its record, the files of each folder read together."""
        by_folder: dict[str, list[str]] = {}
        for rel in rels:
            by_folder.setdefault(rel.rpartition("/")[0], []).append(rel)
        out = {}
        for folder, held in by_folder.items():
            read = read_files(self.root, folder, [rel.rpartition("/")[2] for rel in held], keep=MAX_SIDECAR,
                              hashing=False)
            out.update((rel, self._sidecar_record(rel, f)) for rel, f in zip(held, read))
        return out

    def _read_sidecar(self, rel: str) -> SidecarRecord:
        return self._sidecar_record(rel, read_file(self.root, rel, keep=MAX_SIDECAR, hashing=False))

    def _sidecar_record(self, rel: str, f: FileRead) -> SidecarRecord:
        if f.error is not None:
            why = "it is not a regular file" if f.error == NOT_REGULAR else f.error
            return SidecarRecord(rel, problem=f"the ack sidecar {rel} cannot be read ({why})", unreadable=True)
        fields = parse_sidecar(f.data)
        signs, problems = [], []
        for key, what in (("acked_at", "ack sidecar"), ("progress_at", "progress note")):
            sign, problem = _when(fields, key, what)
            if sign is not None:
                signs.append(sign)
            if problem:
                problems.append(f"the ack sidecar {rel}: {problem}")
        return SidecarRecord(rel, tuple(signs), "; ".join(problems), progress=progress_in(fields))

    # --- status notes ---------------------------------------------------------------
    def status(self, seat: str) -> StatusRecord | None:
        """The seat's status note, None when it has none."""
        if seat not in self._status:
            self._status[seat] = self._read_status(seat)
        return self._status[seat]

    def _read_status(self, seat: str) -> StatusRecord | None:
        rel = self.snapshot.status_notes.get(seat)
        if rel is None:
            # the scan lists only a regular file; anything else of that name is a note
            # that cannot be read, not an absent one
            rel = f"{seat}/status.md"
            try:
                os.lstat(os.path.join(self.root, seat, "status.md"))
            except FileNotFoundError:
                return None
            except OSError as exc:
                return StatusRecord(rel, error=f"{rel} cannot be read ({exc.strerror or exc})")
            return StatusRecord(rel, error=f"{rel} is not a regular file (not read)")
        f = read_file(self.root, rel, keep=MAX_STATUS, hashing=False)
        if f.error is not None:
            why = "it is not a regular file" if f.error == NOT_REGULAR else f.error
            return StatusRecord(rel, error=f"{rel} cannot be read ({why})")
        state, since_raw, notes = parse_status(f.data.decode("utf-8", errors="replace"))
        # a note with no ``state:`` line (free prose) says no state: no code rests on it
        return StatusRecord(rel, state, parse_time(since_raw) if since_raw else None, since_raw, notes)

    # --- leases -------------------------------------------------------------------
    def leases(self) -> list[Lease]:
        if self._leases is None:
            self._leases, _ = read_leases(self.root, self.snapshot.seats)
        return self._leases

    # --- letters the scan could not show ------------------------------------------------
    def hidden_reply(self, letter: Letter) -> str:
        """Why a letter ``re:`` ``letter`` from the seat that owes it may exist unseen ("" when
        none may): the sender's folders outside a partial scope, an unreadable file that may
        be one, an unsupported entry (which may be anything)."""
        snap, seat = self.snapshot, letter.recipient
        if snap.scope.partial and letter.sender not in snap.scope.participants:
            return f"letters to {letter.sender} lie outside the partial scope"
        if self._unreadable_re is None:
            by_re: dict[str, list] = {}
            for u in snap.unreadable:
                by_re.setdefault(u.legible.get("re", ""), []).append(u)
            self._unreadable_re = by_re
        for u in self._unreadable_re.get(letter.id, []) + self._unreadable_re.get("", []):
            if u.legible.get("from", seat) == seat:
                return f"the unreadable file {u.path} may be a letter from {seat} about it"
        if snap.unsupported:
            return f"the unsupported entry {snap.unsupported[0].path} may be a letter from {seat} about it"
        return ""

    # --- what a seat wrote ------------------------------------------------------------
    def _last_sent(self) -> dict[str, Sign]:
        """Each sender's latest letter with a time (one pass over the letters, once)."""
        if self._sent is None:
            best: dict[str, Letter] = {}
            for x in self.snapshot.letters:
                if x.sent_at is not None:
                    old = best.get(x.sender)
                    if old is None or (x.sent_at, x.id) > (old.sent_at, old.id):
                        best[x.sender] = x
            self._sent = {seat: Sign(x.sent_at, f"letter {x.id}") for seat, x in best.items()}
        return self._sent

    def last_written(self, seat: str) -> tuple[Sign | None, tuple[str, ...]]:
        """The seat's latest sign of writing anything the letterbox holds: a letter it
        sent, its status note, an ack or progress note in its inbox's sidecars. With it,
        what may hide a later one (a partial scope, unreadable files it may have written,
        unsupported entries, sidecars or a status note that cannot be read)."""
        if seat in self._written:
            return self._written[seat]
        snap = self.snapshot
        best: Sign | None = None

        def consider(sign: Sign | None) -> None:
            nonlocal best
            if sign is not None and (best is None or sign.at > best.at):
                best = sign

        consider(self._last_sent().get(seat))
        doubt: list[str] = []
        if snap.scope.partial:
            doubt.append("the scope is partial: letters it wrote to seats outside it are not read")
        hidden = [u.path for u in snap.unreadable if u.legible.get("from", seat) == seat]
        if hidden:
            doubt.append(f"{len(hidden)} unreadable file(s) it may have written ({hidden[0]})")
        if snap.unsupported:
            doubt.append(f"{len(snap.unsupported)} unsupported entr{'y' if len(snap.unsupported) == 1 else 'ies'} "
                         f"not read ({snap.unsupported[0].path})")
        note = self.status(seat)
        if note is not None:
            if note.error:
                doubt.append(note.error)
            elif note.since is not None:
                consider(Sign(note.since, "status note"))
        prefix = f"{seat}/inbox/"
        rels = sorted(r for r in snap.sidecars if r.startswith(prefix))
        read = self._read_sidecars(rels)
        for rel in rels:
            rec = read[rel]
            if rec.unreadable:
                doubt.append(rec.problem)
            for sign in rec.signs:
                consider(Sign(sign.at, f"{sign.what} {rel}"))
        self._written[seat] = (best, tuple(doubt))
        return self._written[seat]

"""Turn a letterbox directory into letters plus an honest scope (SPEC 2, 3, 5 "Scope").

Every directory is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a
symlink swapped in mid-scan is refused, never followed. Letter files are opened with
``O_NOFOLLOW | O_NONBLOCK`` and must ``fstat`` as regular files: a FIFO never blocks and a
device is never read. Each header costs one ``os.read`` of 4 KiB (more only for a long
header); bodies are never read.

After reading, the scan checks every folder again (listing it again, unless it had been
settled since before the scan began and still stats the same); if entries appeared,
vanished or moved it scans again, a bounded number of times, and otherwise reports
``atomic: false``.

The system calls are the ``reader``'s (``core.reader``; the speed wing's C reader runs
them on threads of its own a batch ahead of the letters being built), and the next folder
is listed before the last one is built; what the scan reports is in the order of a plain
walk all the same.
"""

from __future__ import annotations

import os
import time
from itertools import compress
from collections.abc import Iterable, Iterator
from operator import attrgetter
from datetime import datetime, timezone
from typing import Protocol

from . import flags as fsflags
from .errors import LetterboxError
from .grammar import valid_seat
from .model import LEGACY_FLAGS, Letter, Scope, SeenFolder, SeenState, Snapshot, Unreadable, Unsupported
from .reader import PURE, Reader
from .relist import entry_set, listing, raw_listing, unchanged
from .taking import take_folder
from .reader import entry_kind as _entry_kind
from .reader import is_regular as _regular
from .reader import plain_folder as _plain_folder
from .reader import kind_of_entry as _kind
from .reader import shown_name as _shown
from .reader import utf8_name as _utf8
from .reader import why as _why

FOLDERS = ("inbox", "processed")
MAX_ATTEMPTS = 3
#: what changed this recently (by ctime or mtime, before a scan began) may change again
#: within one tick of a coarse file-system clock and leave the same times: the scan lists
#: such a folder again, and the derived files (``core.speed``) never vouch for it
RACY_NS = 3_000_000_000

_DIR_FLAGS = fsflags.DIR
# C-level accessors for whole listings (a map over 12,000 entries, not a Python loop)
_entry_name = attrgetter("name")
_flags = attrgetter("flags")


class HeaderCache(Protocol):
    """What the scanner asks of a derived cache (``core.speed.cache`` has one)."""

    def get(self, path: str, size: int, mtime_ns: int, inode: int, ctime_ns: int) -> Letter | Unreadable | None: ...

    # Optional: ``has_row(path)`` is False when ``get`` could only miss for this path (the
    # scanner then reads the file without a ``stat`` first; the cache counts the miss);
    # ``has_rows(prefix, names)``: the same for a folder's names at once (a list of bools,
    # or None for "for none of them").
    # Optional: ``reuse(path, data, size, mtime_ns, inode, ctime_ns)``: after ``get`` missed
    # on a stat, the row's item with the file's stat now when ``data`` (the header bytes read
    # now) is the header it was made from; else None, and the item is built as new. Asked
    # only when the reader did not make the letter itself (a C-made one costs less).

    def put_many(self, items: list[Letter | Unreadable], data: list[bytes], ctimes: list[int]) -> None:
        """Record what was built from files (a folder's worth at once); ``data[i]`` is the
        header bytes read for ``items[i]`` (None: not known), ``ctimes[i]`` its file's ctime
        when read (a cached item is used only while size, mtime, inode and ctime are all
        unchanged)."""

    # Optional: ``put_hashed(letters, hashes, ctimes)``: ``put_many`` for the letters the
    # reader made itself, given the BLAKE2b-128 digest of each header instead of its bytes
    # (joined: 16 bytes a letter, in order).


def scan(
    root: str | os.PathLike[str],
    participants: Iterable[str] | None = None,
    *,
    id_time_is_utc: bool | None = None,
    cache: HeaderCache | None = None,
    now: datetime | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    reader: Reader = PURE,
) -> Snapshot:
    """Scan the letterbox at ``root``. ``participants`` restricts the scan (partial scope).

    ``id_time_is_utc`` defaults to the letterbox's own setting. ``cache``: a derived header
    cache to ask before reading a file (none by default); ``reader``: what makes the
    system calls (the pure-Python one by default). Both only make the scan faster: the
    answer is the same with or without them (``core.speed`` has both). Raises
    ``LetterboxError`` when ``root`` cannot be opened or a named participant is not a seat.
    """
    root_s = os.fspath(root)
    if "\x00" in root_s:
        raise LetterboxError(f"cannot open letterbox {root_s!r}: a NUL byte in the path")
    root_s = os.path.realpath(root_s)
    if id_time_is_utc is None:
        from .settings import load_settings

        id_time_is_utc = load_settings(root_s).id_time_is_utc
    if isinstance(participants, str):  # one seat named on its own, not its letters
        participants = [participants]
    wanted = sorted(set(participants)) if participants is not None else None
    scanned_at = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    attempt = 0
    while True:
        attempt += 1
        scanner = _Scan(root_s, wanted, id_time_is_utc, cache, reader)
        snapshot = scanner.run()
        if scanner.stable():
            break
        if attempt >= max_attempts:
            snapshot.scope.atomic = False
            break
    snapshot.scope.scanned_at = scanned_at.isoformat().replace("+00:00", "Z")
    return snapshot


class _Folder:
    """One folder listed and classified, its reading started, not yet built into letters."""

    __slots__ = ("seat", "folder", "dir_fd", "order", "read", "batches", "files", "unsupported", "orphans", "seen",
                 "recheck")

    def __init__(self, seat: str, folder: str, dir_fd: int) -> None:
        self.seat = seat
        self.folder = folder
        self.dir_fd = dir_fd
        self.order: list[str | Letter | Unreadable] = []  # names to read, items from the cache
        self.read: Iterator[tuple] = iter(())
        self.batches: Iterator[tuple] | None = None  # instead of ``read``: see Reader.iter_batches
        self.files = 0
        self.unsupported: list[Unsupported] = []  # found when listed, added when taken
        self.orphans: list[str] = []
        self.seen: SeenFolder | None = None
        # names whose cache row no longer matches their stat: the cache may reuse the row
        # when the header read now hashes the same (``HeaderCache.reuse``)
        self.recheck: set[str] = set()


class _Scan:
    """One pass over the letterbox. ``stable()`` re-lists folders to check nothing moved."""

    def __init__(
        self, root: str, wanted: list[str] | None, id_time_is_utc: bool, cache: HeaderCache | None, reader: Reader
    ):
        self.root = root
        self.reader = reader
        self.wanted = wanted
        self.id_time_is_utc = id_time_is_utc
        self.cache = cache
        self.changed = False
        # folder -> its raw listing (every name and inode, in the order the system gave them)
        self.listing: dict[str, tuple[list[str], list[int]]] = {}
        self.seat_names: frozenset[str] = frozenset()
        # What the scan saw, for the answer memo (``core.speed.memo``): every directory it opened
        # as (rel, inode, mtime_ns, ctime_ns, mode), and per folder the stat of every file
        # it made a letter or an unreadable from (``SeenState``: packed, see ``SeenFolder``).
        self.dirs: list[tuple[str, int, int, int, int]] = []
        self.began = time.time_ns()  # before any directory is stat-ed (see ``_settled``)
        self.packed: dict[str, tuple] = {}  # rel -> (names, stats): see SeenFolder

    def run(self) -> Snapshot:
        try:
            root_fd = os.open(self.root, _DIR_FLAGS)
        except OSError as exc:
            raise LetterboxError(f"cannot open letterbox {self.root}: {exc.strerror}") from None
        self._saw_dir("", root_fd)
        letters: list[Letter] = []
        unreadable: list[Unreadable] = []
        unsupported: list[Unsupported] = []
        sidecars: set[str] = set()
        orphans: list[str] = []
        status_notes: dict[str, str] = {}
        ignored: list[str] = []
        seats: list[str] = []
        files = 0
        try:
            try:
                with os.scandir(root_fd) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                raise LetterboxError(f"cannot list letterbox {self.root}: {exc.strerror}") from None
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                if name == "locks" or name == "letterbox-tui.toml":
                    continue
                kind = _entry_kind(entry)
                if kind == "other" and _regular(entry):
                    # The protocol's set-up writes files here (cmux-agents.tsv, env.sh,
                    # AGENT-LETTERBOX.md): neither letters nor warnings (SPEC 2).
                    continue
                if not valid_seat(name):
                    ignored.append(_shown(name))
                    continue
                if kind == "other":
                    ignored.append(name)
                    continue
                seats.append(name)
                if kind != "dir" and (self.wanted is None or name in self.wanted):
                    unsupported.append(Unsupported(name, "symlinked seat" if kind == "symlink" else kind))
            self.seat_names = frozenset(seats)
            if self.wanted is not None:
                missing = [w for w in self.wanted if w not in seats]
                if missing:
                    raise LetterboxError(f"no seat {missing[0]!r} in {self.root}")
            scanned = [
                seat for seat in seats
                if (self.wanted is None or seat in self.wanted) and not any(u.path == seat for u in unsupported)
            ]
            # Each folder is listed (and its reading started) before the one before it is
            # built into letters: the listing overlaps the reading. What each folder adds
            # is added in folder order all the same.
            waiting: _Folder | None = None
            try:
                for item in self._folders(root_fd, scanned, sidecars, status_notes):
                    if waiting is not None:
                        files += self._take(waiting, letters, unreadable, unsupported, orphans)
                        waiting = None
                    if type(item) is list:  # a seat's own unsupported entries
                        unsupported.extend(item)
                    else:
                        waiting = item
                if waiting is not None:
                    files += self._take(waiting, letters, unreadable, unsupported, orphans)
                    waiting = None
            finally:
                if waiting is not None:
                    os.close(waiting.dir_fd)
        finally:
            os.close(root_fd)
        # ``Letter.legacy``, without a property call per letter (most have no flags)
        legacy = sum(1 for f in map(_flags, letters) if f and not LEGACY_FLAGS.isdisjoint(f))
        scope = Scope(
            root=self.root,
            participants=list(self.wanted) if self.wanted is not None else [s for s in seats],
            files=files,
            letters=len(letters),
            legacy=legacy,
            unreadable=[{"path": u.path, "error": u.error} for u in unreadable],
            unsupported=[{"path": u.path, "reason": u.reason} for u in unsupported],
            partial=self.wanted is not None,
            atomic=not self.changed,
        )
        return Snapshot(
            root=self.root,
            letters=letters,
            unreadable=unreadable,
            unsupported=unsupported,
            scope=scope,
            seats=seats,
            sidecars=frozenset(sidecars),
            orphan_sidecars=orphans,
            status_notes=status_notes,
            ignored=ignored,
            seen=SeenState(self.dirs, packed=self.packed),
        )

    def _folders(self, root_fd, seats, sidecars, status_notes) -> Iterator[_Folder | list[Unsupported]]:
        """Each seat's folders, listed and classified, in order; a seat's own unsupported
        entries (no folder, an archive, a seat that cannot be opened) as a list before them."""
        for seat in seats:
            seat_unsupported: list[Unsupported] = []
            try:
                seat_fd = os.open(seat, _DIR_FLAGS, dir_fd=root_fd)
            except OSError as exc:
                yield [Unsupported(seat, _why(exc))]
                continue
            try:
                self._saw_dir(seat, seat_fd)
                try:
                    with os.scandir(seat_fd) as it:
                        raw = list(it)
                except OSError as exc:
                    yield [Unsupported(seat, _why(exc))]
                    continue
                present = {e.name: e for e in raw}
                self.listing[seat] = raw_listing(raw)
                if "archive" in present:
                    seat_unsupported.append(Unsupported(f"{seat}/archive", "archive folders are not read"))
                note = present.get("status.md")
                if note is not None and _entry_kind(note, regular=True) == "file":
                    status_notes[seat] = f"{seat}/status.md"
                for folder in FOLDERS:
                    e = present.get(folder)
                    rel = f"{seat}/{folder}"
                    if e is None:
                        seat_unsupported.append(Unsupported(rel, f"seat has no {folder}/"))
                        continue
                    kind = _entry_kind(e)
                    if kind != "dir":
                        why = {"symlink": "symlinked folder", "other": f"{folder} is not a directory"}.get(kind, kind)
                        seat_unsupported.append(Unsupported(rel, why))
                        continue
                    if seat_unsupported:
                        yield seat_unsupported
                        seat_unsupported = []
                    job = self._list_folder(seat_fd, seat, folder, sidecars)
                    if type(job) is Unsupported:
                        seat_unsupported.append(job)
                    else:
                        yield job
                if seat_unsupported:
                    yield seat_unsupported
            finally:
                os.close(seat_fd)

    def _list_folder(self, seat_fd, seat, folder, sidecars) -> _Folder | Unsupported:
        """List and classify one folder and start reading its letter files; the folder as
        unsupported when it cannot be opened or listed."""
        rel_dir = f"{seat}/{folder}"
        try:
            dir_fd = os.open(folder, _DIR_FLAGS, dir_fd=seat_fd)
        except OSError as exc:
            return Unsupported(rel_dir, _why(exc))
        job = _Folder(seat, folder, dir_fd)
        unsupported = job.unsupported
        orphans = job.orphans
        files = 0
        cache = self.cache
        get = cache.get if cache is not None else None
        has_row = getattr(cache, "has_row", None)
        reuse = getattr(cache, "reuse", None)
        prefix = rel_dir + "/"
        job.seen = SeenFolder(self.packed, rel_dir)
        # The letter files in listing order; those the cache has a row for are stat-ed all
        # at once, then the rest read all at once (by the C accelerator when there is one).
        candidates: list[str] = []
        to_stat: list[os.DirEntry] = []
        # This loop runs once per letter file: locals, no per-entry helper calls on the
        # common path (a regular file with an ASCII name).
        try:
            self._saw_dir(rel_dir, dir_fd)
            with os.scandir(dir_fd) as it:
                raw = list(it)
            self.listing[rel_dir] = raw_listing(raw)
            entries = [e for e in raw if not e.name.startswith(".")]
            entries.sort(key=_entry_name)
            fast = _plain_folder(entries)
            if fast is not None:  # every *.md entry a regular file with an ASCII name
                md_names, md_entries, acks = fast
                files = len(md_names)
                candidates = md_names
                if acks:
                    names = set(map(_entry_name, entries))
                    for name in acks:
                        rel = _shown(prefix + name)
                        (sidecars.add(rel) if name[:-4] in names else orphans.append(rel))
                if get is not None:
                    which = getattr(cache, "has_rows", None)
                    if which is not None:
                        flags = which(prefix, md_names)
                        to_stat = list(compress(md_entries, flags)) if flags is not None else []
                    elif has_row is None:
                        to_stat = md_entries
                    else:
                        to_stat = [e for e, n in zip(md_entries, md_names) if has_row(prefix + n)]
                entries = ()  # classified: the loop below is for any other folder
            else:
                names = set(map(_entry_name, entries))
            for entry in entries:
                name = entry.name
                if not name.endswith(".md"):
                    if name.endswith(".md.ack"):
                        rel = _shown(prefix + name)
                        (sidecars.add(rel) if name[:-4] in names else orphans.append(rel))
                    continue
                files += 1
                if not name.isascii() and not _utf8(name):
                    # Such a name is never a letter's canonical name and cannot be shown or
                    # written to JSON as it is: listed, with its bytes escaped, never read.
                    unsupported.append(Unsupported(_shown(prefix + name), "file name is not UTF-8"))
                    continue
                try:
                    regular = entry.is_file(follow_symlinks=False)  # a symlink is never one
                except OSError:
                    regular = False
                if not regular:
                    kind = _entry_kind(entry, regular=True)
                    if kind != "file":
                        if kind == "other":
                            kind = _kind(entry)
                        if kind is None:  # vanished since the listing: not examined, not counted
                            self.changed = True
                            files -= 1
                        else:
                            unsupported.append(Unsupported(prefix + name, kind))
                        continue
                candidates.append(name)
                if get is not None and (has_row is None or has_row(prefix + name)):
                    to_stat.append(entry)
            # An unchanged letter costs a stat, never a read.
            hits: dict[str, Letter | Unreadable] = {}
            gone: set[str] = set()
            for entry, st in zip(to_stat, self.reader.stat_entries(dir_fd, to_stat) if to_stat else ()):
                name = entry.name
                if type(st) is not tuple:  # the OSError its stat raised
                    if isinstance(st, FileNotFoundError):
                        self.changed = True
                        files -= 1
                    else:
                        unsupported.append(Unsupported(prefix + name, _why(st)))
                    gone.add(name)
                    continue
                size, mtime_ns, inode, ctime_ns = st
                hit = get(prefix + name, size, mtime_ns, inode, ctime_ns)
                if hit is not None:
                    job.seen.add(name, st)
                    hits[name] = hit
                elif reuse is not None:
                    job.recheck.add(name)
            if gone:
                candidates = [n for n in candidates if n not in gone]
            job.order = [hits.get(n, n) for n in candidates] if hits else candidates
            to_read = [n for n in job.order if type(n) is str] if hits else candidates
            batches = getattr(self.reader, "iter_batches", None)
            if to_read and batches is not None and not hits and not job.recheck:
                job.batches = batches(dir_fd, to_read, (seat, folder, prefix))
            else:
                job.read = self.reader.iter_headers(dir_fd, to_read, (seat, folder, prefix)) if to_read else iter(())
        except OSError as exc:
            os.close(dir_fd)
            return Unsupported(rel_dir, _why(exc))
        except BaseException:
            os.close(dir_fd)
            raise
        job.files = files
        return job

    def _take(self, job: _Folder, letters, unreadable, unsupported, orphans) -> int:
        """Add what the folder ``job`` found when listed, then every item of it in listing
        order (``core.taking``); closes the folder. Returns how many files count."""
        return take_folder(self, job, letters, unreadable, unsupported, orphans)

    def _saw_dir(self, rel: str, fd: int) -> None:
        try:
            st = os.fstat(fd)
        except OSError:  # never seen to fail on an open directory; then no memo is kept
            self.dirs.append((rel, -1, -1, -1, -1))
            return
        self.dirs.append((rel, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_mode))

    def stable(self) -> bool:
        """Check every scanned folder again: True when nothing appeared, vanished or moved.

        A folder settled before the scan began that still stats the same is not listed
        again (``_settled``); every other one is. Folders are reopened the way the scan opened them (relative, ``O_NOFOLLOW``), so a
        folder swapped for a symlink is a change, never a listing of somewhere else. What
        counts is the set of (name, inode) of a folder's letter entries (of a seat: of its
        folders); the raw listings are compared first, and when they are the same, in the
        same order, so are those sets (the common case costs two list comparisons).
        """
        if self.changed:
            return False
        try:
            root_fd = os.open(self.root, _DIR_FLAGS)
        except OSError:
            return False
        settled = self._settled()
        try:
            if not unchanged(root_fd, "", settled):
                with os.scandir(root_fd) as it:
                    seats = frozenset(e.name for e in it if valid_seat(e.name) and _entry_kind(e) != "other")
                if seats != self.seat_names:
                    return False
            for rel, before in self.listing.items():
                if unchanged(root_fd, rel, settled):
                    continue
                after = listing(root_fd, rel)
                if after == before:
                    continue
                seat_level = "/" not in rel
                if entry_set(after, seat_level=seat_level) != entry_set(before, seat_level=seat_level):
                    return False
        except OSError:
            return False
        finally:
            os.close(root_fd)
        return True

    def _settled(self) -> dict[str, tuple[int, int, int]]:
        """(inode, mtime_ns, ctime_ns) of each directory the scan opened, when it was last
        changed ``RACY_NS`` or more before the scan began. Creating, removing or renaming
        an entry moves a directory's times; once its last change is that old, a later one
        cannot leave them as they were (a clock tick is far shorter), so the same times
        after the scan mean the same entries. A directory changed just before the scan is
        listed again instead."""
        limit = self.began - RACY_NS
        return {
            rel: (ino, mtime, ctime)
            for rel, ino, mtime, ctime, _ in self.dirs
            if ino >= 0 and mtime <= limit and ctime <= limit
        }

"""Turn a letterbox directory into letters plus an honest scope (SPEC 2, 3, 5 "Scope").

Every directory is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a
symlink swapped in mid-scan is refused, never followed. Letter files are opened with
``O_NOFOLLOW | O_NONBLOCK`` and must ``fstat`` as regular files: a FIFO never blocks and a
device is never read (``core.reader``). Each header costs one ``os.read`` of 4 KiB (more
only for a long header); bodies are never read. With a ``cache`` (the derived store), an
unchanged file costs a ``stat``, never a read.

After reading, the scan checks every folder again (``stable``: listing it again, unless it
had been settled since before the scan began and still stats the same); if entries
appeared, vanished or moved it scans again, a bounded number of times, and otherwise
reports ``atomic: false``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from array import array
from bisect import bisect_left
from hashlib import blake2b
from operator import attrgetter
from typing import Protocol

from . import flags as fsflags
from .errors import LetterboxError
from .grammar import valid_seat
from .header import parse_header
from .lazy import KeptLetters, KeptSource, Pending
from .letters import build
from .listings import Listed, Pass
from .model import LEGACY_FLAGS, Letter, Scope, Snapshot, Unreadable, Unsupported
from .reader import entry_kind as _entry_kind
from .reader import is_regular as _regular
from .reader import kind_of_entry as _kind
from .reader import kind_of_mode as _kind_mode
from .reader import read_header
from .reader import shown_name as _shown
from .reader import utf8_name as _utf8
from .reader import why as _why

FOLDERS = ("inbox", "processed")
MAX_ATTEMPTS = 3
#: what changed this recently (by ctime or mtime, before a scan began) may change again
#: within one tick of a coarse file-system clock and leave the same times: the scan lists
#: such a folder again after reading it
RACY_NS = 3_000_000_000
#: what counts at a seat's level when a seat is listed again: its folders
SEAT_PARTS = frozenset(("inbox", "processed", "archive"))

_DIR_FLAGS = fsflags.DIR
_NAME = attrgetter("name")


class HeaderCache(Protocol):
    """What the scan asks of a derived cache (the store keeps one): an item is used only
    while its file's size, mtime, inode and ctime are all unchanged."""

    def get(self, path: str, size: int, mtime_ns: int, inode: int, ctime_ns: int) -> Letter | Unreadable | None:
        """The letter or unreadable made from the file at ``path`` when it stat-ed so."""
        ...

    def put_many(self, items: list[Letter | Unreadable], data: list[bytes], ctimes: list[int]) -> None:
        """Record what was built from files (a folder's worth at once); ``data[i]`` is the
        header bytes read for ``items[i]``, ``ctimes[i]`` its file's ctime when read."""
        ...


class FolderCache(HeaderCache, Protocol):
    """A header cache that can also vouch for a whole folder at once (the store does): the
    scan then stats every file of the folder and builds none of its letters."""

    def folder(self, prefix: str, names: list[str], nums: list[int]) -> KeptFolder | None:
        """What the cache keeps of the folder ``prefix`` ("seat/inbox/") when its letter
        files (``names``, sorted, and four ``nums`` each: size, mtime_ns, inode, ctime_ns)
        are exactly the ones it kept, each unchanged: the names and nums of its letters
        (not decoded yet), its unreadable files, and how many of its letters carry a
        legacy flag."""
        ...

    def source(self) -> KeptSource:
        """Where the letters of the folders it vouched for are decoded from."""
        ...


#: what a ``FolderCache`` keeps of a folder: (its letters' names and nums, not decoded yet,
#: its unreadable files, how many of its letters carry a legacy flag)
KeptFolder = tuple[list[str], list[int], list[Unreadable], int]


def stat_digest(names: list[str], nums: list[int]) -> str:
    """One value for a folder's letter files and their stat identities (``names`` in order,
    four ``nums`` each): the scan's and the store's, compared to vouch for a folder."""
    digest = blake2b(digest_size=16)
    digest.update("\0".join(names).encode("utf-8", "surrogateescape"))
    digest.update(b"\1")
    try:
        digest.update(array("q", nums).tobytes())
    except OverflowError:  # an inode or a time beyond 64 bits
        digest.update(repr(nums).encode())
    return digest.hexdigest()


def scan(
    root: str | os.PathLike[str],
    participants: Iterable[str] | None = None,
    *,
    id_time_is_utc: bool | None = None,
    cache: HeaderCache | None = None,
    now: datetime | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    watched: Pass | None = None,
) -> Snapshot:
    """Scan the letterbox at ``root``. ``participants`` restricts the scan (partial scope).

    ``id_time_is_utc`` defaults to the letterbox's own setting. ``cache``: a derived header
    cache to ask before reading a file (none by default); it only makes the scan faster:
    the answer is the same with or without it. ``watched``: the folder listings a watcher
    vouches for (``core.listings``), taken only where ``cache`` vouches for the folder's
    files too. Raises ``LetterboxError`` when ``root`` cannot be opened or a named
    participant is not a seat.
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
        scanner = _Scan(root_s, wanted, id_time_is_utc, cache, watched)
        snapshot = scanner.run()
        if scanner.stable():
            break
        if attempt >= max_attempts:
            snapshot.scope.atomic = False
            break
    snapshot.scope.scanned_at = scanned_at.isoformat().replace("+00:00", "Z")
    return snapshot


class _Scan:
    """One pass over the letterbox. ``stable()`` lists folders again to check nothing moved."""

    def __init__(self, root: str, wanted: list[str] | None, id_time_is_utc: bool, cache: HeaderCache | None,
                 watched: Pass | None = None):
        self.root = root
        self.wanted = wanted
        self.id_time_is_utc = id_time_is_utc
        self.cache = cache
        self.changed = False
        # folder -> its listing (every name and inode, in the order the system gave them)
        self.listing: dict[str, tuple[list[str], list[int]]] = {}
        self.seat_names: frozenset[str] = frozenset()
        # every directory the scan opened, as (rel, st_ino, st_mtime_ns, st_ctime_ns, st_dev)
        self.dirs: list[tuple[str, int, int, int, int]] = []
        self.began = time.time_ns()  # before any directory is stat-ed (see ``_settled``)
        #: each folder's letters in scan order: (its prefix, its letters, or with
        #: ``kept`` its letters not decoded yet, kept)
        self.parts: list[tuple[str, list, bool]] = []
        self.kept_legacy = 0  # the legacy letters of the folders the cache vouched for
        self.vouch = getattr(cache, "folder", None)
        self.watched = watched if self.vouch is not None else None
        self.unreadable: list[Unreadable] = []
        self.unsupported: list[Unsupported] = []
        self.sidecars: set[str] = set()
        self.orphans: list[str] = []
        self.files = 0

    def run(self) -> Snapshot:
        try:
            root_fd = os.open(self.root, _DIR_FLAGS)
        except OSError as exc:
            raise LetterboxError(f"cannot open letterbox {self.root}: {exc.strerror}") from None
        status_notes: dict[str, str] = {}
        ignored: list[str] = []
        seats: list[str] = []
        try:
            self._saw_dir("", root_fd)
            try:
                with os.scandir(root_fd) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                raise LetterboxError(f"cannot list letterbox {self.root}: {exc.strerror}") from None
            for entry in entries:
                name = entry.name
                if name.startswith(".") or name == "locks" or name == "letterbox-tui.toml":
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
                    self.unsupported.append(Unsupported(name, "symlinked seat" if kind == "symlink" else kind))
            self.seat_names = frozenset(seats)
            if self.wanted is not None:
                missing = [w for w in self.wanted if w not in seats]
                if missing:
                    raise LetterboxError(f"no seat {missing[0]!r} in {self.root}")
            for seat in seats:
                if (self.wanted is None or seat in self.wanted) and not any(u.path == seat for u in self.unsupported):
                    self._seat(root_fd, seat, status_notes)
        finally:
            os.close(root_fd)
        legacy = self.kept_legacy + sum(
            1 for _, items, kept in self.parts if not kept
            for x in items if x.flags and not LEGACY_FLAGS.isdisjoint(x.flags))
        letters = self._letters()
        scope = Scope(
            root=self.root,
            participants=list(self.wanted) if self.wanted is not None else list(seats),
            files=self.files,
            letters=len(letters),
            legacy=legacy,
            unreadable=[{"path": u.path, "error": u.error} for u in self.unreadable],
            unsupported=[{"path": u.path, "reason": u.reason} for u in self.unsupported],
            partial=self.wanted is not None,
            atomic=not self.changed,
        )
        return Snapshot(
            root=self.root,
            letters=letters,
            unreadable=self.unreadable,
            unsupported=self.unsupported,
            scope=scope,
            seats=seats,
            sidecars=frozenset(self.sidecars),
            orphan_sidecars=self.orphans,
            status_notes=status_notes,
            ignored=ignored,
            devices={rel: dev for rel, _, _, _, dev in self.dirs if rel.count("/") == 1},
        )

    def _letters(self) -> list[Letter] | KeptLetters:
        """The scan's letters: a list when the cache vouched for no folder, else lazy (the
        kept folders' letters decoded when asked, the others as read)."""
        parts = self.parts
        if not any(kept for _, _, kept in parts):
            return [x for _, items, _ in parts for x in items]
        return KeptLetters.of(parts, self.cache.source())  # type: ignore[union-attr]

    def _seat(self, root_fd: int, seat: str, status_notes: dict[str, str]) -> None:
        """A seat's folders, read in order; its own unsupported entries (no folder, an
        archive, a seat that cannot be opened) first."""
        unsupported = self.unsupported
        try:
            seat_fd = os.open(seat, _DIR_FLAGS, dir_fd=root_fd)
        except OSError as exc:
            unsupported.append(Unsupported(seat, _why(exc)))
            return
        try:
            self._saw_dir(seat, seat_fd)
            try:
                with os.scandir(seat_fd) as it:
                    raw = list(it)
            except OSError as exc:
                unsupported.append(Unsupported(seat, _why(exc)))
                return
            present = {e.name: e for e in raw}
            self.listing[seat] = names_and_inodes(raw)
            if "archive" in present:
                unsupported.append(Unsupported(f"{seat}/archive", "archive folders are not read"))
            note = present.get("status.md")
            if note is not None and _entry_kind(note, regular=True) == "file":
                status_notes[seat] = f"{seat}/status.md"
            for folder in FOLDERS:
                e = present.get(folder)
                rel = f"{seat}/{folder}"
                if e is None:
                    unsupported.append(Unsupported(rel, f"seat has no {folder}/"))
                    continue
                kind = _entry_kind(e)
                if kind != "dir":
                    why = {"symlink": "symlinked folder", "other": f"{folder} is not a directory"}.get(kind, kind)
                    unsupported.append(Unsupported(rel, why))
                    continue
                self._folder(seat_fd, seat, folder)
        finally:
            os.close(seat_fd)

    def _folder(self, seat_fd: int, seat: str, folder: str) -> None:
        """One folder: its letter files in name order, each a letter, an unreadable file
        or an unsupported entry; its sidecars. The folder is unsupported when it cannot be
        opened or listed."""
        rel_dir = f"{seat}/{folder}"
        prefix = rel_dir + "/"
        if self.watched is not None and self._watched_folder(seat_fd, folder, prefix):
            return
        try:
            dir_fd = os.open(folder, _DIR_FLAGS, dir_fd=seat_fd)
        except OSError as exc:
            self.unsupported.append(Unsupported(rel_dir, _why(exc)))
            return
        listed: list[Unsupported] = []  # what the listing alone tells, added first
        found: list[Letter | Unreadable | Unsupported] = []  # each file read, in name order
        new_items: list[Letter | Unreadable] = []
        new_data: list[bytes] = []
        new_ctimes: list[int] = []
        files = 0
        whole = True  # every "*.md" entry a regular file with a UTF-8 name, none vanished
        try:
            self._saw_dir(rel_dir, dir_fd)
            with os.scandir(dir_fd) as it:
                raw = list(it)
            self.listing[rel_dir] = names_and_inodes(raw)
            entries = sorted(raw, key=_NAME)
            # the names beginning with "." sort together, from "." up to "/" (the next code
            # point, which no name holds): cut out at once, not tested name by name
            dots = bisect_left(entries, ".", key=_NAME), bisect_left(entries, "/", key=_NAME)
            del entries[dots[0]:dots[1]]
            if self.vouch is not None and self._kept_folder(entries, prefix):
                return
            names = {e.name for e in entries}
            for entry in entries:
                name = entry.name
                if not name.endswith(".md"):
                    if name.endswith(".md.ack"):
                        rel = _shown(prefix + name)
                        (self.sidecars.add(rel) if name[:-4] in names else self.orphans.append(rel))
                    continue
                files += 1
                if not _utf8(name):
                    # Such a name is never a letter's canonical name and cannot be shown or
                    # written to JSON as it is: listed, with its bytes escaped, never read.
                    listed.append(Unsupported(_shown(prefix + name), "file name is not UTF-8"))
                    continue
                if not _regular(entry):
                    kind = _entry_kind(entry, regular=True)
                    if kind != "file":
                        if kind == "other":
                            kind = _kind(entry)
                        if kind is None:  # vanished since the listing: not examined, not counted
                            self.changed = True
                            files -= 1
                            whole = False
                        else:
                            listed.append(Unsupported(prefix + name, kind))
                        continue
                item = self._file(dir_fd, entry, seat, folder, prefix, new_items, new_data, new_ctimes)
                if item is None:  # vanished since the listing
                    self.changed = True
                    files -= 1
                    whole = False
                else:
                    found.append(item)
            if self.watched is not None and whole and not listed and all(type(x) is not Unsupported for x in found):
                read = _stat_listing(entries)  # (each file stat-ed on the way: the store vouches once written)
                if read is not None:
                    self._remember(prefix, read)
        except OSError as exc:
            found.append(Unsupported(rel_dir, _why(exc)))
        finally:
            os.close(dir_fd)
        self.files += files
        self.unsupported.extend(listed)
        letters: list[Letter] = []
        self.parts.append((prefix, letters, False))
        for item in found:
            if type(item) is Letter:
                letters.append(item)
            elif type(item) is Unreadable:
                self.unreadable.append(item)
            else:
                self.unsupported.append(item)
        if self.cache is not None and new_items:
            self.cache.put_many(new_items, new_data, new_ctimes)

    def _watched_folder(self, seat_fd: int, folder: str, prefix: str) -> bool:
        """The folder ``prefix`` as last listed, when the watcher vouches for that listing
        (``core.listings``) and the cache for its files: neither listed nor stat-ed."""
        try:
            st = os.stat(folder, dir_fd=seat_fd, follow_symlinks=False)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            return False
        ident = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_dev)
        listed = self.watched.take(prefix, ident)  # type: ignore[union-attr]
        if listed is None or not self._vouched(prefix, *listed):
            return False
        self.dirs.append((prefix[:-1], *ident))
        return True

    def _kept_folder(self, entries: list[os.DirEntry], prefix: str) -> bool:
        """The folder ``prefix`` as the cache keeps it, when the cache vouches for it: each
        letter file stat-ed, none read. False (nothing taken) when any of its ``*.md``
        entries is not a plain regular file or the cache does not vouch for them."""
        listed = _stat_listing(entries)
        if listed is None or not self._vouched(prefix, *listed):
            return False
        if self.watched is not None:
            self._remember(prefix, listed)
        return True

    def _remember(self, prefix: str, listed: Listed) -> None:
        """Tell the watcher's listings the folder ``prefix`` was listed so, when it had
        settled by the time the scan began (its own stat as it was opened)."""
        rel, ino, mtime, ctime, dev = self.dirs[-1]
        limit = self.began - RACY_NS
        if rel == prefix[:-1] and ino >= 0 and mtime <= limit and ctime <= limit:
            self.watched.saw(prefix, (ino, mtime, ctime, dev), listed)  # type: ignore[union-attr]

    def _vouched(self, prefix: str, letter_names: list[str], nums: list[int], acks: list[str]) -> bool:
        """Take the folder ``prefix`` whose letter files stat as ``letter_names`` and
        ``nums`` (sorted; every ``*.md`` entry a regular file) and whose sidecars are
        ``acks`` as the cache keeps it; False when the cache does not vouch for them."""
        kept = self.vouch(prefix, letter_names, nums)  # type: ignore[misc]
        if kept is None:
            return False
        kept_names, kept_nums, unreadable, legacy = kept
        n = len(letter_names)
        for name in acks:
            j = bisect_left(letter_names, name[:-4])
            rel = _shown(prefix + name)
            if j < n and letter_names[j] == name[:-4]:
                self.sidecars.add(rel)
            else:
                self.orphans.append(rel)
        self.files += n
        self.parts.append((prefix, (kept_names, kept_nums), True))
        self.unreadable.extend(unreadable)
        self.kept_legacy += legacy
        return True

    def _file(self, dir_fd, entry, seat, folder, prefix, new_items, new_data, new_ctimes):
        """One regular-looking ``*.md`` entry: what the cache keeps of it while it stats
        the same, else what its header says (recorded for the cache); None when it went
        since the listing."""
        name = entry.name
        path = prefix + name
        cache = self.cache
        if cache is not None:
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                return None
            except OSError as exc:
                return Unsupported(path, _why(exc))
            hit = cache.get(path, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
            if hit is not None:
                return hit
        try:
            st, data = read_header(dir_fd, name)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return None
            return Unsupported(path, _why(exc))
        if data is None:
            return Unsupported(path, _kind_mode(st.st_mode))
        item = build(
            parse_header(data), path=path, seat=seat, folder=folder, name=name, size=st.st_size,
            mtime_ns=st.st_mtime_ns, inode=st.st_ino, ctime_ns=st.st_ctime_ns, id_time_is_utc=self.id_time_is_utc,
        )
        new_items.append(item)
        new_data.append(data)
        new_ctimes.append(st.st_ctime_ns)
        return item

    def _saw_dir(self, rel: str, fd: int) -> None:
        try:
            st = os.fstat(fd)
        except OSError:  # never seen to fail on an open directory; then it is listed again
            self.dirs.append((rel, -1, -1, -1, -1))
            return
        self.dirs.append((rel, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_dev))

    def stable(self) -> bool:
        """Check every scanned folder again: True when nothing appeared, vanished or moved.

        A folder settled before the scan began that still stats the same is not listed
        again (``_settled``); every other one is. Folders are reopened the way the scan
        opened them (relative, ``O_NOFOLLOW``), so a folder swapped for a symlink is a
        change, never a listing of somewhere else. What counts is the set of (name, inode)
        of a folder's letter entries (of a seat: of its folders); the listings are compared
        first, and when they are the same, in the same order, so are those sets.
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


def _stat_listing(entries: list[os.DirEntry]) -> Listed | None:
    """A folder's letter files (``entries`` in name order), each one lstat-ed, and its
    sidecars' names; None when a ``*.md`` entry is not a regular file with a UTF-8 name,
    or cannot be told (gone)."""
    letter_names: list[str] = []
    nums: list[int] = []
    acks: list[str] = []
    add_name = letter_names.append
    add_nums = nums.extend
    try:
        for entry in entries:
            name = entry.name
            if name[-3:] == ".md":
                # one lstat tells a regular file (never through a symlink) and its identity
                st = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or not (name.isascii() or _utf8(name)):
                    return None
                add_name(name)
                add_nums((st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
            elif name[-7:] == ".md.ack":
                acks.append(name)
    except OSError:  # gone, or cannot be told: each file is looked at on its own
        return None
    return letter_names, nums, acks


# --- the second look: a directory reopened and listed again -----------------------------

def unchanged(root_fd: int, rel: str, settled: dict[str, tuple[int, int, int]]) -> bool:
    """True when the directory ``rel`` (reopened relative to the root, never through a
    symlink) still stats as the settled directory the scan listed; False when it may have
    changed (then it is listed again)."""
    before = settled.get(rel)
    if before is None:
        return False
    try:
        with reopened(root_fd, rel) as fd:
            st = os.fstat(fd)
    except OSError:
        return False
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns) == before


@contextlib.contextmanager
def reopened(root_fd: int, rel: str) -> Iterator[int]:
    """The directory ``rel`` ("" for the root) reopened relative to the root the way the
    scan opened it (``O_NOFOLLOW`` at every step); what was opened is closed after."""
    fds: list[int] = []
    fd = root_fd
    try:
        for part in rel.split("/") if rel else ():
            fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            fds.append(fd)
        yield fd
    finally:
        for opened in reversed(fds):
            os.close(opened)


def names_and_inodes(entries: list[os.DirEntry]) -> tuple[list[str], list[int]]:
    """Every entry's name and inode, in listing order."""
    return [e.name for e in entries], [e.inode() for e in entries]


def entry_set(listed: tuple[list[str], list[int]], *, seat_level: bool) -> frozenset[tuple[str, int]]:
    """(name, inode) of the entries that matter: a seat's folders, a folder's non-dot entries."""
    names, inodes = listed
    if seat_level:
        return frozenset((n, i) for n, i in zip(names, inodes) if n in SEAT_PARTS)
    return frozenset((n, i) for n, i in zip(names, inodes) if not n.startswith("."))


def listing(root_fd: int, rel: str) -> tuple[list[str], list[int]]:
    """A folder's listing now, the folder reopened relative to the root."""
    with reopened(root_fd, rel) as fd, os.scandir(fd) as it:
        return names_and_inodes(list(it))


def read_kept(root: str, pending: Pending, id_time_is_utc: bool) -> Letter | Unreadable:
    """The file at a path the store vouched for, read from the letterbox itself (when the
    store's record of it cannot be used). Raises ``LetterboxError`` when it no longer
    stats as the scan saw it: the letterbox changed while it was read."""
    path, *kept = pending
    seat, folder, name = path.split("/")
    root_fd = os.open(root, _DIR_FLAGS)
    try:
        with reopened(root_fd, f"{seat}/{folder}") as fd:
            st, data = read_header(fd, name)
    except OSError as exc:
        raise LetterboxError(f"{_shown(path)} changed while the letterbox was read ({_why(exc)}): ask again") from None
    finally:
        os.close(root_fd)
    if data is None or [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns] != kept:
        raise LetterboxError(f"{_shown(path)} changed while the letterbox was read: ask again")
    return build(
        parse_header(data), path=path, seat=seat, folder=folder, name=name, size=st.st_size,
        mtime_ns=st.st_mtime_ns, inode=st.st_ino, ctime_ns=st.st_ctime_ns, id_time_is_utc=id_time_is_utc,
    )

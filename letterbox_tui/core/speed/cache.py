"""The derived header cache (SPEC 9): an unchanged letter costs a ``stat``, never a parse.

One file per letterbox root and ``id_time_is_utc`` setting, in the user's cache directory
(``platformdirs.user_cache_dir("letterbox-tui")``, which honours ``XDG_CACHE_HOME``),
named by a hash of the root's real path: never inside the letterbox. Deleting it loses
nothing.

Each row is keyed by the letter file's path relative to the root and holds its ``size``,
``mtime_ns``, ``inode`` and ``ctime_ns``, a content hash (BLAKE2b-128 of the header bytes
the scanner read), and the parsed result (the ``Letter`` or ``Unreadable`` fields). The
scanner asks ``get(path, size, mtime_ns, inode, ctime_ns)``: a row is used only when all
four match the file's ``stat`` now; anything else is re-read. The ctime moves with every
change and no tool can set it, so even a same-size edit with the mtime restored is seen.
A re-read file whose header bytes hash the same as its row's (``reuse``: a ``touch``, a git
checkout or rebase that rewrote the same bytes) gets the row's letter back with its stat
refreshed, not built again; any other header is built as new.
``verify.verify_cache`` re-reads every file and compares content hashes and letters, for what no
``stat`` can show (a damaged or tampered cache row).

File layout: a framed derived file (``files.write_framed``: magic, version, length and a
CRC-32 of everything after it, checked before anything is used; never read over
``files.MAX_SIZE``) whose payload is a little-endian header (length of the meta pickle,
length of the rows pickle), the meta pickle (root, setting, row layout), the rows pickle
and the hashes pickle (unpickled only when saving or verifying). The rows are plain tuples
of ``str``/``int``/``bytes``; they are read with an unpickler that refuses every global, so
a crafted cache file can never run code, and a row of the wrong shape or types is never
made into a letter. A file with another magic, version, length, checksum, root, setting or
layout, or one that fails to unpickle, is ignored (one notice line) and rebuilt.
Saving writes a temporary file beside it and ``os.replace``s it: concurrent runs never
see half a file (the last writer wins whole).

A file changed less than ``RACY_NS`` before it was read (by its ctime, which every change
moves and no tool can set) is not cached (git's "racily clean" case: a same-size rewrite
within one timestamp tick would fool a ``stat``).

Why pickle: loading 100,000 rows in one go, measured on a busy two-CPU machine, took
0.66 s with pickle, 0.76 s with marshal and 1.29 s with SQLite (before even decoding its
blobs); see the commit that introduced this module.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import os
import pickle
import re
import struct
import time
from array import array
from collections.abc import Iterable

from letterbox_tui.core.letters import STATE_LAYOUT, restore, state
from letterbox_tui.core.model import Letter, Unreadable
from letterbox_tui.core.scan import RACY_NS

from .files import NoGlobals as _NoGlobals
from .files import Pieces
from .files import blake2b, cache_dir, inside, notice, read_framed, write_framed

# The end of a header: a line that is exactly '---' (as the header grammar reads it).
_HEADER_END = re.compile(rb"\n---\r*(?:\n|$)")
MAGIC = b"LBXCACHE"
# 2: ids are read up to 243 characters (rows cached under 128 are rebuilt); 3: framed
# with a checksum (``files.read_framed``), rows keep ``letters.state``; 4: every row's
# header hash is the one its letter was made from (a row is reused when the file's header
# hashes the same after a stat change: an older file's hashes were never relied on so)
VERSION = 4
_HASH = 16  # bytes of ``header_hash``
_HEAD = struct.Struct("<QQ")  # inside the payload: meta length, rows length

#: Unreadable's fields, in order (it is rebuilt positionally)
_UNREADABLE = tuple(f.name for f in dataclasses.fields(Unreadable))
#: the row layout a file was written with: a letter's kept state is ``letters.state``'s
#: (its layout names every slot of Letter), an unreadable file's its fields
_LAYOUT = (STATE_LAYOUT, _UNREADABLE, ("kind", "kept", "size", "mtime_ns", "inode", "ctime_ns"))
_KIND_LETTER = 0
_KIND_UNREADABLE = 1
# a row: (kind, what was kept, size, mtime_ns, inode, ctime_ns): used while all four match
_I_SIZE, _I_MTIME, _I_INODE, _I_CTIME = 2, 3, 4, 5
_WIDTH = 6
#: where each kind's kept fields hold the path (a reused row must be its own file's)
_PATH_AT = {_KIND_LETTER: 19, _KIND_UNREADABLE: _UNREADABLE.index("path")}  # 19: in letters.state's order


def cache_path(root: str | os.PathLike[str], id_time_is_utc: bool) -> str:
    """Where the cache for this root and setting lives (the root's real path, hashed)."""
    real = os.path.realpath(os.fspath(root))
    digest = blake2b(os.fsencode(real), digest_size=12).hexdigest()
    return os.path.join(cache_dir(), f"{digest}-{'utc' if id_time_is_utc else 'asis'}.headers")


def header_hash(data: bytes) -> bytes:
    """BLAKE2b-128 of the header bytes: through the closing delimiter, else all bytes read."""
    m = _HEADER_END.search(data, 3)
    return blake2b(data[: m.end()] if m else data, digest_size=16).digest()


class HeaderCache:
    """The scanner's ``HeaderCache``: rows loaded in one go, written back by ``save()``."""

    def __init__(self, root: str | os.PathLike[str], id_time_is_utc: bool, *, path: str | None = None) -> None:
        self.root = os.path.realpath(os.fspath(root))
        self.id_time_is_utc = bool(id_time_is_utc)
        self.path = path or cache_path(self.root, self.id_time_is_utc)
        self.rows: dict[str, tuple] = {}
        self._hashes: dict[str, bytes] | None = {}
        self._hash_blob = b""  # the file's hashes section, unpickled only when needed
        self.loaded = False  # a valid cache file was read
        self.hits = 0
        self.misses = 0
        # rows reused because the re-read header hashed as the row's did: not misses (a
        # letter the C reader made while reading is counted when saving, see ``save``)
        self.reused = 0
        self._fresh: dict[str, tuple | Letter | Unreadable] = {}  # seen by this scan: hit rows, items put one by one
        # header bytes read by this scan, hashed only when saving (off the answer's path)
        self._fresh_data: dict[str, bytes] = {}
        self._fresh_ctime: dict[str, int] = {}
        # what was built from files a folder at a time (``put_many``, ``put_hashed``), kept as
        # given until the save: (items, header bytes or their hashes joined, ctimes, hashed)
        self._new: list[tuple[list, list | bytes, array, bool]] = []
        self._new_count = 0
        # the clock the racy check reads: once per scan (a file modified after it was taken
        # only looks more recent, never less: the check stays on the safe side)
        self._now = time.time_ns()
        self._changed = False
        self._keys: dict[tuple[str, ...], tuple[str, ...]] = {}
        # A cache directory inside the letterbox (XDG_CACHE_HOME pointing there) would write
        # into the letterbox and show up as a seat: then there is no cache at all.
        self.disabled = inside(os.path.dirname(self.path), self.root)
        if not self.disabled:
            self._load()

    # --- the scanner's protocol -----------------------------------------------------
    def has_row(self, path: str) -> bool:
        """Whether a row for ``path`` exists (when not, a miss is counted): the scanner
        asks first, so a file the cache never saw costs no ``stat`` before it is read."""
        if path in self.rows:
            return True
        self.misses += 1
        return False

    def has_rows(self, prefix: str, names: list[str]) -> list[bool] | None:
        """``has_row(prefix + name)`` for each name, at once (None: for none of them, as for
        every file when the cache is empty); the misses are counted."""
        rows = self.rows
        if not rows:
            self.misses += len(names)
            return None
        out = [prefix + name in rows for name in names]
        self.misses += out.count(False)
        return out

    def get(self, path: str, size: int, mtime_ns: int, inode: int, ctime_ns: int) -> Letter | Unreadable | None:
        row = self.rows.get(path)
        if (
            row is None or row[_I_CTIME] != ctime_ns or row[_I_MTIME] != mtime_ns
            or row[_I_SIZE] != size or row[_I_INODE] != inode
        ):
            self.misses += 1
            return None
        self.hits += 1
        self._fresh[path] = row
        try:
            if row[0] == _KIND_LETTER:
                return restore(row[1])
            return _unreadable(row[1])
        except (TypeError, ValueError):  # a row of another shape: read the file instead
            notice(f"header cache {self.path}: a row of the wrong shape ignored; read from the file")
            self.hits -= 1
            self.misses += 1
            del self._fresh[path]
            return None

    def reuse(self, path: str, data: bytes, size: int, mtime_ns: int, inode: int, ctime_ns: int
              ) -> Letter | Unreadable | None:
        """After ``get`` missed on the stat of ``path``: the row's item with this stat when
        ``data``, the header bytes just read, hashes as the row's did (the letter would be
        built the same: a header, its path and the setting make it), else None (a miss).
        The scanner asks only for what the reader did not make itself (the C reader's
        letters cost less than restoring a row: ``save`` reuses their rows by hash).
        The refreshed row is kept unless the file is racily recent (then it is reused only
        by this scan, as ``put`` would not keep it); saving it costs no re-hash or state."""
        row = self.rows.get(path)
        if row is None or _kept_path(row) != path:
            return None
        old = self.hashes.get(path)
        if old is None or header_hash(data) != old:
            return None
        kept = row[1][:-3] + (size, mtime_ns, inode)  # both kinds end with size, mtime_ns, inode
        path = _kept_path(row)  # the row's own string: one object in the file, not two
        try:
            item = restore(kept) if row[0] == _KIND_LETTER else _unreadable(kept)
        except (TypeError, ValueError):  # a row of another shape: built from the file instead
            return None
        self.misses -= 1  # ``get`` counted it
        self.reused += 1
        self._changed = True
        if self._now - ctime_ns >= RACY_NS:
            self._fresh[path] = (row[0], kept, size, mtime_ns, inode, ctime_ns)
        return item

    def put(self, item: Letter | Unreadable, data: bytes | None, ctime_ns: int) -> None:
        """Record what the scanner built from a file; ``data`` is the header bytes it read,
        ``ctime_ns`` the file's ctime when it was read.

        A file changed less than ``RACY_NS`` before it was read is not recorded: another
        write within the file system's timestamp granularity could leave the same size and
        times, and a ``stat`` could not tell (git's "racily clean" problem). It is simply
        read again next time, until it is old enough to be trusted.
        """
        if self._now - ctime_ns < RACY_NS:  # every change moves the ctime; an mtime can be set
            self._changed = True
            return
        path = item.path
        self._fresh[path] = item  # made into a row by save(), off the answer's path
        self._fresh_ctime[path] = ctime_ns
        if data is not None:
            self._fresh_data[path] = data
        self._changed = True

    def put_many(self, items: list[Letter | Unreadable], data: list[bytes | None], ctimes: list[int]) -> None:
        """``put`` for a folder's worth at once (what the scanner calls): the lists are kept
        as they are until the save (no work a letter on the answer's path); the files that
        are racily recent are left out."""
        self._put_folder(items, data, ctimes, False)

    def put_hashed(self, items: list[Letter], hashes: bytes, ctimes: list[int]) -> None:
        """``put_many`` for letters the reader made itself, given the BLAKE2b-128 digest of
        each header (``header_hash``) rather than its bytes, joined (16 bytes a letter,
        in order): all that is kept of them."""
        if type(hashes) is not bytes or len(hashes) != _HASH * len(items):  # not digests: none trusted as one
            self._put_folder(items, [None] * len(items), ctimes, False)
        else:
            self._put_folder(items, hashes, ctimes, True)

    def _put_folder(self, items: list, data: list | bytes, ctimes: list[int], hashed: bool) -> None:
        if not items:
            return
        self._changed = True
        limit = self._now - RACY_NS
        if max(ctimes) > limit:  # some changed too recently: not kept (read again next time)
            keep = [i for i, c in enumerate(ctimes) if c <= limit]
            if not keep:
                return
            items, ctimes = [items[i] for i in keep], [ctimes[i] for i in keep]
            data = (b"".join([data[_HASH * i : _HASH * (i + 1)] for i in keep]) if hashed
                    else [data[i] for i in keep])
        try:
            kept_ctimes = array("q", ctimes)
        except OverflowError:  # beyond 64 bits (never seen): kept as they are
            kept_ctimes = list(ctimes)
        self._new.append((items, data, kept_ctimes, hashed))
        self._new_count += len(items)

    def _put_folders(self):
        """(path, item, header hash or None, ctime) of each item ``put_many`` and
        ``put_hashed`` kept, in the order given (hashing the header bytes now)."""
        for items, data, ctimes, hashed in self._new:
            for i, item in enumerate(items):
                if hashed:
                    h = data[_HASH * i : _HASH * (i + 1)]
                else:
                    d = data[i]
                    h = header_hash(d) if d is not None else None
                yield item.path, item, h, ctimes[i]

    def _row(self, item: Letter | Unreadable, ctime_ns: int) -> tuple:
        if type(item) is Letter:
            kept = state(item)
            keys = kept[15]
            shared = self._keys.setdefault(keys, keys)  # one key tuple for the letters that share it
            if shared is not keys:
                kept = kept[:15] + (shared,) + kept[16:]
            return (_KIND_LETTER, kept, item.size, item.mtime_ns, item.inode, ctime_ns)
        kept = tuple([dict(v) if isinstance(v, dict) else v for v in map(item.__getattribute__, _UNREADABLE)])
        return (_KIND_UNREADABLE, kept, item.size, item.mtime_ns, item.inode, ctime_ns)

    @property
    def hashes(self) -> dict[str, bytes]:
        """Content hash by path, as the file recorded them (read on first use: a scan does
        not need them, only saving and ``verify_cache`` do)."""
        if self._hashes is None:
            try:
                loaded = _NoGlobals(Pieces(self._hash_blob)).load()
            except Exception:  # noqa: BLE001 - damaged: the rows stand, their hashes are gone
                loaded = {}
            self._hashes = loaded if isinstance(loaded, dict) else {}
            self._hash_blob = b""
        return self._hashes

    # --- persistence ----------------------------------------------------------------
    def pending(self) -> int:
        """How many rows a save would write (what this scan saw)."""
        return len(self._fresh) + self._new_count

    def needs_save(self, keep_seats: Iterable[str] = ()) -> bool:
        """False when the file already holds exactly the rows this scan would write."""
        if self._changed or not self.loaded:
            return True
        if self.pending() == len(self.rows):
            return False
        keep = set(keep_seats)
        return any(p not in self._fresh and p.split("/", 1)[0] not in keep for p in self.rows)

    def save(self, keep_seats: Iterable[str] = ()) -> bool:
        """Write the rows seen by this scan (atomically); False when nothing needed writing.

        Rows not seen are dropped (vanished files), except those of ``keep_seats``: the
        seats a partial scan did not visit.
        """
        if self.disabled or not self.needs_save(keep_seats):
            return False
        keep = set(keep_seats)
        ctimes = self._fresh_ctime
        fresh_data = self._fresh_data
        old_rows = self.rows
        old_hashes = self.hashes if old_rows else {}
        rows: dict[str, tuple] = {}
        hashes: dict[str, bytes] = {}

        def one_by_one():
            for p, r in self._fresh.items():
                if type(r) is tuple:  # a hit or a row reused by hash: its hash as recorded
                    yield p, r, old_hashes.get(p), None
                else:
                    data = fresh_data.get(p)
                    yield p, r, header_hash(data) if data is not None else None, ctimes[p]

        # what came a folder at a time first, then what came one by one (a scan that read a
        # folder again after a change lists each file in one or the other, rarely both; a
        # row is right for the stat it holds either way)
        for p, r, h, ctime in itertools.chain(self._put_folders(), one_by_one()):
            if type(r) is tuple:
                rows[p] = r
            else:
                old = old_rows.get(p) if h is not None else None
                kind = _KIND_LETTER if type(r) is Letter else _KIND_UNREADABLE
                if old is not None and h == old_hashes.get(p) and old[0] == kind and _kept_path(old) == p:
                    # read again (its stat changed), its header the same bytes: the C reader
                    # made its letter while reading (cheaper than restoring the row, the same
                    # letter); the row is kept with the stat now, as ``reuse`` keeps it, under
                    # its own path string (one object in the file, not two)
                    rows[_kept_path(old)] = (old[0], old[1][:-3] + (r.size, r.mtime_ns, r.inode), r.size,
                                             r.mtime_ns, r.inode, ctime)
                    self.reused += 1
                    self.misses -= 1
                else:
                    rows[p] = self._row(r, ctime)
            if h is not None:
                hashes[p] = h
            elif p in hashes:
                del hashes[p]
        if keep:
            for p, row in old_rows.items():
                if p not in rows and p.split("/", 1)[0] in keep:
                    rows[p] = row
                    h = old_hashes.get(p)
                    if h is not None:
                        hashes[p] = h
        write_cache_file(self.path, self.root, self.id_time_is_utc, rows, hashes)
        self.rows = rows
        self._hashes = hashes
        self.loaded = True
        self._changed = False
        # what was saved is now rows: a second save (the app rescans) starts from them
        self._fresh = dict(rows)
        self._fresh_data, self._fresh_ctime = {}, {}
        self._new, self._new_count = [], 0
        return True

    def _load(self) -> None:
        payload = read_framed(self.path, MAGIC, VERSION, f"header cache {self.path}")
        if payload is None:
            return
        parsed = _parse(payload, self.root, self.id_time_is_utc, with_hashes=False, what=self.path)
        if parsed is not None:
            self.rows, _ = parsed
            self._hashes, self._hash_blob = None, _hashes_section(payload)
            self.loaded = True


def _meta(root: str, id_time_is_utc: bool) -> dict:
    return {"root": root, "id_time_is_utc": id_time_is_utc, "layout": _LAYOUT}


def read_cache_file(path: str, root: str, id_time_is_utc: bool) -> tuple[dict, dict] | None:
    """(rows, hashes) of the cache file at ``path``, or None when it is not a usable cache
    for this root and setting (a notice says why, unless there is no file)."""
    payload = read_framed(path, MAGIC, VERSION, f"header cache {path}")
    return None if payload is None else _parse(payload, root, id_time_is_utc, with_hashes=True, what=path)


def write_cache_file(path: str, root: str, id_time_is_utc: bool, rows: dict, hashes: dict) -> None:
    """Write a whole cache file atomically (readers see the old file or the new one)."""
    meta = pickle.dumps(_meta(root, id_time_is_utc), protocol=5)
    body = pickle.dumps(rows, protocol=5)
    tail = pickle.dumps(hashes, protocol=5)
    write_framed(path, MAGIC, VERSION, [_HEAD.pack(len(meta), len(body)), meta, body, tail])


def _hashes_section(payload: memoryview) -> bytes:
    meta_len, rows_len = _HEAD.unpack_from(payload, 0)
    return bytes(payload[_HEAD.size + meta_len + rows_len :])


def _parse(payload: memoryview, root: str, id_time_is_utc: bool, *, with_hashes: bool, what: str):
    """(rows, hashes) from a checked cache payload, or None (with a notice) when it is not
    a usable cache for this root and setting."""
    problem = ""
    try:
        meta_len, rows_len = _HEAD.unpack_from(payload, 0)
        at = _HEAD.size
        meta = _NoGlobals(io.BytesIO(payload[at : at + meta_len])).load()
        if not isinstance(meta, dict) or meta.get("root") != root or meta.get("id_time_is_utc") is not id_time_is_utc:
            problem = "written for another letterbox or setting"
        elif meta.get("layout") != _LAYOUT:
            problem = "written for another shape of letter"
        else:
            at += meta_len
            # a frame at a time (``Pieces``): other threads (the app's UI) run in between
            rows = _NoGlobals(Pieces(payload[at : at + rows_len])).load()
            hashes = _NoGlobals(Pieces(payload[at + rows_len :])).load() if with_hashes else {}
            if not isinstance(rows, dict) or not isinstance(hashes, dict) or not _rows_look_right(rows):
                problem = "rows of the wrong shape"
    except Exception as exc:  # noqa: BLE001 - any damage means "no cache"; the scan re-reads
        problem = f"unreadable: {type(exc).__name__}"
    if problem:
        notice(f"header cache {what} ignored ({problem}); answered from the letters")
        return None
    return rows, hashes


#: the types of an Unreadable's fields, in order
_UNREADABLE_TYPES = (str, str, str, str, dict, str, int, int, int)


def _unreadable(kept: tuple) -> Unreadable:
    """The Unreadable a row kept; ``TypeError`` when it is not one."""
    if tuple(map(type, kept)) != _UNREADABLE_TYPES or not all(
        type(k) is str and type(v) is str for k, v in kept[4].items()
    ):
        raise TypeError("not an unreadable file's fields")
    return Unreadable(*[dict(v) if isinstance(v, dict) else v for v in kept])


def _kept_path(row: tuple) -> object:
    """The path a row's kept fields hold (None when they are too short to hold one)."""
    at = _PATH_AT.get(row[0])
    return row[1][at] if at is not None and len(row[1]) > at else None


def _rows_look_right(rows: dict) -> bool:
    """Cheap shape check (a damaged or foreign file must never yield wrong letters)."""
    width = _WIDTH
    for p, row in rows.items():
        if not (isinstance(p, str) and type(row) is tuple and len(row) == width and type(row[1]) is tuple):
            return False
        if row[0] != _KIND_LETTER and (row[0] != _KIND_UNREADABLE or len(row[1]) != len(_UNREADABLE)):
            return False
        if not (type(row[_I_SIZE]) is int and type(row[_I_MTIME]) is int and type(row[_I_INODE]) is int
                and type(row[_I_CTIME]) is int):
            return False
    return True

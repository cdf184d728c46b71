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
``verify_cache`` re-reads every file and compares content hashes and letters, for what no
``stat`` can show (a damaged or tampered cache row).

File layout: ``MAGIC`` (8 bytes), then a little-endian header (format version, length of
the meta pickle, length of the rows pickle), the meta pickle (root, setting, row layout),
the rows pickle and the hashes pickle (read only when saving or verifying). The rows are
plain tuples of ``str``/``int``/``bytes``; they are read with an unpickler that refuses
every global, so a crafted cache file can never run code. A file with another magic,
version, root, setting or layout, or one that fails to unpickle, is ignored and rebuilt.
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

import contextlib
import dataclasses
import gc
import io
import operator
import os
import pickle
import re
import stat
import struct
import tempfile
import time
from collections.abc import Iterable
from datetime import datetime

try:  # BLAKE2 without loading OpenSSL (hashlib's import costs ~10 ms of start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - every CPython build has _blake2
    from hashlib import blake2b

from .model import Letter, Snapshot, Unreadable

# The end of a header: a line that is exactly '---' (as the header grammar reads it).
_HEADER_END = re.compile(rb"\n---\r*(?:\n|$)")
MAGIC = b"LBXCACHE"
VERSION = 2  # 2: ids are read up to 243 characters (rows cached under 128 are rebuilt)
_HEAD = struct.Struct("<IQQ")  # version, meta length, rows length
#: files modified this recently when read are not cached (coarse file system clocks)
RACY_NS = 3_000_000_000

# Letter slots stored as they are; sent_at/deadline_at are stored as a code and rebuilt
# (0: None; 1: parsed from the field's text; 2: from the id's time prefix), and ``fields``
# as (keys, values) so the key tuple is shared between letters (a rebuilt letter keeps
# them apart and pairs them up only if its ``fields`` is asked for).
_TIMES = ("sent_at", "deadline_at")
_FIELD_SLOTS = ("_fields", "_field_keys", "_field_values")
_STORED = tuple(s for s in Letter.__slots__ if s not in _TIMES and s not in _FIELD_SLOTS)
#: what two letters must agree on to be the same letter (``fields`` as its pairs)
_COMPARED = tuple(s for s in Letter.__slots__ if s not in _FIELD_SLOTS) + ("fields",)
_get_stored = operator.attrgetter(*_STORED)
_path_of = operator.attrgetter("path")
#: Unreadable's fields, in order (it is rebuilt positionally)
_UNREADABLE = tuple(f.name for f in dataclasses.fields(Unreadable))
#: the row layout a file was written with (names, not just counts: a renamed slot counts);
#: the file's ctime is the last column of every row
_LAYOUT = (_STORED, _UNREADABLE, "ctime_ns")
_KIND_LETTER = 0
_KIND_UNREADABLE = 1
# index of each stored slot inside a row (after kind, keys, values, sent code, deadline code)
_ROW_OFFSET = 5
_I_SIZE = _ROW_OFFSET + _STORED.index("size")
_I_MTIME = _ROW_OFFSET + _STORED.index("mtime_ns")
_I_INODE = _ROW_OFFSET + _STORED.index("inode")
_I_CTIME = _ROW_OFFSET + len(_STORED)
_WIDTH = _I_CTIME + 1


def _make_builder():
    """A straight-line function that makes a Letter from a row (fast: no per-slot loop)."""
    targets = ", ".join(f"o.{name}" for name in _STORED)
    src = (
        "def _letter_from_row(row, _new=object.__new__, _L=Letter):\n"
        "    o = _new(_L)\n"
        f"    (_, o._field_keys, o._field_values, cs, cd, {targets}, _) = row\n"
        "    o._fields = None\n"
        "    o.sent_at = None if not cs else (_fromiso(o.sent) if cs == 1 else _id_time(o.id))\n"
        "    o.deadline_at = _fromiso(o.deadline) if cd else None\n"
        "    return o\n"
    )
    from .grammar import id_time

    ns = {"Letter": Letter, "_fromiso": datetime.fromisoformat, "_id_time": id_time}
    exec(src, ns)  # noqa: S102 - generated from Letter.__slots__, no outside input
    return ns["_letter_from_row"]


_letter_from_row = _make_builder()


def cache_dir() -> str:
    from platformdirs import user_cache_dir

    return user_cache_dir("letterbox-tui")


def cache_path(root: str | os.PathLike[str], id_time_is_utc: bool) -> str:
    """Where the cache for this root and setting lives (the root's real path, hashed)."""
    real = os.path.realpath(os.fspath(root))
    digest = blake2b(os.fsencode(real), digest_size=12).hexdigest()
    return os.path.join(cache_dir(), f"{digest}-{'utc' if id_time_is_utc else 'asis'}.headers")


def header_hash(data: bytes) -> bytes:
    """BLAKE2b-128 of the header bytes: through the closing delimiter, else all bytes read."""
    m = _HEADER_END.search(data, 3)
    return blake2b(data[: m.end()] if m else data, digest_size=16).digest()


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module: str, name: str):  # noqa: D102
        raise pickle.UnpicklingError(f"global {module}.{name} refused in a cache file")


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
        self._fresh: dict[str, tuple | Letter | Unreadable] = {}  # seen by this scan: hit rows, new items
        # header bytes read by this scan, hashed only when saving (off the answer's path)
        self._fresh_data: dict[str, bytes] = {}
        self._fresh_ctime: dict[str, int] = {}
        # the clock the racy check reads: once per scan (a file modified after it was taken
        # only looks more recent, never less: the check stays on the safe side)
        self._now = time.time_ns()
        self._changed = False
        self._keys: dict[tuple[str, ...], tuple[str, ...]] = {}
        # A cache directory inside the letterbox (XDG_CACHE_HOME pointing there) would write
        # into the letterbox and show up as a seat: then there is no cache at all.
        self.disabled = _inside(os.path.dirname(self.path), self.root)
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
        if row[0] == _KIND_LETTER:
            return _letter_from_row(row)
        return Unreadable(*[dict(v) if isinstance(v, dict) else v for v in row[1]])

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

    def put_many(self, items: list[Letter | Unreadable], data: list[bytes], ctimes: list[int]) -> None:
        """``put`` for a folder's worth at once (what the scanner calls): when none of
        the files is racily recent, three dict updates instead of a call a letter."""
        if not items:
            return
        if max(ctimes) > self._now - RACY_NS:  # some changed too recently: judged one by one
            for item, d, c in zip(items, data, ctimes):
                self.put(item, d, c)
            return
        paths = list(map(_path_of, items))
        self._fresh.update(zip(paths, items))
        self._fresh_ctime.update(zip(paths, ctimes))
        self._fresh_data.update(zip(paths, data))
        self._changed = True

    def _row(self, item: Letter | Unreadable, ctime_ns: int) -> tuple:
        if isinstance(item, Letter):
            if item._fields is None:  # rebuilt from a row: keys and values kept apart
                keys, values = item._field_keys, item._field_values
            else:
                keys, values = zip(*item.fields) if item.fields else ((), ())
            keys = self._keys.setdefault(keys, keys)
            sent = 0 if item.sent_at is None else (2 if "time-from-id" in item.flags else 1)
            return (_KIND_LETTER, keys, values, sent, 0 if item.deadline_at is None else 1) + _get_stored(item) + (
                ctime_ns,
            )
        cells: list = [""] * _WIDTH
        cells[0] = _KIND_UNREADABLE
        cells[1] = tuple([dict(v) if isinstance(v, dict) else v for v in map(item.__getattribute__, _UNREADABLE)])
        cells[2], cells[3], cells[4] = (), 0, 0
        cells[_I_SIZE], cells[_I_MTIME], cells[_I_INODE] = item.size, item.mtime_ns, item.inode
        cells[_I_CTIME] = ctime_ns
        return tuple(cells)

    @property
    def hashes(self) -> dict[str, bytes]:
        """Content hash by path, as the file recorded them (read on first use: a scan does
        not need them, only saving and ``verify_cache`` do)."""
        if self._hashes is None:
            try:
                loaded = _NoGlobals(io.BytesIO(self._hash_blob)).load()
            except Exception:  # noqa: BLE001 - damaged: the rows stand, their hashes are gone
                loaded = {}
            self._hashes = loaded if isinstance(loaded, dict) else {}
            self._hash_blob = b""
        return self._hashes

    # --- persistence ----------------------------------------------------------------
    def needs_save(self, keep_seats: Iterable[str] = ()) -> bool:
        """False when the file already holds exactly the rows this scan would write."""
        if self._changed or not self.loaded:
            return True
        if len(self._fresh) == len(self.rows):
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
        rows = {p: r if type(r) is tuple else self._row(r, ctimes[p]) for p, r in self._fresh.items()}
        if keep:
            for p, row in self.rows.items():
                if p not in rows and p.split("/", 1)[0] in keep:
                    rows[p] = row
        hashes = {}
        for p in rows:
            data = self._fresh_data.get(p)
            h = header_hash(data) if data is not None else self.hashes.get(p)
            if h is not None:
                hashes[p] = h
        meta = pickle.dumps(_meta(self.root, self.id_time_is_utc), protocol=5)
        body = pickle.dumps(rows, protocol=5)
        tail = pickle.dumps(hashes, protocol=5)
        _write_atomic(self.path, [MAGIC, _HEAD.pack(VERSION, len(meta), len(body)), meta, body, tail])
        self.rows = rows
        self._hashes = hashes
        self.loaded = True
        self._changed = False
        return True

    def _load(self) -> None:
        data = _read_file(self.path)
        if data is None:
            return
        parsed = _parse(data, self.root, self.id_time_is_utc, with_hashes=False)
        if parsed is not None:
            self.rows, _ = parsed
            self._hashes, self._hash_blob = None, _hashes_section(data)
            self.loaded = True


def _meta(root: str, id_time_is_utc: bool) -> dict:
    return {"root": root, "id_time_is_utc": id_time_is_utc, "layout": _LAYOUT}


def _inside(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _read_file(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        data = os.read(fd, st.st_size + 1)  # one read, no joining copies (loops only if short)
        if len(data) < st.st_size:
            chunks = [data]
            while chunk := os.read(fd, 1 << 24):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def _hashes_section(data: bytes) -> bytes:
    n = len(MAGIC)
    _, meta_len, rows_len = _HEAD.unpack_from(data, n)
    return data[n + _HEAD.size + meta_len + rows_len :]


def _parse(data: bytes, root: str, id_time_is_utc: bool, *, with_hashes: bool):
    """(rows, hashes) from a cache file's bytes, or None when it is not a usable cache."""
    n = len(MAGIC)
    if len(data) < n + _HEAD.size or data[:n] != MAGIC:
        return None
    try:
        version, meta_len, rows_len = _HEAD.unpack_from(data, n)
        if version != VERSION:
            return None
        view = memoryview(data)
        at = n + _HEAD.size
        meta = _NoGlobals(io.BytesIO(view[at : at + meta_len])).load()
        if not isinstance(meta, dict) or meta.get("root") != root or meta.get("id_time_is_utc") is not id_time_is_utc:
            return None
        if meta.get("layout") != _LAYOUT:  # written for another shape of Letter or Unreadable
            return None
        at += meta_len
        rows = _NoGlobals(io.BytesIO(view[at : at + rows_len])).load()
        hashes = _NoGlobals(io.BytesIO(view[at + rows_len :])).load() if with_hashes else {}
    except Exception:  # noqa: BLE001 - any damage means "no cache"; the scan re-reads
        return None
    if not isinstance(rows, dict) or not isinstance(hashes, dict) or not _rows_look_right(rows):
        return None
    return rows, hashes


def _rows_look_right(rows: dict) -> bool:
    """Cheap shape check (a damaged or foreign file must never yield wrong letters)."""
    width = _WIDTH
    for p, row in rows.items():
        if not (isinstance(p, str) and type(row) is tuple and len(row) == width):
            return False
        if row[0] == _KIND_LETTER:
            if not (type(row[1]) is tuple and type(row[2]) is tuple and len(row[1]) == len(row[2])):
                return False
        elif row[0] != _KIND_UNREADABLE or type(row[1]) is not tuple or len(row[1]) != len(_UNREADABLE):
            return False
        if not (type(row[_I_SIZE]) is int and type(row[_I_MTIME]) is int and type(row[_I_INODE]) is int
                and type(row[_I_CTIME]) is int):
            return False
    return True


def _write_atomic(path: str, parts: list[bytes]) -> None:
    """Write to a temporary file beside ``path``, then ``os.replace``: readers see old or new."""
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".headers", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _sweep_temporaries(directory)


#: a temporary this old was left by a writer that died mid-write (killed, power lost)
STALE_TEMP_NS = 15 * 60 * 1_000_000_000


def _sweep_temporaries(directory: str) -> None:
    """Remove temporaries abandoned by writers that died (a live writer's is recent)."""
    now = time.time_ns()
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name.startswith(".tmp-") and e.name.endswith(".headers"):
                    try:
                        if now - e.stat(follow_symlinks=False).st_mtime_ns > STALE_TEMP_NS:
                            os.unlink(e.path)
                    except OSError:
                        pass
    except OSError:
        pass


def open_cache(root: str | os.PathLike[str], id_time_is_utc: bool | None = None) -> HeaderCache:
    """The cache for ``root`` (the setting defaults to the letterbox's own). Call ``save()``
    after the scan that used it."""
    if id_time_is_utc is None:
        from .settings import load_settings

        id_time_is_utc = load_settings(root).id_time_is_utc
    return HeaderCache(root, id_time_is_utc)


def scan_cached(
    root, participants=None, *, id_time_is_utc: bool, now=None, background: bool = False, freeze: bool = False
) -> Snapshot:
    """``scan`` with the derived cache: load it, scan, save what changed (best effort).

    A cache that cannot be written (read-only home, full disk) costs speed, never answers.
    With ``background`` (the command line), the save is left for ``run_after_answer``:
    the answer never waits for the cache, and a large save is written by a detached
    process once the answer is out.

    The cyclic garbage collector is paused while the cache loads and the scan runs: they
    make hundreds of thousands of tuples and letters and no cycles, and the collector's
    passes over them cost a quarter of the scan or more. With ``freeze`` (a short-lived
    command), what exists afterwards is moved out of the collector's sight for good
    (``gc.freeze``), so resolving and querying do not keep re-walking the letters.
    """
    from .scan import scan

    with paused_gc():
        cache = HeaderCache(root, id_time_is_utc)
        snapshot = scan(root, participants, id_time_is_utc=id_time_is_utc, cache=cache, now=now)
        if freeze and len(snapshot.letters) >= BACKGROUND_ROWS:
            gc.freeze()  # only for big letterboxes: a test run calling this stays collectable
    keep = [s for s in snapshot.seats if participants is not None and s not in set(participants)]
    if background:
        if cache.needs_save(keep):
            after_answer(lambda: cache.save(keep_seats=keep), big=len(cache._fresh) >= BACKGROUND_ROWS)
        return snapshot
    try:
        cache.save(keep_seats=keep)
    except OSError:
        pass
    return snapshot


@contextlib.contextmanager
def paused_gc():
    """Pause the cyclic garbage collector (reference counting still frees everything)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


#: below this many rows a save is quick enough to do in line
BACKGROUND_ROWS = 20_000


# Work a command leaves until its answer is out (the cache's save, the answer memo).
_after: list = []
_after_big = False


def after_answer(work, *, big: bool) -> None:
    """Leave ``work()`` for ``run_after_answer``; ``big``: worth a detached process."""
    global _after_big
    _after.append(work)
    _after_big = _after_big or big


def run_after_answer(*, ending: bool = False) -> list:
    """Run the work left by ``after_answer``: in one detached process when any of it is
    big (the caller exits at once, and whoever reads its output gets it all without
    waiting), else here. Failures cost speed, never answers. ``ending``: this process
    ends right after (see ``detached``). Returns the work (and so the cache and answer it
    holds), for a caller that ends at once to keep rather than free object by object."""
    global _after_big
    work, big = list(_after), _after_big
    _after.clear()
    _after_big = False
    if not work:
        return work

    def every() -> None:
        for w in work:
            try:
                w()
            except OSError:
                pass

    if not (big and detached(every, ending=ending)):
        every()
    return work


def detached(work, *, ending: bool = False) -> bool:
    """Run ``work()`` in a detached grandchild process; False when that is not safe here.

    Only a single-threaded process forks (a fork with other threads alive may deadlock).
    The child forks again and exits at once, so nothing is left to reap; the grandchild
    closes the standard streams first, so whoever waits on our output is not kept waiting.
    With ``ending`` (this process ends right after: the console script) the child does
    the work itself and is not waited for: once we end, init adopts and reaps it.
    A failure in ``work`` is no error (a cache that cannot be written costs speed only).
    """
    import threading

    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid:
        if not ending:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
        return True
    try:  # the child
        if ending or os.fork() == 0:  # the grandchild (or, when ending, the child) works
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            try:
                work()
            except BaseException:  # noqa: BLE001 - a cache that cannot be written is no error
                pass
    except BaseException:  # noqa: BLE001
        pass
    finally:
        os._exit(0)


def letters_equal(a: Letter | Unreadable, b: Letter | Unreadable) -> bool:
    """Every field, flag and time the same (how cached and uncached items are compared)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Unreadable):
        return a == b
    for name in _COMPARED:
        x, y = getattr(a, name), getattr(b, name)
        if x != y:
            return False
        if isinstance(x, datetime) and x.tzinfo != y.tzinfo:
            return False
    return True


def verify_cache(root: str | os.PathLike[str], snapshot: Snapshot, *, id_time_is_utc: bool | None = None) -> list[str]:
    """Re-read every letter file of ``snapshot`` and list the paths the cache got wrong.

    A path is listed when its header bytes no longer hash to what the cache recorded, or
    when parsing the file now gives another letter than the snapshot holds (the snapshot
    may have come from a stale row). Those rows are dropped from the cache file, so the
    next scan re-reads them. For ``check --verify``.
    """
    from .header import parse_header
    from .letters import build
    from .scan import read_header_bytes

    real = os.path.realpath(os.fspath(root))
    if id_time_is_utc is None:
        from .settings import load_settings

        id_time_is_utc = load_settings(real).id_time_is_utc
    cache_file = cache_path(real, id_time_is_utc)
    data = _read_file(cache_file)
    parsed = _parse(data, real, id_time_is_utc, with_hashes=True) if data is not None else None
    rows, hashes = parsed if parsed is not None else ({}, {})
    stale: list[str] = []
    dir_fds: dict[str, int] = {}
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        for item in [*snapshot.letters, *snapshot.unreadable]:
            rel = item.path
            seat_folder, _, name = rel.rpartition("/")
            fresh: bytes | None = None
            try:
                dfd = dir_fds.get(seat_folder)
                if dfd is None:
                    seat, folder = seat_folder.split("/")
                    sfd = os.open(seat, flags, dir_fd=_root_fd(dir_fds, real, flags))
                    try:
                        dfd = dir_fds[seat_folder] = os.open(folder, flags, dir_fd=sfd)
                    finally:
                        os.close(sfd)
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
                try:
                    st = os.fstat(fd)
                    if stat.S_ISREG(st.st_mode):
                        fresh = read_header_bytes(fd)
                finally:
                    os.close(fd)
            except OSError:
                fresh = None
            if fresh is None:
                stale.append(rel)
                continue
            recorded = hashes.get(rel)
            if recorded is not None and recorded != header_hash(fresh):
                stale.append(rel)
                continue
            now_item = build(
                parse_header(fresh), path=rel, seat=item.seat, folder=item.folder, name=name,
                size=item.size, mtime_ns=item.mtime_ns, inode=item.inode, id_time_is_utc=id_time_is_utc,
            )
            if not letters_equal(now_item, item):
                stale.append(rel)
    finally:
        for fd in dir_fds.values():
            os.close(fd)
    if stale and parsed is not None:
        for rel in stale:
            rows.pop(rel, None)
            hashes.pop(rel, None)
        meta = pickle.dumps(_meta(real, id_time_is_utc), protocol=5)
        body = pickle.dumps(rows, protocol=5)
        try:
            _write_atomic(cache_file, [MAGIC, _HEAD.pack(VERSION, len(meta), len(body)), meta, body,
                                       pickle.dumps(hashes, protocol=5)])
        except OSError:
            pass
    return sorted(stale)


def _root_fd(dir_fds: dict[str, int], root: str, flags: int) -> int:
    fd = dir_fds.get("")
    if fd is None:
        fd = dir_fds[""] = os.open(root, flags)
    return fd

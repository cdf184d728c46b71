"""The store's file: where it lives, opening it, reading and writing one generation.

One SQLite database per letterbox, in the user's cache directory (never inside a
letterbox, whatever the environment says), created 0600 in a 0700 folder. WAL, so a reader
reads the last committed generation while a writer writes the next; one writer at a time
(``BEGIN IMMEDIATE``, never waited for: a command that cannot write leaves the store as it
is). Every row carries a checksum of its record, checked when read.

Tables: ``meta`` (format, root, what the answers depend on besides the files, the
generation, each folder's summary), ``files`` (per letter file: its stat identity and its
record), ``answers`` (per readable letter: its answers as the resolver computed them),
``indexes`` (the letters a file name does not find: ids other than their file's name,
thread labels, links, some header fields, by folder (``store.indexes``); the letters owed and
those the digest may call uncertain; each one checksummed record).

A store is read in one read transaction, held while anything read from it may still be
decoded (``Reader``): what is decoded later is of the same generation, whatever another
process commits meanwhile.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
import weakref
import zlib
from collections.abc import Callable
from pathlib import Path

from letterbox_tui.core import flags as fsflags

from .records import Damaged

#: the store's layout: a store of another format is rebuilt
FORMAT = "letterbox-tui-store-4"
#: a reading command waits at most this long for the store (seconds)
BUSY_TIMEOUT = 2.0
#: once a write failed for want of space or permission, the store is not written again for
#: this long (seconds) ...
RETRY_AFTER_S = 600.0
#: ... unless this much more space is free in its folder than when it failed (bytes)
RETRY_FREE_BYTES = 64 << 20
#: the SQLite result codes of a write that would fail again: full, read-only, I/O error,
#: cannot open, permission
_UNWRITABLE = frozenset((13, 8, 10, 14, 3))

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, crc INTEGER NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, seen_ns INTEGER NOT NULL, header BLOB,
    record BLOB NOT NULL, crc INTEGER NOT NULL);
CREATE TABLE answers (path TEXT PRIMARY KEY, record BLOB NOT NULL, crc INTEGER NOT NULL);
CREATE TABLE indexes (name TEXT PRIMARY KEY, value BLOB NOT NULL, crc INTEGER NOT NULL);
"""
_TABLES = frozenset(("meta", "files", "answers", "indexes"))
#: the indexes a generation holds (``Store.write``'s ``index``): ids other than their file's
#: name, thread labels, some header fields of every letter, the letters owed (by seat), the
#: letters the digest may call uncertain, letters pointing at each id and those holding a
#: malformed supersedes; all but owed and uncertain kept as one row per folder
#: (``store.indexes``)
INDEXES = ("aliases", "threads", "headers", "owed", "uncertain", "links", "doubted")
#: the indexes kept as one row per folder, each named by ``row_name`` (``store.indexes``)
BY_FOLDER = frozenset(("aliases", "threads", "headers", "links", "doubted"))


def row_name(index: str, prefix: str) -> str:
    """The name of the row of the index ``index`` (one of ``BY_FOLDER``) for the folder
    ``prefix`` ("seat/inbox/"); ``prefix`` "" gives the start of that index's names."""
    return f"{index}:{prefix}"

Notice = Callable[[str], None]


class Unusable(Exception):
    """The store cannot be used now (one notice line says why); answers come from the letters."""


def _code_fingerprint() -> str:
    """What the stored answers were computed by: the core's and the store's sources."""
    here = Path(__file__).resolve().parent
    core = here.parent / "core"
    digest = hashlib.blake2b(digest_size=16)
    for folder in (here, core, core / "resolve"):
        for path in sorted(folder.glob("*.py")):
            try:
                digest.update(path.name.encode() + b"\0" + path.read_bytes())
            except OSError:
                digest.update(path.name.encode() + b"\0?")
    return digest.hexdigest()


_CODE: str | None = None


def code_fingerprint() -> str:
    global _CODE
    if _CODE is None:
        _CODE = _code_fingerprint()
    return _CODE


def cache_folder() -> str:
    """``$XDG_CACHE_HOME/letterbox-tui`` (platformdirs' user cache directory)."""
    from platformdirs import user_cache_dir

    return user_cache_dir("letterbox-tui")


def _inside(folder: str, root: str) -> bool:
    """``folder`` (or the nearest of its ancestors that exists) lies in the directory
    ``root``: decided by device and inode up the chain, so a bind mount or a symlinked
    path to the letterbox is inside too."""
    try:
        st = os.stat(root)
    except OSError:
        return False
    target = (st.st_dev, st.st_ino)
    path = os.path.abspath(folder)
    while True:
        try:
            here = os.stat(path)
            if (here.st_dev, here.st_ino) == target:
                return True
        except OSError:
            pass
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


#: how many versions' stores of one letterbox are kept: two versions used side by side (an
#: app and an MCP server installed apart) each keep theirs, instead of each rebuilding the
#: store the other made; a third version's first store removes the least recently used
VERSIONS_KEPT = 2


def store_path(root: str) -> str:
    """Where this version's store of the letterbox at ``root`` (a real path) lives."""
    digest = hashlib.blake2b(os.fsencode(root), digest_size=12).hexdigest()
    return os.path.join(cache_folder(), f"{digest}-{code_fingerprint()[:16]}.store")


def _forget_other_versions(path: str) -> None:
    """Remove the stores of the letterbox of ``path`` that other versions made, all but
    the most recently used ``VERSIONS_KEPT - 1`` (by their files' last change). Deleting a
    store loses nothing; a process still reading one keeps its open file."""
    folder, name = os.path.split(path)
    letterbox = name.split("-")[0]  # (a store named before versions were: "<letterbox>.store")
    others = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if (entry.name != name and entry.name.endswith(".store")
                        and entry.name[:len(letterbox)] == letterbox and entry.name[len(letterbox)] in "-."):
                    others.append((max(_mtime(entry.path + tail) for tail in ("", "-wal")), entry.path))
    except OSError:
        return
    for _, other in sorted(others, reverse=True)[VERSIONS_KEPT - 1:]:
        if _remove(other):
            with contextlib.suppress(OSError):
                os.unlink(other + ".unwritable")


def _mtime(path: str) -> int:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime_ns
    except OSError:
        return 0


class Reader:
    """The store's connection in its read transaction, for what is decoded from it later
    (letters, answers, indexes), from any thread. Closed when the last thing holding it
    goes (or by ``Store.close`` when nothing was lent)."""

    def __init__(self, conn: sqlite3.Connection, decoded: Decoded | None = None) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.lent = False
        self.decoded = decoded
        self._closer = weakref.finalize(self, _close, conn)

    def rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self.lock:
            try:
                return self.conn.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise Unusable(f"damaged: {_why(exc)}") from None

    def close(self) -> None:
        self._closer()


class Decoded:
    """The index rows a resident process decoded, by row name, with a digest of the bytes
    each was decoded from: it reads mostly the same rows generation after generation and
    decodes again only those that changed. What a row decodes to is only read, never
    changed, by whatever it is given to."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[bytes, dict]] = {}
        self._lock = threading.Lock()

    def get(self, name: str, value: bytes, crc: int) -> dict:
        digest = hashlib.blake2b(value, digest_size=16).digest()
        with self._lock:
            kept = self._rows.get(name)
        if kept is not None and kept[0] == digest:
            if index_checksum(name, value) != crc:
                raise Unusable(f"damaged: its {name} index does not match its checksum")
            return kept[1]
        found = _decoded(name, value, crc)  # (its checksum checked there)
        with self._lock:
            self._rows[name] = (digest, found)
        return found


def _close(conn: sqlite3.Connection) -> None:
    try:
        conn.close()
    except sqlite3.Error:
        pass


class Store:
    """An open store of one letterbox: what its committed generation holds."""

    def __init__(self, root: str, path: str, conn: sqlite3.Connection, notice: Notice,
                 decoded: Decoded | None = None) -> None:
        self.root = root
        self.path = path
        self.conn = conn
        self.reader = Reader(conn, decoded)
        self.notice = notice
        self._files: dict[str, tuple] | None = None
        self.meta: dict[str, str] = {}
        #: "seat/inbox/" -> (digest of its files' stats, letters, legacy letters, names of
        #: its unreadable files) of each folder the generation vouches for (settled)
        self.folders: dict[str, tuple[str, int, int, list[str]]] = {}
        #: a write found the file damaged: it is to be removed and built anew
        self.broken = False

    @property
    def files(self) -> dict[str, tuple]:
        """path -> (size, mtime_ns, inode, ctime_ns, seen_ns, header, record, crc) of the
        generation read: the file's stat when its header was read at ``seen_ns``, the
        digest of that header's bytes, and the record made of it. Read when first asked."""
        if self._files is None:
            files = {row[0]: row[1:] for row in self.reader.rows(
                "SELECT path, size, mtime_ns, inode, ctime_ns, seen_ns, header, record, crc FROM files")}
            if len(files) != int(self.meta.get("files", -1)):
                raise Unusable("damaged: it holds another number of files than it says")
            self._files = files
        return self._files

    def folder_files(self, prefix: str) -> dict[str, tuple]:
        """The rows of ``files`` (as ``files``) of the folder ``prefix`` ("seat/inbox/")."""
        return {row[0]: row[1:] for row in self.reader.rows(
            "SELECT path, size, mtime_ns, inode, ctime_ns, seen_ns, header, record, crc FROM files "
            "WHERE path >= ? AND path < ?", (prefix, prefix[:-1] + "0"))}

    # --- opening ----------------------------------------------------------------------
    @classmethod
    def open(cls, root: str, notice: Notice, decoded: Decoded | None = None) -> Store | None:
        """The store of ``root``, opened and its generation read; None (with one notice
        line when something is wrong) when it cannot be used."""
        folder = cache_folder()
        if _inside(folder, root):
            notice(f"the cache directory {clean(folder)} lies inside the letterbox: no store is kept")
            return None
        path = store_path(root)
        for attempt in (1, 2):
            try:
                store = cls._connect(root, path, notice, decoded)
                store._read()
                return store
            except Unusable as why:
                if attempt == 2 or not _remove(path):
                    notice(f"the store {clean(path)} is unusable ({why}): answered from the letters")
                    return None
                if str(why) != "made by another version":
                    notice(f"the store {clean(path)} was {why}: rebuilt, answered from the letters")
        return None

    @classmethod
    def _connect(cls, root: str, path: str, notice: Notice, decoded: Decoded | None = None) -> Store:
        folder = os.path.dirname(path)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd = os.open(path, fsflags.LOCK | os.O_CREAT, 0o600)
            try:
                st = os.fstat(fd)
                if not (st.st_mode & 0o170000 == 0o100000):
                    raise Unusable("not a regular file")
                if st.st_mode & 0o777 != 0o600:
                    os.fchmod(fd, 0o600)
            finally:
                os.close(fd)
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
        except Unusable:
            raise
        except (OSError, sqlite3.Error) as exc:
            raise Unusable(_why(exc)) from None
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            conn.close()
            raise Unusable(_why(exc)) from None
        return cls(root, path, conn, notice, decoded)

    def _read(self) -> None:
        """Begin the read transaction every later read of this generation is made in (a
        writer committing meanwhile is not seen, half or whole), and read its meta."""
        conn = self.conn
        try:
            conn.execute("BEGIN")
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if not tables:
                    conn.execute("COMMIT")
                    self._create()
                    conn.execute("BEGIN")
                    conn.execute("SELECT count(*) FROM meta").fetchone()
                    return
                if tables != _TABLES:
                    if {"meta", "files", "answers"} <= tables and len(tables) == 3:
                        raise Unusable("of an old format")
                    raise Unusable("foreign: not a letterbox-tui store")
                meta = {}
                for key, value, crc in conn.execute("SELECT key, value, crc FROM meta"):
                    if zlib.crc32(f"{key}={value}".encode()) != crc:
                        raise Unusable("damaged: a meta row does not match its checksum")
                    meta[key] = value
                if meta.get("format") != FORMAT:
                    raise Unusable("of an old format" if meta.get("format", "").startswith("letterbox-tui-store")
                                   else "foreign: not a letterbox-tui store")
                if meta.get("root") != self.root:
                    raise Unusable("foreign: made for another letterbox")
                if meta.get("code") != code_fingerprint():
                    raise Unusable("made by another version")
                self.meta = meta
                self.folders = {prefix: (str(d), int(n), int(legacy), [str(u) for u in unreadable])
                                for prefix, (d, n, legacy, unreadable) in json.loads(meta.get("folders", "{}")).items()}
            except BaseException:
                if conn.in_transaction:
                    conn.execute("COMMIT")
                raise
        except sqlite3.Error as exc:
            raise Unusable(f"damaged: {_why(exc)}") from None
        except (ValueError, TypeError, AttributeError) as exc:
            raise Unusable(f"damaged: {exc}") from None

    def _create(self) -> None:
        conn = self.conn
        made = False
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if not conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    for statement in _SCHEMA.strip().split(";\n"):
                        conn.execute(statement)
                    self._put_meta({"format": FORMAT, "root": self.root, "code": code_fingerprint(),
                                    "generation": "0", "files": "0", "context": "", "folders": "{}"})
                    made = True
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return  # another process is making it: this one goes without it for now
            raise
        if made:
            _forget_other_versions(self.path)
        self.meta = {"format": FORMAT, "generation": "0", "files": "0", "context": ""}

    def _put_meta(self, values: dict[str, str], conn: sqlite3.Connection | None = None) -> None:
        (conn or self.conn).executemany(
            "INSERT OR REPLACE INTO meta (key, value, crc) VALUES (?, ?, ?)",
            [(k, v, zlib.crc32(f"{k}={v}".encode())) for k, v in values.items()],
        )

    def close(self) -> None:
        """Close the store, unless what was read from it may still be decoded (``lend``)."""
        if not self.reader.lent:
            self.reader.close()

    def lend(self) -> Reader:
        """The read transaction, kept open for what is decoded later; it closes when the
        last holder goes."""
        self.reader.lent = True
        return self.reader

    # --- reading a generation's answers -----------------------------------------------
    def answers(self) -> dict[str, tuple[bytes, int]]:
        """path -> (record, crc) of every letter's answers (of the generation read)."""
        return {path: (record, crc) for path, record, crc in self.reader.rows("SELECT path, record, crc FROM answers")}

    def count_answers(self) -> int:
        return self.reader.rows("SELECT count(*) FROM answers")[0][0]

    # --- writing a generation ------------------------------------------------------------
    def write(self, files: dict[str, tuple], answers: list[tuple[str, bytes, int]] | None, context: str,
              folders: dict[str, tuple[str, int, int, list[str]]], index: dict[str, str], *,
              gone: list[str] | None = None, first: str | None = None, delta: bool = False) -> bool:
        """Replace the generation with ``files`` (path -> the row of ``self.files``; with
        ``delta``: only the rows that changed, None for a file that went) and
        ``answers`` (path, record, crc; None: the answers kept stay, only the files' stats
        moved; with ``gone``: only these rows changed, and the rows of ``gone`` go), the
        folders it vouches for (as ``self.folders``), its indexes (name -> JSON) and the
        path of the letter keeping the whole scan's structure (``first``; None: as kept);
        False when another process holds the write lock or wrote a newer generation since
        this one was read.

        While what was read is lent (``lend``), its read transaction stays open on its own
        connection (what is decoded later is of the generation read) and the writing has a
        connection of its own."""
        try:
            old = None if delta else self.files  # read in the read transaction
        except Unusable as why:
            self.notice(f"the store {clean(self.path)} is {why}: it is removed, to be built anew")
            self.broken = True
            return False
        own = self.reader.lent
        try:
            conn = self._connection() if own else self.conn
        except Unusable as why:
            self.notice(f"the store {clean(self.path)} could not be written ({why}): it is left as it was")
            return False
        if not own and conn.in_transaction:
            conn.execute("COMMIT")  # the read transaction ends here
        try:
            return self._write(conn, old, files, answers, context, folders, index, gone, first)
        finally:
            if own:
                _close(conn)

    def _connection(self) -> sqlite3.Connection:
        """Another connection to the store's file (for writing while a read is lent)."""
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise Unusable(_why(exc)) from None
        return conn

    def _write(self, conn: sqlite3.Connection, old: dict[str, tuple] | None, files: dict[str, tuple | None],
               answers: list[tuple[str, bytes, int]] | None, context: str,
               folders: dict[str, tuple[str, int, int, list[str]]], index: dict[str, str],
               gone_answers: list[str] | None, first: str | None) -> bool:
        try:
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return False
            try:
                gen = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
                if gen is None or gen[0] != self.meta.get("generation"):
                    conn.execute("ROLLBACK")
                    return False
                if old is None:  # the rows that changed
                    gone = [(p,) for p, v in files.items() if v is None]
                    changed = [(p, *v) for p, v in files.items() if v is not None]
                    known = "SELECT 1 FROM files WHERE path = ?"
                    count = int(self.meta["files"]) - sum(1 for p in gone if conn.execute(known, p).fetchone())
                    count += sum(1 for p, *_ in changed if conn.execute(known, (p,)).fetchone() is None)
                else:
                    gone = [(p,) for p in old if p not in files]
                    changed = [(p, *v) for p, v in files.items() if old.get(p) != v]
                    count = len(files)
                if gone:
                    conn.executemany("DELETE FROM files WHERE path = ?", gone)
                conn.executemany(
                    "INSERT OR REPLACE INTO files (path, size, mtime_ns, inode, ctime_ns, seen_ns, header, "
                    "record, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", changed)
                if answers is not None and gone_answers is not None:  # only these rows changed
                    conn.executemany("DELETE FROM answers WHERE path = ?", [(p,) for p in gone_answers])
                    conn.executemany("INSERT OR REPLACE INTO answers (path, record, crc) VALUES (?, ?, ?)", answers)
                elif answers is not None:  # None: the same answers, only files whose stat moved
                    # only the rows whose answers changed are written: after a few arrivals
                    # the resolver's answers for most letters are the ones kept
                    kept = {path: (record, crc) for path, record, crc in conn.execute(
                        "SELECT path, record, crc FROM answers")}
                    new = {path for path, _, _ in answers}
                    gone = [(p,) for p in kept if p not in new]
                    if gone:
                        conn.executemany("DELETE FROM answers WHERE path = ?", gone)
                    conn.executemany("INSERT OR REPLACE INTO answers (path, record, crc) VALUES (?, ?, ?)",
                                     [row for row in answers if kept.get(row[0]) != row[1:]])
                rows = [(name, value.encode()) for name, value in index.items()]
                rows = [(name, value, index_checksum(name, value)) for name, value in rows]
                kept_crcs = dict(conn.execute("SELECT name, crc FROM indexes"))

                def same(name: str, value: bytes, crc: int) -> bool:
                    if kept_crcs.get(name) != crc:
                        return False
                    kept = conn.execute("SELECT value FROM indexes WHERE name = ?", (name,)).fetchone()
                    return kept is not None and kept[0] == value

                # an index as it was is not written again (the thread labels' is megabytes)
                conn.executemany("INSERT OR REPLACE INTO indexes (name, value, crc) VALUES (?, ?, ?)",
                                 [row for row in rows if not same(*row)])
                if old is not None:  # the rows of a folder that went, too
                    conn.executemany("DELETE FROM indexes WHERE name = ?",
                                     [(name,) for name in kept_crcs if name not in index])
                generation = str(int(gen[0]) + 1)
                folders_json = json.dumps(folders, ensure_ascii=False, separators=(",", ":"))
                indexed = {name.partition(":")[2] for name in index if name.partition(":")[0] in BY_FOLDER}
                if old is None:  # the folders whose rows stay
                    indexed.update(json.loads(self.meta.get("indexed", "[]")))
                meta = {"generation": generation, "files": str(count), "context": context,
                        "folders": folders_json, "indexed": json.dumps(sorted(indexed), ensure_ascii=False)}
                if first is not None:
                    meta["first"] = first
                self._put_meta(meta, conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        except sqlite3.Error as exc:
            self.broken = isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)
            unwritable = getattr(exc, "sqlite_errorcode", 0) & 0xFF in _UNWRITABLE
            if unwritable:
                self._remember_refusal(_why(exc))
            self.notice(f"the store {clean(self.path)} could not be written ({_why(exc)}): "
                        + ("it is removed, to be built anew" if self.broken else
                           f"not tried again for {int(RETRY_AFTER_S // 60)} minutes or until more space is free"
                           if unwritable else "it is left as it was"))
            return False
        self._forget_refusal()
        self._files = files if old is not None else None  # (read again when asked)
        self.folders = folders
        self.meta.update(meta)
        return True

    # --- the indexes ---------------------------------------------------------------------
    def index(self, name: str) -> dict[str, list[str]]:
        """The index ``name`` of the generation read, its checksum checked."""
        return read_index(self.reader, name)


    # --- a write that failed, remembered -------------------------------------------------
    @property
    def _refusal_path(self) -> str:
        return self.path + ".unwritable"

    def refused(self) -> str | None:
        """Why the store is not to be written now: a write failed for want of space or
        permission less than ``RETRY_AFTER_S`` ago and no more space is free since (the
        reason, as one line); None when it is to be tried."""
        try:
            fd = os.open(self._refusal_path, fsflags.READ)
        except OSError:
            return None
        try:
            data = os.read(fd, 4096)
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            kept = json.loads(data)
            at, why, free = float(kept["at"]), str(kept["why"]), int(kept["free"])
        except (ValueError, TypeError, KeyError):
            self._forget_refusal()
            return None
        now = time.time()
        if not 0 <= now - at < RETRY_AFTER_S or _free_bytes(os.path.dirname(self.path)) - free >= RETRY_FREE_BYTES:
            return None
        when = time.strftime("%H:%M", time.localtime(at))
        again = time.strftime("%H:%M", time.localtime(at + RETRY_AFTER_S))
        return f"it could not be written at {when} ({clean(why)}); tried again after {again} or when more space is free"

    def _remember_refusal(self, why: str) -> None:
        data = json.dumps({"at": time.time(), "why": why, "free": _free_bytes(os.path.dirname(self.path))})
        try:
            fd = os.open(self._refusal_path, fsflags.REWRITE, 0o600)
        except OSError:
            return  # nowhere to remember it: the next command tries again
        try:
            os.write(fd, data.encode())
        except OSError:
            pass
        finally:
            os.close(fd)

    def _forget_refusal(self) -> None:
        try:
            os.unlink(self._refusal_path)
        except OSError:
            pass


def read_index(reader: Reader, name: str) -> dict[str, list[str]]:
    """The index ``name`` of the generation ``reader`` reads, its checksum checked (one
    kept by folder: its folders' merged)."""
    if name not in BY_FOLDER:
        rows = reader.rows("SELECT name, value, crc FROM indexes WHERE name = ?", (name,))
        if not rows:
            raise Unusable(f"damaged: it has no {name} index")
        return _decoded_by(reader, *rows[0])
    merged: dict[str, list[str]] = {}
    for found in read_folder_indexes(reader, name).values():
        for key, paths in found.items():
            if not isinstance(paths, list):
                raise Unusable(f"damaged: its {name} index has another shape")
            merged.setdefault(key, []).extend(paths)
    return merged


def read_folder_indexes(reader: Reader, name: str) -> dict[str, dict]:
    """Each folder's row of the index ``name`` (one kept by folder), by the folder's prefix,
    each checksum checked; ``Unusable`` unless there is one for each folder the generation
    says it indexed."""
    start = row_name(name, "")
    found = {row[0][len(start):]: _decoded_by(reader, *row) for row in reader.rows(  # (";" is the code point after ":")
        "SELECT name, value, crc FROM indexes WHERE name >= ? AND name < ?", (start, start[:-1] + ";"))}
    said = reader.rows("SELECT value FROM meta WHERE key = 'indexed'")
    try:
        indexed = json.loads(said[0][0]) if said else None
    except ValueError:
        indexed = None
    if not isinstance(indexed, list) or sorted(found) != indexed:
        raise Unusable(f"damaged: its {name} index is not kept for every folder")
    return found


def _decoded_by(reader: Reader, name: str, value: bytes, crc: int) -> dict:
    return _decoded(name, value, crc) if reader.decoded is None else reader.decoded.get(name, value, crc)


def _decoded(name: str, value: bytes, crc: int) -> dict:
    if index_checksum(name, value) != crc:
        raise Unusable(f"damaged: its {name} index does not match its checksum")
    try:
        found = json.loads(value)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Unusable(f"damaged: its {name} index ({exc})") from None
    if not isinstance(found, dict):
        raise Unusable(f"damaged: its {name} index has another shape")
    return found



def index_checksum(name: str, value: bytes) -> int:
    return zlib.crc32(value, zlib.crc32(name.encode() + b"\0"))


def _free_bytes(folder: str) -> int:
    try:
        st = os.statvfs(folder)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


def _remove(path: str) -> bool:
    """Remove the store's files (to rebuild it); False when they cannot be removed."""
    ok = True
    for name in (path, path + "-wal", path + "-shm"):
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
        except OSError:
            ok = False
    return ok


def _why(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def clean(text: str) -> str:
    """A path as it may be printed (the one sanitizer)."""
    from letterbox_tui.core.text import clean as clean_text

    return clean_text(text, single_line=True)


def context_of(snapshot, id_time_is_utc: bool) -> str:
    """What the answers depend on besides the letter files themselves: everything else the
    scan saw (sidecars, status notes, seats, unsupported entries, ...) and the settings."""
    return json.dumps([
        id_time_is_utc, snapshot.seats, sorted(snapshot.sidecars), sorted(snapshot.status_notes.items()),
        [(u.path, u.reason) for u in snapshot.unsupported], snapshot.orphan_sidecars, snapshot.ignored,
    ], ensure_ascii=False, separators=(",", ":"))


def parsed_with(context: str) -> bool | None:
    """The ``id_time_is_utc`` the headers of a ``context_of`` context were parsed with (its
    first value, told from its start: the context is half a megabyte at 100,000 letters);
    None for no context yet, or a damaged one (the store's own checks say so)."""
    if context.startswith("[true,"):
        return True
    if context.startswith("[false,"):
        return False
    return None


def sidecars_moved(kept: str, context: str) -> set[str] | None:
    """The paths of the letters whose sidecar came or went between the contexts ``kept``
    and ``context`` (``context_of``), when nothing else in them differs; else None."""
    try:
        old, new = json.loads(kept), json.loads(context)
    except ValueError:
        return None
    if type(old) is not list or len(old) != len(new) or old[:2] != new[:2] or old[3:] != new[3:]:
        return None
    return {p[:-len(".ack")] for p in set(old[2]) ^ set(new[2])}


def default_notice(message: str) -> None:
    """One line on stderr (never on stdout: a JSON answer stays whole)."""
    try:
        sys.stderr.write(f"letterbox-tui: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass

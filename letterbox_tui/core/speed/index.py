"""The persistent derived index: every letter's fields and derived answers, kept in SQLite.

A question on an unchanged letterbox costs proving it unchanged (a ``stat`` of every
directory and letter file, compared as packed records: ``core.speed.memo``'s check) plus the
work of its answer, read from SQL indexes: not loading every header and resolving them
all again. One file per letterbox root and ``id_time_is_utc`` setting in the user's cache
directory, beside the header cache (never in the letterbox); deleting it loses nothing.

What it holds (``index_rows`` makes the per-letter records):

- ``letters``: per readable letter (numbered ``n`` in scan order: ``index_build.numbers``)
  its header columns (``id``, ``re``, ``thread`` indexed), every derived answer with
  reasons, ``late`` at the two clocks around its deadline, what ``current``/``answered``/
  ``show`` add, and the keys that tie letters into components (``index_rows.link_keys``);
- ``q``: what a query filters and judges every letter by (``index_rows.Q_COLUMNS``, ~90 bytes
  a row); ``texts``: a row's JSON at ``tn``, past its deadline at ``tn1`` where it differs;
- ``meta``: the format, the build that derived it, the root and setting, the scope (without
  ``scanned_at``), the unreadable and unsupported items and sidecars, and the state: what
  the scan saw of the file system (also a file beside the generation: ``index_state``), or
  nothing when that cannot be vouched for (then every question rescans, see
  ``core.speed.memo.recordable``).

Never trusted over the files: a question first checks the recorded state; anything else
(a changed, new, moved or removed letter) rescans with the header cache and re-derives only
the components the change touches (``refresh``), or everything when the unreadable or
unsupported entries, the scope's completeness or the sidecars of many letters changed.

Concurrency: SQLite in WAL mode, one writer at a time under an ``flock`` beside the index
(``index_lock``; ``cli.indexed`` says who waits), any number of readers, each reading one
committed state in a read transaction (every write is one transaction: never torn).
A damaged, truncated, foreign or unusable file is set aside and rebuilt with a one-line
notice on stderr; an index that stays locked is bypassed (answers from scratch).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import pickle
import sqlite3
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from . import Later, index_state

if TYPE_CHECKING:
    from letterbox_tui.core.model import Scope, Snapshot

ir = Later("index_rows", globals(), "ir")  # (first used once the proof runs)
ib = Later("index_build", globals(), "ib")
FORMAT = 11  # 10: rows numbered in scan order (n), a narrow q, texts by integer; 11: tn1
_letter_cols = functools.cache(lambda: ", ".join(("n", "tn", "tn1", *ir.COLUMNS)))
_letter_marks = functools.cache(lambda: ", ".join("?" for _ in range(len(ir.COLUMNS) + 3)))
#: how long a command waits for another process writing the index before going without
WAIT_S = 120.0
#: a row kept through a stat change: its file's stat brought up to date
_RESTAT = "UPDATE letters SET size = ?, mtime_ns = ?, inode = ?, ctime_ns = ? WHERE path = ?"
#: SQLite's own wait for a lock between processes
BUSY_MS = 5000
#: what a reader maps while it reads the state (``PRAGMA mmap_size``), then 0: mapped rows
MMAP_BYTES = 1 << 30  # all count in its resident memory (a query: 276 MB against 79 MB at 100k)

@functools.cache
def _schema() -> str:
    return f"""
CREATE TABLE meta (k TEXT PRIMARY KEY, v);
CREATE TABLE letters (n INTEGER PRIMARY KEY, tn INTEGER, tn1 INTEGER, {", ".join(c + (" TEXT UNIQUE" if c == "path" else "") for c in ir.COLUMNS)});
CREATE TABLE q (n INTEGER PRIMARY KEY, tn INTEGER, tn1 INTEGER, {", ".join(ir.Q_COLUMNS)});
CREATE TABLE texts (tn INTEGER PRIMARY KEY, row0 TEXT);
CREATE INDEX letters_id ON letters(id);
CREATE INDEX letters_thread ON letters(thread);
CREATE INDEX letters_re ON letters(re);
CREATE INDEX letters_comp ON letters(comp);
"""  # n: the scan's order (``index_build.numbers``); q: what a query scans; texts: a row's JSON at tn,
#     past its deadline at tn1 (where that differs; else tn1 is NULL)


def notice(message: str) -> None:
    """One line on stderr (never on stdout: a JSON answer stays whole)."""
    try:
        sys.stderr.write(f"letterbox-tui: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def index_path(root: str, id_time_is_utc: bool) -> str:
    """``core.speed.cache.cache_path`` with ``.index`` (not imported: a test checks it)."""
    from .files import blake2b, cache_dir

    digest = blake2b(os.fsencode(os.path.realpath(os.fspath(root))), digest_size=12).hexdigest()
    return os.path.join(cache_dir(), f"{digest}-{'utc' if id_time_is_utc else 'asis'}.index")


def _build() -> str:
    from letterbox_tui.core.speed.memo import build_id

    return build_id()


class _Unpickle(pickle.Unpickler):
    def find_class(self, module: str, name: str):  # noqa: D102 - plain data only
        raise pickle.UnpicklingError(f"global {module}.{name} refused in an index")


def _loads(blob):
    return _Unpickle(io.BytesIO(blob)).load()


class Unusable(Exception):
    """The index file cannot be used (the message says why); it is rebuilt."""


class Index:
    """One open index (a connection); ``fresh()`` says whether it may answer now.

    ``path`` is a small pointer file naming the current generation (a SQLite file beside
    it): a full build writes a new generation quickly (no journal, indexes made after the
    rows), then points at it; a reader that opened the old one keeps reading it whole."""

    def __init__(self, root: str, id_time_is_utc: bool, path: str | None = None) -> None:
        self.root = os.path.realpath(root)
        self.utc = bool(id_time_is_utc)
        self.path = path or index_path(self.root, self.utc)
        self.file: str | None = None
        self.db: sqlite3.Connection | None = None
        self.meta: dict = {}

    # --- opening -----------------------------------------------------------------
    def _generation(self) -> str | None:
        try:
            with open(self.path, "rb") as fh:
                name = fh.read(256).decode("ascii").strip()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise Unusable(f"pointer unreadable ({exc})") from None
        base = os.path.basename(self.path)
        if not (name.startswith(base + ".") and name.endswith(".sqlite") and "/" not in name):
            raise Unusable("pointer names no generation of this index")
        return os.path.join(os.path.dirname(self.path), name)

    def open(self) -> bool:
        """Connect to the current generation; False when there is none. A file that is
        not a usable index raises ``Unusable``; one locked past the wait, OperationalError."""
        for _ in range(3):  # a builder may retire the generation just read: read again
            gen = self._generation()
            if gen is None:
                return False
            try:
                db = sqlite3.connect(f"file:{gen}?mode=rw", uri=True, timeout=BUSY_MS / 1000,
                                     isolation_level=None, check_same_thread=False)
            except sqlite3.OperationalError:
                if not os.path.exists(gen):
                    continue
                raise Unusable("cannot open its generation") from None
            except sqlite3.Error as exc:
                raise Unusable(f"cannot open ({exc})") from None
            break
        else:
            return False
        self.db, self.file = db, gen
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA cache_size = -16384")
            db.execute("PRAGMA temp_store = MEMORY")  # rows sorted in memory, never in a temporary file
            db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")  # (the 10 MB state not copied page by page)
            self.meta = _meta(db)
        except sqlite3.OperationalError as exc:
            self.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            raise Unusable(str(exc)) from None
        except sqlite3.DatabaseError as exc:
            self.close()
            raise Unusable(str(exc)) from None
        return True

    def close(self) -> None:
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            self.db = None

    def why_not(self) -> str | None:
        """Why this index does not describe this letterbox with this code, or None."""
        m = self.meta
        if not m:
            return "empty"
        if m.get("format") != FORMAT:
            return f"format {m.get('format')!r}, not {FORMAT}"
        if m.get("root") != self.root or m.get("utc") != int(self.utc):
            return "made for another letterbox"
        if m.get("build") != _build():
            return "made by another build"
        return None

    # --- freshness ------------------------------------------------------------------
    def state(self):
        """What the scan saw of the file system (``core.speed.memo.recordable``), or None:
        from its file beside the generation, mapped (``index_state``), else its meta row."""
        from letterbox_tui.core.speed.memo import state_of

        m = self.meta
        try:
            kept = index_state.mapped(self.file, m.get("state_file"), m.get("state_size"))
            if kept is not None and (got := state_of(kept)) is not None:
                return got  # (flat: its names and records are views of the mapped file)
            got = self.db.execute("SELECT rowid FROM meta WHERE k = 'state' AND typeof(v) = 'blob'").fetchone()
            if got is None:
                return None
            try:  # read as a blob, straight into one buffer (a SELECT of 10 MB copies it twice)
                with self.db.blobopen("meta", "v", got[0], readonly=True) as blob:
                    return state_of(blob.read())  # (flat: its names and records are views of it)
            except Exception:  # noqa: BLE001 - a damaged state vouches for nothing
                return None
        finally:
            self.db.execute("PRAGMA mmap_size = 0")  # the rows then through the page cache

    def fresh(self) -> bool:
        """True when the letterbox stats exactly as the index recorded it (``core.speed.memo``)."""
        proof = self.start_proof()
        return proof is not None and proof.holds()

    def start_proof(self):
        """``fresh()`` begun (``core.speed.memo.Proof``: the files are stat-ed on threads of
        their own while the caller reads its answer; ``holds()`` says whether it may be
        shown), or None when the index recorded no state to prove (it is never fresh)."""
        from letterbox_tui.core.speed.memo import Proof

        state = self.state()
        if state is None:
            return None
        dirs, folders = state
        return Proof(self.root, dirs, folders, time.time_ns())

    def globals(self) -> tuple:
        """What ``_globals`` recorded: (unreadable, unsupported, partial, atomic, participants)."""
        return _loads(self.meta["globals"])

    def scope(self, scanned_at: str) -> Scope:
        from letterbox_tui.core.model import Scope

        data = ir.json.loads(self.meta["scope"])
        data.pop("complete", None)
        data.pop("sync", None)
        data["scanned_at"] = scanned_at
        return Scope(**data)

    # --- reading ------------------------------------------------------------------------
    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every read inside sees one committed state."""
        db = self.db
        assert db is not None
        db.execute("BEGIN")
        try:
            self.meta = _meta(db)
            yield db
        finally:
            db.execute("COMMIT")

    def rows(self, where: str, params: dict | tuple = ()) -> list[tuple]:
        assert self.db is not None
        cols = ", ".join(ir.ROW_COLUMNS)
        return self.db.execute(
            f"SELECT {cols} FROM letters JOIN texts USING (tn) WHERE {where} ORDER BY n", params
        ).fetchall()

    def snapshot(self, where: str, params, scanned_at: str) -> Snapshot:
        """The letters ``where`` selects, made from their stored fields the way the scan
        makes them (``core.letters.build``), with everything that bears on every letter:
        the unreadable and unsupported entries, the sidecars, the scope. Whole components
        resolve exactly as in the whole letterbox (what ``refresh`` rests on)."""
        from letterbox_tui.core.header import HeaderResult
        from letterbox_tui.core.letters import build
        from letterbox_tui.core.model import Snapshot, Unreadable, Unsupported

        assert self.db is not None
        letters = []
        for path, seat, folder, name, row0, size, mtime_ns, inode in self.db.execute(
            f"SELECT path, seat, folder, name, row0, size, mtime_ns, inode FROM letters JOIN texts USING (tn) "
            f"WHERE {where} ORDER BY n", params,
        ):
            fields = tuple(ir.json.loads(row0)["fields"].items())  # in the order written
            letters.append(build(HeaderResult(fields), path=path, seat=seat, folder=folder, name=name, size=size,
                                 mtime_ns=mtime_ns, inode=inode, id_time_is_utc=self.utc))
        unreadable, unsupported, _partial, _atomic, _participants = self.globals()
        orphans, notes, ignored = _loads(self.meta["extras"])
        return Snapshot(
            root=self.root, letters=letters,
            unreadable=[Unreadable(p, s, f, e, dict(leg), ill, sz, mt, ino) for p, s, f, e, leg, ill, sz, mt, ino in unreadable],
            unsupported=[Unsupported(p, r) for p, r in unsupported],
            scope=self.scope(scanned_at), seats=_loads(self.meta["seats"]),
            sidecars=frozenset(self._sidecars()), orphan_sidecars=orphans, status_notes=notes,
            ignored=ignored,
        )

    def _sidecars(self) -> list[str]:
        return _loads(self.db.execute("SELECT v FROM meta WHERE k = 'sidecars'").fetchone()[0])

    def component_snapshot(self, letter_id: str, scanned_at: str) -> Snapshot:
        """``snapshot`` of the components holding ``letter_id`` (none: no letter holds it)."""
        return self.snapshot("comp IN (SELECT comp FROM letters WHERE id = :id)", {"id": letter_id}, scanned_at)

    # --- writing ------------------------------------------------------------------------
    def build(self, snapshot: Snapshot, res_factory) -> dict:
        """``write_all`` a slice of components at a time, timed: its figures (wall, CPU,
        resident MB at start and peak) kept in meta as ``built`` (for ``bench``) and returned."""
        stats = {"letters": len(snapshot.letters), "start_mb": ib.rss_mb()}
        self.write_all(snapshot, res_factory=res_factory, stats=(time.perf_counter(), time.process_time(), stats))
        return stats

    def write_all(self, snapshot: Snapshot, res=None, *, res_factory=None, stats=None) -> None:
        """A new generation holding what ``snapshot`` and its resolution say, then the
        pointer moved to it (the caller holds the writer lock). With ``res_factory``
        (``res_factory(snapshot)`` resolves a snapshot) the letters are resolved whole
        components at a time, about ``index_build.CHUNK`` letters each, and each slice's resolution
        dropped once written: a component resolves alone exactly as in the whole letterbox
        (what ``refresh`` rests on), and the build never holds every letter's derivations at
        once. ``stats``: (wall clock, CPU clock, figures) from ``build``, completed and kept
        as the meta's ``built``."""
        comps = ir.components(snapshot.letters)
        ctimes = _ctimes(snapshot)
        ns, tns = ib.numbers(snapshot.letters)
        directory = os.path.dirname(self.path)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        gen = f"{self.path}.{os.getpid()}-{time.time_ns()}.sqlite"
        db = sqlite3.connect(gen, isolation_level=None)
        try:
            db.execute("PRAGMA page_size = 8192")  # a row (about 2 KB) never spills to overflow pages
            db.execute("PRAGMA journal_mode = OFF")
            db.execute("PRAGMA synchronous = OFF")
            db.execute("PRAGMA cache_size = -16384")
            db.execute("BEGIN")
            for stmt in _schema().split(";"):
                if stmt.strip() and not stmt.strip().startswith("CREATE INDEX"):
                    db.execute(stmt)
            for letters, at, chunk_res in ib.slices(snapshot, comps, res, res_factory):
                records = [ir.record(x, chunk_res, comps[x.path], ctimes.get(x.path, -1)) for x in letters]
                del chunk_res
                numbered = [(ns[i], tns[i], len(ns) + tns[i]) for i in at]  # (tn1: where a row1 is)
                self._insert(*ib.rows_of(records, numbered), db=db)
                del records
                ir.forget_reasons()  # the texts cached for this slice's reasons (and those reasons)
            db.executemany("INSERT INTO meta VALUES (?, ?)", self._meta_rows(snapshot, gen))
            for stmt in _schema().split(";"):
                if stmt.strip().startswith("CREATE INDEX"):
                    db.execute(stmt)
            if stats is not None:
                wall, cpu, figures = stats
                figures.update(seconds=time.perf_counter() - wall, cpu=time.process_time() - cpu, peak_mb=ib.peak_mb())
                db.execute("INSERT INTO meta VALUES ('built', ?)", (ir.dumps(figures),))
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode = WAL")
        except BaseException:
            db.close()
            _remove(gen)
            raise
        db.close()
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:  # then os.replace: a reader sees the old name or the new
            fh.write(os.path.basename(gen).encode("ascii"))
        os.replace(tmp, self.path)
        self.close()
        for old in _generations(self.path):
            if old != gen:
                _remove(old)
        self.open()

    def _meta_rows(self, snapshot: Snapshot, gen: str | None = None) -> list[tuple]:
        return ib.meta_rows(self, snapshot, gen or self.file)  # (its state also beside ``gen``)

    def refresh(self, snapshot: Snapshot, res_factory) -> int:
        """Bring the index to ``snapshot`` re-deriving only what changed: the components
        (``link_keys``) of every letter new, removed or changed since, and of every letter
        whose sidecar appeared or went. A file whose stat changed while its letter did not
        (``index_rows.digest``: a ``touch``, a git checkout) keeps its row, stat updated.
        ``res_factory(snapshot)`` resolves a snapshot. Returns how many letters were
        re-derived (all of them on a global change)."""
        db = self.db
        assert db is not None
        old_globals = self.meta.get("globals")
        if old_globals is None or _loads(old_globals) != _globals(snapshot):
            self.write_all(snapshot, res_factory=res_factory)
            return len(snapshot.letters)
        old_files: dict[str, tuple] = {}
        old_digest: dict[str, bytes] = {}
        old_n: dict[str, tuple] = {}  # path -> (n, tn, tn1)
        for p, n, tn, tn1, dg, *st in db.execute(
                "SELECT path, n, tn, tn1, digest, size, mtime_ns, inode, ctime_ns FROM letters"):
            old_files[p] = tuple(st)
            old_digest[p] = dg
            old_n[p] = (n, tn, tn1)
        old_letters = set(old_files)
        ctimes = _ctimes(snapshot)
        by_path = {x.path: x for x in snapshot.letters}
        new_files = {p: (x.size, x.mtime_ns, x.inode, ctimes.get(p, -1)) for p, x in by_path.items()}
        changed = {p for p, s in new_files.items() if old_files.get(p) != s}
        changed.update(p for p in old_files if p not in new_files)
        old_side = set(self._sidecars())
        new_side = set(snapshot.sidecars)
        sides = {p[:-4] for p in old_side ^ new_side if p.endswith(".ack")}
        # a file whose stat changed but whose letter did not (a touch, a checkout writing
        # the same bytes): its row stays, its stat is brought up to date
        restat = {p for p in changed - sides if p in by_path and old_digest.get(p) == ir.digest(by_path[p])}
        changed -= restat
        changed.update(sides)
        changed &= old_letters | set(by_path)
        if not changed:
            self._write_meta(snapshot, self._restat(restat, new_files))
            return 0
        seeds: set[str] = set()
        for p in changed:
            if p in by_path:
                seeds |= ir.link_keys(by_path[p])
        old_keys = list(changed & old_letters)
        for at in range(0, len(old_keys), 500):
            part = old_keys[at : at + 500]
            for (keys,) in db.execute(f"SELECT keys FROM letters WHERE path IN ({','.join('?' * len(part))})", part):
                seeds.update(keys.split("\n"))
        members = ib.component(snapshot.letters, seeds)
        gone = [p for p in changed if p not in by_path]
        placed = ib.place(snapshot.letters, {p: nt[0] for p, nt in old_n.items() if p in by_path})
        if placed is None:  # no number left between two letters' for a new one
            self.write_all(snapshot, res_factory=res_factory)
            return len(snapshot.letters)
        sub = ib.sub(snapshot, [x for x in snapshot.letters if x.path in members])
        res = res_factory(sub)
        comps = ir.components(sub.letters)  # whole components: their least paths are as before
        records = [ir.record(x, res, comps[x.path], ctimes.get(x.path, -1)) for x in sub.letters]
        numbered = ib.numbered(sub.letters, old_n, placed)
        rows = ib.rows_of(records, numbered)
        olds = [old_n[p] for p in [x.path for x in sub.letters] + gone if p in old_n]
        updates = self._restat(restat - members, new_files)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(_RESTAT, updates)
            for at in range(0, len(olds), 500):
                part = olds[at : at + 500]
                marks = ",".join("?" * len(part))
                for table, key, at in (("letters", "n", 0), ("q", "n", 0), ("texts", "tn", 1), ("texts", "tn", 2)):
                    db.execute(f"DELETE FROM {table} WHERE {key} IN ({marks})", [nt[at] for nt in part])
            self._insert(*rows)
            self._put_meta(snapshot)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._committed()
        return len(records)

    def _insert(self, letters: list, q: list, texts: list, db=None) -> None:
        db = db or self.db
        db.executemany(f"INSERT INTO letters ({_letter_cols()}) VALUES ({_letter_marks()})", letters)
        db.executemany(f"INSERT INTO q VALUES ({', '.join('?' * (len(ir.Q_COLUMNS) + 3))})", q)
        db.executemany("INSERT INTO texts VALUES (?, ?)", texts)

    def _put_meta(self, snapshot: Snapshot) -> None:
        assert self.db is not None
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", self._meta_rows(snapshot))

    @staticmethod
    def _restat(paths, new_files: dict[str, tuple]) -> list[tuple]:  # ``_RESTAT``'s parameters
        return [(*new_files[p], p) for p in sorted(paths)]

    def _write_meta(self, snapshot: Snapshot, updates: list[tuple] = ()) -> None:
        assert self.db is not None
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(_RESTAT, updates)
            self._put_meta(snapshot)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self._committed()

    def _committed(self) -> None:
        """After a COMMIT: the meta read again, and every state file of this generation but
        the one it names removed."""
        self.meta = _meta(self.db)
        for path in index_state.others(self.file, self.meta.get("state_file")):
            with contextlib.suppress(OSError):
                os.unlink(path)


def built(path: str) -> dict | None:
    """The figures the last full build kept (``Index.build``), or None."""
    ix = Index("/", False, path=path)
    try:
        if not ix.open():
            return None
        value = ix.meta.get("built")
        return ir.json.loads(value) if isinstance(value, str) else None
    except (sqlite3.Error, Unusable, ValueError):
        return None
    finally:
        ix.close()


def _meta(db: sqlite3.Connection) -> dict:
    """Every meta value but the state and the sidecars (megabytes at a million letters,
    read when wanted: ``Index.state``, ``Index._sidecars``)."""
    return dict(db.execute("SELECT k, v FROM meta WHERE k NOT IN ('state', 'sidecars')").fetchall())


def _remove(gen: str) -> None:
    for path in [gen + suffix for suffix in ("", "-wal", "-shm")] + index_state.others(gen):
        with contextlib.suppress(OSError):
            os.unlink(path)


def _generations(path: str) -> list[str]:
    """Every generation file of the index at ``path``."""
    directory, base = os.path.split(path)
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names if n.startswith(base + ".") and n.endswith(".sqlite")]


def _globals(snapshot: Snapshot) -> tuple:
    """What bears on every letter's answers at once: a change to it re-derives all."""
    unreadable = [  # in scan order (``exists`` names them so)
        (u.path, u.seat, u.folder, u.error, list(u.legible.items()), u.illegible, u.size, u.mtime_ns, u.inode)
        for u in snapshot.unreadable
    ]
    scope = snapshot.scope
    return (
        unreadable, [(u.path, u.reason) for u in snapshot.unsupported],
        bool(scope.partial), bool(scope.atomic), sorted(scope.participants),
    )


def _ctimes(snapshot: Snapshot):
    """Each item's file ctime when the scan read it (``SeenState``), by path (``get``);
    empty when the snapshot was not made by ``core.scan``. Read from the scan's packed
    stats where it kept them (no path string is made again: at a million letters a dict
    of new paths was 150 MB of the build)."""
    seen = snapshot.seen
    if seen is None:
        return {}
    if seen.packed:
        return ib.PackedCtimes(seen.packed)
    return {f"{rel}/{f[0]}": f[4] for rel, files in seen.files.items() for f in files}


# --- opening for a command (the writer's lock: index_lock.WriterLock) -----------------

def fresh_snapshot(root, participants=None, *, id_time_is_utc: bool, now=None) -> Snapshot | None:
    """The whole letterbox's snapshot from the index when it vouches for the letterbox (a
    ``stat`` of every file, no header read), else None (then scan as usual). For a face
    that needs every letter (the app); a partial scope is never served."""
    from datetime import datetime, timezone

    if participants is not None:
        return None
    ix = Index(os.fspath(root), id_time_is_utc)
    began = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    try:
        if not (ix.open() and ix.why_not() is None and ix.fresh()):
            return None
        with ix.reading():
            return ix.snapshot("1", {}, began.isoformat().replace("+00:00", "Z"))
    except (sqlite3.Error, Unusable, KeyError):
        return None
    finally:
        ix.close()


def verify_index(root: str, id_time_is_utc: bool, snapshot: Snapshot, res) -> list[str]:
    """``index_build.verify_index`` (``check --verify``)."""
    return ib.verify_index(root, id_time_is_utc, snapshot, res)


def set_aside(path: str, why: str) -> None:
    """Remove an unusable index (its pointer and every generation), saying so once."""
    notice(f"the derived index {path} is unusable ({why}); rebuilding it")
    drop(path)


def drop(path: str) -> None:
    """Remove the index at ``path`` (its pointer and every generation): it loses nothing."""
    for gen in _generations(path):
        _remove(gen)
    with contextlib.suppress(OSError):
        os.unlink(path)

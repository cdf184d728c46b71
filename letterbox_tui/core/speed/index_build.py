"""How a full build of the derived index (``index.Index.build``) goes a slice at a time,
what it costs, and which letters a change reaches (``index.Index.refresh``)."""

from __future__ import annotations

import os
import sqlite3
from array import array

from letterbox_tui.core.model import Snapshot

from . import index_rows as ir

#: letters made into records and written at a time by a full build
CHUNK = 20_000
#: the step between two letters' ``n`` in a full build: ``n`` orders the rows as the scan
#: does (seat, folder, name: a query's ORDER BY n needs no sort), and a refresh numbers a
#: new letter between its neighbours' (``place``); when no number is left, it builds afresh
GAP = 1 << 32
_MAX_N = (1 << 63) - 1


def _key(x) -> tuple:
    return (x.seat, x.folder, x.name)  # (SQLite's BINARY order of UTF-8 is the code points')


def numbers(letters: list) -> tuple[array, array]:
    """Per position in ``letters`` (the whole letterbox) its ``n`` (``GAP`` apart, in scan
    order) and its ``tn``: where its row's JSON is kept in ``texts``, by type and then scan
    order, so a query's matches (most ask for a type) lie on few pages."""
    count = len(letters)
    order = sorted(range(count), key=lambda i: _key(letters[i]))
    n = array("q", bytes(8 * count))
    for rank, i in enumerate(order):
        n[i] = (rank + 1) * GAP
    order.sort(key=lambda i: (letters[i].type or "", n[i]))
    tn = array("q", bytes(8 * count))
    for rank, i in enumerate(order):
        tn[i] = rank + 1
    return n, tn


def place(letters: list, old_n: dict) -> dict[str, int] | None:
    """``n`` for each of ``letters`` (the whole letterbox) not in ``old_n`` (path -> the
    ``n`` of a row kept), between its neighbours' in scan order; None when some gap is too
    narrow (then the index is built afresh)."""
    got: dict[str, int] = {}
    if len(old_n) == len(letters) and all(x.path in old_n for x in letters):
        return got  # every letter kept its number (no sort: a million letters' is a second)
    run: list[str] = []
    lo = None
    for x in sorted(letters, key=_key):
        n = old_n.get(x.path)
        if n is None:
            run.append(x.path)
            continue
        if run and not _spread(run, lo, n, got):
            return None
        run, lo = [], n
    if run and not _spread(run, lo, None, got):
        return None
    return got


def _spread(run: list[str], lo: int | None, hi: int | None, got: dict) -> bool:
    k = len(run)
    if lo is None and hi is None:
        lo, hi = 0, (k + 1) * GAP
    elif hi is None:
        hi = lo + (k + 1) * GAP
    elif lo is None:
        lo = hi - (k + 1) * GAP
    if hi - lo <= k or lo < -_MAX_N or hi > _MAX_N:
        return False
    for j, path in enumerate(run):
        got[path] = lo + (hi - lo) * (j + 1) // (k + 1)
    return True


def numbered(letters: list, old: dict, placed: dict) -> list[tuple[int, int, int]]:
    """(n, tn, tn1) of each of ``letters`` in a refresh: a letter's own (``old``: path ->
    (n, tn, tn1)) when it had a row, else its ``placed`` n; a tn or tn1 it lacks after
    every other (its texts go last; a tn1 is used only where the letter has a row1)."""
    tn_next = 1 + max((max(tn, tn1 or 0) for _, tn, tn1 in old.values()), default=0)
    out = []
    for x in letters:
        n, tn, tn1 = old.get(x.path) or (placed[x.path], None, None)
        if tn is None:
            tn, tn_next = tn_next, tn_next + 1
        if tn1 is None:
            tn1, tn_next = tn_next, tn_next + 1
        out.append((n, tn, tn1))
    return out


def verify_index(root: str, id_time_is_utc: bool, snapshot: Snapshot, res) -> list[str]:
    """For ``check --verify``: the paths whose row in the index is not what the files say
    now (``snapshot``, freshly read, and its resolution ``res``): a changed, missing or
    extra row. The index is then dropped whatever it held (the next question rebuilds it),
    so nothing it held is trusted again without being derived afresh."""
    from .index import Index, Unusable, _ctimes, drop

    ix = Index(root, id_time_is_utc)
    stale: list[str] = []
    try:
        if ix.open() and ix.why_not() is None:
            ctimes = _ctimes(snapshot)
            comps = ir.components(snapshot.letters)
            want = {}
            for x in snapshot.letters:
                row, text = ir.record(x, res, comps[x.path], ctimes.get(x.path, -1))
                # the ctime is the file's, not a derivation; q's columns are the row's
                want[x.path] = (*row[:-1], *(row[i] for i in ir.Q_AT), *text[1:])
            have = stored_rows(ix.db)
            stale = sorted(p for p in want.keys() | have.keys() if want.get(p) != have.get(p))
            stale += misplaced(ix.db)
    except (sqlite3.Error, Unusable, KeyError):
        stale = []  # an index that cannot be read vouches for nothing, and goes below
    finally:
        ix.close()
        drop(ix.path)
    return stale


def meta_rows(ix, snapshot: Snapshot, gen: str) -> list[tuple]:
    """The index ``ix``'s meta rows for ``snapshot``, its state also written beside the
    generation ``gen`` (``index_state``)."""
    import pickle
    import time

    from . import index_state
    from .index import FORMAT, _build, _globals
    from .memo import recordable, state_blob

    scope = snapshot.scope.to_json()
    scope.pop("scanned_at", None)
    scope.pop("sync", None)  # how current a copy in git is: asked of git when shown
    state = recordable(snapshot)
    return [
        ("format", FORMAT), ("root", ix.root), ("utc", int(ix.utc)), ("build", _build()),
        ("scope", ir.dumps(scope)),
        ("globals", pickle.dumps(_globals(snapshot), protocol=5)),
        ("sidecars", pickle.dumps(sorted(snapshot.sidecars), protocol=5)),
        ("seats", pickle.dumps(list(snapshot.seats), protocol=5)),
        ("extras", pickle.dumps((list(snapshot.orphan_sidecars), dict(snapshot.status_notes),
                                 list(snapshot.ignored)), protocol=5)),
        ("state", (blob := state_blob(state) if state is not None else None)),
        ("state_file", index_state.write(gen, blob)), ("state_size", len(blob or b"")),
        ("written_at", time.time_ns()),
    ]


def stored_rows(db) -> dict[str, tuple]:
    """For ``check --verify``: per path what the index keeps of its letter, as ``verify_index``
    makes it from the files: its ``letters`` columns (but its ctime), its ``q`` columns, its
    row's JSON and the one past its deadline (None where a row is missing)."""
    cols = ", ".join(f"l.{c}" for c in ir.COLUMNS[:-1])
    qcols = ", ".join(f"q.{c}" for c in ir.Q_COLUMNS)
    return {r[0]: r for r in db.execute(
        f"SELECT {cols}, {qcols}, t.row0, t1.row0 FROM letters AS l "
        "LEFT JOIN q ON q.n = l.n AND q.tn = l.tn AND q.tn1 IS l.tn1 "
        "LEFT JOIN texts AS t ON t.tn = l.tn LEFT JOIN texts AS t1 ON t1.tn = l.tn1")}


def misplaced(db) -> list[str]:
    """For ``check --verify``: the letters numbered out of scan order, and a line for rows of
    ``q`` or ``texts`` no letter owns (or a tn1 naming no text)."""
    out: list[str] = []
    last = None
    for path, *key in db.execute("SELECT path, seat, folder, name FROM letters ORDER BY n"):
        if last is not None and tuple(key) <= last:
            out.append(path)
        last = tuple(key)
    texts = "SELECT tn FROM letters UNION ALL SELECT tn1 FROM letters WHERE tn1 IS NOT NULL"
    for table, key, owners in (("q", "n", "SELECT n FROM letters"), ("texts", "tn", texts)):
        (count,) = db.execute(f"SELECT count(*) FROM {table} WHERE {key} NOT IN ({owners})").fetchone()
        if count:
            out.append(f"({count} rows of {table} belong to no letter)")
    (count,) = db.execute("SELECT count(*) FROM letters WHERE tn1 NOT IN (SELECT tn FROM texts)").fetchone()
    if count:
        out.append(f"({count} letters name a row past their deadline that is not kept)")
    return out


def slices(snapshot: Snapshot, comps: dict[str, str], res, res_factory):
    """(letters, their positions in the snapshot, their resolution) a slice at a time: with
    ``res``, every ``CHUNK`` letters in scan order with it; with ``res_factory``, whole
    components (in the order their first letter is scanned) about ``CHUNK`` letters at a
    time, each slice resolved alone."""
    letters = snapshot.letters
    if res_factory is None:
        for at in range(0, len(letters), CHUNK):
            yield letters[at : at + CHUNK], range(at, min(at + CHUNK, len(letters))), res
        return
    members: dict[str, list] = {}
    for i, x in enumerate(letters):
        members.setdefault(comps[x.path], []).append(i)
    part: list = []
    for group in members.values():
        part.extend(group)
        if len(part) >= CHUNK:
            chosen = [letters[i] for i in part]
            yield chosen, part, res_factory(sub(snapshot, chosen))
            part = []
    if part:
        chosen = [letters[i] for i in part]
        yield chosen, part, res_factory(sub(snapshot, chosen))


def rows_of(records: list, numbered) -> tuple[list, list, list]:
    """The ``letters``, ``q`` and ``texts`` rows of ``records`` (``index_rows.record`` of each
    letter, numbered (n, tn, tn1): its tn1 kept only where it has a row past its deadline),
    each sorted by its key."""
    letters, q, texts = [], [], []
    for (row, (_path, row0, row1)), (n, tn, tn1) in zip(records, numbered):
        if row1 is None:
            tn1 = None
        else:
            texts.append((tn1, row1))
        letters.append((n, tn, tn1, *row))
        q.append(ir.q_row(n, tn, tn1, row))
        texts.append((tn, row0))
    for rows in (letters, q, texts):
        rows.sort()
    return letters, q, texts


class PackedCtimes:
    """``path -> ctime`` over a scan's packed stats (``SeenState.packed``: per folder its
    names and an array of size, mtime_ns, inode, ctime_ns each): ``get`` as a dict's."""

    def __init__(self, packed: dict) -> None:
        self._folders = {rel: ({name: i for i, name in enumerate(names)}, stats) for rel, (names, stats) in packed.items()}

    def get(self, path: str, default: int = -1) -> int:
        rel, _, name = path.rpartition("/")
        folder = self._folders.get(rel)
        if folder is None:
            return default
        at = folder[0].get(name)
        return default if at is None else folder[1][4 * at + 3]


def sub(snapshot: Snapshot, letters: list) -> Snapshot:
    """``snapshot`` with only ``letters`` (whole components), and everything that bears on
    every letter."""
    return Snapshot(
        root=snapshot.root, letters=letters, unreadable=snapshot.unreadable, unsupported=snapshot.unsupported,
        scope=snapshot.scope, seats=snapshot.seats, sidecars=snapshot.sidecars,
    )


def rss_mb() -> float | None:
    """This process's resident memory now, MB (Linux), else None."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return None


def peak_mb() -> float | None:
    """This process's peak resident memory so far, MB (a forked builder's starts at what
    it shared with its parent when forked)."""
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except (ImportError, OSError):
        return None


def component(letters, seeds: set[str]) -> set[str]:
    """Paths of every letter connected to a seed key through shared link keys."""
    by_key: dict[str, list] = {}
    keys_of = {}
    for x in letters:
        ks = ir.link_keys(x)
        keys_of[x.path] = ks
        for k in ks:
            by_key.setdefault(k, []).append(x.path)
    members: set[str] = set()
    todo = list(seeds)
    seen_keys = set(seeds)
    while todo:
        k = todo.pop()
        for p in by_key.get(k, ()):
            if p in members:
                continue
            members.add(p)
            for k2 in keys_of[p]:
                if k2 not in seen_keys:
                    seen_keys.add(k2)
                    todo.append(k2)
    return members

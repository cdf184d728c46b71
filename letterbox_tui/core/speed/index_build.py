"""How a full build of the derived index (``index.Index.build``) goes a slice at a time,
what it costs, and which letters a change reaches (``index.Index.refresh``)."""

from __future__ import annotations

import os

from letterbox_tui.core.model import Snapshot

from . import index_rows as ir

#: letters made into records and written at a time by a full build
CHUNK = 20_000


def slices(snapshot: Snapshot, comps: dict[str, str], res, res_factory):
    """(letters, their resolution) a slice at a time: with ``res``, every ``CHUNK`` letters
    in scan order with it; with ``res_factory``, whole components (in the order their first
    letter is scanned) about ``CHUNK`` letters at a time, each slice resolved alone."""
    letters = snapshot.letters
    if res_factory is None:
        for at in range(0, len(letters), CHUNK):
            yield letters[at : at + CHUNK], res
        return
    members: dict[str, list] = {}
    for x in letters:
        members.setdefault(comps[x.path], []).append(x)
    part: list = []
    for group in members.values():
        part.extend(group)
        if len(part) >= CHUNK:
            yield part, res_factory(sub(snapshot, part))
            part = []
    if part:
        yield part, res_factory(sub(snapshot, part))


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

"""Folder listings a file-system watcher vouches for between two scans (``core.scan``).

A resident process (``letterbox-tui mcp``) watches its letterbox. A folder under which no
change was reported since a scan listed it, and which still stats as it did then, is taken
as listed then: its letter files are neither listed nor stat-ed again, and the store still
checks, as for any folder, that they are the ones it keeps.

What makes a listing kept: the watcher was running before the scan that listed it began
(``ready``), the folder had settled by then (``core.scan.RACY_NS``), no change was reported
under it since that scan began, and it is younger than ``TRUST_NS``. A reported change
forgets the listing at once. A watcher can miss changes (its queue overflows): creating,
removing or renaming an entry still moves the folder's own times, which are compared; an
edit in place that a watcher missed is seen when the listing expires.
"""

from __future__ import annotations

import os
import threading
import time

#: how long a folder's listing is taken without looking at its files again
TRUST_NS = 300 * 1_000_000_000

#: a folder's (inode, mtime_ns, ctime_ns, device): what it stats as
Ident = tuple[int, int, int, int]
#: a folder's letter files (sorted names, four nums each: size, mtime_ns, inode, ctime_ns)
#: and its sidecars' names, as a scan stat-ed them
Listed = tuple[list[str], list[int], list[str]]


class Listings:
    """The folders of one letterbox a watcher vouches for; thread-safe (the watcher reports
    from a thread of its own while a scan takes and records)."""

    def __init__(self, root: str) -> None:
        self._tops = tuple(dict.fromkeys(os.path.join(r, "") for r in (os.path.abspath(root), os.path.realpath(root))))
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[Ident, int, Listed]] = {}  # "seat/inbox/" -> (ident, seen_ns, listed)
        self._touched: dict[str, int] = {}  # "seat/inbox/" or "seat/" -> the last change's number
        self._changes = 0  # changes reported (each report one number)
        self._epoch = 0  # moves when the watcher starts or stops: older scans record nothing
        self._watching = False

    # --- the watcher's side -------------------------------------------------------------
    def ready(self) -> None:
        """The watcher runs: from the next scan on, what it lists is kept."""
        with self._lock:
            self._epoch += 1
            self._watching = True
            self._kept.clear()

    def lost(self) -> None:
        """The watcher stopped: nothing is kept, every folder is listed again."""
        with self._lock:
            self._epoch += 1
            self._watching = False
            self._kept.clear()

    def report(self, paths: list[str]) -> None:
        """Changes reported under these paths (absolute, as the watcher gives them)."""
        with self._lock:
            self._changes += 1
            for path in paths:
                key = self._key(path)
                if key is None:  # outside what is known: nothing kept holds
                    self._kept.clear()
                    self._touched.clear()
                    self._epoch += 1
                    return
                self._touched[key] = self._changes
                if key.count("/") == 1:  # an entry of the top (a seat): each of its folders
                    for prefix in [p for p in self._kept if p.startswith(key)]:
                        del self._kept[prefix]
                else:
                    self._kept.pop(key, None)

    def _key(self, path: str) -> str | None:
        """"seat/inbox/" for a path in or under a folder (or the folder itself), "seat/"
        for an entry of the top (a seat, or a file there); None for the letterbox itself
        or a path outside it."""
        for top in self._tops:
            if path.startswith(top) and len(path) > len(top):
                parts = path[len(top):].split("/", 2)
                return "".join(part + "/" for part in parts[:2])
        return None

    # --- the scan's side ----------------------------------------------------------------
    def begin(self) -> Pass | None:
        """One scan's use of the listings; None while no watcher runs."""
        with self._lock:
            if not self._watching:
                return None
            return Pass(self, self._epoch, self._changes, time.monotonic_ns())

    def _take(self, prefix: str, ident: Ident, now: int) -> Listed | None:
        with self._lock:
            kept = self._kept.get(prefix)
            if kept is None or kept[0] != ident or now - kept[1] > TRUST_NS:
                return None
            return kept[2]

    def _saw(self, scan: Pass, prefix: str, ident: Ident, listed: Listed) -> None:
        with self._lock:
            if scan.epoch != self._epoch:
                return
            seat = prefix[:prefix.index("/") + 1]
            if self._touched.get(prefix, -1) >= scan.after or self._touched.get(seat, -1) >= scan.after:
                return  # changed since the scan began: maybe after it listed the folder
            self._kept[prefix] = (ident, scan.began, listed)


class Pass:
    """What one scan takes from, and records in, the listings."""

    def __init__(self, listings: Listings, epoch: int, changes: int, began: int) -> None:
        self.listings = listings
        self.epoch = epoch
        self.after = changes + 1  # the first change reported after this scan began
        self.began = began

    def take(self, prefix: str, ident: Ident) -> Listed | None:
        """The folder ``prefix`` as last listed, when that listing is kept and the folder
        still stats as ``ident``."""
        return self.listings._take(prefix, ident, time.monotonic_ns())

    def saw(self, prefix: str, ident: Ident, listed: Listed) -> None:
        """This scan listed the folder ``prefix`` (settled, statting as ``ident``) so."""
        self.listings._saw(self, prefix, ident, listed)

"""The scan's second look (``core.scan``): a folder reopened the way the scan opened it
(relative to the root, ``O_NOFOLLOW`` at every step) and listed again, to tell whether
anything appeared, vanished or moved while the scan ran."""

from __future__ import annotations

import contextlib
import os
from array import array
from collections.abc import Iterator
from operator import attrgetter, methodcaller

from . import flags as fsflags

_DIR_FLAGS = fsflags.DIR
#: what counts at a seat's level: its folders (a change to them is a change)
SEAT_PARTS = frozenset(("inbox", "processed", "archive"))
# C-level accessors for whole listings (a map over 12,000 entries, not a Python loop)
_entry_name = attrgetter("name")
_entry_inode = methodcaller("inode")


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


def raw_listing(entries: list[os.DirEntry]) -> tuple[list[str], array | list[int]]:
    """Every entry's name and inode, in listing order (no per-entry Python code); the
    inodes packed in 64-bit words (a list should one not fit), kept until the second look."""
    inodes = list(map(_entry_inode, entries))
    try:
        return list(map(_entry_name, entries)), array("Q", inodes)
    except OverflowError:
        return list(map(_entry_name, entries)), inodes


def entry_set(listing: tuple[list[str], list[int]], *, seat_level: bool) -> frozenset[tuple[str, int]]:
    """(name, inode) of the entries that matter: a seat's folders, a folder's non-dot entries."""
    names, inodes = listing
    if seat_level:
        return frozenset((n, i) for n, i in zip(names, inodes) if n in SEAT_PARTS)
    return frozenset((n, i) for n, i in zip(names, inodes) if not n.startswith("."))


def listing(root_fd: int, rel: str) -> tuple[list[str], list[int]]:
    """A folder's raw listing now, the folder reopened relative to the root."""
    with reopened(root_fd, rel) as fd, os.scandir(fd) as it:
        return raw_listing(list(it))

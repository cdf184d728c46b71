"""The optional C accelerator (``_scanio``, built from ``_scanio.c`` when a compiler is
present at install time) and the scan reader made from it.

``reader()`` is what the faces hand to ``core.scan.scan``: the C reader when the module is
built and not switched off, else the core's pure reader (the same answers either way).
``LETTERBOX_TUI_PURE=1`` switches the accelerator off; that variable is read here, in the
speed wing, and nowhere in the core (the tests run both ways).

Also the one definition of the packed stat record the accelerator and the answer memo
share: (size, mtime_ns, inode, ctime_ns) per file, as signed 64-bit little-endian words."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (imported where used: the memo's stat proof needs neither)
    from letterbox_tui.core.reader import Reader

#: one file's packed (size, mtime_ns, inode, ctime_ns), as ``_scanio.stat_packed`` writes it
STAT_RECORD = struct.Struct("<4q")
# names per batch read ahead (``CReader.iter_headers``); the first batch of a folder is smaller.
# Few batches: the end of each is a point where this thread may wait for a reading thread the
# system has not run yet (on a busy machine: a 100k scan's wall 2.62 s at 1024, 2.26 at 4096)
BATCH = 4096
FIRST_BATCH = 128


def pure_wanted() -> bool:
    """True when ``LETTERBOX_TUI_PURE`` asks for the pure-Python code."""
    return bool(os.environ.get("LETTERBOX_TUI_PURE"))


_configured: bool | None = None  # whether the accelerator took core.letters' tables


def scanio(pure: bool | None = None) -> ModuleType | None:
    """The built accelerator, or None (not built, or ``pure``: by default as
    ``LETTERBOX_TUI_PURE`` says). The first time, it is handed ``core.letters``' field
    tables, from which it makes the letters of plainly canonical headers itself."""
    global _configured
    if pure_wanted() if pure is None else pure:
        return None
    try:
        from . import _scanio
    except ImportError:
        return None
    if _configured is None:
        from letterbox_tui.core import letters
        from letterbox_tui.core.model import Letter

        try:
            # Letter reads a value back from its slot by letters.FIELD_SLOTS (``FIELD_SLOT_OF``)
            _scanio.configure(Letter, letters.FIELD_SLOTS, letters.FILE_SLOTS, True)
            _configured = True
        except (TypeError, ValueError, AttributeError):  # tables it cannot follow: build() makes them all
            _configured = False
    return _scanio


def stat_module(pure: bool | None = None) -> ModuleType | None:
    """The built accelerator for its stat calls alone (``stat_packed``, ``check_start``),
    or None as ``scanio`` says; unlike ``scanio`` it is not handed ``core.letters``'
    tables (which imports the letters' modules: the memo's proof needs none of them)."""
    if pure_wanted() if pure is None else pure:
        return None
    try:
        from . import _scanio
    except ImportError:
        return None
    return _scanio


def letters_in_c() -> bool:
    """True when the accelerator makes letters itself (it took core.letters' tables)."""
    return scanio(pure=False) is not None and bool(_configured)


def threads() -> int:
    """How many threads the accelerator's system calls run on (this machine's CPUs, 1-4)."""
    return max(1, min(4, os.cpu_count() or 1))


def reader(pure: bool | None = None) -> Reader:
    """The scan's reader: in C when it is built and not switched off, else the pure one."""
    from letterbox_tui.core.reader import PURE

    fast = scanio(pure)
    return PURE if fast is None else CReader(fast)


class CReader:
    """The scan's system calls in C, without the GIL, on several threads."""

    name = "c"

    def __init__(self, fast: ModuleType) -> None:
        self.fast = fast

    def stat_entries(self, dir_fd: int, entries: list[os.DirEntry]) -> list[tuple[int, int, int, int] | OSError]:
        packed = self.fast.stat_packed(dir_fd, [e.name for e in entries], threads())
        if packed is not None:
            return list(STAT_RECORD.iter_unpack(packed))
        from letterbox_tui.core.reader import PURE

        return PURE.stat_entries(dir_fd, entries)  # one failed: each is asked again, to say why

    def read_headers(self, dir_fd: int, names: list[str], where: tuple[str, str, str] | None = None) -> list[tuple]:
        return self.fast.read_headers(dir_fd, names, threads(), where)

    def iter_headers(self, dir_fd: int, names: list[str], where: tuple[str, str, str] | None = None) -> Iterator[tuple]:
        """With a second CPU, each batch of names is read by a thread of the accelerator's
        own (no GIL) while the caller builds letters from the batch before. The system calls
        are most of a cold scan; this way the Python work beside them costs little extra.

        The first batch is started at once, before the first result is asked for, so a
        caller can prepare the next folder while this one is being read."""
        if len(names) <= FIRST_BATCH or threads() < 2:
            return iter(self.read_headers(dir_fd, names, where))
        # a small first batch: the caller may wait for it with nothing else to do
        bounds = [0, *range(FIRST_BATCH, len(names), BATCH), len(names)]
        first = self.fast.read_start(dir_fd, names[: bounds[1]])
        return self._read_ahead(dir_fd, names, bounds, first, where)

    def iter_batches(self, dir_fd: int, names: list[str], where: tuple[str, str, str]) -> Iterator[tuple]:
        """``Reader.iter_batches``: ``iter_headers`` a batch at a time, each as (its names,
        its results, the hashes and stats of the letters made in C): such a letter is in
        the results as itself, its header's digest (16 bytes) and its (size, mtime_ns,
        inode, ctime_ns) (32 bytes, native 64-bit words) in the two blobs, in order."""
        small = len(names) <= FIRST_BATCH or threads() < 2
        bounds = [0, len(names)] if small else [0, *range(FIRST_BATCH, len(names), BATCH), len(names)]
        # the first batch is started at once (not when the first result is asked for), so
        # it is read while the caller lists the next folder
        first = self.fast.read_start(dir_fd, names[: bounds[1]])
        return self._batches(dir_fd, names, bounds, first, where)

    def _batches(self, dir_fd: int, names: list[str], bounds: list[int], pending, where) -> Iterator[tuple]:
        fast = self.fast
        for at in range(1, len(bounds)):
            ahead = fast.read_start(dir_fd, names[bounds[at] : bounds[at + 1]]) if at + 1 < len(bounds) else None
            results, hashes, stats = fast.read_finish(pending, where, True)
            pending = ahead
            yield names[bounds[at - 1] : bounds[at]], results, hashes, stats

    def _read_ahead(self, dir_fd: int, names: list[str], bounds: list[int], pending, where) -> Iterator[tuple]:
        """Each batch is started before the one before it is finished: while this thread
        makes a batch's letters (``read_finish``, with the GIL) and the caller takes them,
        the next batch is being read by a thread of its own."""
        fast = self.fast
        for at in range(1, len(bounds)):
            ahead = fast.read_start(dir_fd, names[bounds[at] : bounds[at + 1]]) if at + 1 < len(bounds) else None
            done = fast.read_finish(pending, where)
            pending = ahead
            yield from done


def pack_stats(records: list[tuple[int, int, int, int]]) -> bytes:
    """(size, mtime_ns, inode, ctime_ns) records packed; ``struct.error`` beyond 64 bits."""
    pack = STAT_RECORD.pack
    return b"".join([pack(*r) for r in records])


def stat_packed(dir_fd: int, names: list[str], *, pure: bool | None = None) -> bytes | None:
    """The packed stat record of each name in the folder ``dir_fd`` (not following a
    symlink), or None when one cannot be stat-ed or does not fit: on several threads in C
    when the accelerator is built."""
    fast = stat_module(pure)
    if fast is not None:
        return fast.stat_packed(dir_fd, names, threads())
    stat = os.stat
    records = []
    add = records.append
    for name in names:
        try:
            st = stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return None
        add((st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
    try:
        return pack_stats(records)
    except struct.error:
        return None

"""The optional C accelerator (``_scanio``, built from ``_scanio.c`` when a compiler is
present at install time), or None: then the pure-Python code beside each use runs, with
the same results. ``LETTERBOX_TUI_PURE=1`` switches it off (the tests run both ways).

Also the one definition of the packed stat record the accelerator, the scan and the
answer memo share: (size, mtime_ns, inode, ctime_ns) per file, as signed 64-bit
little-endian words."""

from __future__ import annotations

import os
import struct
from types import ModuleType

#: one file's packed (size, mtime_ns, inode, ctime_ns), as ``_scanio.stat_packed`` writes it
STAT_RECORD = struct.Struct("<4q")


def scanio() -> ModuleType | None:
    if os.environ.get("LETTERBOX_TUI_PURE"):
        return None
    try:
        from . import _scanio
    except ImportError:
        return None
    return _scanio


def threads() -> int:
    """How many threads the accelerator's system calls run on (this machine's CPUs, 1-4)."""
    return max(1, min(4, os.cpu_count() or 1))


def pack_stats(records: list[tuple[int, int, int, int]]) -> bytes:
    """(size, mtime_ns, inode, ctime_ns) records packed; ``struct.error`` beyond 64 bits."""
    pack = STAT_RECORD.pack
    return b"".join([pack(*r) for r in records])


def stat_packed(dir_fd: int, names: list[str]) -> bytes | None:
    """The packed stat record of each name in the folder ``dir_fd`` (not following a
    symlink), or None when one cannot be stat-ed or does not fit: on several threads in C
    when the accelerator is built."""
    fast = scanio()
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

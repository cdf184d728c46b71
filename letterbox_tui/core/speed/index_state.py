"""The derived index's state (what the scan saw of the file system: ``memo_state``'s flat
blob) kept beside its generation as a file of its own too, which a reader maps: the proof
that a letterbox is unchanged starts without 10 MB copied out of SQLite first (at 100,000
letters ~6 ms before the proof, now ~0.1 ms). The ``state`` row in the index's meta stays
what the file only stands for: the file counts when its name and size are what the
committed meta says; else (missing, cut short, another's) the row is read as before.

A new state gets a new name (a reader that mapped the old one keeps reading it whole); the
writer removes the others once its own is committed (``Index.refresh``), and a generation's
state files go with it (``index._remove``)."""

from __future__ import annotations

import mmap
import os
import stat
import time

from letterbox_tui.core.flags import READ

#: what follows the generation's file name in its state files' names
MARK = ".state."


def write(gen: str, blob: bytes | None) -> str | None:
    """``blob`` written beside the generation ``gen`` under a new name; that name, or None
    (no state to keep, or it could not be written: the meta's row is read instead)."""
    if blob is None:
        return None
    name = f"{os.path.basename(gen)}{MARK}{os.getpid()}-{time.time_ns()}"
    path = os.path.join(os.path.dirname(gen), name)
    try:
        with open(path + ".tmp", "wb") as fh:
            fh.write(blob)
        os.replace(path + ".tmp", path)  # (a reader sees the whole file or none)
    except OSError:
        return None
    return name


def mapped(gen: str | None, name, size) -> mmap.mmap | None:
    """The state file ``name`` of the generation ``gen`` mapped, when it is there with
    ``size`` bytes; else None."""
    if gen is None or type(name) is not str or type(size) is not int or size <= 0:
        return None
    if "/" in name or not name.startswith(os.path.basename(gen) + MARK) or name.endswith(".tmp"):
        return None
    try:
        fd = os.open(os.path.join(os.path.dirname(gen), name), READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != size:
            return None
        return mmap.mmap(fd, size, prot=mmap.PROT_READ)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def others(gen: str, keep: str | None = None) -> list[str]:
    """The paths of every state file of ``gen`` but ``keep`` (a name)."""
    directory, base = os.path.split(gen)
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names if n.startswith(base + MARK) and n != keep]

"""The answer memo's state (``memo.recordable``) as one flat blob: a small pickled head (the
directories; per folder its name, count and where its names and records lie), then every
folder's names (each ended by a NUL) and packed stat records, as they are. A reader uses
the names and records as views of what it read (``state_of``): nothing is unpickled or
copied but the head, and the proof (``memo.Proof``) hands the views to the accelerator.
The memo's state files and the derived index's state are kept this way."""

from __future__ import annotations

import io
import pickle
import struct

from .accel import STAT_RECORD
from .files import NoGlobals

#: the head's length, before it
_HEAD_LEN = struct.Struct("<Q")


def _flat_state(dirs, folders) -> list[bytes]:
    """A state (``recordable``) as a state file's parts after its token: the length of a
    small pickled head (the directories; per folder its name, count and where its names
    and records lie), the head, then every folder's names (each ended by a NUL) and
    records, as they are."""
    where, blobs, at = [], [], 0
    for rel, joined, n, stats in folders:
        names = bytes(joined) + b"\0" if n else b""
        where.append((rel, n, at, len(names), at + len(names)))
        blobs += [names, stats]
        at += len(names) + len(stats)
    head = pickle.dumps((dirs, tuple(where)), protocol=5)
    return [_HEAD_LEN.pack(len(head)), head, *blobs]


def state_blob(state) -> bytes:
    """A state (``recordable``) as one flat blob (``_flat_state``; the derived index keeps it)."""
    return b"".join(_flat_state(*state))


def state_of(blob) -> tuple | None:
    """(dirs, folders) of a flat state (``_flat_state``), each folder's names and records
    views of ``blob``; a state pickled whole (older indexes) is read too. None when it is
    of the wrong shape (it vouches for nothing)."""
    view = memoryview(blob)
    try:
        if bytes(view[:2]) == b"\x80\x05":  # pickled whole
            dirs, folders = NoGlobals(io.BytesIO(view)).load()
            return (dirs, folders) if type(dirs) is tuple and type(folders) is tuple else None
        (size,) = _HEAD_LEN.unpack_from(view, 0)
        rest = view[_HEAD_LEN.size + size :]
        dirs, where = NoGlobals(io.BytesIO(view[_HEAD_LEN.size : _HEAD_LEN.size + size])).load()
        if not _state_looks_right(dirs, where, len(rest)):
            return None
        folders = tuple((rel, rest[a : a + length], n, rest[b : b + n * STAT_RECORD.size])
                        for rel, n, a, length, b in where)
        if any(n and f[1][-1] != 0 for f, (_, n, *_) in zip(folders, where)):
            return None
        return dirs, folders
    except Exception:  # noqa: BLE001 - a damaged state is no state
        return None


def _state_looks_right(dirs, where, size: int) -> bool:
    if type(dirs) is not tuple or type(where) is not tuple or not dirs:
        return False
    for d in dirs:
        if not (type(d) is tuple and len(d) == 5 and type(d[0]) is str and all(type(v) is int for v in d[1:])):
            return False
    if dirs[0][0] != "":
        return False
    known = {d[0] for d in dirs}
    for f in where:
        if not (type(f) is tuple and len(f) == 5 and type(f[0]) is str and f[0] in known
                and all(type(v) is int and v >= 0 for v in f[1:])):
            return False
        _, n, a, length, b = f
        if (length == 0) != (n == 0) or a + length > size or b + n * STAT_RECORD.size > size:
            return False
    return True

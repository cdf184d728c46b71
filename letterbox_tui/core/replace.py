"""Replacing a file whole or not at all, through a descriptor of its folder: the one way a
file is replaced (the user's settings, drafts, history and seen marker, the truth file, the
ack sidecar and status note, a file ``sync`` brings in, the sync block's cache).

The bytes go to a new hidden temporary ``.<name>.tmp.<12 hex>`` (the name the write gate's
temporaries have, ``core.temporaries``) created exclusively in the folder the descriptor
holds, are flushed to disk, then renamed over the target in that same folder: a reader sees
the old file or the new one, never half of one. Everything happens relative to the
descriptor, so a folder moved or swapped for a symlink after it was opened can never receive
the temporary or the file. On any failure, an interrupt included, the temporary is removed
and the error raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from . import flags as fsflags


def _token() -> str:
    # os.urandom, not secrets: importing secrets loads hashlib's OpenSSL on every read path
    return os.urandom(6).hex()


def write_temporary(dfd: int, name: str, data: bytes, mode: int = 0o644) -> str:
    """A new hidden temporary ``.<name>.tmp.<12 hex>`` in the folder ``dfd`` holding
    ``data``, fsynced and closed; its name. Removed again when writing it fails."""
    tmp = f".{name}.tmp.{_token()}"
    fd = os.open(tmp, fsflags.CREATE, mode, dir_fd=dfd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        forget(dfd, tmp)
        raise
    return tmp


def forget(dfd: int, tmp: str) -> None:
    """Remove a temporary if it is still there (gone once renamed into place)."""
    try:
        os.unlink(tmp, dir_fd=dfd)
    except OSError:
        pass


def replace_in(dfd: int, name: str, data: bytes, *, mode: int = 0o600,
               before_replace: Callable[[], None] | None = None) -> None:
    """Make ``name`` in the folder ``dfd`` hold ``data``. ``before_replace`` runs once the
    bytes are on disk, just before the rename: it may raise to leave the target as it was.
    The folder is flushed after the rename, so the new name survives a crash too."""
    tmp = write_temporary(dfd, name, data, mode)
    try:
        if before_replace is not None:
            before_replace()
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        forget(dfd, tmp)
        raise
    try:
        os.fsync(dfd)
    except OSError:
        pass

"""Reading one file of a letterbox whole, safely: a letter's body and sha256 for ``show``
and the app's letter pane, a seat's status note, an existing letter the write gate must
compare. Queries never call this: they read headers only (``core.scan``).

Every folder on the way is opened relative to its parent with ``O_NOFOLLOW``, the file
with ``O_NOFOLLOW | O_NONBLOCK``, and only a regular file (``fstat``) is read: a symlink is
never followed, a FIFO never blocks, a device is never read. Nothing here raises ``OSError``.
"""

from __future__ import annotations

import hashlib
import os

from . import flags as fsflags
import stat
from dataclasses import dataclass

_DIR = fsflags.DIR
_FILE = fsflags.READ

NOT_REGULAR = "not a regular file"
#: the most of one file a face hashes (``show``, the app's provenance): a sparse 50 GB
#: letter would take minutes
HASH_LIMIT = 64 << 20
TOO_LARGE_TO_HASH = "too large to hash"


@dataclass(slots=True)
class FileRead:
    data: bytes = b""  # the file's first ``keep`` bytes
    truncated: bool = False  # the file holds more than ``keep`` bytes
    sha256: str | None = None  # of the whole file (or of its first ``hashed`` bytes); None when not hashed
    hashed: int = 0  # how many bytes ``sha256`` covers: the size, or less for a prefix
    size: int | None = None
    stat_key: tuple[int, int, int] | None = None  # (size, mtime_ns, inode), as the scan keys a letter
    error: str | None = None  # NOT_REGULAR, TOO_LARGE_TO_HASH or "cannot read: ..."


def read_file(
    root: str | os.PathLike[str], rel: str, *, keep: int, hashing: bool = True, hash_limit: int | None = None,
    prefix: bool = False,
) -> FileRead:
    """Read ``root/rel`` (``rel`` with ``/`` separators), keeping its first ``keep`` bytes.

    With ``hashing`` the whole file is read and hashed with sha256, unless it is larger than
    ``hash_limit``: then, with ``prefix``, only its first ``hash_limit`` bytes are read and
    hashed (``hashed`` says how many: less than ``size``), else ``sha256`` is None and
    ``error`` says so (``data`` is kept either way). Without ``hashing``, no more than
    ``keep + 1`` bytes are read. Never raises.
    """
    folder, _, name = rel.rpartition("/")
    return read_files(root, folder, [name], keep=keep, hashing=hashing, hash_limit=hash_limit, prefix=prefix)[0]


def read_files(
    root: str | os.PathLike[str], folder: str, names: list[str], *, keep: int, hashing: bool = True,
    hash_limit: int | None = None, prefix: bool = False,
) -> list[FileRead]:
    """``read_file`` of ``folder/name`` for each of ``names``, in order: the folders on the
    way opened once for all of them. Never raises."""
    fds: list[int] = []
    try:
        fd = os.open(os.fspath(root), _DIR)
        fds.append(fd)
        for part in folder.split("/") if folder else ():
            fd = os.open(part, _DIR, dir_fd=fd)
            fds.append(fd)
        return [_read_in(fd, name, keep, hashing, hash_limit, prefix) for name in names]
    except OSError as exc:
        why = f"cannot read: {exc.strerror or exc}"
    except ValueError as exc:  # a NUL byte in a path
        why = f"cannot read: {exc}"
    finally:
        for fd in reversed(fds):
            os.close(fd)
    return [FileRead(error=why) for _ in names]


def _read_in(dir_fd: int, name: str, keep: int, hashing: bool, hash_limit: int | None, prefix: bool) -> FileRead:
    """The file ``name`` of the open folder ``dir_fd`` (``read_file``)."""
    out = FileRead()
    fd = None
    try:
        fd = os.open(name, _FILE, dir_fd=dir_fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            out.error = NOT_REGULAR
            return out
        out.size = st.st_size
        out.stat_key = (st.st_size, st.st_mtime_ns, st.st_ino)
        too_large = hashing and hash_limit is not None and st.st_size > hash_limit
        digest = hashlib.sha256() if hashing and (prefix or not too_large) else None
        head = bytearray()
        while True:
            hashing_more = digest is not None and (hash_limit is None or out.hashed < hash_limit)
            if hashing_more:  # one byte past the limit, unless a prefix: a file that grew is seen
                want = 1 << 20 if hash_limit is None else min(1 << 20, hash_limit - out.hashed + (not prefix))
            else:
                want = min(1 << 20, keep + 1 - len(head))
            if want <= 0:
                break
            chunk = os.read(fd, want)
            if not chunk:
                break
            if hashing_more:
                part = chunk if hash_limit is None else chunk[: hash_limit - out.hashed]
                if len(part) < len(chunk) and not prefix:  # grew past the limit while we read
                    digest, too_large = None, True
                else:
                    digest.update(part)
                    out.hashed += len(part)
            if len(head) <= keep:
                head += chunk[: keep + 1 - len(head)]
        out.truncated = len(head) > keep
        out.data = bytes(head[:keep])
        if digest is not None:
            out.sha256 = digest.hexdigest()
        elif too_large:
            out.error = TOO_LARGE_TO_HASH
    except OSError as exc:
        out.error = f"cannot read: {exc.strerror or exc}"
    except ValueError as exc:  # a NUL byte in a path
        out.error = f"cannot read: {exc}"
    finally:
        if fd is not None:
            os.close(fd)
    return out

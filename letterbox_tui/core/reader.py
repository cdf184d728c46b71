"""The scan's system calls on one file, and how the scan words what it could not read.

Letter files are opened with ``O_NOFOLLOW | O_NONBLOCK`` and must ``fstat`` as regular
files: a FIFO never blocks and a device is never read. Each header costs one ``os.read``
of 4 KiB (more only for a long header); bodies are never read.

Also how the scan words what it could not read (``why``, ``kind_of_mode``) and names what
it lists (``entry_kind``, ``utf8_name``, ``shown_name``).
"""

from __future__ import annotations

import errno
import os
import stat

from . import flags as fsflags
from .header import MAX_HEADER, needs_more

FIRST_READ = 4096
FILE_FLAGS = fsflags.READ


def read_header(dir_fd: int, name: str) -> tuple[os.stat_result, bytes | None]:
    """The stat of the file ``name`` in the directory ``dir_fd`` (opened, never through a
    symlink) and the first bytes of it, enough to hold its header; None for the bytes of
    a file that is not regular (never read). Raises the ``OSError`` of its open, fstat or
    read (``FileNotFoundError``: it went since the listing)."""
    fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return st, None
        return st, read_header_bytes(fd)
    finally:
        os.close(fd)


def read_header_bytes(fd: int) -> bytes:
    """The first bytes of an open file, enough to hold its header (bounded).

    One ``os.read`` of 4 KiB settles an ordinary header; more is read only while no
    closing delimiter has been seen, never past the header limit. A short read is not
    taken for the end of the file (network file systems return them).
    """
    data = os.read(fd, FIRST_READ)
    while data and len(data) < MAX_HEADER + 8 and needs_more(data, at_eof=False):
        more = os.read(fd, MAX_HEADER + 8 - len(data))
        if not more:
            break
        data += more
    return data


def why(exc: OSError) -> str:
    """What the scan says of an entry it could not open or stat."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "symlink"
    if exc.errno == errno.ENXIO:
        return "socket"
    if exc.errno == errno.ENOTDIR:
        return "not a directory"
    return f"cannot open: {exc.strerror or exc}"


def kind_of_entry(entry: os.DirEntry) -> str | None:
    """Why a non-regular entry is unsupported; None when it vanished since the listing."""
    try:
        return kind_of_mode(entry.stat(follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return why(exc)


def kind_of_mode(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISDIR(mode):
        return "directory"
    return "not a regular file"


def entry_kind(entry: os.DirEntry, *, regular: bool = False) -> str:
    """"symlink", "dir" (or "file" with ``regular``), "other", or why it cannot be told."""
    try:
        if entry.is_symlink():
            return "symlink"
        if regular:
            return "file" if entry.is_file(follow_symlinks=False) else "other"
        return "dir" if entry.is_dir(follow_symlinks=False) else "other"
    except OSError as exc:
        return why(exc)


def is_regular(entry: os.DirEntry) -> bool:
    """True for a regular file (never through a symlink); False when that cannot be told."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def utf8_name(name: str) -> bool:
    """False when a file name held bytes that are not UTF-8 (decoded as lone surrogates)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(text: str) -> str:
    """A name fit for JSON and a terminal's encoder: undecodable bytes become \\xNN."""
    if utf8_name(text):
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")

"""The scan's system-call half: stat entries, open/fstat/read the first bytes of letter files.

``Reader`` is what the scan asks of it; ``PURE`` is the plain-Python reader, the scan's
default. A faster one with the same answers (the C accelerator on several threads) lives
in the speed wing (``core.speed.accel``) and is handed to ``scan`` as its ``reader``: the
core never imports it.

Letter files are opened with ``O_NOFOLLOW | O_NONBLOCK`` and must ``fstat`` as regular
files: a FIFO never blocks and a device is never read. Each header costs one ``os.read``
of 4 KiB (more only for a long header); bodies are never read.

Also how the scan words what it could not read (``why``, ``why_errno``, ``kind_of_mode``),
names what it lists (``entry_kind``, ``utf8_name``, ``shown_name``) and sorts the common
folder's entries at once (``plain_folder``).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from itertools import compress
from operator import attrgetter, methodcaller
from typing import Protocol

from . import flags as fsflags
from .header import MAX_HEADER, needs_more

FIRST_READ = 4096
FILE_FLAGS = fsflags.READ


class Reader(Protocol):
    """What the scan asks of a reader (``PURE`` here; ``core.speed.accel`` has a faster one)."""

    def stat_entries(self, dir_fd: int, entries: list[os.DirEntry]) -> list[tuple[int, int, int, int] | OSError]:
        """(size, mtime_ns, inode, ctime_ns) of each entry (not following a symlink), or
        the OSError its stat raised."""
        ...

    def iter_headers(
        self, dir_fd: int, names: list[str], where: tuple[str, str, str] | None = None
    ) -> Iterator[tuple]:
        """For each name, in order: (stage, errno, mode, size, mtime_ns, inode, ctime_ns,
        data, fields); stage 1 open, 2 fstat, 3 read failed; data None for a file that is
        not regular; fields None (``parse_header`` judges ``data``), a tuple of (key,
        value) pairs split the way ``parse_header`` would, or the ``Letter`` itself.

        ``where``, (seat, folder, path prefix), lets a reader make the letter of a plainly
        canonical header itself, by ``letters.FIELD_SLOTS`` (the letter ``letters.build``
        makes); a reader may ignore it. For a letter it made, ``data`` is the BLAKE2b-128
        digest (16 bytes) of the header through its closing line, not the bytes: all a
        header cache keeps of them (``HeaderCache.put_hashed``)."""
        ...


# Optional: ``iter_batches(dir_fd, names, where)``: ``iter_headers`` a batch at a time, each
# as (its names, its results, hashes, stats), where a letter the reader made is in the
# results as itself and its header's BLAKE2b-128 digest and its (size, mtime_ns, inode,
# ctime_ns) are in ``hashes`` (16 bytes a letter) and ``stats`` (32: native 64-bit words),
# in order: the scan then takes a batch of such letters at once (``core.speed.accel``).


class PureReader:
    """The plain-Python reader: one file after another, on this thread."""

    name = "pure"

    def stat_entries(self, dir_fd: int, entries: list[os.DirEntry]) -> list[tuple[int, int, int, int] | OSError]:
        out: list[tuple[int, int, int, int] | OSError] = []
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                out.append(exc)
                continue
            out.append((st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
        return out

    def iter_headers(
        self, dir_fd: int, names: list[str], where: tuple[str, str, str] | None = None
    ) -> Iterator[tuple]:
        return iter(read_headers(dir_fd, names))


PURE = PureReader()


def read_headers(dir_fd: int, names: list[str]) -> list[tuple]:
    """``Reader.iter_headers`` as a list, in Python (fields always None)."""
    out = []
    add = out.append
    for name in names:
        try:
            fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            add((1, exc.errno or 0, 0, 0, 0, 0, 0, None, None))
            continue
        try:
            try:
                st = os.fstat(fd)
            except OSError as exc:
                add((2, exc.errno or 0, 0, 0, 0, 0, 0, None, None))
                continue
            data = None
            if stat.S_ISREG(st.st_mode):
                try:
                    data = read_header_bytes(fd)
                except OSError as exc:
                    add((3, exc.errno or 0, 0, 0, 0, 0, 0, None, None))
                    continue
            add((0, 0, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns, data, None))
        finally:
            os.close(fd)
    return out


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


def why_errno(err: int) -> str:
    return why(OSError(err, os.strerror(err)))


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


_entry_name = attrgetter("name")
_ends_md = methodcaller("endswith", ".md")
_ends_ack = methodcaller("endswith", ".md.ack")
_regular_file = methodcaller("is_file", follow_symlinks=False)  # a symlink is never one


def plain_folder(entries: list[os.DirEntry]) -> tuple[list[str], list[os.DirEntry], list[str]] | None:
    """The common folder classified without a Python step per entry: its ``*.md`` names
    and entries, and its ``*.md.ack`` names, when every ``*.md`` entry is a regular file
    with an ASCII name; else None (then ``_list_folder`` looks at each entry)."""
    names = list(map(_entry_name, entries))
    md = list(map(_ends_md, names))
    md_names = list(compress(names, md))
    md_entries = list(compress(entries, md))
    try:
        if not (all(map(str.isascii, md_names)) and all(map(_regular_file, md_entries))):
            return None
    except OSError:
        return None
    return md_names, md_entries, list(compress(names, map(_ends_ack, names)))

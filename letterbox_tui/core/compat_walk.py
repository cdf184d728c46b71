"""The protocol's compat walk (``core.compat``): what its ``query --compat-v2`` examines.

Every ``*.md`` name of each seat's ``inbox/`` and ``processed/`` is a leaf (dot names
included), read with the one header grammar (``core.header``) and, when unreadable, named
with the protocol's code (``header_code``); a directory or symlink nested there, an
``archive/`` in a seat, a missing folder, a listing over ``max_names``, a symlink on the way
to the root or a directory that changes while it is listed is a scope issue. Seats are the
root's names ``[a-z][a-z0-9-]*`` except ``locks`` unless given. Nothing is written.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from .flags import DIR as _DIR
from .flags import READ as _FILE
from .header import MAX_HEADER, MAX_LINE, parse_header

_SEAT = re.compile(r"[a-z][a-z0-9-]*")
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
#: a directory listing holds at most this many names (``--max-names``)
MAX_NAMES = 100_000


class CompatError(ValueError):
    """An invalid query: its code is the compat document's ``error``."""


@dataclass(frozen=True)
class Leaf:
    ref: str  # <seat>/<folder>/<name>
    name: str
    location: str  # <seat>/<folder>
    fields: dict[str, str] | None
    issue: str | None


def _sig(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def header_code(data: bytes) -> str:
    """The protocol's code for the first thing its line reader refuses in ``data``."""
    total, pos, first = 0, 0, True
    while True:
        end = data.find(b"\n", pos, pos + MAX_LINE + 1)
        raw = data[pos:] if end < 0 else data[pos:end + 1]
        raw = raw[:MAX_LINE + 1]
        total += len(raw)
        if len(raw) > MAX_LINE or total > MAX_HEADER:
            return "header_limit"
        if not raw:
            return "unterminated_header"
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeError:
            return "invalid_encoding"
        if any(ord(c) < 32 or ord(c) == 127 for c in text):
            return "control_character"
        pos += len(raw)
        if first:
            if text != "---":
                return "missing_opening_delimiter"
            first, seen = False, set()
            continue
        if text == "---":
            return "unterminated_header"  # (not reached for a header parse_header refused)
        if not text.strip():
            continue
        key, sep, _ = text.partition(":")
        if not sep or not _KEY.fullmatch(key):
            return "invalid_field"
        if key in seen:
            return "duplicate_key"
        seen.add(key)


class _Walk:
    def __init__(self, max_names: int) -> None:
        self.max_names = max_names
        self.leaves: list[Leaf] = []
        self.issues: list[tuple[str, str]] = []

    def issue(self, ref: str, code: str) -> None:
        if (ref, code) not in self.issues:
            self.issues.append((ref, code))

    def names(self, fd: int, ref: str) -> list[str]:
        names: list[str] = []
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    names.append(entry.name)
                    if len(names) > self.max_names:
                        self.issue(ref, "enumeration_limit")
                        break
        except OSError:
            self.issue(ref, "enumeration_unreadable_or_changed")
        return sorted(names)

    def directory(self, parent: int, name: str, ref: str, visit) -> None:
        fd = None
        try:
            try:
                bound = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                self.issue(ref, "missing_directory")
                return
            if not stat.S_ISDIR(bound.st_mode):
                self.issue(ref, "unsafe_directory")
                return
            fd = os.open(name, _DIR, dir_fd=parent)
            pinned = os.fstat(fd)
            if (bound.st_dev, bound.st_ino) != (pinned.st_dev, pinned.st_ino):
                self.issue(ref, "directory_changed")
                return
            names = self.names(fd, ref)
            visit(fd, ref, names)
            if names != self.names(fd, ref) or _sig(pinned) != _sig(os.fstat(fd)):
                self.issue(ref, "directory_changed")
            now = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if not stat.S_ISDIR(now.st_mode) or (now.st_dev, now.st_ino) != (pinned.st_dev, pinned.st_ino):
                self.issue(ref, "directory_changed")
        except OSError:
            self.issue(ref, "directory_unreadable_or_changed")
        finally:
            if fd is not None:
                os.close(fd)

    def seat(self, fd: int, ref: str, names: list[str]) -> None:
        for folder in ("inbox", "processed"):
            self.directory(fd, folder, f"{ref}/{folder}", self.folder)
        if "archive" in names:
            self.issue(f"{ref}/archive", "unsupported_archive_layout")

    def folder(self, fd: int, ref: str, names: list[str]) -> None:
        for name in names:
            if name.endswith(".md"):
                self.leaves.append(self.leaf(fd, ref, name))
                continue
            try:  # sidecars are not letters; anything nested is outside the walk
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
                    self.issue(f"{ref}/{name}", "unexpected_nested_entry")
            except OSError:
                self.issue(f"{ref}/{name}", "entry_unreadable_or_changed")

    def leaf(self, parent: int, location: str, name: str) -> Leaf:
        ref = f"{location}/{name}"
        if any(ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF for c in name):
            return Leaf(ref, name, location, None, "unsafe_name")
        fd = None
        try:
            bound = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if not stat.S_ISREG(bound.st_mode):
                return Leaf(ref, name, location, None, "unsafe_leaf")
            fd = os.open(name, _FILE, dir_fd=parent)
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                return Leaf(ref, name, location, None, "unsafe_leaf")
            if _sig(bound) != _sig(before):
                return Leaf(ref, name, location, None, "leaf_changed")
            data = os.read(fd, MAX_HEADER + MAX_LINE + 2)
            parsed = parse_header(data)
            if _sig(before) != _sig(os.fstat(fd)) or _sig(before) != _sig(os.stat(name, dir_fd=parent,
                                                                                 follow_symlinks=False)):
                return Leaf(ref, name, location, None, "leaf_changed")
            if parsed.fields is None:
                return Leaf(ref, name, location, None, header_code(data))
            return Leaf(ref, name, location, dict(parsed.fields), None)
        except OSError:
            return Leaf(ref, name, location, None, "leaf_unreadable_or_changed")
        finally:
            if fd is not None:
                os.close(fd)


@dataclass(frozen=True)
class Walked:
    participants: tuple[str, ...]
    leaves: tuple[Leaf, ...]
    issues: tuple[tuple[str, str], ...]

    @property
    def complete(self) -> bool:
        return not self.issues and all(x.issue is None for x in self.leaves)


def walk(root: str, participants: Sequence[str] | None, max_names: int = MAX_NAMES) -> Walked:
    """The protocol's compat walk of ``root`` (an absolute path, no component a symlink)."""
    if not os.path.isabs(root) or "\0" in root or any(p in (".", "..") for p in root.split("/")):
        raise CompatError("invalid_scope")
    if isinstance(max_names, bool) or not 1 <= max_names <= MAX_NAMES:
        raise CompatError("invalid_scope")
    if participants is not None and (not participants or any(
            not _SEAT.fullmatch(p) or p == "locks" for p in participants)):
        raise CompatError("invalid_scope")
    seats = tuple(sorted(set(participants or ())))
    w = _Walk(max_names)
    at_root = _Walk(max_names)  # what the root itself shows: listed after the seats' issues
    fds: list[int] = []
    refusal = "root_unavailable_or_changed"
    try:
        fds.append(os.open("/", _DIR))
        for part in filter(None, root.split("/")):
            st = os.stat(part, dir_fd=fds[-1], follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                refusal = "root_component_symlink"
                raise OSError(part)
            if not stat.S_ISDIR(st.st_mode):
                refusal = "root_component_not_directory"
                raise OSError(part)
            fds.append(os.open(part, _DIR, dir_fd=fds[-1]))
        top = fds[-1]
        before = _sig(os.fstat(top))
        if participants is None:
            listed = at_root.names(top, ".")
            seats = tuple(n for n in listed if _SEAT.fullmatch(n) and n != "locks")
        for seat in seats:
            w.directory(top, seat, seat, w.seat)
        if participants is None and listed != at_root.names(top, "."):
            at_root.issue(".", "participant_discovery_changed")
        if before != _sig(os.fstat(top)):
            at_root.issue(".", "root_changed")
    except OSError:
        at_root.issue(".", refusal)
    finally:
        for fd in reversed(fds):
            os.close(fd)
    return Walked(seats, tuple(w.leaves), tuple(dict.fromkeys(w.issues + at_root.issues)))

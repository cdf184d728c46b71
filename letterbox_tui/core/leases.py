"""The protocol's advisory leases, read (SPEC 3): ``locks/<name>/lease`` holds
``owner=<seat> [session=<s>] taken=<time>``, written by the protocol's ``letterbox lock``.

Reading never takes, renews or breaks a lease: each entry of ``locks/`` is looked at, not
followed (a symlink is listed as a problem), and a ``lease`` file is read through
``core.files`` (no FIFO blocked on, at most ``MAX_LEASE`` bytes). Anything that is not a
well-formed lease held by a seat is a problem shown with the lease, never an exception.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from . import flags as fsflags
from .files import NOT_REGULAR, read_file
from .grammar import lines as file_lines, parse_time

MAX_LEASE = 4096
MAX_LEASES = 10_000  # entries of locks/ read; more are counted, not listed
_NAME_CODE = re.compile(r"--|-slash-")


@dataclass(slots=True, frozen=True)
class Lease:
    """One entry of ``locks/``: who holds it since when, and what is wrong with it."""

    name: str
    owner: str | None = None
    session: str | None = None
    taken: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def target(self) -> str:
        """The locked path as the protocol names it (lowercased; ``-`` doubled, ``/`` as
        ``-slash-``, then ``.lock``), decoded as far as it can be."""
        base = self.name.removesuffix(".lock")
        return _NAME_CODE.sub(lambda m: "-" if m.group(0) == "--" else "/", base)

    @property
    def taken_at(self) -> datetime | None:
        return parse_time(self.taken) if self.taken else None

    def to_json(self) -> dict:
        return {
            "name": self.name, "path": f"locks/{self.name}", "target": self.target, "owner": self.owner,
            "session": self.session, "taken": self.taken, "problems": list(self.problems),
        }


def parse_lease(text: str, seats: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """The ``key=value`` words of a lease line and its problems (an owner that is not a
    seat, no owner, a time that is not one, a second line)."""
    problems: list[str] = []
    lines = [ln for ln in file_lines(text) if ln.strip()]
    if len(lines) > 1:
        problems.append("the lease has more than one line")
    words: dict[str, str] = {}
    for word in (lines[0].split() if lines else []):
        key, sep, value = word.partition("=")
        if not sep or not key:
            problems.append(f"not key=value: {word[:40]}")
        elif key in words:
            problems.append(f"{key} given twice")
        else:
            words[key] = value
    owner = words.get("owner", "")
    if not owner:
        problems.append("no owner")
    elif owner not in set(seats):
        problems.append(f"owner {owner[:40]} is not a seat")
    taken = words.get("taken", "")
    if not taken:
        problems.append("no taken time")
    elif parse_time(taken) is None:
        problems.append(f"taken {taken[:40]} is not a time with an offset")
    return words, problems


def read_leases(root: str, seats: Iterable[str]) -> tuple[list[Lease], int]:
    """Every entry of ``root/locks/`` as a ``Lease`` (sorted by name), and how many more
    entries there were than ``MAX_LEASES``. No ``locks/``: none."""
    seat_set = frozenset(seats)
    try:
        fd = os.open(os.path.join(root, "locks"), fsflags.DIR)
    except OSError:
        return [], 0
    entries: list[tuple[str, int | OSError]] = []
    try:
        with os.scandir(fd) as it:
            for e in it:
                if e.name.startswith("."):
                    continue
                try:
                    entries.append((e.name, e.stat(follow_symlinks=False).st_mode))
                except OSError as exc:
                    entries.append((e.name, exc))
    except OSError:
        pass
    finally:
        os.close(fd)
    entries.sort(key=lambda e: e[0])
    more = max(0, len(entries) - MAX_LEASES)
    out = [_lease(root, name, mode, seat_set) for name, mode in entries[:MAX_LEASES]]
    return out, more


def _lease(root: str, name: str, mode: int | OSError, seats: frozenset[str]) -> Lease:
    shown = name if name.isprintable() else name.encode("unicode_escape", "backslashreplace").decode("ascii")
    if isinstance(mode, OSError):
        return Lease(shown, problems=(f"cannot be read: {mode.strerror or mode}",))
    if stat.S_ISLNK(mode):
        return Lease(shown, problems=("a symlink, not a lease directory (not followed)",))
    if not stat.S_ISDIR(mode):
        return Lease(shown, problems=("not a lease directory",))
    try:
        os.lstat(os.path.join(root, "locks", name, "lease"))
    except FileNotFoundError:
        return Lease(shown, problems=("no lease file (being taken, or left by a crash)",))
    except OSError:
        pass  # read_file says why
    f = read_file(root, f"locks/{name}/lease", keep=MAX_LEASE, hashing=False)
    if f.error is not None:
        if f.error == NOT_REGULAR:
            return Lease(shown, problems=("its lease is not a regular file",))
        return Lease(shown, problems=(f"lease {f.error}",))
    text = f.data.decode("utf-8", errors="replace")
    words, problems = parse_lease(text, seats)
    if f.truncated:
        problems.append(f"the lease is over {MAX_LEASE} bytes")
    return Lease(shown, words.get("owner") or None, words.get("session") or None, words.get("taken") or None,
                 tuple(problems))

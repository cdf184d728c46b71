"""Writers' hidden temporaries (SPEC 2: names starting with ``.`` are never letters).

A writer killed between creating its temporary and publishing leaves ``.<name>.tmp.<random>``
behind. letterbox-tui's writers name theirs ``.<name>.tmp.<12 hex>`` and remove their own
that are older than a day from each folder they write to (``sweep_own``); ``check`` lists
every other one older than a day (the protocol's own, ``.<id>.tmp.XXXXXX``, included) as a
warning (``find_temporaries``, aged by ``stale_of``), and never removes anything.
"""

from __future__ import annotations

import os

from . import flags as fsflags
import re
import stat
import time
from collections.abc import Iterable

#: this project's temporaries (``core.write.fs``)
OURS = re.compile(r"\..+\.tmp\.[0-9a-f]{12}")
#: any writer's temporary: a hidden name with ``.tmp.`` in it
ANY = re.compile(r"\..*\.tmp\..*")
#: older than this, a temporary is stale (no writer takes a day to write a letter)
STALE_AFTER = 24 * 3600
_DIR = fsflags.DIR


def _temporaries(dfd: int, pattern: re.Pattern[str]) -> list[tuple[str, float]]:
    """The regular files in the open folder ``dfd`` whose names ``pattern`` matches, each
    with its modification time, in name order."""
    out = []
    try:
        # ``listdir`` builds the names in C: a folder of a million letters costs a fraction of
        # what walking its entries one by one would; only hidden names are looked at further.
        names = [n for n in os.listdir(dfd) if n[:1] == "." and pattern.fullmatch(n) is not None]
    except OSError:
        return []
    for name in sorted(names):
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.append((name, st.st_mtime))
    return out


def stale_of(found: Iterable[tuple[str, float]], now: float | None = None) -> list[str]:
    """The names among ``found`` (name, modification time) older than a day at ``now``."""
    when = time.time() if now is None else now
    return [name for name, mtime in found if when - mtime > STALE_AFTER]


def sweep_own(dfd: int, now: float | None = None) -> list[str]:
    """Remove this project's own temporaries older than a day from the open folder ``dfd``;
    what was removed. Never raises."""
    removed = []
    for name in stale_of(_temporaries(dfd, OURS), now):
        try:
            os.unlink(name, dir_fd=dfd)
            removed.append(name)
        except OSError:
            pass
    return removed


def find_temporaries(root: str, seats: Iterable[str]) -> list[tuple[str, float]]:
    """Every writer's temporary in a seat's ``inbox/`` or ``processed/``, whatever its age:
    (path relative to the root, modification time). Reads only; never follows a symlink."""
    out: list[tuple[str, float]] = []
    for seat in seats:
        for folder in ("inbox", "processed"):
            try:
                fd = os.open(root, _DIR)
            except OSError:
                return out
            try:
                for part in (seat, folder):
                    nxt = os.open(part, _DIR, dir_fd=fd)
                    os.close(fd)
                    fd = nxt
                out += [(f"{seat}/{folder}/{name}", mtime) for name, mtime in _temporaries(fd, ANY)]
            except OSError:
                pass
            finally:
                os.close(fd)
    return out

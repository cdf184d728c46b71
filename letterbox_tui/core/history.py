"""The query bar's history: the queries a user ran, newest last, one per line in the user's
XDG state directory (never the letterbox). Bounded, written atomically, and a damaged or
missing file is an empty history, never an error."""

from __future__ import annotations

import os

from . import flags as fsflags
import stat
from pathlib import Path

from .user_files import replace_atomically

#: how many queries are kept
KEEP = 500
_MAX_FILE = 1 << 20


class QueryHistory:
    """``path`` None: the user's own history file; ``keep=False``: this session only (a
    run that must not read or write the user's files, such as the screenshots)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, keep: bool = True) -> None:
        if path is None:
            from .settings import user_state_dir

            path = user_state_dir() / "query-history"
        self.path = Path(path)
        self.keep = keep
        self.entries: list[str] = self._load() if keep else []

    def _load(self) -> list[str]:
        try:
            fd = os.open(self.path, fsflags.READ)
        except OSError:
            return []
        try:
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    return []
                raw = fh.read(_MAX_FILE)
        except OSError:
            return []
        lines = raw.decode("utf-8", "replace").splitlines()
        return [x for x in lines if x.strip() and x.isprintable()][-KEEP:]

    def add(self, query: str, *, save: bool = True) -> None:
        """Remember ``query`` as the newest (an earlier copy moves up); saved at once unless
        ``save`` is false (the app saves in a worker: ``save_lines``). A history that cannot
        be saved is kept for this session only."""
        query = " ".join(query.split())
        if not query or not query.isprintable():
            return
        if query in self.entries:
            self.entries.remove(query)
        self.entries.append(query)
        del self.entries[:-KEEP]
        if save:
            self.save_lines(list(self.entries))

    def save_lines(self, entries: list[str]) -> None:
        """Write ``entries`` (a copy: any thread may call this) as the history file."""
        if not self.keep:
            return
        try:
            replace_atomically(self.path, "".join(x + "\n" for x in entries))
        except OSError:
            pass

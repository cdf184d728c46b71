"""Replacing one of the user's own files (settings, drafts, query history, the app's seen
marker) whole or not at all.

The text goes to a new temporary file beside the target (created exclusively, never through
a symlink, readable by the user alone), is flushed to disk, then ``os.replace``s the target:
a reader sees the old file or the new one, never half of one. On any failure, an interrupt
included, the temporary is removed and the error raised.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

from . import flags as fsflags


def replace_atomically(path: str | os.PathLike[str], text: str, *, dir_mode: int | None = 0o700,
                       file_mode: int = 0o600, before_replace: Callable[[], None] | None = None) -> None:
    """Make ``path`` hold ``text`` (UTF-8), creating its folder (``dir_mode``) if needed;
    ``dir_mode=None``: the folder must exist. ``before_replace`` runs once the text is on
    disk, just before the rename: it may raise to leave the target as it was. The folder
    is flushed after the rename, so the new name survives a crash too."""
    target = Path(path)
    if dir_mode is not None:
        target.parent.mkdir(parents=True, exist_ok=True, mode=dir_mode)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, fsflags.CREATE, file_mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(target.parent, fsflags.DIR)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)

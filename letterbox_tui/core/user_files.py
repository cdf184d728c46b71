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
from pathlib import Path

from . import flags as fsflags


def replace_atomically(path: str | os.PathLike[str], text: str, *, dir_mode: int = 0o700) -> None:
    """Make ``path`` hold ``text`` (UTF-8), creating its folder (``dir_mode``) if needed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True, mode=dir_mode)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, fsflags.CREATE, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

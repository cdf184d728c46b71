"""Replacing one of the user's own files (settings, drafts, query history, the app's seen
marker, the sync block's cache) whole or not at all: ``core.replace`` through a descriptor
of the file's folder (a temporary created exclusively, never through a symlink, readable by
the user alone, fsynced, renamed over the target; removed again on any failure).

The folder is the user's own: a symlink to it (a dotfiles checkout) is followed once, when
it is opened; from then on everything happens inside the folder that was opened.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from . import flags as fsflags
from .replace import replace_in


def replace_atomically(path: str | os.PathLike[str], text: str, *, dir_mode: int | None = 0o700,
                       file_mode: int = 0o600, before_replace: Callable[[], None] | None = None) -> None:
    """Make ``path`` hold ``text`` (UTF-8), creating its folder (``dir_mode``) if needed;
    ``dir_mode=None``: the folder must exist. ``before_replace`` runs once the text is on
    disk, just before the rename: it may raise to leave the target as it was."""
    target = Path(path)
    if dir_mode is not None:
        target.parent.mkdir(parents=True, exist_ok=True, mode=dir_mode)
    dfd = os.open(target.parent, fsflags.DIR_FOLLOWING)
    try:
        replace_in(dfd, target.name, text.encode("utf-8"), mode=file_mode, before_replace=before_replace)
    finally:
        os.close(dfd)

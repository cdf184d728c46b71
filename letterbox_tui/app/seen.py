"""What the user has already seen in a letterbox: kept in the user's XDG state directory
(``platformdirs.user_state_dir("letterbox-tui")/seen/``), one small file per letterbox,
never in the letterbox itself.

The record is a watermark: the newest letter file time (``mtime_ns``) the user had in
front of them when they last looked. A letter whose file is newer arrived since then and
is *new*; opening it (or a later session) makes it seen. A watermark costs one integer
however large the letterbox is, and publishing a letter (an atomic rename of a fresh
file) always gives it a fresh time.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from letterbox_tui.core.user_files import replace_atomically


def state_path(root: str) -> Path:
    import platformdirs

    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:24]
    return Path(platformdirs.user_state_dir("letterbox-tui")) / "seen" / f"{digest}.json"


@dataclass
class Seen:
    root: str
    #: letters with a file time above this arrived since the user last looked (None:
    #: this letterbox was never opened here, so nothing is new yet)
    watermark: int | None = None
    #: letters the user opened in this session (paths): seen, whatever their time
    opened: set[str] = field(default_factory=set)
    #: ids of letters written from this app in this session: the user has seen them
    written: set[str] = field(default_factory=set)

    @classmethod
    def load(cls, root: str) -> Seen:
        try:
            with open(state_path(root), encoding="utf-8") as fh:
                data = json.load(fh)
            if data.get("root") == root and isinstance(data.get("watermark"), int):
                return cls(root, data["watermark"])
        except (OSError, ValueError, AttributeError):
            pass
        return cls(root)

    def is_new(self, letter) -> bool:
        return (self.watermark is not None and letter.mtime_ns > self.watermark and letter.path not in self.opened
                and letter.id not in self.written)

    def save(self, watermark: int) -> None:
        """Record that the user has seen everything up to ``watermark`` (atomically; a
        state directory that cannot be written loses the marker, never a letter)."""
        path = state_path(self.root)
        try:
            replace_atomically(path, json.dumps({"root": self.root, "watermark": watermark}), dir_mode=0o777)
        except OSError:
            pass


def newest_time(letters) -> int:
    from letterbox_tui.core.lazy import newest_mtime

    return newest_mtime(letters)

"""The one derived store and its one entry: ``open_answers``.

Both faces (the command line, the app) and any later one get their answers here and
nowhere else. Today the answers are computed (scan, then ``core.resolve``); the store that
keeps them between runs lands behind this same entry.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime

from letterbox_tui.core.resolve import Resolution, resolve
from letterbox_tui.core.scan import scan

__all__ = ["open_answers"]


def open_answers(
    root: str | os.PathLike[str],
    at: datetime,
    *,
    participants: Iterable[str] | None = None,
    id_time_is_utc: bool | None = None,
) -> Resolution:
    """Every derived answer over the letterbox at ``root``, at the clock ``at``.

    ``participants`` restricts the scan (the scope is then partial); ``id_time_is_utc``
    defaults to the letterbox's own setting. Raises ``LetterboxError`` when ``root``
    cannot be read.
    """
    snapshot = scan(root, participants, id_time_is_utc=id_time_is_utc)
    return resolve(snapshot, at)

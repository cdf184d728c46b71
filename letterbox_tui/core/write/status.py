"""A seat's status note (SPEC 2, 7 ``status``): ``<seat>/status.md``, written as the
protocol's ``letterbox status`` writes it, three lines::

    state: working|idle|blocked
    since: <UTC time, YYYY-MM-DDTHH:MM:SSZ>
    notes: <one line, possibly empty>

It is the seat's own note, not a letter: it is replaced whole, through a hidden temporary,
``fsync`` and a ``rename`` (a reader sees the old note or the new one, never a part), where
the protocol's shell writer truncates it in place. A person's seat uses it too.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from ..errors import LetterboxError
from .fs import replace_bytes
from .gate import check_seat, check_value, sent_stamp, utc

STATES = ("working", "idle", "blocked")
NAME = "status.md"


def status_text(state: str, note: str, moment: datetime) -> bytes:
    """The note's bytes, in the protocol's three lines."""
    return f"state: {state}\nsince: {sent_stamp(moment)}\nnotes: {note}\n".encode("utf-8")


def write_status(root: str | os.PathLike[str], seat: str, state: str, note: str = "", *,
                 now: datetime | None = None) -> Path:
    """Replace ``seat``'s status note; its path. Refused in one line (nothing written) for
    an unknown seat, a state other than working, idle or blocked, or a note that is not
    one line of text."""
    root_p = Path(os.path.realpath(os.fspath(root)))
    moment = utc(now)
    if state not in STATES:
        raise LetterboxError(f"status {state!r} must be one of {', '.join(STATES)}")
    note = note.strip() if isinstance(note, str) else ""
    if note:
        check_value("notes", note)
    check_seat(root_p, seat, "seat")
    try:
        replace_bytes(root_p, (seat,), NAME, status_text(state, note, moment))
    except OSError as exc:
        raise LetterboxError(f"cannot write {seat}/{NAME}: {exc.strerror or exc}") from None
    return root_p / seat / NAME

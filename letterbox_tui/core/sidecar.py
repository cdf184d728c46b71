"""The protocol's ack sidecar, read (SPEC 3): ``<seat>/inbox/<id>.md.ack`` means the holder
accepted the letter; its ``progress:`` and ``progress_at:`` lines are the holder's latest
progress note (written by the protocol's ``letterbox progress`` or ``letterbox-tui
progress``).

Read like a letter: through ``core.files`` (no symlink followed, no FIFO blocked on, only a
regular file), at most ``MAX_SIDECAR`` bytes. The lines are ``key: value``, split at the
first colon; the first line of a key counts, as the protocol's own reader takes it. Values
are returned as written: the faces sanitize what they show.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .files import read_file
from .grammar import lines, parse_time
from .model import Letter, Snapshot

#: a sidecar is a few short lines; a larger file is read no further than this
MAX_SIDECAR = 16 * 1024
#: a progress note is shown up to this many characters
MAX_NOTE = 1000


@dataclass(slots=True, frozen=True)
class Progress:
    """The holder's latest progress note on a letter it accepted."""

    note: str
    at: str | None  # ``progress_at`` as written (None: absent)

    @property
    def at_time(self) -> datetime | None:
        return parse_time(self.at) if self.at else None

    def to_json(self) -> dict[str, str | None]:
        return {"note": self.note, "at": self.at}

    def line(self, now: datetime) -> str:
        """``in progress: NOTE, 2h ago`` (or ``, at T`` when the time is not a valid one)."""
        when = self.at_time
        if when is not None:
            return f"in progress: {self.note}, {age(now, when)} ago"
        return f"in progress: {self.note}" + (f", at {self.at}" if self.at else "")


def age(now: datetime, then: datetime) -> str:
    """How long ago, as the protocol shows it: minutes under an hour, hours under a day,
    then days (never negative)."""
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def parse_sidecar(data: bytes) -> dict[str, str]:
    """The sidecar's ``key: value`` lines (first of each key; other lines skipped)."""
    out: dict[str, str] = {}
    for raw in lines(data.decode("utf-8", errors="replace")):
        key, sep, value = raw.partition(":")
        key = key.strip()
        if sep and key and key not in out:
            out[key] = value.strip()
    return out


def read_sidecar(root: str, letter: Letter) -> dict[str, str] | None:
    """The fields of ``letter``'s ack sidecar, or None when it has none that can be read."""
    if letter.folder != "inbox":
        return None
    f = read_file(root, letter.path + ".ack", keep=MAX_SIDECAR, hashing=False)
    if f.error is not None:
        return None
    return parse_sidecar(f.data)


def progress_of(root: str, letter: Letter, snapshot: Snapshot | None = None) -> Progress | None:
    """``letter``'s progress note, or None (no sidecar, no ``progress:`` line, or an empty
    one). With ``snapshot``, a letter the scan saw no sidecar beside is not opened."""
    if snapshot is not None and not snapshot.has_sidecar(letter):
        return None
    return progress_in(read_sidecar(root, letter))


def progress_in(fields: dict[str, str] | None) -> Progress | None:
    """The progress note among a sidecar's fields (``parse_sidecar``), or None."""
    if not fields:
        return None
    note = fields.get("progress", "")
    if not note:
        return None
    if len(note) > MAX_NOTE:
        note = note[:MAX_NOTE] + "…"
    return Progress(note, fields.get("progress_at") or None)

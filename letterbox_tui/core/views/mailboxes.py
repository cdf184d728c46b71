"""Each seat's mailboxes (Inbox, Processed, Sent) and their counts, and the letters of one:
``inbox``/``processed`` are the letters lying in that seat's folder, ``sent`` the letters
the seat wrote (wherever they lie). Only seats in the scope are listed."""

from __future__ import annotations

from dataclasses import dataclass

from ..lazy import count_by, count_by_folder, in_folder, with_field
from ..model import Letter, Snapshot
from .letterfile import status_line
from .order import newest_first

FOLDERS = ("inbox", "processed", "sent")


@dataclass(slots=True, frozen=True)
class SeatMailboxes:
    seat: str
    counts: dict[str, int]  # folder -> letters
    status: str | None  # the seat's status note, one line (hostile text: sanitize to show)


def seat_mailboxes(snapshot: Snapshot, *, status: bool = True) -> list[SeatMailboxes]:
    counts = count_by_folder(snapshot.letters)
    for sender, n in count_by(snapshot.letters, "from").items():
        counts[(sender, "sent")] = n
    scoped = set(snapshot.scope.participants)
    out = []
    for seat in snapshot.seats:
        if seat not in scoped:
            continue
        note = status_line(snapshot.root, snapshot.status_notes.get(seat)) if status else None
        out.append(SeatMailboxes(seat, {f: counts.get((seat, f), 0) for f in FOLDERS}, note))
    return out


def mailbox_letters(snapshot: Snapshot, seat: str, folder: str) -> list[Letter]:
    """The letters of one seat's mailbox, newest first."""
    if folder == "sent":
        pick = with_field(snapshot.letters, "from", [seat])
    else:
        pick = in_folder(snapshot.letters, seat, folder)
    return newest_first(pick)

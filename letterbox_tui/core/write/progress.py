"""Progress notes (SPEC 3, 7 ``progress``): the holder of an accepted letter writes its
latest progress into the letter's ack sidecar, as the protocol's ``letterbox progress``
does: only in one's own inbox, only where the sidecar is (``reply ack`` first), one line;
the sidecar's old ``progress:``/``progress_at:`` lines are replaced and the others kept,
through a hidden temporary and a rename. Under the letter's lifecycle lock, so a terminal
reply closing the letter meanwhile never leaves an orphan sidecar behind.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from ..errors import LetterboxError
from ..files import NOT_REGULAR, read_file
from ..model import Snapshot
from ..settings import load_settings
from ..sidecar import MAX_SIDECAR
from .fs import exists, replace_bytes
from .gate import check_seat, check_value, letterbox_ids, sent_stamp, utc
from .lifecycle import lifecycle_lock


def write_progress(
    root: str | os.PathLike[str],
    letter_id: str,
    note: str,
    *,
    seat: str,
    now: datetime | None = None,
    snapshot: Snapshot | None = None,
    lock_timeout: float | None = None,
) -> Path:
    """Set ``seat``'s progress note on its accepted letter ``letter_id``; the sidecar's path."""
    root_p = Path(os.path.realpath(os.fspath(root)))
    settings = load_settings(root_p)
    moment = utc(now)
    if not isinstance(note, str) or not note.strip():
        raise LetterboxError("the progress note is empty")
    if "\n" in note or "\r" in note:
        raise LetterboxError("a progress note is one line")
    note = note.strip()
    check_value("progress", note)
    check_seat(root_p, seat, "--as")
    index = letterbox_ids(root_p, settings, moment, snapshot)
    letter = index.moving(letter_id)
    if letter.seat != seat:
        raise LetterboxError(f"{letter_id} lies in {letter.seat}/{letter.folder}/: one progresses only letters in "
                             "one's own inbox")
    if letter.folder != "inbox":
        raise LetterboxError(f"cannot progress a filed or closed letter: {letter_id}")
    sidecar = letter.name + ".ack"
    with lifecycle_lock(root_p / seat / "inbox", letter.name, timeout=lock_timeout, shown=letter_id):
        if not exists(root_p, (seat, "inbox"), letter.name):
            raise LetterboxError(f"already closed: {letter_id} (no progress written)")
        f = read_file(root_p, f"{seat}/inbox/{sidecar}", keep=MAX_SIDECAR, hashing=False)
        if f.error is not None:
            if f.error == NOT_REGULAR:
                raise LetterboxError(f"{seat}/inbox/{sidecar} is not a regular file; not writing progress")
            raise LetterboxError(f"progress needs the ack sidecar: reply 'ack' to {letter_id} first")
        if f.truncated:
            raise LetterboxError(f"{seat}/inbox/{sidecar} is over {MAX_SIDECAR} bytes; not rewriting it")
        kept = [line for line in f.data.split(b"\n") if line and not line.startswith((b"progress:", b"progress_at:"))]
        added = [f"progress: {note}".encode(), f"progress_at: {sent_stamp(moment)}".encode()]
        try:
            replace_bytes(root_p, (seat, "inbox"), sidecar, b"\n".join(kept + added) + b"\n")
        except OSError as exc:
            raise LetterboxError(f"cannot write progress into {seat}/inbox/{sidecar}: {exc.strerror or exc}") from None
    return root_p / seat / "inbox" / sidecar

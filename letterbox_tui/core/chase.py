"""Chasing an owed item (SPEC 7 ``chase``): an ``info`` letter ``re:`` the owed letter to
the seat that owes it, saying what is asked (the note, or "status?"). The draft goes
through the one write gate (``core.write.deliver``); everything that makes a chase wrong is
refused here first, before anything is written:

- a letter that is not in the letterbox, or whose id more than one file holds;
- a letter that is not a task (nothing is owed on it);
- a closed, answered or superseded letter (nothing is owed on it any more);
- a chasing seat, or an owing seat, that is not a seat of the letterbox;
- a chase by the owing seat itself (it would never count as a chase: ``chased`` counts
  only chases from another seat);
- a second chase within the silence setting, unless asked again (``again``): refused as
  ``ChasedRecently``, on which the command line names ``--again`` and the app asks first.

The chase shows on the item as its ``chased`` attention code (``core.views.attention``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .answers import Answers
from .errors import LetterboxError
from .model import Letter
from .text import span
from .views.attention import Rules
from .write import Draft

#: what a chase asks when no note is given
DEFAULT_ASK = "status?"


class ChasedRecently(LetterboxError):
    """The refusal of a second chase within the silence setting: everything else about the
    chase is right, and ``again`` sends it. ``last`` is the chase on record, ``ago`` how long
    before the clock it was sent, ``silence`` the setting."""

    def __init__(self, message: str, *, last: Letter, ago: timedelta, silence: timedelta) -> None:
        super().__init__(message)
        self.last, self.ago, self.silence = last, ago, silence


def chases(x: Letter, res: Answers) -> list[Letter]:
    """The chases of ``x`` on record: ``info`` letters ``re:`` it to the seat that owes it,
    from another seat, oldest first."""
    found = [c for c in res.children(x) if c.type == "info" and c.recipient == x.recipient and c.sender != x.recipient]
    return sorted(found, key=lambda c: (c.sent_at is not None, c.sent_at or datetime.min.replace(tzinfo=res.at.tzinfo), c.id))


def chase_draft(res: Answers, letter_id: str, seat: str, note: str = "", *, rules: Rules,
                again: bool = False) -> Draft:
    """The chase of ``letter_id`` by ``seat`` at the resolution's clock, or a refusal
    (``LetterboxError``, one line) naming why nothing is written."""
    snap = res.snapshot
    if seat not in snap.seats:
        raise LetterboxError(f"--as {seat!r}: no such seat in {snap.root}")
    held = res.by_id(letter_id)
    if not held:
        raise LetterboxError(f"no letter {letter_id} in scope; nothing to chase")
    holders = res.holders(letter_id)
    if len(holders) > 1:
        raise LetterboxError(f"id {letter_id} is held by more than one file ({', '.join(holders)}); not chasing")
    x = held[0]
    if not x.task:
        raise LetterboxError(f"{letter_id} is not a task (requires_ack is not true): nothing is owed on it to chase")
    if res.state(x).value == "closed" or res.answered(x).yes:
        raise LetterboxError(f"{letter_id} is already closed: nothing is owed on it to chase")
    if res.superseded(x).yes:
        newer = ", ".join(s.id for s in res.superseders(x)) or "another letter"
        raise LetterboxError(f"{letter_id} is superseded by {newer}: chase the letter in force")
    owing = x.recipient
    if owing not in snap.seats:
        raise LetterboxError(f"{letter_id} is owed by {owing!r}, which is not a seat of {snap.root}")
    if seat == owing:
        raise LetterboxError(f"{seat} owes {letter_id}: a seat does not chase itself (chase as another seat)")
    on_record = [c for c in chases(x, res) if c.sent_at is not None]
    if on_record and not again:
        last = on_record[-1]
        ago = res.at - last.sent_at
        if ago <= rules.silence:
            raise ChasedRecently(
                f"{letter_id} was chased at {last.sent} ({span(ago)} ago, by {last.sender}), "
                f"within the silence setting ({span(rules.silence)}); give --again to chase it again",
                last=last, ago=ago, silence=rules.silence)
    ask = note.strip() or DEFAULT_ASK
    return Draft(sender=seat, recipient=owing, type="info", slug="chase", body=ask + "\n", re=x.id,
                 thread=x.thread or x.id)

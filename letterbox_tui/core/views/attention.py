"""How one letter stands, in a word, and whether it needs the reader's attention: the
answers behind the app's status column and its ``n``/``N`` keys (they were derived in the
app; the faces must agree, so they are here, computed from a ``Resolution`` only).

``standing`` is the first of: superseded (by whom), current unknown (why), and for a task:
late, state unknown, closed, answered unknown, accepted, open. A letter that is not a task
and is current has no standing word.

``needs_attention``: late, or current unknown, or an open task that nobody has accepted
nor answered (including one whose answer is unknown).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Letter
from ..resolve import Resolution

#: what a standing is, for a face to style it
KINDS = ("superseded", "unknown", "late", "closed", "accepted", "open", "")


@dataclass(frozen=True, slots=True)
class Standing:
    word: str  # "superseded by 2026-11-16T1600…", "current? fork", "late", "open", …
    kind: str  # one of KINDS

    def __str__(self) -> str:
        return self.word


def _codes(answer) -> str:
    return ", ".join(sorted({r.code for r in answer.reasons}))


def standing(x: Letter, res: Resolution) -> Standing:
    current = res.current(x)
    if current.no:
        sup = res.superseders(x)
        return Standing(f"superseded by {sup[0].id[:14]}…" if sup else "superseded", "superseded")
    if current.unknown:
        return Standing(f"current? {_codes(current)}", "unknown")
    if not x.task:
        return Standing("", "")
    if res.late(x).yes:
        return Standing("late", "late")
    state = res.state(x)
    if state.value == "unknown":
        return Standing("state? " + _codes(state), "unknown")
    if state.value == "closed":
        return Standing("closed", "closed")
    answered = res.answered(x)
    if answered.unknown:
        return Standing("answered? " + _codes(answered), "unknown")
    return Standing("accepted", "accepted") if res.accepted(x).yes else Standing("open", "open")


def needs_attention(x: Letter, res: Resolution) -> bool:
    """Late, current unknown, or an open task nobody has accepted or answered yet."""
    if res.late(x).value != "no" or res.current(x).unknown:
        return True
    return bool(x.task and res.state(x).value != "closed" and not res.accepted(x).yes and not res.answered(x).yes)

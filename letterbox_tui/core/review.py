"""The review habit (``review --check --every INTERVAL --as S``): has the seat recorded a
review recently enough? For a cron line that nags a person who forgot the morning review.
And what a recorded review says it saw of the attention codes (``attention_line``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .errors import LetterboxError
from .model import Letter, Scope, Snapshot
from .resolve import Resolution
from .owed import format_time
from .text import span

_INTERVAL = re.compile(r"^([1-9][0-9]{0,5})([mhdw])$")
_UNIT = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_interval(text: str) -> timedelta:
    """``90m``, ``12h``, ``1d``, ``2w``."""
    m = _INTERVAL.match(text.strip())
    if not m:
        raise LetterboxError(f"--every {text!r}: expected a count of 1 or more and a unit, e.g. 1d, 12h, 90m or 2w")
    return timedelta(**{_UNIT[m.group(2)]: int(m.group(1))})


def last_review(snapshot: Snapshot, seat: str) -> Letter | None:
    """The seat's latest readable ``review`` letter with a known time (written by the seat)."""
    best: Letter | None = None
    for x in snapshot.letters:
        if x.type == "review" and x.sender == seat and x.sent_at is not None:
            if best is None or (x.sent_at, x.id) > (best.sent_at, best.id):
                best = x
    return best


@dataclass(frozen=True, slots=True)
class ReviewStatus:
    seat: str
    every: timedelta
    at: datetime
    last: Letter | None
    scope: Scope

    @property
    def due(self) -> bool:
        """A review is due when none is on record or the last is older than the interval
        (exactly the interval old is still in time)."""
        return self.last is None or self.at - self.last.sent_at > self.every  # type: ignore[operator]

    def describe(self) -> str:
        if self.last is None:
            text = f"no review by {self.seat} on record: one is due"
        else:
            age = self.at - self.last.sent_at  # type: ignore[operator]
            when = f"last review by {self.seat} at {self.last.sent} ({span(age)} ago, {self.last.id})"
            text = f"{when}: a review is due (every {span(self.every)})" if self.due else f"{when}: in time"
        if self.due and not self.scope.complete:
            text += "; the scope is incomplete, so a later review may lie in a file that could not be read"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "every": span(self.every),
            "at": format_time(self.at),
            "due": self.due,
            "last": None if self.last is None else {"id": self.last.id, "path": self.last.path, "sent": self.last.sent},
        }


def review_status(snapshot: Snapshot, seat: str, every: timedelta, at: datetime) -> ReviewStatus:
    return ReviewStatus(seat, every, at, last_review(snapshot, seat), snapshot.scope)


def attention_line(res: Resolution, seat: str) -> str:
    """The review letter's line of what needed attention: how many owed items carried each
    code (``waiting-on-human`` counting the reviewer's own seat as a person's), at the
    resolution's clock, with the letterbox's settings."""
    from .views.attention import Rules, counts_text
    from .views.owed import owed_view

    view = owed_view(res, rules=Rules.of_letterbox(str(res.snapshot.root), seat))
    return f"Attention: {counts_text(view.counts()) or 'none'}."

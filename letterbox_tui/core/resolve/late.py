"""Late (SPEC 5): is a task past its deadline with no answer, at a given clock?

For a task whose state is ``open`` at ``at``: yes when answered is no and the deadline is
before ``at``; unknown when answered is unknown or the deadline is ambiguous; no otherwise.
For a task whose state is ``unknown``: unknown if it has a deadline before ``at`` or an
ambiguous one, else no. Non-tasks and closed letters: no.
"""

from __future__ import annotations

from datetime import datetime

from ..model import NO, YES, Answer, Letter, Reason
from .common import Relabel, about, aware, outside_scope
from .replies import Replies


class Late:
    """late over one set of replies, at the resolution's clock or another."""

    def __init__(self, replies: Replies, at: datetime) -> None:
        self.replies = replies
        self.at = at
        self.fast = replies.fast
        self._late: dict[int, Answer] = {}
        self._relabel = Relabel()

    def late(self, letter: Letter, at: datetime | None = None) -> Answer:
        """Late at ``at`` (default: the resolution's ``at``)."""
        if at is not None:
            return self._compute(letter, aware(at))
        if letter.requires_ack != "true" or letter.folder == "processed":
            return NO  # not a task, or closed
        replies = self.replies
        plain = replies.plain(letter)
        if plain is not None:
            deadline_at = letter.deadline_at
            if deadline_at is None:
                if not letter.deadline:
                    return NO
                reasons = (_ambiguous_deadline(letter),) + plain.late_reasons
            elif deadline_at < self.at:
                if not plain.outside:
                    return plain.late_overdue
                reasons = plain.late_reasons
            else:
                return NO
            if plain.outside:
                reasons += (outside_scope(letter, "late"),)
            return Answer("unknown", reasons)
        if self.fast and replies.closed_by_reply(letter):
            return NO
        key = id(letter)
        cached = self._late.get(key)
        if cached is None:
            cached = self._late[key] = self._compute(letter, self.at)
        return cached

    def _compute(self, letter: Letter, at: datetime) -> Answer:
        if not letter.task:
            return NO
        state = self.replies.state(letter)
        if state.value == "closed":
            return NO
        answered = self.replies.answered(letter) if state.value == "open" else None
        return late_at(letter, state, answered, at, self._relabel)


def late_at(letter: Letter, state, answered: Answer | None, at: datetime, relabel=about) -> Answer:
    """Late at ``at`` from the letter's ``state`` and (for an open task) ``answered``: the
    rule of SPEC 5, for answers computed here or read back from the store."""
    if not letter.task or state.value == "closed":
        return NO
    deadline_at = letter.deadline_at or None
    ambiguous = bool(letter.deadline) and deadline_at is None
    overdue = deadline_at is not None and deadline_at < at
    time_reason = _ambiguous_deadline(letter) if ambiguous else None
    if state.value == "open":
        if answered.no:
            if ambiguous:
                return Answer("unknown", (time_reason,))
            return YES if overdue else NO
        reasons = relabel(answered.reasons, "late")
        return Answer("unknown", reasons + ((time_reason,) if ambiguous else ()))
    if ambiguous:
        return Answer("unknown", (time_reason,) + relabel(state.reasons, "late"))
    if overdue:
        return Answer("unknown", relabel(state.reasons, "late"))
    return NO


def _ambiguous_deadline(letter: Letter) -> Reason:
    return Reason(
        "ambiguous-timestamp", "late",
        f"the deadline {letter.deadline!r} has no usable offset", (letter.id,), (letter.path,),
    )

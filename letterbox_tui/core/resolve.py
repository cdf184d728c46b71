"""Derived answers (SPEC 5): supersession, answered, accepted, state, late, disputes.

INTERFACE STUB — the resolver helper replaces the bodies; the signatures are the contract
other layers (query, commands, app) code against. Pure: takes a ``Snapshot`` and the clock
``at``; no ``datetime.now()`` inside. Linear in the number of letters: index once in
``resolve()``, answer per letter from the indexes (cache per-letter results).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .model import Answer, Letter, Reason, Snapshot


@dataclass(slots=True, frozen=True)
class StateAnswer:
    """``state`` is open, closed or unknown (not yes/no), with reasons when unknown."""

    value: str  # "open" | "closed" | "unknown"
    reasons: tuple[Reason, ...] = ()


@dataclass(slots=True, frozen=True)
class OpenDispute:
    dispute: Letter
    disputed: tuple[Letter, ...]  # readable letters the dispute names, in its order


class Resolution:
    """Every derived answer over one snapshot at one clock ``at``."""

    snapshot: Snapshot
    at: datetime

    def by_id(self, letter_id: str) -> list[Letter]:
        """Every readable letter holding this id (two or more: a duplicated id)."""
        raise NotImplementedError

    # --- supersession -------------------------------------------------------------
    def current(self, letter: Letter) -> Answer:
        """yes / no / unknown (reasons: cycle, fork, malformed-pointer, ambiguous-reference,
        unreadable-file, unsupported-entry, outside-scope, non-atomic-scan; ``ruled`` as info)."""
        raise NotImplementedError

    def superseded(self, letter: Letter) -> Answer:
        raise NotImplementedError

    def chain(self, letter: Letter) -> list[Letter]:
        """The letter's chain (connected component of supersedes edges), oldest-first by
        pointer order where possible, ties by id."""
        raise NotImplementedError

    def heads(self, letter: Letter) -> list[Letter]:
        """Candidate heads of the chain: letters that nothing readable supersedes."""
        raise NotImplementedError

    def head(self, letter: Letter) -> Letter | None:
        """The single letter of the chain whose current is yes, else None."""
        raise NotImplementedError

    def superseders(self, letter: Letter) -> list[Letter]:
        """Readable letters whose ``supersedes`` is this letter's id."""
        raise NotImplementedError

    # --- replies ------------------------------------------------------------------
    def answered(self, letter: Letter) -> Answer:
        raise NotImplementedError

    def replies(self, letter: Letter) -> list[Letter]:
        """Terminal replies (result/nack, re = id, reversed parties)."""
        raise NotImplementedError

    def acks(self, letter: Letter) -> list[Letter]:
        """``ack`` letters with re = id and reversed parties."""
        raise NotImplementedError

    def children(self, letter: Letter) -> list[Letter]:
        """Every readable letter whose ``re`` is this letter's id (any party, any type)."""
        raise NotImplementedError

    def accepted(self, letter: Letter) -> Answer:
        raise NotImplementedError

    def state(self, letter: Letter) -> StateAnswer:
        raise NotImplementedError

    def late(self, letter: Letter, at: datetime | None = None) -> Answer:
        """Late at ``at`` (default: the resolution's ``at``)."""
        raise NotImplementedError

    # --- threads and disputes -----------------------------------------------------
    def thread(self, thread_id: str) -> list[Letter]:
        """Letters whose thread is ``thread_id`` (the root included)."""
        raise NotImplementedError

    def open_disputes(self) -> list[OpenDispute]:
        raise NotImplementedError

    def rulings(self, dispute: Letter) -> list[Letter]:
        raise NotImplementedError


def resolve(snapshot: Snapshot, at: datetime) -> Resolution:
    """Index the snapshot once; answers are computed on demand and cached."""
    raise NotImplementedError

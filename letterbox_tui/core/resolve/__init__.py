"""Derived answers (SPEC 5): supersession, answered, accepted, state, late, disputes.

``resolve(snapshot, at)`` indexes the snapshot once and returns a ``Resolution``, a thin
facade over the parts that answer per letter from that index, each caching its answers.
Pure: the clock is the parameter ``at``; nothing here reads a file or calls
``datetime.now()``.

The parts, each one concern:

- ``index``: one pass over the letters: who holds which id (duplicates included), which
  letters point at which, the supersession graph and its chains (connected components),
  what unreadable files and unsupported entries may be, and the doubt every answer shares;
  dangling pointers.
- ``supersession``: per chain, cycles, forks and what puts it in doubt; current,
  superseded, chain, heads and head. ``forks``: the branches of each fork and the rulings
  that settle it. ``graph``: the iterative walks they need.
- ``replies``: answered, accepted and state (with the answers *plain* letters share).
- ``late``: late at the resolution's clock or another.
- ``disputes``: open disputes and the rulings on each.
- ``structure``: the structure around a letter as paths, for the store to keep.

A ``Resolution`` depends only on the snapshot it is given: resolving a subset of the
letters (say one connected component, with the scope's partial/atomic flags and the
unreadable and unsupported entries that may bear on it) is ``resolve(Snapshot(...), at)``
on that subset.

Every result is independent of scan order: lists are sorted by id then path, and reasons
name letters and paths in sorted order.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime

from ..model import Answer, Letter, Snapshot
from .common import CLOSED, OPEN, TERMINAL_TYPES, StateAnswer, aware
from .disputes import OpenDispute, open_disputes, rulings
from .forks import Fork
from .index import Dangling, Index, dangling
from .late import Late
from .replies import Replies
from .supersession import Supersession

__all__ = [
    "CLOSED", "OPEN", "TERMINAL_TYPES", "Dangling", "Fork", "OpenDispute", "Resolution",
    "StateAnswer", "resolve",
]


class Resolution:
    """Every derived answer over one snapshot at one clock ``at``.

    The answers asked once per letter of a query (``current``, ``superseded``, ``head``,
    ``answered``, ``accepted``, ``state``, ``late``) are bound straight to the part that
    computes them, so the facade costs no call of its own.
    """

    snapshot: Snapshot
    at: datetime
    index: Index
    #: answer plain letters and simple chains from the shared answers built at indexing
    #: (the tests turn this off to compare against the full analysis)
    _fast_paths = True

    #: yes / no / unknown (reasons: cycle, fork, malformed-pointer, ambiguous-reference,
    #: unreadable-file, unsupported-entry, outside-scope, non-atomic-scan; ``ruled`` as info)
    current: Callable[[Letter], Answer]
    #: yes when current is no; no when nothing may supersede the letter; else unknown
    superseded: Callable[[Letter], Answer]
    #: the single letter of the chain whose current is yes, else None
    head: Callable[[Letter], Letter | None]
    answered: Callable[[Letter], Answer]
    accepted: Callable[[Letter], Answer]
    state: Callable[[Letter], StateAnswer]
    #: late at ``at`` (default: the resolution's ``at``)
    late: Callable[..., Answer]

    def __init__(self, snapshot: Snapshot, at: datetime) -> None:
        self.snapshot = snapshot
        self.at = aware(at)
        fast = self._fast_paths
        self.index = index = Index(snapshot)
        self._supersession = sup = Supersession(index, fast)
        self._replies = replies = Replies(index, sup, fast)
        self._late = Late(replies, self.at)
        self.current = sup.current
        self.superseded = sup.superseded
        self.head = sup.head
        self.answered = replies.answered
        self.accepted = replies.accepted
        self.state = replies.state
        self.late = self._late.late

    def with_clock(self, at: datetime) -> Resolution:
        """The same answers at another clock (only ``late`` depends on it)."""
        other = copy.copy(self)
        other.at = aware(at)
        other._late = Late(self._replies, other.at)
        other.late = other._late.late
        return other

    # --- who holds what -----------------------------------------------------------
    def by_id(self, letter_id: str) -> list[Letter]:
        """Every readable letter holding this id (two or more: a duplicated id)."""
        return list(self.index.holding(letter_id))

    def holders(self, letter_id: str) -> list[str]:
        """Paths of every file holding this id: readable letters and unreadable files whose
        legible ``id`` is it. Two or more: the id is duplicated."""
        return self.index.holders(letter_id)

    def dangling(self) -> list[Dangling]:
        """Pointers (re, supersedes, rules_on, upholds, disputes) to ids no file holds."""
        return dangling(self.index)

    def thread(self, thread_id: str) -> list[Letter]:
        """Letters whose thread is ``thread_id`` (the root included)."""
        return self.index.thread(thread_id)

    # --- supersession -------------------------------------------------------------
    def chain(self, letter: Letter) -> list[Letter]:
        """The letter's chain (connected component of supersedes edges), oldest-first by
        pointer order where possible, ties by id."""
        return list(self._supersession.chain_letters(letter.id))

    def chain_ids(self, letter: Letter) -> list[str]:
        """The ids of the letter's chain, in ``chain`` order (each id once)."""
        sup = self._supersession
        return list(sup.chain_order(sup.chain_of(letter.id)))

    def chain_key(self, letter: Letter) -> str:
        """A key the letters of one chain share and no other chain has (its smallest id),
        without listing the chain."""
        return self.index.find(letter.id)

    def heads(self, letter: Letter) -> list[Letter]:
        """Candidate heads of the chain: letters that nothing readable supersedes."""
        return list(self._supersession.heads(letter))

    def superseders(self, letter: Letter) -> list[Letter]:
        """Readable letters whose ``supersedes`` is this letter's id."""
        return self._supersession.superseders(letter)

    def forks(self) -> list[Fork]:
        """Every fork of the snapshot, settled or not, sorted by the superseded id."""
        return self._supersession.forks()

    def cycles(self) -> list[tuple[str, ...]]:
        """Every supersession cycle, as its sorted member ids."""
        return self._supersession.cycles()

    # --- replies ------------------------------------------------------------------
    def replies(self, letter: Letter) -> list[Letter]:
        """Terminal replies (result/nack, re = id, reversed parties)."""
        return list(self.index.terminal_replies(letter))

    def acks(self, letter: Letter) -> list[Letter]:
        """``ack`` letters with re = id and reversed parties."""
        return list(self.index.acks(letter))

    def children(self, letter: Letter) -> list[Letter]:
        """Every readable letter whose ``re`` is this letter's id (any party, any type)."""
        return self._replies.children(letter)

    # --- disputes -----------------------------------------------------------------
    def open_disputes(self) -> list[OpenDispute]:
        return open_disputes(self.index)

    def disputes_of(self, letter: Letter) -> list[Letter]:
        """The readable disputes naming this letter in their ``disputes``, sorted."""
        from .common import sorted_letters

        return sorted_letters(self.index.disputes_naming.get(letter.id, ()))

    def rulings(self, dispute: Letter) -> list[Letter]:
        return rulings(self.index, dispute)

    # --- for a store ----------------------------------------------------------------
    def structure(self, letter: Letter) -> dict:
        """The structure around ``letter`` as paths, as a store keeps it
        (``structure.kept_structure``)."""
        from .structure import kept_structure

        return kept_structure(self, letter)


def resolve(snapshot: Snapshot, at: datetime) -> Resolution:
    """Index the snapshot once; answers are computed on demand and cached."""
    return Resolution(snapshot, at)

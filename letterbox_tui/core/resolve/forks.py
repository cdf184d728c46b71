"""Forks of a supersession chain: their branches, and the disputes and rulings that settle
them (SPEC 5, "Supersession").

A fork at F is two or more letters superseding F; the *branch* of each is that letter and
every letter that (transitively) supersedes it. A fork is settled when a readable dispute
names at least one letter in every branch and every readable ruling on that dispute upholds
the same letter, one of the dispute's ``disputes`` lying in exactly one branch: that branch
wins (``ruled``), the letters only on the others are ``current: no``.

Linear in the chain: when no id of the chain supersedes two different ids (every chain
without a duplicated id), the chain is a tree rooted at its oldest letter, or at the letters
of its one cycle, and a branch is a subtree: one depth-first walk numbers the letters so
that "is m in the branch of s" is two comparisons, and the winning and losing branches of
every settled fork are marked in one more walk. Whether a dispute names a letter in every
branch is asked of every branch but the largest by listing its letters (each letter lies in
a branch that is not the largest of its fork at most log n times) and of the largest by
listing the dispute's own ids. Chains where an id supersedes two ids fall back to walking
each branch (``_general``: quadratic in nested forks, and only reached when a dispute
with a ruling names a letter of such a chain, since nothing else can settle a fork).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Letter, Reason
from .common import sorted_letters
from .graph import reverse_reach
from .index import Index


@dataclass(slots=True, frozen=True)
class Fork:
    """Two or more letters supersede the letter ``at`` (for ``check`` and the app)."""

    at: str  # the id superseded more than once
    branches: tuple[str, ...]  # ids of the letters that supersede it, sorted
    settled: bool
    winner: str | None = None  # the branch (one of ``branches``) a ruling upheld
    dispute: str | None = None  # the dispute that settled it
    rulings: tuple[str, ...] = ()  # the rulings on that dispute
    in_losing_branch: bool = False  # inside the losing branch of another settled fork


@dataclass(slots=True)
class ForkOutcome:
    """What the forks of one chain decide."""

    forks: list[Fork]
    #: id -> ``ruled`` reason, for letters on a losing branch of a settled fork
    losing: dict[str, Reason]
    #: id -> ``ruled`` reason, for letters on the winning branch
    winning: dict[str, Reason]
    #: forks no ruling settles, sorted (with those inside a losing branch)
    unsettled: list[str]


#: (fork id, winner, dispute id, rulings) of a settled fork
_Settled = tuple[str, str, str, tuple[Letter, ...]]


def analyse_forks(
    index: Index, ids: list[str], superseder_ids: dict[str, tuple[str, ...]], on_cycle: set[str],
) -> ForkOutcome:
    """The forks of the chain ``ids`` (sorted; ``on_cycle``: its ids on a cycle), which of
    them rulings settle, and the letters each settled fork makes win or lose."""
    forks = [f for f in ids if len(superseder_ids[f]) >= 2]  # ids are sorted
    if not forks:
        return ForkOutcome([], {}, {}, [])
    out = index.out
    if not _may_settle(index, ids):
        settled, losing, winning = [], {}, {}  # no ruled dispute names a letter of the chain
    elif any(len(out.get(i, ())) > 1 for i in ids):
        settled, losing, winning = _general(index, forks, superseder_ids)
    else:
        settled, losing, winning = _Tree(index, ids, superseder_ids, on_cycle).analyse(forks)
    found: list[Fork] = []
    won = {f: (winner, dispute_id, rulings) for f, winner, dispute_id, rulings in settled}
    unsettled: list[str] = []
    for f in forks:
        outcome = won.get(f)
        if outcome is None:
            unsettled.append(f)
            found.append(Fork(f, superseder_ids[f], False, in_losing_branch=f in losing))
        else:
            winner, dispute_id, rulings = outcome
            found.append(Fork(
                f, superseder_ids[f], True, winner, dispute_id, tuple(sorted({r.id for r in rulings})),
                f in losing,
            ))
    return ForkOutcome(found, losing, winning, unsettled)


def _may_settle(index: Index, ids: list[str]) -> bool:
    """Whether a dispute that has a ruling names a letter of the chain (else no fork of it
    can be settled, and no branch need be walked)."""
    rulings_on = index.rulings_on
    disputes_naming = index.disputes_naming
    if not (rulings_on and disputes_naming):
        return False
    return any(rulings_on.get(d.id) for i in ids for d in disputes_naming.get(i, ()))


def ruled_reasons(f: str, winner: str, dispute_id: str, rulings: tuple[Letter, ...]) -> tuple[Reason, Reason]:
    """The ``ruled`` reasons of a settled fork: for its losing branches, and its winner's."""
    ruling_ids = tuple(sorted({r.id for r in rulings}))
    ruling_paths = tuple(sorted(r.path for r in rulings))
    letters = (dispute_id,) + ruling_ids
    said = f"fork at {f} settled by ruling {', '.join(ruling_ids)} on dispute {dispute_id}: the branch of {winner} wins"
    lose = Reason("ruled", "current", said + ", this letter is on a losing branch", letters, ruling_paths)
    win = Reason("ruled", "current", said, letters, ruling_paths)
    return lose, win


def _upheld(index: Index, dispute_id: str) -> tuple[str, tuple[Letter, ...]] | None:
    """The letter every readable ruling on the dispute upholds, when they agree on one that
    is among the dispute's ``disputes``; with the rulings. None otherwise."""
    rulings = index.rulings_on.get(dispute_id, ())
    if not rulings:
        return None
    upheld = {r.upholds if "upholds" not in (r.malformed or ()) else "" for r in rulings}
    if len(upheld) != 1:
        return None
    u = upheld.pop()
    if not u or not any(u in d.disputes for d in index.holding(dispute_id) if d.type == "dispute"):
        return None  # no upholds, or one the dispute does not name: settles nothing
    return u, tuple(sorted_letters(rulings))


def _decide(index: Index, qualifying, branch_of_upheld) -> tuple[str, str, tuple[Letter, ...]] | None:
    """Of the disputes naming every branch of a fork, the one branch their rulings make win
    (with the dispute and rulings), or None. ``branch_of_upheld(u)`` lists the branches
    holding ``u``."""
    outcomes: dict[str, tuple[str, tuple[Letter, ...]]] = {}
    for dispute_id in sorted(qualifying):
        found = _upheld(index, dispute_id)
        if found is None:
            continue
        u, rulings = found
        holding = branch_of_upheld(u)
        if len(holding) != 1:
            continue
        outcomes.setdefault(holding[0], (dispute_id, rulings))
    if len(outcomes) != 1:
        return None
    ((winner, (dispute_id, rulings)),) = outcomes.items()
    return winner, dispute_id, rulings


class _Tree:
    """A chain in which no id supersedes two ids: a forest whose roots are the letter that
    supersedes nothing present, or the letters of the chain's one cycle. Each non-root id's
    parent is the id it supersedes; the branch of a superseder s is s's subtree, or the
    whole chain when s is on the cycle (every letter of the chain leads into it)."""

    def __init__(self, index: Index, ids: list[str], superseder_ids: dict[str, tuple[str, ...]], on_cycle: set[str]) -> None:
        self.index = index
        self.ids = ids
        self.superseder_ids = superseder_ids
        self.on_cycle = on_cycle
        out = index.out
        roots = [i for i in ids if i in on_cycle or not out.get(i)]
        # Depth-first, iteratively: ``order`` lists the ids so that each subtree is the
        # slice order[tin[s]:end[s]].
        tin: dict[str, int] = {}
        end: dict[str, int] = {}
        order: list[str] = []
        for root in roots:
            stack = [root]
            while stack:
                v = stack.pop()
                if v.__class__ is tuple:  # (id,): its subtree is done
                    end[v[0]] = len(order)
                    continue
                tin[v] = len(order)
                order.append(v)
                stack.append((v,))
                for s in reversed(superseder_ids[v]):
                    if s not in on_cycle:
                        stack.append(s)
        self.tin = tin
        self.end = end
        self.order = order
        self.parent = {i: out[i][0] for i in ids if i not in on_cycle and out.get(i)}

    def size(self, s: str) -> int:
        return len(self.ids) if s in self.on_cycle else self.end[s] - self.tin[s]

    def holds(self, s: str, m: str) -> bool:
        """Whether ``m`` lies in the branch of ``s``."""
        if s in self.on_cycle:
            return m in self.tin
        t = self.tin.get(m)
        return t is not None and self.tin[s] <= t < self.end[s]

    def analyse(self, forks: list[str]) -> tuple[list[_Settled], dict[str, Reason], dict[str, Reason]]:
        settled: list[_Settled] = []
        for f in forks:
            outcome = self._settle(f)
            if outcome is not None:
                settled.append((f, *outcome))
        if not settled:
            return settled, {}, {}
        return settled, *self._mark(settled)

    def _settle(self, f: str) -> tuple[str, str, tuple[Letter, ...]] | None:
        index = self.index
        sups = self.superseder_ids[f]
        largest = max(sups, key=self.size)
        qualifying: set[str] | None = None
        order = self.order
        disputes_naming = index.disputes_naming
        for s in sups:
            if s == largest:
                continue
            named = {d.id for m in order[self.tin[s]:self.end[s]] for d in disputes_naming.get(m, ())}
            qualifying = named if qualifying is None else qualifying & named
            if not qualifying:
                return None
        # and the largest branch: asked of each dispute's own ids
        holds = self.holds
        qualifying = {
            d for d in qualifying or ()
            if any(holds(largest, m) for x in index.holding(d) if x.type == "dispute" for m in x.disputes)
        }
        return _decide(index, qualifying, lambda u: [s for s in sups if holds(s, u)])

    def _mark(self, settled: list[_Settled]) -> tuple[dict[str, Reason], dict[str, Reason]]:
        """Letters on the losing and the winning branches; where several settled forks
        mark a letter, the fork with the smallest id gives the reason (as before). A cycle
        letter's branch is the whole chain: one that wins makes nothing lose (every letter
        is on it), and one that loses is not marked (every letter's current is ``cycle``)."""
        rank = {f: (f, *ruled_reasons(f, winner, dispute_id, rulings)) for f, winner, dispute_id, rulings in settled}
        winner_of = {f: winner for f, winner, _d, _r in settled}
        lose: dict[str, tuple[str, Reason, Reason]] = {}
        win: dict[str, tuple[str, Reason, Reason]] = {}
        parent = self.parent
        on_cycle = self.on_cycle
        for v in self.order:  # parents before children
            p = parent.get(v)
            if p is None:
                continue
            best_lose = lose.get(p)
            best_win = win.get(p)
            w = winner_of.get(p)
            if w is not None and w not in on_cycle:
                mark = rank[p]
                if v == w:
                    if best_win is None or mark[0] < best_win[0]:
                        best_win = mark
                elif best_lose is None or mark[0] < best_lose[0]:
                    best_lose = mark
            if best_lose is not None:
                lose[v] = best_lose
            if best_win is not None:
                win[v] = best_win
        losing = {m: mark[1] for m, mark in lose.items()}
        winning = {m: mark[2] for m, mark in win.items() if m not in lose}
        return losing, winning


def _general(
    index: Index, forks: list[str], superseder_ids: dict[str, tuple[str, ...]],
) -> tuple[list[_Settled], dict[str, Reason], dict[str, Reason]]:
    """Any chain: each branch walked as a set (quadratic in nested forks; only for chains
    where an id supersedes two ids, which takes a duplicated id)."""
    settled: list[tuple[_Settled, dict[str, set[str]]]] = []
    for f in forks:
        branches = {s: reverse_reach(s, superseder_ids) for s in superseder_ids[f]}
        per_branch = [{d.id for m in members for d in index.disputes_naming.get(m, ())} for members in branches.values()]
        qualifying = set.intersection(*per_branch)
        outcome = _decide(index, qualifying, lambda u: [s for s, members in branches.items() if u in members])
        if outcome is not None:
            settled.append(((f, *outcome), branches))
    losing: dict[str, Reason] = {}
    winning: dict[str, Reason] = {}
    for (f, winner, dispute_id, rulings), branches in settled:
        lose, win = ruled_reasons(f, winner, dispute_id, rulings)
        for s, members in branches.items():
            if s == winner:
                continue
            for m in members:
                if m not in branches[winner]:
                    losing.setdefault(m, lose)
        for m in branches[winner]:
            winning.setdefault(m, win)
    for m in losing:
        winning.pop(m, None)
    return [s for s, _b in settled], losing, winning

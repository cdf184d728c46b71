"""Forks of a supersession chain: their branches, and the disputes and rulings that settle
them (SPEC 5, "Supersession").

A fork at F is two or more letters superseding F; the *branch* of each is that letter and
every letter that (transitively) supersedes it. A fork is settled when a readable dispute
names at least one letter in every branch and every readable ruling on that dispute upholds
the same letter, one of the dispute's ``disputes`` lying in exactly one branch: that branch
wins (``ruled``), the letters only on the others are ``current: no``.
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


def analyse_forks(index: Index, ids: list[str], superseder_ids: dict[str, tuple[str, ...]]) -> ForkOutcome:
    """The forks of the chain ``ids`` (sorted), which of them rulings settle, and the
    letters each settled fork makes win or lose."""
    forks = [f for f in ids if len(superseder_ids[f]) >= 2]  # ids are sorted
    settled: list[tuple[str, list[str], str, dict[str, set[str]], str, tuple[Letter, ...]]] = []
    unsettled: list[str] = []
    for f in forks:
        branches = {s: reverse_reach(s, superseder_ids) for s in superseder_ids[f]}
        outcome = settle(index, branches)
        if outcome is None:
            unsettled.append(f)
        else:
            winner, dispute_id, rulings = outcome
            settled.append((f, list(superseder_ids[f]), winner, branches, dispute_id, rulings))
    losing: dict[str, Reason] = {}
    winning: dict[str, Reason] = {}
    for f, sups, winner, branches, dispute_id, rulings in settled:
        lose, win = ruled_reasons(f, winner, dispute_id, rulings)
        for s in sups:
            if s == winner:
                continue
            for m in branches[s]:
                if m not in branches[winner]:
                    losing.setdefault(m, lose)
        for m in branches[winner]:
            winning.setdefault(m, win)
    for m in losing:
        winning.pop(m, None)
    found: list[Fork] = []
    for f, sups, winner, branches, dispute_id, rulings in settled:
        found.append(Fork(
            f, tuple(sups), True, winner, dispute_id, tuple(sorted({r.id for r in rulings})),
            f in losing,
        ))
    for f in unsettled:
        found.append(Fork(f, tuple(superseder_ids[f]), False, in_losing_branch=f in losing))
    found.sort(key=lambda x: x.at)
    return ForkOutcome(found, losing, winning, unsettled)


def ruled_reasons(f: str, winner: str, dispute_id: str, rulings: tuple[Letter, ...]) -> tuple[Reason, Reason]:
    """The ``ruled`` reasons of a settled fork: for its losing branches, and its winner's."""
    ruling_ids = tuple(sorted({r.id for r in rulings}))
    ruling_paths = tuple(sorted(r.path for r in rulings))
    letters = (dispute_id,) + ruling_ids
    said = f"fork at {f} settled by ruling {', '.join(ruling_ids)} on dispute {dispute_id}: the branch of {winner} wins"
    lose = Reason("ruled", "current", said + ", this letter is on a losing branch", letters, ruling_paths)
    win = Reason("ruled", "current", said, letters, ruling_paths)
    return lose, win


def settle(index: Index, branches: dict[str, set[str]]) -> tuple[str, str, tuple[Letter, ...]] | None:
    """The winning branch of a fork, the dispute and rulings that decide it, or None."""
    per_branch: list[set[str]] = []
    for members in branches.values():
        named: set[str] = set()
        for m in members:
            for d in index.disputes_naming.get(m, ()):
                named.add(d.id)
        per_branch.append(named)
    qualifying = set.intersection(*per_branch) if per_branch else set()
    outcomes: dict[str, tuple[str, tuple[Letter, ...]]] = {}
    for dispute_id in sorted(qualifying):
        rulings = index.rulings_on.get(dispute_id, ())
        if not rulings:
            continue
        upheld = {r.upholds if "upholds" not in (r.malformed or ()) else "" for r in rulings}
        if len(upheld) != 1:
            continue
        u = upheld.pop()
        if not u:
            continue
        holding = [s for s, members in branches.items() if u in members]
        if len(holding) != 1:
            continue
        outcomes.setdefault(holding[0], (dispute_id, tuple(sorted_letters(rulings))))
    if len(outcomes) != 1:
        return None
    ((winner, (dispute_id, rulings)),) = outcomes.items()
    return winner, dispute_id, rulings

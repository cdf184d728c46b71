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
listing the dispute's own ids.

A chain where an id supersedes two ids (copies of a duplicated id with different
``supersedes``) is a tree plus the copies' other pointers (``_Dag``): "is m in the branch of
s" is the subtree test or a test of two bit sets, one bit for each letter with several
pointers or on a cycle, and only the letters that reach such a letter (the *tangled* ones,
which may lie in several branches of one fork) and the disputes naming one are asked fork by
fork; the rest is the tree's walk. ``_general`` walks every branch as a set: what both must
agree with (the tests compare them).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Letter, Reason
from .common import sorted_letters
from .graph import reverse_reach, tarjan
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
        settled, losing, winning = _Dag(index, ids, superseder_ids).analyse(forks)
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


def _decide(index: Index, qualifying, branch_of_upheld, upheld=None) -> tuple[str, str, tuple[Letter, ...]] | None:
    """Of the disputes naming every branch of a fork, the one branch their rulings make win
    (with the dispute and rulings), or None. ``branch_of_upheld(u)`` lists the branches
    holding ``u``; ``upheld(dispute_id)`` is ``_upheld`` (or a cache of it)."""
    outcomes: dict[str, tuple[str, tuple[Letter, ...]]] = {}
    for dispute_id in sorted(qualifying):
        found = _upheld(index, dispute_id) if upheld is None else upheld(dispute_id)
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
            w = winner_of.get(p)
            _inherit(v, p, None if w in on_cycle else w, rank, lose, win)
        losing = {m: mark[1] for m, mark in lose.items()}
        winning = {m: mark[2] for m, mark in win.items() if m not in lose}
        return losing, winning


class _Dag:
    """Any chain, in particular one where an id supersedes several ids: what ``_general``
    decides, without walking every branch.

    The chain's strongly connected sets (one letter each, or the letters of a cycle) are
    *nodes*; each node's first target is its parent in a forest, the other targets are its
    *extra* pointers. A path from m down to s either follows parents only (m lies in the
    subtree of s: two comparisons of the depth-first numbers) or ends with an extra pointer
    of some node x that m reaches, into the subtree of s. So every node that has extra
    pointers or is a cycle gets a bit, ``reach[c]`` holds the bits of those m reaches, and
    ``into[c]`` those whose extra pointers land in the subtree of c: m lies in the branch of
    s when the subtree test holds or ``reach[m] & into[s]``.

    A node that reaches no bit (``reach`` is 0) is *plain*: it supersedes one id, and so do
    all below it, so it lies in exactly one branch of each fork below it, and its marks are
    the tree's walk; so are the disputes naming only plain letters. The *tangled* nodes (and
    the disputes naming one) are asked fork by fork.
    """

    def __init__(self, index: Index, ids: list[str], superseder_ids: dict[str, tuple[str, ...]]) -> None:
        self.index = index
        self.superseder_ids = superseder_ids
        out = index.out
        nodes = tarjan(ids, out)  # targets before the letters superseding them
        node_of: dict[str, int] = {}
        for c, members in enumerate(nodes):
            for v in members:
                node_of[v] = c
        parent = [-1] * len(nodes)
        reach = [0] * len(nodes)
        into_here = [0] * len(nodes)
        kids: list[list[int]] = [[] for _ in nodes]
        bits = 0
        for c, members in enumerate(nodes):
            targets: dict[int, None] = {}
            cyclic = len(members) > 1
            for v in members:
                for t in out.get(v, ()):
                    tc = node_of[t]
                    if tc == c:
                        cyclic = True
                    else:
                        targets[tc] = None
            mine = 0
            if cyclic or len(targets) > 1:
                mine = 1 << bits
                bits += 1
            r = mine
            for k, tc in enumerate(targets):
                r |= reach[tc]
                if k == 0:
                    parent[c] = tc
                    kids[tc].append(c)
                else:
                    into_here[tc] |= mine
            reach[c] = r
        # depth-first numbers: the subtree of c is the nodes numbered tin[c] .. end[c] - 1
        tin = [0] * len(nodes)
        end = [0] * len(nodes)
        order: list[int] = []
        for root in range(len(nodes)):
            if parent[root] != -1:
                continue
            stack = [root]
            while stack:
                c = stack.pop()
                if c < 0:
                    end[~c] = len(order)
                    continue
                tin[c] = len(order)
                order.append(c)
                stack.append(~c)
                stack.extend(kids[c])
        into = into_here
        for c in reversed(order):  # children before parents
            p = parent[c]
            if p != -1:
                into[p] |= into[c]
        self.nodes = nodes
        self.node_of = node_of
        self.parent = parent
        self.reach = reach
        self.into = into
        self.tin = tin
        self.end = end
        self.order = order
        self._upheld: dict[str, tuple[str, tuple[Letter, ...]] | None] = {}
        self._names: dict[str, tuple[int, ...]] = {}

    def holds(self, s: int, m: int) -> bool:
        """Whether node ``m`` lies in the branch of node ``s``."""
        tin = self.tin
        return tin[s] <= tin[m] < self.end[s] or bool(self.reach[m] & self.into[s])

    def upheld(self, dispute_id: str) -> tuple[str, tuple[Letter, ...]] | None:
        if dispute_id not in self._upheld:
            self._upheld[dispute_id] = _upheld(self.index, dispute_id)
        return self._upheld[dispute_id]

    def names(self, dispute_id: str) -> tuple[int, ...]:
        """The nodes of the chain that the disputes holding this id name."""
        found = self._names.get(dispute_id)
        if found is None:
            node_of = self.node_of
            found = self._names[dispute_id] = tuple({
                node_of[m] for x in self.index.holding(dispute_id) if x.type == "dispute"
                for m in x.disputes if m in node_of
            })
        return found

    def analyse(self, forks: list[str]) -> tuple[list[_Settled], dict[str, Reason], dict[str, Reason]]:
        index = self.index
        reach = self.reach
        # the disputes whose rulings uphold one letter they name: the only ones that settle
        tangled_disputes: list[str] = []
        plain_disputes: set[str] = set()
        seen: set[str] = set()
        for members in self.nodes:
            for m in members:
                for d in index.disputes_naming.get(m, ()):
                    if d.id in seen:
                        continue
                    seen.add(d.id)
                    if self.upheld(d.id) is None:
                        continue
                    if any(reach[c] for c in self.names(d.id)):
                        tangled_disputes.append(d.id)
                    else:
                        plain_disputes.add(d.id)
        settled: list[_Settled] = []
        for f in forks:
            outcome = self._settle(f, plain_disputes, tangled_disputes)
            if outcome is not None:
                settled.append((f, *outcome))
        if not settled:
            return settled, {}, {}
        return settled, *self._mark(settled)

    def _settle(self, f: str, plain_disputes: set[str], tangled_disputes: list[str]):
        node_of = self.node_of
        sups = self.superseder_ids[f]
        branches = [node_of[s] for s in sups]
        holds = self.holds
        qualifying: set[str] = set()
        if plain_disputes and not any(self.reach[c] for c in branches):
            # plain branches: subtrees, as in ``_Tree``; disputes naming plain letters only
            tin, end, order, nodes = self.tin, self.end, self.order, self.nodes
            disputes_naming = self.index.disputes_naming
            largest = max(branches, key=lambda c: end[c] - tin[c])
            found: set[str] | None = None
            for c in branches:
                if c == largest:
                    continue
                named = {
                    d.id for b in order[tin[c]:end[c]] for m in nodes[b] for d in disputes_naming.get(m, ())
                    if d.id in plain_disputes
                }
                found = named if found is None else found & named
                if not found:
                    break
            qualifying.update(
                d for d in found or () if any(tin[largest] <= tin[m] < end[largest] for m in self.names(d))
            )
        for d in tangled_disputes:
            names = self.names(d)
            if all(any(holds(c, m) for m in names) for c in branches):
                qualifying.add(d)
        if not qualifying:
            return None

        def branch_of_upheld(u: str) -> list[str]:
            m = node_of.get(u)
            return [] if m is None else [s for s, c in zip(sups, branches) if holds(c, m)]

        return _decide(self.index, qualifying, branch_of_upheld, self.upheld)

    def _mark(self, settled: list[_Settled]) -> tuple[dict[str, Reason], dict[str, Reason]]:
        """Letters on the losing and the winning branches, the fork with the smallest id
        giving the reason (settled forks come sorted): plain letters down the forest, as
        ``_Tree`` does, tangled ones asked of each settled fork."""
        rank = {f: (f, *ruled_reasons(f, winner, dispute_id, rulings)) for f, winner, dispute_id, rulings in settled}
        winner_of = {f: winner for f, winner, _d, _r in settled}
        nodes, parent, reach = self.nodes, self.parent, self.reach
        lose: dict[str, tuple[str, Reason, Reason]] = {}
        win: dict[str, tuple[str, Reason, Reason]] = {}
        for c in self.order:  # parents before children
            p = parent[c]
            if p == -1 or reach[c]:
                continue
            (v,), (pid,) = nodes[c], nodes[p]  # a plain node and its parent: one letter each
            _inherit(v, pid, winner_of.get(pid), rank, lose, win)
        node_of = self.node_of
        holds = self.holds
        forks = [(rank[f], node_of[w], [node_of[s] for s in self.superseder_ids[f] if s != w]) for f, w, _d, _r in settled]
        for c, members in enumerate(nodes):
            if not reach[c]:
                continue
            best_lose = best_win = None
            for mark, w, others in forks:
                in_winner = holds(w, c)
                if in_winner:
                    if best_win is None:
                        best_win = mark
                elif best_lose is None and any(holds(s, c) for s in others):
                    best_lose = mark
                if best_win is not None and best_lose is not None:
                    break
            for v in members:
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
    """Any chain: each branch walked as a set, as SPEC 5 says it (quadratic in nested
    forks: what ``_Tree`` and ``_Dag`` must agree with)."""
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


def _inherit(v: str, p: str, winner: str | None, rank: dict, lose: dict, win: dict) -> None:
    """Mark ``v`` from its parent ``p`` (parents are marked first): ``v`` keeps the losing
    and winning marks ``p`` has, and when ``p`` is a settled fork won by ``winner``, ``v``
    wins (it is the winner) or loses by that fork; of several marks the fork with the
    smallest id gives the reason."""
    best_lose = lose.get(p)
    best_win = win.get(p)
    if winner is not None:
        mark = rank[p]
        if v == winner:
            if best_win is None or mark[0] < best_win[0]:
                best_win = mark
        elif best_lose is None or mark[0] < best_lose[0]:
            best_lose = mark
    if best_lose is not None:
        lose[v] = best_lose
    if best_win is not None:
        win[v] = best_win

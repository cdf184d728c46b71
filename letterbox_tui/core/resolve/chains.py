"""Supersession chains: each connected component of supersedes edges, analysed once.

The analysis of a chain finds its cycles (strongly connected components), its forks and the
rulings that settle them (``forks``), what may point into it from outside and puts it in
doubt (malformed pointers, unreadable files, duplicated ids), and which earlier versions of
each letter have replies. Reasons are built once per chain and shared by its letters; each
names at most ``MAX_NAMED`` letters and at most ``MAX_SAME`` reasons share a code.

Most chains need none of that: a *simple* chain is a path of pointers with no fork, cycle,
duplicate, or unreadable or malformed pointer that may reach it (a lone letter is one), and
only the replies below each letter are worked out (``fast``; the tests turn it off).
"""

from __future__ import annotations

from ..model import Answer, Letter, Reason, Unreadable
from .common import MAX_BELOW, MAX_NAMED, first_unique, letter_key, more, names, path_key, summarise
from .forks import Fork, analyse_forks
from .graph import tarjan
from .index import Index


class Chain:
    """What one supersession chain says, computed once."""

    __slots__ = (
        "ids", "cycle_members", "cycles", "on_cycle", "cycle_reasons", "losing", "winning", "doubts", "doubt",
        "forks", "reply_below", "malformed_thread", "malformed_thread_count", "superseded_doubt",
        "order", "replied", "letters", "head", "heads",
    )

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids
        #: id -> sorted ids of the cycle(s) it is on or leads into (one tuple shared by
        #: every id that reaches the same cycles)
        self.cycle_members: dict[str, tuple[str, ...]] = {}
        #: the strongly connected sets of ``cycle_members`` (each once)
        self.cycles: list[tuple[str, ...]] = []
        self.on_cycle: set[str] = set()
        #: (id of a members tuple, on it or not) -> the cycle answer those letters share
        self.cycle_reasons: dict[tuple[int, bool], Answer] = {}
        #: id -> ``ruled`` reason, for letters on a losing branch of a settled fork
        self.losing: dict[str, Reason] = {}
        #: id -> ``ruled`` reason, for letters on the winning branch
        self.winning: dict[str, Reason] = {}
        #: reasons (about current) that put the whole chain in doubt, and the answer
        #: every letter it leaves in doubt shares
        self.doubts: tuple[Reason, ...] = ()
        self.doubt: Answer | None = None
        self.forks: list[Fork] = []
        #: id -> ids it supersedes (transitively) that have a terminal reply
        self.reply_below: dict[str, tuple[str, ...]] = {}
        #: malformed ``supersedes`` holders whose fallback (their thread) covers this chain:
        #: the first ``MAX_NAMED`` by path, and how many there are
        self.malformed_thread: tuple[Letter, ...] = ()
        self.malformed_thread_count = 0
        #: superseded's answer for a letter only the chain-wide doubt concerns (built once)
        self.superseded_doubt: Answer | None = None
        self.order: list[str] | None = None
        #: id -> terminal replies to the letters holding it (only ids that have some)
        self.replied: dict[str, tuple[Letter, ...]] = {}
        self.letters: list[Letter] | None = None
        self.head: tuple[Letter | None] | None = None
        self.heads: list[Letter] | None = None


class Chains:
    """Every chain of one index, each analysed once, the first time it is asked for."""

    def __init__(self, index: Index, fast: bool = True) -> None:
        self.index = index
        self.fast = fast
        self._chain_of: dict[str, Chain] = {}
        self._chains: dict[str, Chain] = {}
        #: malformed supersedes holders by thread, sorted by path (made on first use)
        self._thread_sorted: dict[str, list[Letter]] | None = None
        self._thread_holder_ids: set[int] = set()
        #: the ids whose chain is not simple (the others take the shortcuts)
        self.touched = self._not_simple()

    def _not_simple(self) -> set[str]:
        """The ids whose chain is not simple: in a fork, cycle or duplicate, or reachable by
        a malformed pointer or an unreadable file."""
        index = self.index
        doubted = set(index.malformed_sup_by_id)
        doubted.update(index.unreadable_superseders)
        if index.malformed_sup_by_thread:
            # a malformed pointer naming no present id may target any chain of its thread
            threads = index.malformed_sup_by_thread
            doubted.update(x.id for x in index.snapshot.letters if x.thread_id in threads)
        parent = index.parent
        doubted.update(i for i in index.duplicated_ids if i in parent)
        out = index.out
        sup_ids = index.sup_ids
        for nodes in index.components.values():
            # a path: one edge fewer than ids, no id superseded twice, none in doubt
            edges = 0
            for i in nodes:
                if i in doubted or len(sup_ids.get(i, ())) > 1:
                    break
                edges += len(out.get(i, ()))
            else:
                if edges == len(nodes) - 1:
                    continue
            doubted.update(nodes)
        return doubted

    def chain_of(self, letter_id: str) -> Chain:
        chain = self._chain_of.get(letter_id)
        if chain is not None:
            return chain
        root = self.index.find(letter_id)
        chain = self._chains.get(root)
        if chain is None:
            ids = sorted(self.index.components.get(root, [letter_id]))
            if letter_id not in self.touched and self.fast:  # alone, or a simple chain
                chain = self._analyse_simple(ids)
            else:
                chain = self._analyse(ids)
            self._chains[root] = chain
            for i in ids:
                self._chain_of[i] = chain
        return chain

    def _replied(self, ids: list[str]) -> dict[str, tuple[Letter, ...]]:
        """id -> terminal replies to the letters holding it, for the ids that have some."""
        index = self.index
        children = index.children
        replied: dict[str, tuple[Letter, ...]] = {}
        for i in ids:
            if i in children:
                holders = index.holding(i)
                if len(holders) == 1:
                    found = index.terminal_replies(holders[0])
                else:  # copies of a duplicated id: each distinct set of replies once
                    sets = {id(t): t for t in map(index.terminal_replies, holders) if t}
                    found = tuple(sorted({r for t in sets.values() for r in t}, key=letter_key))
                if found:
                    replied[i] = found
        return replied

    def _analyse_simple(self, ids: list[str]) -> Chain:
        """``_analyse`` for a simple chain: a path with no cycle and no fork, so no ruling
        and no doubt of its own; only the replies below each letter."""
        chain = Chain(ids)
        chain.doubts = self.index.global_reasons("current")
        chain.replied = replied = self._replied(ids)
        if replied:
            # Walk up from the oldest letter (the one superseding nothing present).
            out = self.index.out
            sup_ids = self.index.sup_ids
            v = next(i for i in ids if i not in out)
            below: dict[str, tuple[str, ...]] = {v: ()}
            found: tuple[str, ...] = ()
            ups = sup_ids.get(v)
            while ups:
                if v in replied:
                    found = ((v,) + found)[:MAX_BELOW]
                v = ups[0]
                below[v] = found
                ups = sup_ids.get(v)
            chain.reply_below = below
        return chain

    def _analyse(self, ids: list[str]) -> Chain:
        index = self.index
        chain = Chain(ids)
        out = index.out
        sup_ids = index.sup_ids
        superseder_ids = {i: sup_ids.get(i, ()) for i in ids}

        # 1. Cycles: strongly connected components, emitted sinks first.
        sccs = tarjan(ids, out)
        reach: dict[str, frozenset[int]] = {}
        cycles: list[tuple[str, ...]] = []
        empty: frozenset[int] = frozenset()
        for comp in sccs:
            if len(comp) == 1:
                v = comp[0]
                targets = out.get(v, ())
                if v not in targets:  # the common case: one letter, no cycle through it
                    reached_one = empty
                    for t in targets:
                        if reach[t]:
                            reached_one = reached_one | reach[t]
                    reach[v] = reached_one
                    continue
            members = set(comp)
            reached: set[int] = {len(cycles)}
            cycles.append(tuple(sorted(comp)))
            for v in comp:
                for t in out.get(v, ()):
                    if t not in members:
                        reached |= reach[t]
            frozen = frozenset(reached)
            for v in comp:
                reach[v] = frozen
        merged: dict[frozenset[int], tuple[str, ...]] = {}
        for v, r in reach.items():
            if r:
                members = merged.get(r)
                if members is None:
                    members = merged[r] = tuple(sorted({m for i in r for m in cycles[i]}))
                chain.cycle_members[v] = members
        chain.on_cycle = on_cycle = {v for comp in cycles for v in comp}
        # cycle_members of a node on a cycle may merge cycles it leads into; keep each
        # strongly connected set once (for ``cycles()``)
        chain.cycles = sorted({chain.cycle_members[comp[0]] for comp in cycles})

        # 2. Forks, their branches, and which of them a ruling settles.
        outcome = analyse_forks(index, ids, superseder_ids, on_cycle)
        chain.losing = losing = outcome.losing
        chain.winning = outcome.winning
        chain.forks = outcome.forks

        # 3. What puts the chain in doubt.
        doubts: list[Reason] = []
        forks: list[Reason] = []
        for f in outcome.unsettled:
            if f in losing:
                continue  # a fork inside a losing branch does not touch the winner
            sups = superseder_ids[f]
            named = ((f,) + sups)[:MAX_NAMED]
            forks.append(Reason(
                "fork", "current",
                f"{len(sups)} letters supersede {f} and no ruling settles which one is current"
                + more(len(sups) + 1),
                named, index.paths_of(named),
            ))
        doubts += summarise(forks, "forks")
        ambiguous: list[Reason] = []
        for i in ids if index.duplicated_ids else ():
            if superseder_ids[i] and i in index.duplicated_ids:
                holders = index.held_by(i)
                named = ((i,) + superseder_ids[i])[:MAX_NAMED]
                ambiguous.append(Reason(
                    "ambiguous-reference", "current",
                    f"a supersedes pointer names {i}, which {len(holders)} files hold"
                    + more(len(superseder_ids[i]) + 1),
                    named, tuple(holders[:MAX_NAMED]),
                ))
        doubts += summarise(ambiguous, "ids held twice")
        mal: dict[str, Letter] = {}
        for i in ids if index.malformed_sup_by_id else ():
            for h in index.malformed_sup_by_id.get(i, ()):
                mal.setdefault(h.path, h)
        total = len(mal)
        if index.malformed_sup_by_thread:
            sample, count = self._thread_holders(ids)
            chain.malformed_thread = sample
            chain.malformed_thread_count = count
            for h in sample:
                mal.setdefault(h.path, h)
            total += count
        if mal:
            holders = [mal[p] for p in sorted(mal)][:MAX_NAMED]
            doubts.append(Reason(
                "malformed-pointer", "current",
                "a supersedes pointer that could not be read may target this chain: "
                + "; ".join(f"{h.id} has supersedes {h.supersedes!r}" for h in holders[:5])
                + more(total),
                names(h.id for h in holders), tuple(h.path for h in holders),
            ))
        unreadable: dict[str, Unreadable] = {}
        for i in ids if index.unreadable_superseders else ():
            for u in index.unreadable_superseders.get(i, ()):
                unreadable.setdefault(u.path, u)
        if unreadable:
            doubts.append(Reason(
                "unreadable-file", "current",
                f"{len(unreadable)} unreadable file{'s' if len(unreadable) != 1 else ''} may supersede "
                "a letter of this chain",
                (), tuple(sorted(unreadable))[:MAX_NAMED],
            ))
        doubts.extend(index.global_reasons("current"))
        chain.doubts = tuple(doubts)
        chain.doubt = Answer("unknown", chain.doubts) if doubts else None

        # 4. Replies to letters each one supersedes (for reply-to-superseded).
        chain.replied = answered_ids = self._replied(ids)
        below: dict[str, tuple[str, ...]] = {}
        for comp in sccs if answered_ids else ():
            members = set(comp)
            cyclic = len(comp) > 1 or comp[0] in out.get(comp[0], ())
            # the answered ids of its own cycle (enough of them to leave one out), then
            # those below it; never v itself
            shared = sorted(m for m in comp if m in answered_ids)[:MAX_BELOW + 1] if cyclic else []
            outside: list[str] = []
            for v in comp:
                for t in out.get(v, ()):
                    if t not in members:
                        if t in answered_ids:
                            outside.append(t)
                        outside.extend(below.get(t, ()))
            beyond = first_unique(outside, MAX_BELOW)
            for v in comp:
                below[v] = (tuple(m for m in shared if m != v) + beyond)[:MAX_BELOW]
        chain.reply_below = below
        return chain

    def _thread_holders(self, ids: list[str]) -> tuple[tuple[Letter, ...], int]:
        """The malformed ``supersedes`` holders that name no present id and whose thread is
        the thread of a letter of this chain, except the chain's own (such a pointer may
        target any chain of its thread but its own): the first ``MAX_NAMED`` by path, and
        how many there are. Each thread's holders are sorted once, for every chain."""
        index = self.index
        by_thread = index.malformed_sup_by_thread
        if self._thread_sorted is None:
            self._thread_sorted = {t: sorted(group, key=path_key) for t, group in by_thread.items()}
            self._thread_holder_ids = {id(h) for group in by_thread.values() for h in group}
        own = set(ids)
        threads: dict[str, int] = {}  # thread -> how many of its holders are the chain's own
        for i in ids:
            for x in index.holding(i):
                mine = threads.setdefault(x.thread_id, 0)
                if id(x) in self._thread_holder_ids:
                    threads[x.thread_id] = mine + 1
        sample: list[Letter] = []
        count = 0
        for t, mine in threads.items():
            group = self._thread_sorted.get(t)
            if not group:
                continue
            count += len(group) - mine
            taken = 0
            for h in group:
                if h.id not in own:
                    sample.append(h)
                    taken += 1
                    if taken >= MAX_NAMED:
                        break
        sample.sort(key=path_key)
        return tuple(sample[:MAX_NAMED]), count

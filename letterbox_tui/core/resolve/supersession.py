"""Supersession (SPEC 5): chains, cycles, forks, and each letter's current, superseded and
head.

``X supersedes: Y`` is an edge from the id X to the id Y, and a *chain* is a connected
component (the index's union-find). A chain is analysed once, the first time one of its
letters is asked about: strongly connected components find the cycles, ``forks`` finds the
branches of each fork and which rulings settle them, and what may point into the chain
from outside (malformed pointers, unreadable files) puts it in doubt.

Most chains need none of that: a *simple* chain is a path of pointers with no fork, cycle,
duplicate, or unreadable or malformed pointer that may reach it (a lone letter is one). Its
letters are answered by a set lookup and a shared answer (``fast``; the tests turn it off to
compare against the full analysis).
"""

from __future__ import annotations

from ..model import NO, YES, Answer, Letter, Reason, Unreadable
from .common import MAX_BELOW, MAX_NAMED, about, names, sorted_letters
from .forks import Fork, analyse_forks
from .graph import tarjan, topological
from .index import Index


class Chain:
    """What one supersession chain says, computed once."""

    __slots__ = (
        "ids", "cycle_members", "losing", "winning", "doubts", "forks", "reply_below",
        "malformed_thread", "order", "replied", "letters", "head", "heads",
    )

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids
        #: id -> sorted ids of the cycle(s) it is on or leads into
        self.cycle_members: dict[str, tuple[str, ...]] = {}
        #: id -> ``ruled`` reason, for letters on a losing branch of a settled fork
        self.losing: dict[str, Reason] = {}
        #: id -> ``ruled`` reason, for letters on the winning branch
        self.winning: dict[str, Reason] = {}
        #: reasons (about current) that put the whole chain in doubt
        self.doubts: tuple[Reason, ...] = ()
        self.forks: list[Fork] = []
        #: id -> ids it supersedes (transitively) that have a terminal reply
        self.reply_below: dict[str, tuple[str, ...]] = {}
        #: malformed ``supersedes`` holders whose fallback (their thread) covers this chain
        self.malformed_thread: tuple[Letter, ...] = ()
        self.order: list[str] | None = None
        #: id -> terminal replies to the letters holding it (only ids that have some)
        self.replied: dict[str, tuple[Letter, ...]] = {}
        self.letters: list[Letter] | None = None
        self.head: tuple[Letter | None] | None = None
        self.heads: list[Letter] | None = None


class Supersession:
    """current, superseded, chain, heads and head over one index."""

    def __init__(self, index: Index, fast: bool = True) -> None:
        self.index = index
        self.fast = fast
        self._chain_of: dict[str, Chain] = {}
        self._chains: dict[str, Chain] = {}
        self._current: dict[str, Answer] = {}
        self._superseded: dict[str, Answer] = {}
        self._tops: dict[str, Letter] = {}  # root -> the newest letter of a simple chain
        self._touched = self._not_simple()
        doubt = index.global_reasons("current")
        self._lone_current = Answer("unknown", doubt) if doubt else YES
        doubt = index.global_reasons("superseded")
        self._lone_superseded = Answer("unknown", doubt) if doubt else NO

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

    # --- chains -------------------------------------------------------------------
    def chain_of(self, letter_id: str) -> Chain:
        chain = self._chain_of.get(letter_id)
        if chain is not None:
            return chain
        root = self.index.find(letter_id)
        chain = self._chains.get(root)
        if chain is None:
            ids = sorted(self.index.components.get(root, [letter_id]))
            if letter_id not in self._touched and self.fast:  # alone, or a simple chain
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
                found = tuple(r for x in index.holding(i) for r in index.terminal_replies(x))
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
        for v, r in reach.items():
            if r:
                chain.cycle_members[v] = tuple(sorted({m for i in r for m in cycles[i]}))

        # 2. Forks, their branches, and which of them a ruling settles.
        outcome = analyse_forks(index, ids, superseder_ids)
        chain.losing = losing = outcome.losing
        chain.winning = outcome.winning
        chain.forks = outcome.forks

        # 3. What puts the chain in doubt.
        doubts: list[Reason] = []
        for f in outcome.unsettled:
            if f in losing:
                continue  # a fork inside a losing branch does not touch the winner
            sups = list(superseder_ids[f])
            doubts.append(Reason(
                "fork", "current",
                f"{len(sups)} letters supersede {f} and no ruling settles which one is current",
                tuple([f] + sups),
                tuple(sorted(x.path for i in [f] + sups for x in index.holding(i))),
            ))
        for i in ids if index.duplicated_ids else ():
            if superseder_ids[i] and i in index.duplicated_ids:
                doubts.append(Reason(
                    "ambiguous-reference", "current",
                    f"a supersedes pointer names {i}, which {len(index.holders(i))} files hold",
                    (i,) + tuple(superseder_ids[i]), tuple(index.holders(i)),
                ))
        mal: dict[str, Letter] = {}
        for i in ids if index.malformed_sup_by_id else ():
            for h in index.malformed_sup_by_id.get(i, ()):
                mal.setdefault(h.path, h)
        if index.malformed_sup_by_thread:
            thread_holders: dict[str, Letter] = {}
            root = index.find(ids[0])
            for t in {x.thread_id for i in ids for x in index.holding(i)}:
                for h in index.malformed_sup_by_thread.get(t, ()):
                    if index.find(h.id) != root:  # every chain of its thread but its own
                        thread_holders.setdefault(h.path, h)
            chain.malformed_thread = tuple(thread_holders[p] for p in sorted(thread_holders))
            mal.update(thread_holders)
        if mal:
            holders = [mal[p] for p in sorted(mal)]
            doubts.append(Reason(
                "malformed-pointer", "current",
                "a supersedes pointer that could not be read may target this chain: "
                + "; ".join(f"{h.id} has supersedes {h.supersedes!r}" for h in holders[:5]),
                names(h.id for h in holders), tuple(sorted(mal))[:MAX_NAMED],
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

        # 4. Replies to letters each one supersedes (for reply-to-superseded).
        chain.replied = answered_ids = self._replied(ids)
        below: dict[str, tuple[str, ...]] = {}
        for comp in sccs if answered_ids else ():
            members = set(comp)
            cyclic = len(comp) > 1 or comp[0] in out.get(comp[0], ())
            shared: list[str] = sorted(m for m in comp if m in answered_ids) if cyclic else []
            outside: list[str] = []
            for v in comp:
                for t in out.get(v, ()):
                    if t not in members:
                        if t in answered_ids:
                            outside.append(t)
                        outside.extend(below.get(t, ()))
            for v in comp:
                found = [m for m in shared if m != v] + outside
                below[v] = tuple(dict.fromkeys(found))[:MAX_BELOW]
        chain.reply_below = below
        return chain

    # --- answers ------------------------------------------------------------------
    def current(self, letter: Letter) -> Answer:
        """yes / no / unknown (reasons: cycle, fork, malformed-pointer, ambiguous-reference,
        unreadable-file, unsupported-entry, outside-scope, non-atomic-scan; ``ruled`` as info)."""
        if letter.id not in self._touched and self.fast:  # a simple chain
            return NO if letter.id in self.index.sup_ids else self._lone_current
        cached = self._current.get(letter.id)
        if cached is not None:
            return cached
        answer = self._compute_current(letter.id)
        self._current[letter.id] = answer
        return answer

    def _compute_current(self, letter_id: str) -> Answer:
        index = self.index
        chain = self.chain_of(letter_id)
        members = chain.cycle_members.get(letter_id)
        if members is not None:
            where = "is on" if letter_id in members else "leads into"
            return Answer("unknown", (Reason(
                "cycle", "current",
                f"this letter {where} a supersession cycle through {', '.join(members[:10])}; "
                "no winner is picked",
                members[:MAX_NAMED],
                tuple(sorted(x.path for m in members[:MAX_NAMED] for x in index.holding(m))),
            ),))
        if index.superseders.get(letter_id) and letter_id in index.by_id:
            return NO
        ruled = chain.losing.get(letter_id)
        if ruled is not None:
            return Answer("no", (ruled,))
        if chain.doubts:
            return Answer("unknown", chain.doubts)
        win = chain.winning.get(letter_id)
        return Answer("yes", (win,)) if win is not None else YES

    def superseded(self, letter: Letter) -> Answer:
        """yes when current is no; no when nothing may supersede the letter; else unknown."""
        if letter.id not in self._touched and self.fast:  # a simple chain
            return YES if letter.id in self.index.sup_ids else self._lone_superseded
        cached = self._superseded.get(letter.id)
        if cached is not None:
            return cached
        answer = self._compute_superseded(letter)
        self._superseded[letter.id] = answer
        return answer

    def _compute_superseded(self, letter: Letter) -> Answer:
        index = self.index
        cur = self.current(letter)
        if cur.no:
            return Answer("yes", about(cur.reasons, "superseded"))
        if index.superseders.get(letter.id):
            # A readable letter supersedes it, yet current is not no: a cycle.
            return Answer("unknown", about(cur.reasons, "superseded"))
        reasons: list[Reason] = []
        chain = self.chain_of(letter.id)
        mal: dict[str, Letter] = {h.path: h for h in index.malformed_sup_by_id.get(letter.id, ())}
        for h in chain.malformed_thread:
            mal.setdefault(h.path, h)
        if mal:
            reasons.append(Reason(
                "malformed-pointer", "superseded",
                "a supersedes pointer that could not be read may target this letter",
                names(h.id for h in mal.values()), tuple(sorted(mal))[:MAX_NAMED],
            ))
        unreadable = sorted({u.path for u in index.unreadable_superseders.get(letter.id, ())})
        if unreadable:
            reasons.append(Reason(
                "unreadable-file", "superseded",
                "an unreadable file may supersede this letter", (letter.id,), tuple(unreadable)[:MAX_NAMED],
            ))
        reasons.extend(index.global_reasons("superseded"))
        return Answer("unknown", tuple(reasons)) if reasons else NO

    def chain_letters(self, letter_id: str) -> list[Letter]:
        """The letters of the chain, oldest-first by pointer order where possible, ties by id."""
        chain = self.chain_of(letter_id)
        if chain.letters is None:
            holding = self.index.holding
            chain.letters = [x for i in self.chain_order(chain) for x in holding(i)]
        return chain.letters

    def chain_order(self, chain: Chain) -> list[str]:
        """The chain's ids in pointer order (each once)."""
        if chain.order is None:
            chain.order = topological(chain.ids, self.index.out, self.index.superseders)
        return chain.order

    def heads(self, letter: Letter) -> list[Letter]:
        """Candidate heads of the chain: letters that nothing readable supersedes."""
        chain = self.chain_of(letter.id)
        if chain.heads is None:
            superseders = self.index.superseders
            chain.heads = [x for x in self.chain_letters(letter.id) if not superseders.get(x.id)]
        return chain.heads

    def head(self, letter: Letter) -> Letter | None:
        """The single letter of the chain whose current is yes, else None."""
        lid = letter.id
        if lid not in self._touched and self.fast:
            # alone or in a simple chain: only the newest id may be current, and is when
            # the snapshot-wide doubt is empty
            if not self._lone_current.yes:
                return None
            index = self.index
            if lid not in index.parent:
                holders = index.holding(lid)
                return holders[0] if len(holders) == 1 else None
            root = index.find(lid)
            top = self._tops.get(root)
            if top is None:
                sup_ids = index.sup_ids
                while lid in sup_ids:
                    lid = sup_ids[lid][0]
                top = self._tops[root] = index.by_id[lid]
            return top
        chain = self.chain_of(letter.id)
        if chain.head is None:
            found = [x for x in self.chain_letters(letter.id) if self.current(x).yes]
            chain.head = (found[0] if len(found) == 1 else None,)
        return chain.head[0]

    def superseders(self, letter: Letter) -> list[Letter]:
        """Readable letters whose ``supersedes`` is this letter's id."""
        return sorted_letters(self.index.superseders.get(letter.id, ()))

    def forks(self) -> list[Fork]:
        """Every fork of the snapshot, settled or not, sorted by the superseded id."""
        index = self.index
        found: list[Fork] = []
        seen: set[str] = set()
        for target, sups in index.superseders.items():
            if target in index.by_id and len({s.id for s in sups}) >= 2:
                root = index.find(target)
                if root not in seen:
                    seen.add(root)
                    found.extend(self.chain_of(target).forks)
        return sorted(found, key=lambda f: f.at)

    def cycles(self) -> list[tuple[str, ...]]:
        """Every supersession cycle, as its sorted member ids."""
        index = self.index
        found: set[tuple[str, ...]] = set()
        seen: set[str] = set()
        for node in index.out:
            root = index.find(node)
            if root in seen:
                continue
            seen.add(root)
            chain = self.chain_of(node)
            for v, members in chain.cycle_members.items():
                if v in members:
                    found.add(members)
        # cycle_members of a node on a cycle may merge cycles it leads into; keep each
        # strongly connected set once.
        return sorted(found)

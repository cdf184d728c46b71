"""Supersession (SPEC 5): each letter's current, superseded, chain, heads and head.

``X supersedes: Y`` is an edge from the id X to the id Y, and a *chain* is a connected
component; ``chains`` analyses each chain once. Resolution follows pointers, never the clock.
A letter of a simple chain is answered by a set lookup and a shared answer.
"""

from __future__ import annotations

from ..model import NO, YES, Answer, Letter, Reason
from .chains import Chain, Chains
from .common import MAX_NAMED, Relabel, more, names, sorted_letters
from .forks import Fork
from .graph import topological
from .index import Index


class Supersession:
    """current, superseded, chain, heads and head over one index."""

    def __init__(self, index: Index, fast: bool = True) -> None:
        self.index = index
        self.fast = fast
        self.chains = Chains(index, fast)
        self.chain_of = self.chains.chain_of
        self._touched = self.chains.touched
        self._current: dict[str, Answer] = {}
        self._superseded: dict[str, Answer] = {}
        self._tops: dict[str, Letter] = {}  # root -> the newest letter of a simple chain
        self._relabel = Relabel()
        doubt = index.global_reasons("current")
        self._lone_current = Answer("unknown", doubt) if doubt else YES
        doubt = index.global_reasons("superseded")
        self._lone_superseded = Answer("unknown", doubt) if doubt else NO

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
            return self._cycle_answer(chain, letter_id, members)
        if index.superseders.get(letter_id) and letter_id in index.by_id:
            return NO
        ruled = chain.losing.get(letter_id)
        if ruled is not None:
            return Answer("no", (ruled,))
        if chain.doubt is not None:
            return chain.doubt
        win = chain.winning.get(letter_id)
        return Answer("yes", (win,)) if win is not None else YES

    def _cycle_answer(self, chain: Chain, letter_id: str, members: tuple[str, ...]) -> Answer:
        """The answer every letter on (or leading into) the same cycles shares."""
        on = letter_id in chain.on_cycle
        key = (id(members), on)
        answer = chain.cycle_reasons.get(key)
        if answer is None:
            where = "is on" if on else "leads into"
            shown = ", ".join(members[:10]) + (f" and {len(members) - 10} more" if len(members) > 10 else "")
            named = members[:MAX_NAMED]
            answer = chain.cycle_reasons[key] = Answer("unknown", (Reason(
                "cycle", "current",
                f"this letter {where} a supersession cycle through {shown}; no winner is picked"
                + more(len(members)),
                named, self.index.paths_of(named),
            ),))
        return answer

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
            return Answer("yes", self._relabel(cur.reasons, "superseded"))
        if index.superseders.get(letter.id):
            # A readable letter supersedes it, yet current is not no: a cycle.
            return Answer("unknown", self._relabel(cur.reasons, "superseded"))
        chain = self.chain_of(letter.id)
        by_id = index.malformed_sup_by_id.get(letter.id, ())
        unreadable = index.unreadable_superseders.get(letter.id, ())
        if not by_id and not unreadable:
            # only what concerns the whole chain: one answer, shared
            if chain.superseded_doubt is None:
                chain.superseded_doubt = self._superseded_doubt(letter, chain, (), ())
            return chain.superseded_doubt
        return self._superseded_doubt(letter, chain, by_id, unreadable)

    def _superseded_doubt(self, letter: Letter, chain: Chain, by_id, unreadable) -> Answer:
        reasons: list[Reason] = []
        mal: dict[str, Letter] = {h.path: h for h in by_id}
        total = len(mal) + chain.malformed_thread_count
        for h in chain.malformed_thread:
            mal.setdefault(h.path, h)
        if mal:
            holders = [mal[p] for p in sorted(mal)][:MAX_NAMED]
            reasons.append(Reason(
                "malformed-pointer", "superseded",
                "a supersedes pointer that could not be read may target this letter" + more(total),
                names(h.id for h in holders), tuple(h.path for h in holders),
            ))
        paths = sorted({u.path for u in unreadable})
        if paths:
            reasons.append(Reason(
                "unreadable-file", "superseded",
                "an unreadable file may supersede this letter", (letter.id,), tuple(paths)[:MAX_NAMED],
            ))
        reasons.extend(self.index.global_reasons("superseded"))
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
            found.update(self.chain_of(node).cycles)
        return sorted(found)

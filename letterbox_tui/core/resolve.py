"""Derived answers (SPEC 5): supersession, answered, accepted, state, late, disputes.

``resolve(snapshot, at)`` indexes the snapshot once (ids, pointers, replies, threads,
disputes, what unreadable files and unsupported entries may be) and returns a
``Resolution`` that answers per letter from those indexes, caching each answer. Pure: the
clock is the parameter ``at``; nothing here reads a file or calls ``datetime.now()``.

Supersession works on ids: ``X supersedes: Y`` is an edge from the id X to the id Y, and a
*chain* is a connected component (union-find). A chain is analysed once, the first time one
of its letters is asked about: strongly connected components (Tarjan, iterative) find the
cycles, reverse reachability finds the branches of each fork, and disputes and rulings
decide which forks are settled. Everything is linear in the number of letters, except that
a letter inside k nested forks is visited once per fork.

Most letters need none of that. Indexing also builds the answers the common cases share:
the snapshot-wide doubt (unsupported entries, a partial scope, a non-atomic scan), the
answered/state/late of a *plain* letter (nothing but that doubt bears on them: see
``_Plain``), and which ids lie in a *simple* chain (a path of pointers with no fork, cycle,
duplicate, or unreadable or malformed pointer that may reach it; a lone letter is one).
Those letters are answered by a set lookup and a shared, immutable answer; the rest take the
full analysis. ``Resolution._fast_paths = False`` turns the shortcuts off (the tests compare).

Every result is independent of scan order: lists are sorted by id then path, and reasons
name letters and paths in sorted order.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

from .grammar import ID_RE, tokens
from .model import EXTERNAL_BRIDGE, NO, YES, Answer, Letter, Reason, Snapshot, Unreadable

TERMINAL_TYPES = ("result", "nack")
#: How many letters a reason names before it stops listing (the count is in its detail).
_MAX_NAMED = 50
#: How many earlier answered versions reply-to-superseded names (nearest first).
_MAX_BELOW = 10


@dataclass(slots=True, frozen=True)
class StateAnswer:
    """``state`` is open, closed or unknown (not yes/no), with reasons when unknown."""

    value: str  # "open" | "closed" | "unknown"
    reasons: tuple[Reason, ...] = ()


OPEN = StateAnswer("open")
CLOSED = StateAnswer("closed")


@dataclass(slots=True, frozen=True)
class OpenDispute:
    dispute: Letter
    disputed: tuple[Letter, ...]  # readable letters the dispute names, in its order


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


@dataclass(slots=True, frozen=True)
class Dangling:
    """A pointer to an id no file holds, readable or not (harmless; ``check`` warns)."""

    letter: Letter
    field: str
    target: str


def _letter_key(x: Letter) -> tuple[str, str]:
    return (x.id, x.path)


def _path_key(x: Letter) -> str:
    return x.path


def _sorted_letters(letters) -> list[Letter]:
    found = list(letters)
    if len(found) > 1:
        found.sort(key=_letter_key)
    return found


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)


def _about(reasons: tuple[Reason, ...], about: str) -> tuple[Reason, ...]:
    return tuple(r if r.about == about else Reason(r.code, about, r.detail, r.letters, r.paths) for r in reasons)


def _names(ids) -> tuple[str, ...]:
    return tuple(sorted(set(ids)))[:_MAX_NAMED]


def _is_id(value: str) -> bool:
    return bool(value) and ID_RE.fullmatch(value) is not None


class _Chain:
    """What one supersession chain says, computed once."""

    __slots__ = (
        "ids", "cycle_members", "losing", "winning", "doubts", "forks", "reply_below",
        "malformed_thread", "order", "replied", "letters", "head", "heads",
    )

    def __init__(self) -> None:
        self.ids: list[str] = []
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


class _Plain:
    """The answered, state and late answers every *plain* letter shares.

    A letter is plain when nothing but the snapshot-wide doubt bears on those answers: no
    reply or supersedes pointer, readable or not, concerns its id, its id is held once, and
    neither party is the external bridge. Its answers then depend only on that doubt and,
    when unreadable files may be replies to anyone, on its pair of parties; they are built
    once and shared. When the scope is partial and the sender is outside it (``outside``),
    each answer adds an outside-scope reason naming the letter, built per letter.
    """

    __slots__ = ("answered", "state", "late_reasons", "late_overdue", "outside")

    def __init__(self, answered: Answer, outside: bool) -> None:
        self.answered = answered
        self.outside = outside
        if answered.no:
            self.state = OPEN
            self.late_reasons: tuple[Reason, ...] = ()
            self.late_overdue = YES
        else:
            self.state = StateAnswer("unknown", _about(answered.reasons, "state"))
            self.late_reasons = _about(answered.reasons, "late")
            self.late_overdue = Answer("unknown", self.late_reasons)


class Resolution:
    """Every derived answer over one snapshot at one clock ``at``."""

    snapshot: Snapshot
    at: datetime
    #: answer plain letters and singleton chains from the shared answers built at indexing
    #: (the tests turn this off to compare against the full analysis)
    _fast_paths = True

    def __init__(self, snapshot: Snapshot, at: datetime) -> None:
        with _gc_paused():
            self._index(snapshot, at)

    def _index(self, snapshot: Snapshot, at: datetime) -> None:
        self.snapshot = snapshot
        self.at = _aware(at)
        scope = snapshot.scope
        self._partial = bool(scope.partial)
        #: paths of the letters that have a sidecar (``Snapshot.has_sidecar``)
        self._sidecar_letters = frozenset(p[:-4] for p in snapshot.sidecars if p.endswith(".ack"))
        self._atomic = bool(scope.atomic)
        self._participants = frozenset(scope.participants)

        # One pass over the letters; pointers that need the whole id index wait in lists.
        # An id (or re) held by one letter maps to that letter; only ids held by two or more
        # get a list (in ``dups`` / ``more_children``): 100,000 one-item lists would cost
        # the cyclic collector three walks over them once it runs again.
        by_id: dict[str, Letter] = {}
        dups: dict[str, list[Letter]] = {}
        children: dict[str, Letter] = {}
        more_children: dict[str, list[Letter]] = {}
        # the same for results and nacks only (the candidates for terminal replies)
        replied_ids: dict[str, Letter] = {}
        more_replies: dict[str, list[Letter]] = {}
        acked_ids: dict[str, Letter] = {}  # and for acks
        more_acks: dict[str, list[Letter]] = {}
        with_supersedes: list[Letter] = []
        bad_supersedes: list[Letter] = []
        bad_re: list[Letter] = []
        disputes_naming: dict[str, list[Letter]] = {}
        rulings_on: dict[str, list[Letter]] = {}
        # bound once: the loop runs 100,000 times
        first_by_id = by_id.setdefault
        first_child = children.setdefault
        first_reply = replied_ids.setdefault
        first_ack = acked_ids.setdefault
        for letter in snapshot.letters:
            lid = letter.id
            first = first_by_id(lid, letter)
            if first is not letter:
                _also(dups, lid, first, letter)
            re_id = letter.re
            kind = letter.type
            malformed = letter.malformed
            if re_id:
                if malformed and "re" in malformed:
                    bad_re.append(letter)
                else:
                    first = first_child(re_id, letter)
                    if first is not letter:
                        _also(more_children, re_id, first, letter)
                    if kind == "result" or kind == "nack":  # TERMINAL_TYPES
                        first = first_reply(re_id, letter)
                        if first is not letter:
                            _also(more_replies, re_id, first, letter)
                    elif kind == "ack":
                        first = first_ack(re_id, letter)
                        if first is not letter:
                            _also(more_acks, re_id, first, letter)
            if letter.supersedes:
                if malformed and "supersedes" in malformed:
                    bad_supersedes.append(letter)
                else:
                    with_supersedes.append(letter)
            if kind == "dispute":
                for d in set(letter.disputes or ()):
                    disputes_naming.setdefault(d, []).append(letter)
            elif kind == "ruling" and _is_id(letter.rules_on) and "rules_on" not in (malformed or ()):
                rulings_on.setdefault(letter.rules_on, []).append(letter)
        for lid, group in dups.items():
            group.sort(key=_path_key)
            by_id[lid] = group[0]
        self._by_id = by_id
        self._dups = dups

        malformed_re: dict[str, list[Letter]] = {}
        for letter in bad_re:
            for tok in tokens(letter.re):
                malformed_re.setdefault(tok, []).append(letter)

        superseders: dict[str, list[Letter]] = {}
        out: dict[str, set[str]] = {}
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            root = x
            while True:
                p = parent.get(root, root)
                if p == root:
                    break
                root = p
            while x != root:
                nxt = parent.get(x, x)
                parent[x] = root
                x = nxt
            return root

        for letter in with_supersedes:
            target = letter.supersedes
            superseders.setdefault(target, []).append(letter)
            if target in by_id:
                lid = letter.id
                out.setdefault(lid, set()).add(target)
                parent.setdefault(lid, lid)
                parent.setdefault(target, target)
                a, b = find(lid), find(target)
                if a != b:
                    if a < b:
                        parent[b] = a
                    else:
                        parent[a] = b
        malformed_sup_by_id: dict[str, list[Letter]] = {}
        malformed_sup_by_thread: dict[str, list[Letter]] = {}
        for letter in bad_supersedes:
            named = [t for t in tokens(letter.supersedes) if t in by_id]
            if named:
                for t in named:
                    malformed_sup_by_id.setdefault(t, []).append(letter)
            else:
                malformed_sup_by_thread.setdefault(letter.thread_id, []).append(letter)

        self._children = children
        self._more_children = more_children
        self._superseders = superseders
        self._threads: dict[str, list[Letter]] | None = None
        self._disputes_naming = disputes_naming
        self._rulings_on = rulings_on
        self._malformed_re = malformed_re
        self._malformed_sup_by_id = malformed_sup_by_id
        self._malformed_sup_by_thread = malformed_sup_by_thread
        self._out = {k: tuple(sorted(v)) for k, v in out.items()}
        sup_ids: dict[str, list[str]] = {}
        for src, targets in out.items():
            for t in targets:
                sup_ids.setdefault(t, []).append(src)
        #: id -> sorted ids of the readable letters that supersede it (present ids only)
        self._sup_ids = {k: tuple(sorted(v)) for k, v in sup_ids.items()}
        self._parent = parent
        self._find = find

        # Unreadable files: which ids they hold, and what they may be.
        unreadable_holders: dict[str, list[Unreadable]] = {}
        unreadable_superseders: dict[str, list[Unreadable]] = {}
        unreadable_reply_by_re: dict[str, list[Unreadable]] = {}
        unreadable_reply_open: dict[tuple[str | None, str | None], list[Unreadable]] = {}
        for u in snapshot.unreadable:
            legible = u.legible or {}
            uid = legible.get("id", "")
            if _is_id(uid):
                unreadable_holders.setdefault(uid, []).append(u)
            mentioned = tokens(u.illegible) if u.illegible else set()
            sup = legible.get("supersedes")
            if sup:
                mentioned.add(sup)
            for t in mentioned:
                if t in by_id:
                    unreadable_superseders.setdefault(t, []).append(u)
            if "re" in legible:
                unreadable_reply_by_re.setdefault(legible["re"], []).append(u)
            elif legible.get("type", "result") in TERMINAL_TYPES:
                key = (legible.get("from"), legible.get("to"))
                unreadable_reply_open.setdefault(key, []).append(u)
        self._unreadable_holders = unreadable_holders
        self._unreadable_superseders = unreadable_superseders
        self._unreadable_reply_by_re = unreadable_reply_by_re
        self._unreadable_reply_open = unreadable_reply_open
        dup_ids = set(dups)
        dup_ids.update(i for i, group in unreadable_holders.items() if len(group) + len(self._holding(i)) > 1)
        self._duplicated_ids = frozenset(dup_ids)

        # Reasons that hold for every letter of the snapshot (built once, shared).
        unsupported = snapshot.unsupported
        self._unsupported_paths = tuple(sorted(u.path for u in unsupported))
        self._globals: dict[tuple[str, bool, bool], tuple[Reason, ...]] = {}
        self._chain_of: dict[str, _Chain] = {}
        self._chains: dict[str, _Chain] = {}
        self._current: dict[str, Answer] = {}
        self._superseded: dict[str, Answer] = {}
        self._answered: dict[int, Answer] = {}
        self._state: dict[int, StateAnswer] = {}
        self._late: dict[int, Answer] = {}
        self._replied_ids = replied_ids
        self._more_replies = more_replies
        self._acked_ids = acked_ids
        self._more_acks = more_acks

        # Fast paths for supersession. A *simple* chain is a plain path of pointers: no
        # fork, no cycle, no duplicated id, and nothing unreadable or malformed that may
        # point into it. A letter alone in its chain is the simplest. In a simple chain a
        # superseded letter is not current, and the head is in the snapshot-wide doubt only.
        doubted = set(malformed_sup_by_id)
        doubted.update(unreadable_superseders)
        if malformed_sup_by_thread:
            # a malformed pointer naming no present id may target any chain of its thread
            doubted.update(x.id for x in snapshot.letters if x.thread_id in malformed_sup_by_thread)
        doubted.update(i for i in dup_ids if i in parent)
        comps: dict[str, list[str]] = {}
        for node in parent:
            comps.setdefault(find(node), []).append(node)
        self._components = comps
        sup_ids = self._sup_ids
        touched = doubted
        for nodes in comps.values():
            # a path: one edge fewer than ids, no id superseded twice, none in doubt
            edges = 0
            for i in nodes:
                if i in doubted or len(sup_ids.get(i, ())) > 1:
                    break
                edges += len(out.get(i, ()))
            else:
                if edges == len(nodes) - 1:
                    continue
            touched.update(nodes)
        self._touched = touched
        self._tops: dict[str, Letter] = {}  # root -> the newest letter of a simple chain
        doubt = self._global_reasons("current")
        self._lone_current = Answer("unknown", doubt) if doubt else YES
        doubt = self._global_reasons("superseded")
        self._lone_superseded = Answer("unknown", doubt) if doubt else NO
        # Plain letters (see _Plain): ids with no terminal reply, supersedes edge, unreadable
        # or malformed reply pointer, and not duplicated.
        special = set(replied_ids)
        special.update(out)
        special.update(unreadable_reply_by_re)
        special.update(malformed_re)
        special.update(dup_ids)
        self._special = special
        self._plain_by_pair: dict[tuple[str, str], _Plain] = {}
        self._plain_all: _Plain | None = None
        self._plain_all_outside: _Plain | None = None
        if not unreadable_reply_open:
            self._plain_all = _Plain(self._plain_answered("", ""), False)
            self._plain_all_outside = _Plain(self._plain_all.answered, True)

    # --- shared reasons -----------------------------------------------------------
    def _global_reasons(self, about: str, *, unsupported: bool = True, partial: bool = True) -> tuple[Reason, ...]:
        key = (about, unsupported, partial)
        cached = self._globals.get(key)
        if cached is None:
            cached = self._globals[key] = tuple(self._make_global_reasons(about, unsupported, partial))
        return cached

    def _make_global_reasons(self, about: str, unsupported: bool, partial: bool) -> list[Reason]:
        reasons = []
        if unsupported and self._unsupported_paths:
            n = len(self._unsupported_paths)
            reasons.append(Reason(
                "unsupported-entry", about,
                f"{n} entr{'ies' if n != 1 else 'y'} the scan may not read may bear on this",
                (), self._unsupported_paths[:_MAX_NAMED],
            ))
        if partial and self._partial:
            reasons.append(Reason(
                "outside-scope", about,
                "the scope is partial (" + ", ".join(sorted(self._participants)) + " only): "
                "letters of other seats may bear on this",
            ))
        if not self._atomic:
            reasons.append(Reason("non-atomic-scan", about, "files changed while the scan ran"))
        return reasons

    # --- lookups ------------------------------------------------------------------
    def _holding(self, letter_id: str) -> Sequence[Letter]:
        """The readable letters holding this id, by path."""
        return _indexed(letter_id, self._by_id, self._dups)

    def _kids(self, letter_id: str) -> Sequence[Letter]:
        """The readable letters whose (well-formed) ``re`` is this id, in scan order."""
        return _indexed(letter_id, self._children, self._more_children)

    def by_id(self, letter_id: str) -> list[Letter]:
        """Every readable letter holding this id (two or more: a duplicated id)."""
        return list(self._holding(letter_id))

    def holders(self, letter_id: str) -> list[str]:
        """Paths of every file holding this id: readable letters and unreadable files whose
        legible ``id`` is it. Two or more: the id is duplicated."""
        paths = [x.path for x in self._holding(letter_id)]
        paths += [u.path for u in self._unreadable_holders.get(letter_id, ())]
        return sorted(paths)

    def _duplicated(self, letter_id: str) -> bool:
        return letter_id in self._duplicated_ids

    # --- supersession -------------------------------------------------------------
    def _chain(self, letter_id: str) -> _Chain:
        chain = self._chain_of.get(letter_id)
        if chain is not None:
            return chain
        root = self._find(letter_id)
        chain = self._chains.get(root)
        if chain is None:
            ids = sorted(self._components.get(root, [letter_id]))
            if letter_id not in self._touched and self._fast_paths:  # alone, or a simple chain
                chain = self._analyse_simple(ids)
            else:
                chain = self._analyse(ids)
            self._chains[root] = chain
            for i in ids:
                self._chain_of[i] = chain
        return chain

    def _analyse_simple(self, ids: list[str]) -> _Chain:
        """``_analyse`` for a simple chain (see ``_index``): a path with no cycle and no
        fork, so no ruling and no doubt of its own; only the replies below each letter."""
        chain = _Chain()
        chain.ids = ids
        chain.doubts = self._global_reasons("current")
        children = self._children
        replied: dict[str, tuple[Letter, ...]] = {}
        for i in ids:
            if i in children:
                found = tuple(r for x in self._holding(i) for r in self._terminal_replies(x))
                if found:
                    replied[i] = found
        chain.replied = replied
        if replied:
            # Walk up from the oldest letter (the one superseding nothing present).
            out = self._out
            sup_ids = self._sup_ids
            v = next(i for i in ids if i not in out)
            below: dict[str, tuple[str, ...]] = {v: ()}
            names: tuple[str, ...] = ()
            ups = sup_ids.get(v)
            while ups:
                if v in replied:
                    names = ((v,) + names)[:_MAX_BELOW]
                v = ups[0]
                below[v] = names
                ups = sup_ids.get(v)
            chain.reply_below = below
        return chain

    def _analyse(self, ids: list[str]) -> _Chain:
        chain = _Chain()
        chain.ids = ids
        out = self._out
        sup_ids = self._sup_ids
        superseder_ids = {i: sup_ids.get(i, ()) for i in ids}

        # 1. Cycles: strongly connected components, emitted sinks first.
        sccs = _tarjan(ids, out)
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
        forks = [f for f in ids if len(superseder_ids[f]) >= 2]  # ids are sorted
        settled: list[tuple[str, list[str], str, dict[str, set[str]], str, tuple[Letter, ...]]] = []
        unsettled: list[str] = []
        for f in forks:
            branches = {s: _reverse_reach(s, superseder_ids) for s in superseder_ids[f]}
            outcome = self._settle(branches)
            if outcome is None:
                unsettled.append(f)
            else:
                winner, dispute_id, rulings = outcome
                settled.append((f, list(superseder_ids[f]), winner, branches, dispute_id, rulings))
        losing: dict[str, Reason] = {}
        winning: dict[str, Reason] = {}
        for f, sups, winner, branches, dispute_id, rulings in settled:
            ruling_ids = tuple(sorted({r.id for r in rulings}))
            ruling_paths = tuple(sorted(r.path for r in rulings))
            letters = (dispute_id,) + ruling_ids
            lose = Reason(
                "ruled", "current",
                f"fork at {f} settled by ruling {', '.join(ruling_ids)} on dispute {dispute_id}: "
                f"the branch of {winner} wins, this letter is on a losing branch",
                letters, ruling_paths,
            )
            win = Reason(
                "ruled", "current",
                f"fork at {f} settled by ruling {', '.join(ruling_ids)} on dispute {dispute_id}: "
                f"the branch of {winner} wins",
                letters, ruling_paths,
            )
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
        chain.losing = losing
        chain.winning = winning
        for f, sups, winner, branches, dispute_id, rulings in settled:
            chain.forks.append(Fork(
                f, tuple(sups), True, winner, dispute_id, tuple(sorted({r.id for r in rulings})),
                f in losing,
            ))
        for f in unsettled:
            chain.forks.append(Fork(f, tuple(superseder_ids[f]), False, in_losing_branch=f in losing))
        chain.forks.sort(key=lambda x: x.at)

        # 3. What puts the chain in doubt.
        doubts: list[Reason] = []
        for f in unsettled:
            if f in losing:
                continue  # a fork inside a losing branch does not touch the winner
            sups = list(superseder_ids[f])
            doubts.append(Reason(
                "fork", "current",
                f"{len(sups)} letters supersede {f} and no ruling settles which one is current",
                tuple([f] + sups),
                tuple(sorted(x.path for i in [f] + sups for x in self._holding(i))),
            ))
        for i in ids if self._duplicated_ids else ():
            if superseder_ids[i] and self._duplicated(i):
                doubts.append(Reason(
                    "ambiguous-reference", "current",
                    f"a supersedes pointer names {i}, which {len(self.holders(i))} files hold",
                    (i,) + tuple(superseder_ids[i]), tuple(self.holders(i)),
                ))
        mal: dict[str, Letter] = {}
        for i in ids if self._malformed_sup_by_id else ():
            for h in self._malformed_sup_by_id.get(i, ()):
                mal.setdefault(h.path, h)
        if self._malformed_sup_by_thread:
            thread_holders: dict[str, Letter] = {}
            root = self._find(ids[0])
            for t in {x.thread_id for i in ids for x in self._holding(i)}:
                for h in self._malformed_sup_by_thread.get(t, ()):
                    if self._find(h.id) != root:  # every chain of its thread but its own
                        thread_holders.setdefault(h.path, h)
            chain.malformed_thread = tuple(thread_holders[p] for p in sorted(thread_holders))
            mal.update(thread_holders)
        if mal:
            holders = [mal[p] for p in sorted(mal)]
            doubts.append(Reason(
                "malformed-pointer", "current",
                "a supersedes pointer that could not be read may target this chain: "
                + "; ".join(f"{h.id} has supersedes {h.supersedes!r}" for h in holders[:5]),
                _names(h.id for h in holders), tuple(sorted(mal))[:_MAX_NAMED],
            ))
        unreadable: dict[str, Unreadable] = {}
        for i in ids if self._unreadable_superseders else ():
            for u in self._unreadable_superseders.get(i, ()):
                unreadable.setdefault(u.path, u)
        if unreadable:
            doubts.append(Reason(
                "unreadable-file", "current",
                f"{len(unreadable)} unreadable file{'s' if len(unreadable) != 1 else ''} may supersede "
                "a letter of this chain",
                (), tuple(sorted(unreadable))[:_MAX_NAMED],
            ))
        doubts.extend(self._global_reasons("current"))
        chain.doubts = tuple(doubts)

        # 4. Replies to letters each one supersedes (for reply-to-superseded).
        children = self._children
        replied: dict[str, tuple[Letter, ...]] = {}
        for i in ids:
            if i in children:
                found = tuple(r for x in self._holding(i) for r in self._terminal_replies(x))
                if found:
                    replied[i] = found
        chain.replied = replied
        answered_ids = replied
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
                names = [m for m in shared if m != v] + outside
                below[v] = tuple(dict.fromkeys(names))[:_MAX_BELOW]
        chain.reply_below = below
        return chain

    def _settle(self, branches: dict[str, set[str]]) -> tuple[str, str, tuple[Letter, ...]] | None:
        """The winning branch of a fork, the dispute and rulings that decide it, or None."""
        per_branch: list[set[str]] = []
        for members in branches.values():
            named: set[str] = set()
            for m in members:
                for d in self._disputes_naming.get(m, ()):
                    named.add(d.id)
            per_branch.append(named)
        qualifying = set.intersection(*per_branch) if per_branch else set()
        outcomes: dict[str, tuple[str, tuple[Letter, ...]]] = {}
        for dispute_id in sorted(qualifying):
            rulings = self._rulings_on.get(dispute_id, ())
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
            outcomes.setdefault(holding[0], (dispute_id, tuple(_sorted_letters(rulings))))
        if len(outcomes) != 1:
            return None
        ((winner, (dispute_id, rulings)),) = outcomes.items()
        return winner, dispute_id, rulings

    def current(self, letter: Letter) -> Answer:
        """yes / no / unknown (reasons: cycle, fork, malformed-pointer, ambiguous-reference,
        unreadable-file, unsupported-entry, outside-scope, non-atomic-scan; ``ruled`` as info)."""
        if letter.id not in self._touched and self._fast_paths:  # a simple chain
            return NO if letter.id in self._sup_ids else self._lone_current
        cached = self._current.get(letter.id)
        if cached is not None:
            return cached
        answer = self._compute_current(letter.id)
        self._current[letter.id] = answer
        return answer

    def _compute_current(self, letter_id: str) -> Answer:
        chain = self._chain(letter_id)
        members = chain.cycle_members.get(letter_id)
        if members is not None:
            where = "is on" if letter_id in members else "leads into"
            return Answer("unknown", (Reason(
                "cycle", "current",
                f"this letter {where} a supersession cycle through {', '.join(members[:10])}; "
                "no winner is picked",
                members[:_MAX_NAMED],
                tuple(sorted(x.path for m in members[:_MAX_NAMED] for x in self._holding(m))),
            ),))
        if self._superseders.get(letter_id) and letter_id in self._by_id:
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
        if letter.id not in self._touched and self._fast_paths:  # a simple chain
            return YES if letter.id in self._sup_ids else self._lone_superseded
        cached = self._superseded.get(letter.id)
        if cached is not None:
            return cached
        answer = self._compute_superseded(letter)
        self._superseded[letter.id] = answer
        return answer

    def _compute_superseded(self, letter: Letter) -> Answer:
        cur = self.current(letter)
        if cur.no:
            return Answer("yes", _about(cur.reasons, "superseded"))
        if self._superseders.get(letter.id):
            # A readable letter supersedes it, yet current is not no: a cycle.
            return Answer("unknown", _about(cur.reasons, "superseded"))
        reasons: list[Reason] = []
        chain = self._chain(letter.id)
        mal: dict[str, Letter] = {h.path: h for h in self._malformed_sup_by_id.get(letter.id, ())}
        for h in chain.malformed_thread:
            mal.setdefault(h.path, h)
        if mal:
            reasons.append(Reason(
                "malformed-pointer", "superseded",
                "a supersedes pointer that could not be read may target this letter",
                _names(h.id for h in mal.values()), tuple(sorted(mal))[:_MAX_NAMED],
            ))
        unreadable = sorted({u.path for u in self._unreadable_superseders.get(letter.id, ())})
        if unreadable:
            reasons.append(Reason(
                "unreadable-file", "superseded",
                "an unreadable file may supersede this letter", (letter.id,), tuple(unreadable)[:_MAX_NAMED],
            ))
        reasons.extend(self._global_reasons("superseded"))
        return Answer("unknown", tuple(reasons)) if reasons else NO

    def chain(self, letter: Letter) -> list[Letter]:
        """The letter's chain (connected component of supersedes edges), oldest-first by
        pointer order where possible, ties by id."""
        return list(self._chain_letters(letter.id))

    def _chain_letters(self, letter_id: str) -> list[Letter]:
        chain = self._chain(letter_id)
        if chain.letters is None:
            if chain.order is None:
                chain.order = _topological(chain.ids, self._out, self._superseders)
            chain.letters = [x for i in chain.order for x in self._holding(i)]
        return chain.letters

    def chain_ids(self, letter: Letter) -> list[str]:
        """The ids of the letter's chain, in ``chain`` order (each id once)."""
        self.chain(letter)
        return list(self._chain(letter.id).order or ())

    def heads(self, letter: Letter) -> list[Letter]:
        """Candidate heads of the chain: letters that nothing readable supersedes."""
        chain = self._chain(letter.id)
        if chain.heads is None:
            chain.heads = [x for x in self._chain_letters(letter.id) if not self._superseders.get(x.id)]
        return list(chain.heads)

    def head(self, letter: Letter) -> Letter | None:
        """The single letter of the chain whose current is yes, else None."""
        lid = letter.id
        if lid not in self._touched and self._fast_paths:
            # alone or in a simple chain: only the newest id may be current, and is when
            # the snapshot-wide doubt is empty
            if not self._lone_current.yes:
                return None
            if lid not in self._parent:
                holders = self._holding(lid)
                return holders[0] if len(holders) == 1 else None
            root = self._find(lid)
            top = self._tops.get(root)
            if top is None:
                sup_ids = self._sup_ids
                while lid in sup_ids:
                    lid = sup_ids[lid][0]
                top = self._tops[root] = self._by_id[lid]
            return top
        chain = self._chain(letter.id)
        if chain.head is None:
            found = [x for x in self._chain_letters(letter.id) if self.current(x).yes]
            chain.head = (found[0] if len(found) == 1 else None,)
        return chain.head[0]

    def superseders(self, letter: Letter) -> list[Letter]:
        """Readable letters whose ``supersedes`` is this letter's id."""
        return _sorted_letters(self._superseders.get(letter.id, ()))

    def forks(self) -> list[Fork]:
        """Every fork of the snapshot, settled or not, sorted by the superseded id."""
        found: list[Fork] = []
        seen: set[str] = set()
        for target, sups in self._superseders.items():
            if target in self._by_id and len({s.id for s in sups}) >= 2:
                root = self._find(target)
                if root not in seen:
                    seen.add(root)
                    found.extend(self._chain(target).forks)
        return sorted(found, key=lambda f: f.at)

    def cycles(self) -> list[tuple[str, ...]]:
        """Every supersession cycle, as its sorted member ids."""
        found: set[tuple[str, ...]] = set()
        seen: set[str] = set()
        for node in self._out:
            root = self._find(node)
            if root in seen:
                continue
            seen.add(root)
            chain = self._chain(node)
            for v, members in chain.cycle_members.items():
                if v in members:
                    found.add(members)
        # cycle_members of a node on a cycle may merge cycles it leads into; keep each
        # strongly connected set once.
        return sorted(found)

    def dangling(self) -> list[Dangling]:
        """Pointers (re, supersedes, rules_on, upholds, disputes) to ids no file holds."""
        found: list[Dangling] = []
        for letter in _sorted_letters(self.snapshot.letters):
            malformed = letter.malformed or ()
            for key in ("re", "supersedes", "rules_on", "upholds"):
                value = getattr(letter, key)
                if value and key not in malformed and not self.holders(value):
                    found.append(Dangling(letter, key, value))
            for d in letter.disputes or ():
                if not self.holders(d):
                    found.append(Dangling(letter, "disputes", d))
        return found

    # --- replies ------------------------------------------------------------------
    def _terminal_replies(self, letter: Letter) -> list[Letter]:
        """Terminal replies to this letter, sorted (built on each call: cheap, and a cache
        of 100,000 small lists would cost the cyclic collector more than it saves)."""
        return _from_recipient(letter, self._replied_ids, self._more_replies)

    def _closed_by_reply(self, letter: Letter) -> bool:
        """``answered`` is yes (so ``state`` is closed), without building the answer."""
        return (
            letter.id in self._replied_ids
            and letter.id not in self._duplicated_ids
            and letter.sender != EXTERNAL_BRIDGE
            and letter.recipient != EXTERNAL_BRIDGE
            and bool(self._terminal_replies(letter))
        )

    def _plain(self, letter: Letter) -> _Plain | None:
        """The shared answers of a plain letter (see ``_Plain``), or None when its id or
        parties need a closer look."""
        if letter.id in self._special or not self._fast_paths:
            return None
        sender = letter.sender
        recipient = letter.recipient
        if sender == EXTERNAL_BRIDGE or recipient == EXTERNAL_BRIDGE:
            return None
        if self._plain_all is not None:
            if self._partial and sender not in self._participants:
                return self._plain_all_outside
            return self._plain_all
        # unreadable files may be replies to some pairs of parties
        pair = (recipient, sender)
        plain = self._plain_by_pair.get(pair)
        if plain is None:
            outside = self._partial and sender not in self._participants
            plain = self._plain_by_pair[pair] = _Plain(self._plain_answered(recipient, sender), outside)
        return plain

    def _plain_answered(self, to: str, frm: str) -> Answer:
        """``answered`` of a plain letter from ``frm`` to ``to``."""
        reasons: list[Reason] = []
        maybe = self._unreadable_open_replies(to, frm, {})
        if maybe:
            reasons.append(_unreadable_reply_reason(maybe))
        reasons.extend(self._global_reasons("answered", partial=False))
        return Answer("unknown", tuple(reasons)) if reasons else NO

    def _unreadable_open_replies(self, to: str, frm: str, maybe: dict[str, Unreadable]) -> dict[str, Unreadable]:
        """Add the unreadable files with no legible ``re`` that may be a terminal reply
        from ``to`` to ``frm`` (by path); return ``maybe``."""
        if self._unreadable_reply_open:
            for key in ((to, frm), (to, None), (None, frm), (None, None)):
                for u in self._unreadable_reply_open.get(key, ()):
                    maybe.setdefault(u.path, u)
        return maybe

    def answered(self, letter: Letter) -> Answer:
        plain = self._plain(letter)
        if plain is not None:
            if plain.outside:
                return Answer("unknown", plain.answered.reasons + (_outside_scope(letter, "answered"),))
            return plain.answered
        key = id(letter)
        cached = self._answered.get(key)
        if cached is None:
            cached = self._compute_answered(letter)
            if not cached.yes:  # state and late do not need a yes (``_closed_by_reply``)
                self._answered[key] = cached
        return cached

    def _compute_answered(self, letter: Letter) -> Answer:
        if letter.sender == EXTERNAL_BRIDGE or letter.recipient == EXTERNAL_BRIDGE:
            return Answer("unknown", (Reason(
                "external-route", "answered",
                f"the letter crosses {EXTERNAL_BRIDGE}: no receipt is on disk", (letter.id,), (letter.path,),
            ),))
        if letter.id in self._duplicated_ids:
            paths = tuple(self.holders(letter.id))
            return Answer("unknown", (Reason(
                "duplicate-id", "answered",
                f"{len(paths)} files hold the id {letter.id}", (letter.id,), paths,
            ),))
        replies = self._terminal_replies(letter)
        if len(replies) == 1:
            r = replies[0]
            return Answer("yes", (Reason(
                "answered-by", "answered", "terminal reply from " + letter.recipient + ": " + r.id,
                (r.id,), (r.path,),
            ),))
        if replies:
            return Answer("yes", (Reason(
                "answered-by", "answered",
                "terminal reply from " + letter.recipient + ": " + ", ".join(r.id for r in replies[:5]),
                tuple(r.id for r in replies), tuple(r.path for r in replies),
            ),))
        reasons: list[Reason] = []
        if letter.id in self._out:
            chain = self._chain(letter.id)
            below = chain.reply_below.get(letter.id, ())
            if below:
                replies = sorted({r for b in below for r in chain.replied[b]}, key=_letter_key)
                reasons.append(Reason(
                    "reply-to-superseded", "answered",
                    "a terminal reply answers an earlier version this letter supersedes: " + ", ".join(below[:5]),
                    below + tuple(dict.fromkeys(r.id for r in replies)),
                    tuple(r.path for r in replies),
                ))
        maybe: dict[str, Unreadable] = {u.path: u for u in self._unreadable_reply_by_re.get(letter.id, ())}
        self._unreadable_open_replies(letter.recipient, letter.sender, maybe)
        if maybe:
            reasons.append(_unreadable_reply_reason(maybe))
        mal = self._malformed_re.get(letter.id, ())
        if mal:
            reasons.append(Reason(
                "malformed-pointer", "answered",
                "a letter's re could not be read and mentions this letter's id",
                _names(h.id for h in mal), tuple(sorted(h.path for h in mal))[:_MAX_NAMED],
            ))
        reasons.extend(self._global_reasons("answered", partial=False))
        if self._partial and letter.sender not in self._participants:
            reasons.append(_outside_scope(letter, "answered"))
        return Answer("unknown", tuple(reasons)) if reasons else NO

    def replies(self, letter: Letter) -> list[Letter]:
        """Terminal replies (result/nack, re = id, reversed parties)."""
        return list(self._terminal_replies(letter))

    def acks(self, letter: Letter) -> list[Letter]:
        """``ack`` letters with re = id and reversed parties."""
        return _from_recipient(letter, self._acked_ids, self._more_acks)

    def children(self, letter: Letter) -> list[Letter]:
        """Every readable letter whose ``re`` is this letter's id (any party, any type)."""
        return _sorted_letters(self._kids(letter.id))

    def accepted(self, letter: Letter) -> Answer:
        acks = _from_recipient(letter, self._acked_ids, self._more_acks)
        sidecar = letter.path in self._sidecar_letters
        if not acks:
            if not sidecar:
                return NO
            return Answer("yes", (Reason(
                "accepted-by", "accepted", "sidecar " + letter.path + ".ack", (), (letter.path + ".ack",),
            ),))
        if len(acks) == 1 and not sidecar:
            a = acks[0]
            return Answer("yes", (Reason(
                "accepted-by", "accepted", "ack from " + letter.recipient + ": " + a.id, (a.id,), (a.path,),
            ),))
        paths = tuple([a.path for a in acks])
        detail = "ack from " + letter.recipient + ": " + ", ".join([a.id for a in acks[:5]])
        if sidecar:
            paths += (letter.path + ".ack",)
            detail += "; sidecar " + letter.path + ".ack"
        return Answer("yes", (Reason("accepted-by", "accepted", detail, tuple([a.id for a in acks]), paths),))

    def state(self, letter: Letter) -> StateAnswer:
        if letter.folder == "processed":
            return CLOSED
        plain = self._plain(letter)
        if plain is not None:
            if plain.outside:
                return StateAnswer("unknown", plain.state.reasons + (_outside_scope(letter, "state"),))
            return plain.state
        if self._fast_paths and self._closed_by_reply(letter):
            return CLOSED
        key = id(letter)
        cached = self._state.get(key)
        if cached is None:
            cached = self._compute_state(letter)
            self._state[key] = cached
        return cached

    def _compute_state(self, letter: Letter) -> StateAnswer:
        if letter.folder == "processed":
            return CLOSED
        answered = self.answered(letter)
        if answered.yes:
            return CLOSED
        reasons: list[Reason] = []
        if self._duplicated(letter.id):
            folders = {x.folder for x in self._holding(letter.id)}
            folders |= {u.folder for u in self._unreadable_holders.get(letter.id, ())}
            if {"inbox", "processed"} <= folders:
                reasons.append(Reason(
                    "duplicate-id", "state",
                    f"copies of {letter.id} lie in both inbox/ and processed/",
                    (letter.id,), tuple(self.holders(letter.id)),
                ))
        if answered.unknown and not any(r.code == "external-route" for r in answered.reasons):
            present = {r.code for r in reasons}
            reasons.extend(r for r in _about(answered.reasons, "state") if r.code not in present)
        return StateAnswer("unknown", tuple(reasons)) if reasons else OPEN

    def late(self, letter: Letter, at: datetime | None = None) -> Answer:
        """Late at ``at`` (default: the resolution's ``at``)."""
        if at is None:
            if letter.requires_ack != "true" or letter.folder == "processed":
                return NO  # not a task, or closed
            plain = self._plain(letter)
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
                    reasons += (_outside_scope(letter, "late"),)
                return Answer("unknown", reasons)
            if self._fast_paths and self._closed_by_reply(letter):
                return NO
            key = id(letter)
            cached = self._late.get(key)
            if cached is None:
                cached = self._compute_late(letter, self.at)
                self._late[key] = cached
            return cached
        return self._compute_late(letter, _aware(at))

    def _compute_late(self, letter: Letter, at: datetime) -> Answer:
        if not letter.task:
            return NO
        state = self.state(letter)
        if state.value == "closed":
            return NO
        deadline_at = letter.deadline_at or None
        ambiguous = bool(letter.deadline) and deadline_at is None
        overdue = deadline_at is not None and deadline_at < at
        time_reason = _ambiguous_deadline(letter) if ambiguous else None
        if state.value == "open":
            answered = self.answered(letter)
            if answered.no:
                if ambiguous:
                    return Answer("unknown", (time_reason,))
                return YES if overdue else NO
            reasons = _about(answered.reasons, "late")
            return Answer("unknown", reasons + ((time_reason,) if ambiguous else ()))
        if ambiguous:
            return Answer("unknown", (time_reason,) + _about(state.reasons, "late"))
        if overdue:
            return Answer("unknown", _about(state.reasons, "late"))
        return NO

    # --- threads and disputes -----------------------------------------------------
    def thread(self, thread_id: str) -> list[Letter]:
        """Letters whose thread is ``thread_id`` (the root included)."""
        if self._threads is None:
            threads: dict[str, list[Letter]] = {}
            for letter in self.snapshot.letters:
                threads.setdefault(letter.thread_id, []).append(letter)
            self._threads = threads
        return _sorted_letters(self._threads.get(thread_id, ()))

    def open_disputes(self) -> list[OpenDispute]:
        found = []
        for letter in _sorted_letters(x for x in self.snapshot.letters if x.type == "dispute"):
            if self._rulings_on.get(letter.id):
                continue
            disputed = tuple(x for d in (letter.disputes or ()) for x in self._holding(d))
            found.append(OpenDispute(letter, disputed))
        return found

    def rulings(self, dispute: Letter) -> list[Letter]:
        return _sorted_letters(self._rulings_on.get(dispute.id, ()))


def _also(more: dict[str, list[Letter]], key: str, first: Letter, letter: Letter) -> None:
    """Record a second (third, ...) letter under ``key``: ``more`` lists them all."""
    group = more.get(key)
    if group is None:
        more[key] = [first, letter]
    else:
        group.append(letter)


def _indexed(key: str, first: dict[str, Letter], more: dict[str, list[Letter]]) -> Sequence[Letter]:
    """The letters indexed under ``key`` (``first`` / ``more``, see ``_index``)."""
    group = more.get(key)
    if group is not None:
        return group
    one = first.get(key)
    return () if one is None else (one,)


def _from_recipient(letter: Letter, first: dict[str, Letter], more: dict[str, list[Letter]]) -> list[Letter]:
    """The letters indexed under this letter's id (``first`` / ``more``, see ``_index``)
    sent back by its recipient to its sender, sorted."""
    one = first.get(letter.id)
    if one is None:
        return []
    sender = letter.sender
    recipient = letter.recipient
    group = more.get(letter.id)
    if group is None:
        return [one] if one.sender == recipient and one.recipient == sender else []
    found = [c for c in group if c.sender == recipient and c.recipient == sender]
    if len(found) > 1:
        found.sort(key=_letter_key)
    return found


def _unreadable_reply_reason(maybe: dict[str, Unreadable]) -> Reason:
    return Reason(
        "unreadable-file", "answered",
        f"{len(maybe)} unreadable file{'s' if len(maybe) != 1 else ''} may be a terminal reply to this letter",
        (), tuple(sorted(maybe))[:_MAX_NAMED],
    )


def _outside_scope(letter: Letter, about: str) -> Reason:
    return Reason(
        "outside-scope", about,
        f"the scope is partial and a reply would be delivered to {letter.sender}, outside it",
        (letter.id,), (),
    )


def _ambiguous_deadline(letter: Letter) -> Reason:
    return Reason(
        "ambiguous-timestamp", "late",
        f"the deadline {letter.deadline!r} has no usable offset", (letter.id,), (letter.path,),
    )


@contextmanager
def _gc_paused():
    """Indexing builds many small containers and no reference cycles; the cyclic collector
    would re-walk every letter alive many times over (3x the indexing time at 100,000)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _tarjan(nodes: list[str], out: dict[str, tuple[str, ...]]) -> list[list[str]]:
    """Strongly connected components, iteratively; emitted sinks first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(out.get(start, ())))]
        while work:
            v, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(out.get(w, ()))))
                    pushed = True
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            if pushed:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                result.append(comp)
    return result


def _reverse_reach(start: str, superseder_ids: dict[str, list[str]]) -> set[str]:
    """``start`` and every id that (transitively) supersedes it: one branch of a fork."""
    seen = {start}
    todo = [start]
    while todo:
        v = todo.pop()
        for s in superseder_ids.get(v, ()):
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return seen


def _topological(ids: list[str], out: dict[str, tuple[str, ...]], superseders: dict[str, list[Letter]]) -> list[str]:
    """Superseded first, heads last, ties by id; ids on cycles last, by id."""
    id_set = set(ids)
    remaining = {i: len([t for t in out.get(i, ()) if t in id_set]) for i in ids}
    ready = [i for i in ids if remaining[i] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    done: set[str] = set()
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        done.add(v)
        for s in sorted({x.id for x in superseders.get(v, ())}):
            if s in id_set and s not in done:
                remaining[s] -= 1
                if remaining[s] == 0:
                    heapq.heappush(ready, s)
    order.extend(sorted(i for i in ids if i not in done))
    return order


def resolve(snapshot: Snapshot, at: datetime) -> Resolution:
    """Index the snapshot once; answers are computed on demand and cached."""
    return Resolution(snapshot, at)

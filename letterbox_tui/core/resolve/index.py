"""The resolver's index of one snapshot: who holds which id, which letters point at which,
what unreadable files and unsupported entries may be, and the doubt every answer shares.

Built in one pass over the letters (``Index(snapshot)``); everything else in the resolver
reads these maps and never scans the letters again. The supersession graph is indexed here
too: ``out``/``sup_ids`` are its edges between present ids and ``components`` its chains
(union-find), the units the rest of the resolver analyses one at a time.

An id (or ``re``) held by one letter maps to that letter; only ids held by two or more get a
list (in ``dups`` / ``more_*``): 100,000 one-item lists would cost the cyclic collector three
walks over them once it runs again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..grammar import tokens
from ..model import Letter, Reason, Snapshot, Unreadable
from .common import MAX_NAMED, TERMINAL_TYPES, is_id, letter_key, path_key, sorted_letters


class Index:
    """The maps one pass over a snapshot builds (read-only once built)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        scope = snapshot.scope
        self.partial = bool(scope.partial)
        self.atomic = bool(scope.atomic)
        self.participants = frozenset(scope.participants)
        #: paths of the letters that have a sidecar (``Snapshot.has_sidecar``)
        self.sidecar_letters = frozenset(p[:-4] for p in snapshot.sidecars if p.endswith(".ack"))
        self._letters(snapshot.letters)
        self._supersession()
        self._unreadable(snapshot.unreadable)
        self.unsupported_paths = tuple(sorted(u.path for u in snapshot.unsupported))
        self._globals: dict[tuple[str, bool, bool], tuple[Reason, ...]] = {}
        self._held: dict[str, tuple[str, ...]] = {}
        #: (id of a ``more_*`` group, sender, recipient) -> its letters sent back
        self._back: dict[tuple[int, str, str], tuple[Letter, ...]] = {}
        self._threads: dict[str, list[Letter]] | None = None

    # --- building -----------------------------------------------------------------
    def _letters(self, letters: list[Letter]) -> None:
        """One pass over the letters; pointers that need the whole id index wait in lists."""
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
        for letter in letters:
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
            elif kind == "ruling" and is_id(letter.rules_on) and "rules_on" not in (malformed or ()):
                rulings_on.setdefault(letter.rules_on, []).append(letter)
        for lid, group in dups.items():
            group.sort(key=path_key)
            by_id[lid] = group[0]
        malformed_re: dict[str, list[Letter]] = {}
        for letter in bad_re:
            for tok in tokens(letter.re):
                malformed_re.setdefault(tok, []).append(letter)

        self.by_id = by_id
        self.dups = dups
        self.children = children
        self.more_children = more_children
        self.replied_ids = replied_ids
        self.more_replies = more_replies
        self.acked_ids = acked_ids
        self.more_acks = more_acks
        #: dispute letters by each id they name; rulings by the dispute id they rule on
        self.disputes_naming = disputes_naming
        self.rulings_on = rulings_on
        #: letters whose ``re`` is malformed, by each token of it
        self.malformed_re = malformed_re
        self._with_supersedes = with_supersedes
        self._bad_supersedes = bad_supersedes

    def _supersession(self) -> None:
        """The supersedes edges between present ids, and their connected components."""
        by_id = self.by_id
        superseders: dict[str, list[Letter]] = {}
        out: dict[str, set[str]] = {}
        parent: dict[str, str] = {}
        self.parent = parent
        find = self.find
        for letter in self._with_supersedes:
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
        for letter in self._bad_supersedes:
            named = [t for t in tokens(letter.supersedes) if t in by_id]
            if named:
                for t in named:
                    malformed_sup_by_id.setdefault(t, []).append(letter)
            else:
                malformed_sup_by_thread.setdefault(letter.thread_id, []).append(letter)
        del self._with_supersedes, self._bad_supersedes
        #: readable letters by the id their (well-formed) ``supersedes`` names, present or not
        self.superseders = superseders
        #: id -> sorted ids it supersedes (present ids only)
        self.out = {k: tuple(sorted(v)) for k, v in out.items()}
        sup_ids: dict[str, list[str]] = {}
        for src, targets in out.items():
            for t in targets:
                sup_ids.setdefault(t, []).append(src)
        #: id -> sorted ids of the readable letters that supersede it (present ids only)
        self.sup_ids = {k: tuple(sorted(v)) for k, v in sup_ids.items()}
        #: malformed ``supersedes`` holders by each present id they mention, or (mentioning
        #: none) by their thread
        self.malformed_sup_by_id = malformed_sup_by_id
        self.malformed_sup_by_thread = malformed_sup_by_thread
        comps: dict[str, list[str]] = {}
        for node in parent:
            comps.setdefault(find(node), []).append(node)
        #: chain root -> the ids of that chain (only ids on a supersedes edge)
        self.components = comps

    def _unreadable(self, unreadable: list[Unreadable]) -> None:
        """Which ids unreadable files hold, and what they may be (SPEC 5)."""
        by_id = self.by_id
        holders: dict[str, list[Unreadable]] = {}
        superseders: dict[str, list[Unreadable]] = {}
        reply_by_re: dict[str, list[Unreadable]] = {}
        reply_open: dict[tuple[str | None, str | None], list[Unreadable]] = {}
        for u in unreadable:
            legible = u.legible or {}
            uid = legible.get("id", "")
            if is_id(uid):
                holders.setdefault(uid, []).append(u)
            mentioned = tokens(u.illegible) if u.illegible else set()
            sup = legible.get("supersedes")
            if sup:
                mentioned.add(sup)
            for t in mentioned:
                if t in by_id:
                    superseders.setdefault(t, []).append(u)
            if legible.get("type", "result") not in TERMINAL_TYPES:
                continue  # a legible type other than result/nack rules it out as a reply
            if "re" in legible:
                reply_by_re.setdefault(legible["re"], []).append(u)
            else:
                key = (legible.get("from"), legible.get("to"))
                reply_open.setdefault(key, []).append(u)
        self.unreadable_holders = holders
        #: unreadable files by each present id they may supersede
        self.unreadable_superseders = superseders
        #: unreadable files that may be terminal replies: by legible ``re``, or (no legible
        #: ``re``) by their legible (from, to), None where illegible
        self.unreadable_reply_by_re = reply_by_re
        self.unreadable_reply_open = reply_open
        dup_ids = set(self.dups)
        dup_ids.update(i for i, group in holders.items() if len(group) + len(self.holding(i)) > 1)
        #: ids held by two or more files, readable or not
        self.duplicated_ids = frozenset(dup_ids)

    # --- lookups ------------------------------------------------------------------
    def find(self, x: str) -> str:
        """The root of ``x``'s chain (union-find with path compression)."""
        parent = self.parent
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

    def holding(self, letter_id: str) -> Sequence[Letter]:
        """The readable letters holding this id, by path."""
        return _indexed(letter_id, self.by_id, self.dups)

    def kids(self, letter_id: str) -> Sequence[Letter]:
        """The readable letters whose (well-formed) ``re`` is this id, in scan order."""
        return _indexed(letter_id, self.children, self.more_children)

    def holders(self, letter_id: str) -> list[str]:
        """Paths of every file holding this id: readable letters and unreadable files whose
        legible ``id`` is it. Two or more: the id is duplicated."""
        return list(self.held_by(letter_id))

    def held_by(self, letter_id: str) -> tuple[str, ...]:
        """``holders``, sorted once per duplicated id (each copy of an id held 50,000 times
        asks for the same list)."""
        found = self._held.get(letter_id)
        if found is None:
            paths = [x.path for x in self.holding(letter_id)]
            paths += [u.path for u in self.unreadable_holders.get(letter_id, ())]
            paths.sort()
            found = tuple(paths)
            if len(found) > 1:
                self._held[letter_id] = found
        return found

    def is_held(self, letter_id: str) -> bool:
        """Some file, readable or not, holds this id (else a pointer to it is dangling)."""
        return letter_id in self.by_id or letter_id in self.unreadable_holders

    def paths_of(self, ids) -> tuple[str, ...]:
        """The paths of the readable letters holding these ids, sorted, at most
        ``MAX_NAMED`` (for a reason that names these ids). An id's holders are sorted by
        path: its first ``MAX_NAMED`` are enough (an id held by many files is named in a
        reason of each fork it makes)."""
        paths = [x.path for i in ids for x in self.holding(i)[:MAX_NAMED]]
        paths.sort()
        return tuple(paths[:MAX_NAMED])

    def terminal_replies(self, letter: Letter) -> tuple[Letter, ...]:
        """Terminal replies to this letter, sorted (made on each call when the id has one
        candidate: cheap, and a cache of 100,000 small tuples would cost the cyclic
        collector more than it saves; kept when it has more, which every copy of a
        duplicated id would otherwise filter again)."""
        return _from_recipient(letter, self.replied_ids, self.more_replies, self._back)

    def acks(self, letter: Letter) -> tuple[Letter, ...]:
        """``ack`` letters with re = the letter's id and reversed parties, sorted."""
        return _from_recipient(letter, self.acked_ids, self.more_acks, self._back)

    def thread(self, thread_id: str) -> list[Letter]:
        """Letters whose thread is ``thread_id`` (the root included), sorted."""
        if self._threads is None:
            threads: dict[str, list[Letter]] = {}
            for letter in self.snapshot.letters:
                threads.setdefault(letter.thread_id, []).append(letter)
            self._threads = threads
        return sorted_letters(self._threads.get(thread_id, ()))

    # --- the doubt every answer shares ----------------------------------------------
    def global_reasons(self, about: str, *, unsupported: bool = True, partial: bool = True) -> tuple[Reason, ...]:
        """Reasons that hold for every letter of the snapshot (built once per ``about``)."""
        key = (about, unsupported, partial)
        cached = self._globals.get(key)
        if cached is None:
            cached = self._globals[key] = tuple(self._make_global_reasons(about, unsupported, partial))
        return cached

    def _make_global_reasons(self, about: str, unsupported: bool, partial: bool) -> list[Reason]:
        reasons = []
        if unsupported and self.unsupported_paths:
            n = len(self.unsupported_paths)
            reasons.append(Reason(
                "unsupported-entry", about,
                f"{n} entr{'ies' if n != 1 else 'y'} the scan may not read may bear on this",
                (), self.unsupported_paths[:MAX_NAMED],
            ))
        if partial and self.partial:
            reasons.append(Reason(
                "outside-scope", about,
                "the scope is partial (" + ", ".join(sorted(self.participants)) + " only): "
                "letters of other seats may bear on this",
            ))
        if not self.atomic:
            reasons.append(Reason("non-atomic-scan", about, "files changed while the scan ran"))
        return reasons


def _also(more: dict[str, list[Letter]], key: str, first: Letter, letter: Letter) -> None:
    """Record a second (third, ...) letter under ``key``: ``more`` lists them all."""
    group = more.get(key)
    if group is None:
        more[key] = [first, letter]
    else:
        group.append(letter)


def _indexed(key: str, first: dict[str, Letter], more: dict[str, list[Letter]]) -> Sequence[Letter]:
    """The letters indexed under ``key`` (``first`` / ``more``)."""
    group = more.get(key)
    if group is not None:
        return group
    one = first.get(key)
    return () if one is None else (one,)


def _from_recipient(
    letter: Letter, first: dict[str, Letter], more: dict[str, list[Letter]],
    kept: dict[tuple[int, str, str], tuple[Letter, ...]],
) -> tuple[Letter, ...]:
    """The letters indexed under this letter's id (``first`` / ``more``) sent back by its
    recipient to its sender, sorted; for a ``more`` group, filtered once per pair of
    parties (``kept``)."""
    one = first.get(letter.id)
    if one is None:
        return ()
    sender = letter.sender
    recipient = letter.recipient
    group = more.get(letter.id)
    if group is None:
        return (one,) if one.sender == recipient and one.recipient == sender else ()
    key = (id(group), sender, recipient)
    found = kept.get(key)
    if found is None:
        back = [c for c in group if c.sender == recipient and c.recipient == sender]
        if len(back) > 1:
            back.sort(key=letter_key)
        found = kept[key] = tuple(back)
    return found


@dataclass(slots=True, frozen=True)
class Dangling:
    """A pointer to an id no file holds, readable or not (harmless; ``check`` warns)."""

    letter: Letter
    field: str
    target: str


def dangling(index: Index) -> list[Dangling]:
    """Pointers (re, supersedes, rules_on, upholds, disputes) to ids no file holds."""
    found: list[Dangling] = []
    held = index.is_held
    for letter in sorted_letters(index.snapshot.letters):
        malformed = letter.malformed or ()
        for key in ("re", "supersedes", "rules_on", "upholds"):
            value = getattr(letter, key)
            if value and key not in malformed and not held(value):
                found.append(Dangling(letter, key, value))
        for d in letter.disputes or ():
            if not held(d):
                found.append(Dangling(letter, "disputes", d))
    return found

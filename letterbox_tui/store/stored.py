"""``StoredAnswers``: the ``Answers`` of a scan whose every file the store's generation
holds unchanged, read back instead of computed.

The per-letter answers (``state``, ``answered``, ``accepted``, ``current``,
``superseded``, ``head``) are the resolver's own, as it computed them for these same files;
``late`` is derived from them at the clock asked by the resolver's rule
(``core.resolve.late.late_at``). The structure around a letter (the letters pointing at
its id, its chain, the scan's forks, cycles, dangling pointers and open disputes) is the
resolver's too, kept as paths (``core.resolve.structure``) and turned back into the scan's
letters only for the letters asked about; who holds an id or a thread is asked of the
scan's letters (``core.model.letters_with_id``). Only once the store is found damaged are
the questions asked of the resolver over the same scan: there is one resolver, and it is
never asked to decide twice.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime
from functools import partial

from letterbox_tui.core.lazy import KeptLetters
from letterbox_tui.core.model import Answer, Letter, Snapshot, letter_at, letters_with_id, letters_with_thread
from letterbox_tui.core.resolve import (
    TERMINAL_TYPES, Dangling, Fork, OpenDispute, Resolution, StateAnswer, resolve,
)
from letterbox_tui.core.resolve.common import aware, is_id, path_key, sorted_letters
from letterbox_tui.core.resolve.late import late_at

from .records import ANSWERS, STRUCTURE, Damaged, decode_answers, head_path, structure_of, with_reasons

_REASONS = len(ANSWERS) + 1  # where a decoded record's reasons begin


class StoredAnswers:
    """Every derived answer over ``snapshot`` at ``at``, read from ``kept`` (path ->
    (record, crc), one for each letter of the scan).

    A letter's record is decoded, and its checksum checked, when one of its answers is
    first asked; a reason only when its answer is. A record found damaged is given to
    ``damaged`` (which says so and discards the store), and every answer from then on is
    the resolver's over the same scan: the same answers, computed."""

    def __init__(self, snapshot: Snapshot, at: datetime, kept: dict[str, tuple[bytes, int]],
                 damaged: Callable[[Damaged], None] | None = None, *,
                 index: Callable[[str], dict[str, list[str]] | None] | None = None) -> None:
        self.snapshot = snapshot
        self.at = aware(at)
        self._kept = kept
        self._found: dict[str, list] = {}
        self._resolution: Resolution | None = None
        self._on_damage = damaged
        self._index = index
        self._damaged = False
        #: within this one set of answers: each id's keeper, what is kept under (key, id)
        #: as letters, and each letter's ``late`` at ``at`` (dropped when found damaged)
        self._keepers: dict[str, Letter | None] = {}
        self._pointed: dict[tuple[str, str], tuple[Letter, ...]] = {}
        self._lates: dict[str, Answer] = {}

    def with_clock(self, at: datetime) -> StoredAnswers:
        """The same answers at another clock (only ``late`` depends on it)."""
        other = copy.copy(self)
        other.at = aware(at)
        other._lates = {}  # the rest is the same at any clock
        if self._resolution is not None:
            other._resolution = self._resolution.with_clock(other.at)
        return other

    def _kept_of(self, letter: Letter) -> list | None:
        """The decoded record of ``letter``; None once the store was found damaged."""
        if self._damaged:
            return None
        path = letter.path
        found = self._found.get(path)
        if found is None:
            try:
                kept = self._kept.get(path)
                if kept is None:
                    found = self._found.get(path)  # decoded meanwhile (its record then let go)
                    if found is not None:
                        return found
                    raise Damaged(f"no answers kept for {path}")
                found = self._found[path] = decode_answers(path, *kept)
                self._kept.pop(path, None)  # decoded once: the record is not kept twice
            except Damaged as why:
                self._give_up(why)
                return None
        return found

    def _give_up(self, why: Damaged) -> None:
        self._damaged = True
        self._keepers, self._pointed, self._lates = {}, {}, {}
        if self._on_damage is not None:
            self._on_damage(why)

    def _answer(self, letter: Letter, i: int):
        found = self._found.get(letter.path)
        if found is not None and not found[_REASONS + i] and not self._damaged:
            return found[i]  # decoded, its reasons too (or none kept)
        found = self._kept_of(letter)
        if found is not None:
            got = found[i]
            if found[_REASONS + i]:
                try:
                    got = found[i] = with_reasons(found, i, partial(self._reasons_instead, letter, i))
                except Damaged as why:
                    self._give_up(why)
                    found = None
                else:
                    found[_REASONS + i] = b""
            if found is not None:
                return got
        return getattr(self.resolution, ANSWERS[i])(letter)

    def _reasons_instead(self, letter: Letter, i: int, why: Damaged) -> tuple:
        """The reasons of a kept answer whose reasons were found damaged when first read:
        the resolver's (the store is given up)."""
        self._give_up(why)
        return getattr(self.resolution, ANSWERS[i])(letter).reasons

    def state(self, letter: Letter) -> StateAnswer:
        return self._answer(letter, 0)

    def answered(self, letter: Letter) -> Answer:
        return self._answer(letter, 1)

    def accepted(self, letter: Letter) -> Answer:
        return self._answer(letter, 2)

    def current(self, letter: Letter) -> Answer:
        return self._answer(letter, 3)

    def superseded(self, letter: Letter) -> Answer:
        return self._answer(letter, 4)

    def late(self, letter: Letter, at: datetime | None = None) -> Answer:
        if letter.requires_ack != "true":
            return _NO
        when = self.at if at is None else aware(at)
        mine = when == self.at  # at this answers' clock: found once
        if mine and (found := self._lates.get(letter.path)) is not None:
            return found
        state = self.state(letter)
        answered = self.answered(letter) if state.value == "open" else None
        if self._damaged:
            return self.resolution.late(letter, at)
        found = late_at(letter, state, answered, when)  # type: ignore[arg-type]
        if mine:
            self._lates[letter.path] = found
        return found

    def head(self, letter: Letter) -> Letter | None:
        found = self._kept_of(letter)
        if found is not None:
            try:
                path = head_path(found)
                if not path:
                    return None
                if path == letter.path:  # its own head (most letters)
                    return letter
                head = letter_at(self.snapshot.letters, path)
                if head is None:
                    raise Damaged(f"the head kept for {letter.path} is not a letter of the scan")
                return head
            except Damaged as why:
                self._give_up(why)
        return self.resolution.head(letter)

    def warm(self, letters: list[Letter]) -> None:
        """Read the answers of ``letters`` ahead, together: they are about to be asked."""
        warm = getattr(self._kept, "warm", None)
        if warm is not None and not self._damaged:
            try:
                warm([x.path for x in letters if x.path not in self._found])
            except Damaged as why:
                self._give_up(why)

    def owed_letters(self, seat: str | None = None) -> list[Letter] | None:
        """The letters that were owed (``core.owed.is_owed``) when the resolver computed
        these answers, owed by ``seat`` (None: any), in scan order; None when the store
        cannot say (then every letter is looked at)."""
        return self._indexed("owed", seat)

    def uncertain_letters(self) -> list[Letter] | None:
        """The letters the digest may list as uncertain (``core.digest.may_be_uncertain``)
        over these answers, in scan order; None when the store cannot say."""
        return self._indexed("uncertain")

    def _indexed(self, name: str, key: str | None = None) -> list[Letter] | None:
        """The letters the index ``name`` holds (under ``key``; None: all), in scan order,
        their answers read together; None when the store cannot say."""
        found = self._index(name) if self._index is not None and not self._damaged else None
        if found is None:
            return None
        paths = [p for k, held in found.items() if key is None or k == key for p in held]
        letters = self.snapshot.letters
        if isinstance(letters, KeptLetters):
            at = sorted(map(letters.position, paths))
            if at and at[0] < 0:
                self._give_up(Damaged(f"the {name} index names a file that is not a letter of the scan"))
                return None
            held = letters.many(at)
            self.warm(held)
            return held
        wanted = set(paths)
        held = [x for x in letters if x.path in wanted]
        if len(held) != len(wanted):
            self._give_up(Damaged(f"the {name} index names a file that is not a letter of the scan"))
            return None
        return held

    # --- the structure, kept as paths ---------------------------------------------------
    @property
    def resolution(self) -> Resolution:
        """The resolver over the same scan: only once the store is found damaged."""
        if self._resolution is None:
            self._resolution = resolve(self.snapshot, self.at)
        return self._resolution

    def _structure(self, letter: Letter) -> dict | None:
        """The structure ``letter``'s record keeps; None once the store was found damaged."""
        found = self._kept_of(letter)
        if found is None:
            return None
        kept = found[STRUCTURE]
        if type(kept) is not dict:
            try:
                kept = found[STRUCTURE] = structure_of(found)
            except Damaged as why:
                self._give_up(why)
                return None
        return kept

    def _letters(self, paths) -> list[Letter]:
        """The scan's letters at these kept paths (``Damaged`` when one is not a letter of it)."""
        return self._letters_of([paths])[0]

    def _letters_of(self, lists) -> list[list[Letter]]:
        """``_letters`` of each list of kept paths, every letter found together."""
        letters = self.snapshot.letters
        paths = [path for kept in lists for path in kept]
        if not all(type(path) is str for path in paths):
            raise Damaged("a path kept in the structure is not a letter of the scan")
        if isinstance(letters, KeptLetters):
            at = [letters.position(path) for path in paths]
            if at and min(at) < 0:
                raise Damaged("a path kept in the structure is not a letter of the scan")
            found = letters.many(at)
        else:
            found = [letter_at(letters, path) for path in paths]
            if any(x is None for x in found):
                raise Damaged("a path kept in the structure is not a letter of the scan")
        out, n = [], 0
        for kept in lists:
            out.append(found[n:n + len(kept)])
            n += len(kept)
        return out

    def _keeper(self, letter_id: str) -> Letter | None:
        """The id's first holder by path, whose record keeps what points at the id."""
        if letter_id not in self._keepers:
            self._find_keepers((letter_id,))
        return self._keepers.get(letter_id)

    def _find_keepers(self, ids) -> None:
        """The keepers of ``ids``, their holders found together."""
        letters = self.snapshot.letters
        todo = [i for i in dict.fromkeys(ids) if i not in self._keepers]
        if isinstance(letters, KeptLetters):
            held = letters.letters_with_ids(todo)
        else:
            held = {i: letters_with_id(letters, i) for i in todo}
        for i, holders in held.items():
            self._keepers[i] = min(holders, key=path_key) if holders else None

    def warm_children(self, letters: list[Letter]) -> None:
        """Find the children of ``letters`` ahead, together: they are about to be asked
        (each is then ``children``'s answer, kept for this set of answers)."""
        if self._damaged:
            return
        ids = [i for i in dict.fromkeys(x.id for x in letters) if ("c", i) not in self._pointed]
        self._find_keepers(ids)
        kept: dict[str, list] = {}
        for i in ids:
            keeper = self._keepers.get(i)
            structure = self._structure(keeper) if keeper is not None else None
            if structure is None:
                if self._damaged:
                    return
                continue  # the resolver's to answer, when asked
            kept[i] = structure.get("c") or []
        try:
            found = self._letters_of(list(kept.values()))
        except Damaged as why:
            self._give_up(why)
            return
        for i, children in zip(kept, found):
            self._pointed[("c", i)] = tuple(children)

    def _kept_under(self, letter_id: str, key: str):
        """What the keeper of ``letter_id`` keeps under ``key`` (None: nothing); raises
        ``_Ask`` when the resolver is to answer instead."""
        keeper = self._keeper(letter_id)
        if keeper is None:
            raise _Ask  # not a letter of the scan: the resolver says what it says of it
        kept = self._structure(keeper)
        if kept is None:
            raise _Ask
        return kept.get(key)

    def _pointing(self, name: str, key: str, letter: Letter) -> list[Letter]:
        """The letters kept under ``key`` with the keeper of ``letter``'s id (found once
        for this set of answers)."""
        found = self._pointed.get((key, letter.id))
        if found is not None:
            return list(found)
        try:
            pointing = self._letters(self._kept_under(letter.id, key) or ())
            if not self._damaged:
                self._pointed[(key, letter.id)] = tuple(pointing)
            return pointing
        except _Ask:
            pass
        except Damaged as why:
            self._give_up(why)
        return getattr(self.resolution, name)(letter)

    def children(self, letter):
        return self._pointing("children", "c", letter)

    def superseders(self, letter):
        return self._pointing("superseders", "s", letter)

    def disputes_of(self, letter):
        return self._pointing("disputes_of", "d", letter)

    def rulings(self, dispute):
        return self._pointing("rulings", "r", dispute)

    def replies(self, letter):
        """The terminal replies among the children, sent back by the recipient (sorted, as
        the children are)."""
        kids = self.children(letter)
        return [c for c in kids if c.type in TERMINAL_TYPES
                and c.sender == letter.recipient and c.recipient == letter.sender]

    def acks(self, letter):
        kids = self.children(letter)
        return [c for c in kids if c.type == "ack" and c.sender == letter.recipient and c.recipient == letter.sender]

    # --- the chain ----------------------------------------------------------------------
    def _chain(self, letter: Letter) -> tuple[list[str], list[Letter] | None] | None:
        """The chain's ids and (None for a letter on no chain: its holders) heads; None when
        the resolver is to answer."""
        try:
            key = self._kept_under(letter.id, "k")
            if key is None:
                return [letter.id], None
            ids = self._kept_under(key, "i")
            heads = self._kept_under(key, "h")
            if type(ids) is not list or type(heads) is not list or not all(type(i) is str for i in ids):
                raise Damaged(f"the chain kept for {letter.path} has another shape")
            return ids, self._letters(heads)
        except _Ask:
            pass
        except Damaged as why:
            self._give_up(why)
        return None

    def chain_key(self, letter):
        try:
            key = self._kept_under(letter.id, "k")
            return letter.id if key is None else key
        except _Ask:
            return self.resolution.chain_key(letter)

    def chain_ids(self, letter):
        found = self._chain(letter)
        return list(found[0]) if found is not None else self.resolution.chain_ids(letter)

    def chain(self, letter):
        found = self._chain(letter)
        if found is None:
            return self.resolution.chain(letter)
        return [x for i in found[0] for x in self.by_id(i)]

    def heads(self, letter):
        found = self._chain(letter)
        if found is None:
            return self.resolution.heads(letter)
        return self.by_id(letter.id) if found[1] is None else found[1]

    # --- who holds an id, a thread ----------------------------------------------------
    def by_id(self, letter_id):
        return sorted(letters_with_id(self.snapshot.letters, letter_id), key=path_key)

    def holders(self, letter_id):
        paths = [x.path for x in letters_with_id(self.snapshot.letters, letter_id)]
        if is_id(letter_id):
            paths += [u.path for u in self.snapshot.unreadable if (u.legible or {}).get("id", "") == letter_id]
        paths.sort()
        return paths

    def thread(self, thread_id):
        return sorted_letters(letters_with_thread(self.snapshot.letters, thread_id))

    # --- over the whole scan ----------------------------------------------------------
    def _scan(self, key: str):
        """The scan's ``key`` as its first letter's record keeps it; None when the resolver
        is to answer."""
        letters = self.snapshot.letters
        if not len(letters):
            return []
        kept = self._structure(letters[0])
        if kept is None:
            return None
        scan = kept.get("w")
        if scan is None:
            self._give_up(Damaged("the scan's structure is not kept"))
            return None
        return scan[key]

    def _whole(self, name: str, make):
        try:
            kept = self._scan(name)
            if kept is not None:
                return [make(x) for x in kept]
        except Damaged as why:
            self._give_up(why)
        except (ValueError, TypeError, IndexError, KeyError):
            self._give_up(Damaged(f"the scan's {name} have another shape"))
        return getattr(self.resolution, _WHOLE[name])()

    def forks(self):
        return self._whole("forks", lambda f: Fork(f[0], tuple(f[1]), f[2], f[3], f[4], tuple(f[5]), f[6]))

    def cycles(self):
        return self._whole("cycles", tuple)

    def dangling(self):
        return self._whole("dangling", lambda d: Dangling(self._letters((d[0],))[0], d[1], d[2]))

    def open_disputes(self):
        return self._whole("open", lambda o: OpenDispute(self._letters((o[0],))[0], tuple(self._letters(o[1]))))


class _Ask(Exception):
    """The store holds no answer to this: the resolver is asked."""


_WHOLE = {"forks": "forks", "cycles": "cycles", "dangling": "dangling", "open": "open_disputes"}


_NO = Answer("no")

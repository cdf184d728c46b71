"""``StoredAnswers``: the ``Answers`` of a scan whose every file the store's generation
holds unchanged, read back instead of computed.

The per-letter answers (``state``, ``answered``, ``accepted``, ``current``,
``superseded``, ``head``) are the resolver's own, as it computed them for these same files;
``late`` is derived from them at the clock asked by the resolver's rule
(``core.resolve.late.late_at``). Questions about the structure around a letter (its chain,
its replies, the forks, the disputes) are asked of the resolver over the same scan, made
when first needed: there is one resolver, and it is never asked to decide twice.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime

from letterbox_tui.core.lazy import KeptLetters
from letterbox_tui.core.model import Answer, Letter, Snapshot
from letterbox_tui.core.resolve import Resolution, StateAnswer, resolve
from letterbox_tui.core.resolve.common import aware
from letterbox_tui.core.resolve.late import late_at

from .records import KEPT, Damaged, decode_answers, head_path, with_reasons

_REASONS = len(KEPT) + 1  # where a decoded record's reasons begin


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
        self._by_path: dict[str, Letter] | None = None
        self._resolution: Resolution | None = None
        self._on_damage = damaged
        self._index = index
        self._damaged = False

    def with_clock(self, at: datetime) -> StoredAnswers:
        """The same answers at another clock (only ``late`` depends on it)."""
        other = copy.copy(self)
        other.at = aware(at)
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

    def _letter_at(self, path: str) -> Letter | None:
        letters = self.snapshot.letters
        if isinstance(letters, KeptLetters):  # found without decoding the others
            return letters.letter_at(path)
        if self._by_path is None:
            self._by_path = {x.path: x for x in letters}
        return self._by_path.get(path)

    def _give_up(self, why: Damaged) -> None:
        self._damaged = True
        if self._on_damage is not None:
            self._on_damage(why)

    def _answer(self, letter: Letter, i: int):
        found = self._kept_of(letter)
        if found is not None:
            got = found[i]
            if found[_REASONS + i]:
                try:
                    got = found[i] = with_reasons(found, i)
                except Damaged as why:
                    self._give_up(why)
                    found = None
                else:
                    found[_REASONS + i] = b""
            if found is not None:
                return got
        return getattr(self.resolution, KEPT[i])(letter)

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
        state = self.state(letter)
        answered = self.answered(letter) if state.value == "open" else None
        if self._damaged:
            return self.resolution.late(letter, at)
        return late_at(letter, state, answered, self.at if at is None else aware(at))  # type: ignore[arg-type]

    def head(self, letter: Letter) -> Letter | None:
        found = self._kept_of(letter)
        if found is not None:
            try:
                path = head_path(found)
                if not path:
                    return None
                head = self._letter_at(path)
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
        found = self._index("owed") if self._index is not None and not self._damaged else None
        if found is None:
            return None
        paths = [p for owing, held in found.items() if seat is None or owing == seat for p in held]
        letters = self.snapshot.letters
        if isinstance(letters, KeptLetters):
            at = sorted(map(letters.position, paths))
            if at and at[0] < 0:
                self._give_up(Damaged("the owed index names a file that is not a letter of the scan"))
                return None
            owed = letters.many(at)
            self.warm(owed)
            return owed
        wanted = set(paths)
        owed = [x for x in letters if x.path in wanted]
        if len(owed) != len(wanted):
            self._give_up(Damaged("the owed index names a file that is not a letter of the scan"))
            return None
        return owed

    # --- the structure: the resolver over the same scan ------------------------------
    @property
    def resolution(self) -> Resolution:
        if self._resolution is None:
            self._resolution = resolve(self.snapshot, self.at)
        return self._resolution

    def chain(self, letter):
        return self.resolution.chain(letter)

    def chain_ids(self, letter):
        return self.resolution.chain_ids(letter)

    def chain_key(self, letter):
        return self.resolution.chain_key(letter)

    def heads(self, letter):
        return self.resolution.heads(letter)

    def superseders(self, letter):
        return self.resolution.superseders(letter)

    def replies(self, letter):
        return self.resolution.replies(letter)

    def acks(self, letter):
        return self.resolution.acks(letter)

    def children(self, letter):
        return self.resolution.children(letter)

    def thread(self, thread_id):
        return self.resolution.thread(thread_id)

    def by_id(self, letter_id):
        return self.resolution.by_id(letter_id)

    def holders(self, letter_id):
        return self.resolution.holders(letter_id)

    def forks(self):
        return self.resolution.forks()

    def cycles(self):
        return self.resolution.cycles()

    def dangling(self):
        return self.resolution.dangling()

    def open_disputes(self):
        return self.resolution.open_disputes()

    def disputes_of(self, letter):
        return self.resolution.disputes_of(letter)

    def rulings(self, dispute):
        return self.resolution.rulings(dispute)


_NO = Answer("no")

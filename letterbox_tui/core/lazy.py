"""A scan's letters when the derived store kept every folder unchanged: each decoded from
the store when first touched, never all of them for a question about a few.

``KeptLetters`` is a sequence of ``Letter`` in scan order, as a plain list would be: asking
for every letter (iterating) decodes every pending one, in one pass per folder; asking for
one (``letter_at``, an index) decodes that one. ``letters_with_id`` and
``letters_with_thread`` find a few letters without decoding the others: from the file
names the scan listed (a letter's canonical file name is its id) and the store's indexes of
the letters that do not follow that rule. They give candidates; whoever asked still decides
on the letters themselves (the evaluator, the resolver).

The functions ``letter_at``, ``letters_with_id`` and ``letters_with_thread`` answer the
same over a plain list, by looking at every letter.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, overload

from .model import Letter

#: a letter not decoded yet: its path and its file's (size, mtime_ns, inode, ctime_ns)
Pending = tuple[str, int, int, int, int]


class KeptSource(Protocol):
    """What the store gives ``KeptLetters``: letters decoded from the generation the scan
    proved unchanged, and its indexes."""

    def decode(self, pending: Pending) -> Letter:
        """The letter kept for one file."""
        ...

    def decode_folder(self, prefix: str, pending: list[Pending]) -> list[Letter]:
        """The letters kept for ``pending`` (files of the folder ``prefix``), in order."""
        ...

    def paths_with(self, index: str, value: str) -> list[str] | None:
        """The paths the index ``index`` ("aliases": ids not their file's name, "threads":
        thread labels) holds for ``value``; None when the index cannot be used."""
        ...


class KeptLetters(Sequence[Letter]):
    """The letters of a scan whose every folder the store kept unchanged (see the module)."""

    __slots__ = ("_items", "_folders", "_source", "_pending", "_at")

    def __init__(self, folders: list[tuple[str, list[Pending]]], source: KeptSource) -> None:
        #: each letter, or its ``Pending`` until decoded
        self._items: list[Letter | Pending] = [p for _, pending in folders for p in pending]
        #: (folder prefix "seat/inbox/", where its letters begin, how many)
        self._folders: list[tuple[str, int, int]] = []
        start = 0
        for prefix, pending in folders:
            self._folders.append((prefix, start, len(pending)))
            start += len(pending)
        self._source = source
        self._pending = len(self._items)
        self._at: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> Letter: ...
    @overload
    def __getitem__(self, i: slice) -> list[Letter]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(self)[i]
        item = self._items[i]
        if type(item) is tuple:
            item = self._decode(i if i >= 0 else len(self._items) + i)
        return item

    def __iter__(self) -> Iterator[Letter]:
        if self._pending:
            self._decode_all()
        return iter(self._items)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (KeptLetters, list)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a list's

    def __repr__(self) -> str:
        return f"KeptLetters({len(self._items)} letters, {self._pending} not decoded)"

    @property
    def pending(self) -> int:
        """How many letters are not decoded yet."""
        return self._pending

    def _decode(self, i: int) -> Letter:
        item = self._items[i]
        if type(item) is tuple:
            item = self._items[i] = self._source.decode(item)
            self._pending -= 1
        return item  # type: ignore[return-value]

    def _decode_all(self) -> None:
        items = self._items
        source = self._source
        for prefix, start, n in self._folders:
            pending = [p for p in items[start:start + n] if type(p) is tuple]
            if not pending:
                continue
            decoded = iter(source.decode_folder(prefix, pending))
            for i in range(start, start + n):
                if type(items[i]) is tuple:
                    items[i] = next(decoded)
        self._pending = 0

    # --- a few letters, found without decoding the others ------------------------------
    def _index(self) -> dict[str, int]:
        if self._at is None:
            self._at = {x[0] if type(x) is tuple else x.path: i  # type: ignore[union-attr,index]
                        for i, x in enumerate(self._items)}
        return self._at

    def position(self, path: str) -> int:
        """Where the letter of the file at ``path`` is in scan order (-1: nowhere)."""
        return self._index().get(path, -1)

    def letter_at(self, path: str) -> Letter | None:
        """The letter of the file at ``path``, if the scan read one there."""
        i = self._index().get(path)
        return None if i is None else self[i]

    def _at_paths(self, paths: Iterable[str]) -> list[Letter]:
        at = self._index()
        found = sorted({at[p] for p in paths if p in at})
        return [self[i] for i in found]

    def _named(self, letter_id: str) -> list[str]:
        """The paths of the files named ``<letter_id>.md``, in every folder."""
        at = self._index()
        name = letter_id + ".md"
        return [prefix + name for prefix, _, _ in self._folders if prefix + name in at]

    def letters_with_id(self, letter_id: str) -> list[Letter]:
        """Every letter whose id is ``letter_id``, in scan order."""
        aliases = self._source.paths_with("aliases", letter_id)
        if aliases is None:
            return [x for x in self if x.id == letter_id]
        return [x for x in self._at_paths(self._named(letter_id) + aliases) if x.id == letter_id]

    def letters_with_thread(self, thread_id: str) -> list[Letter]:
        """Every letter whose thread (its ``thread`` label, else its id) is ``thread_id``."""
        labelled = self._source.paths_with("threads", thread_id)
        aliases = self._source.paths_with("aliases", thread_id)
        if labelled is None or aliases is None:
            return [x for x in self if x.thread_id == thread_id]
        paths = labelled + self._named(thread_id) + aliases
        return [x for x in self._at_paths(paths) if x.thread_id == thread_id]


def letter_at(letters: Sequence[Letter], path: str) -> Letter | None:
    """The letter of the file at ``path`` among ``letters`` (None when there is none)."""
    if isinstance(letters, KeptLetters):
        return letters.letter_at(path)
    return next((x for x in letters if x.path == path), None)


def letters_with_id(letters: Sequence[Letter], letter_id: str) -> list[Letter]:
    """Every letter of ``letters`` whose id is ``letter_id``, in their order."""
    if isinstance(letters, KeptLetters):
        return letters.letters_with_id(letter_id)
    return [x for x in letters if x.id == letter_id]


def letters_with_thread(letters: Sequence[Letter], thread_id: str) -> list[Letter]:
    """Every letter of ``letters`` in the thread ``thread_id``, in their order."""
    if isinstance(letters, KeptLetters):
        return letters.letters_with_thread(thread_id)
    return [x for x in letters if x.thread_id == thread_id]

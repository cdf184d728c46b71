"""A scan's letters when the derived store kept every folder unchanged: each decoded from
the store when first touched, never all of them for a question about a few.

``KeptLetters`` is a sequence of ``Letter`` in scan order, as a plain list would be: asking
for every letter (iterating) decodes every pending one, in one pass per folder; asking for
one (``letter_at``, an index) decodes that one. ``letters_with_id`` and
``letters_with_thread`` find a few letters without decoding the others: from the file
names the scan listed (a letter's canonical file name is its id) and the store's indexes of
the letters that do not follow that rule. They give candidates; whoever asked still decides
on the letters themselves (the evaluator, the resolver).

``core.model``'s ``letter_at``, ``letters_with_id`` and ``letters_with_thread`` ask these
methods of a ``KeptLetters`` and answer the same over a plain list.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from functools import lru_cache
from itertools import compress
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from threading import RLock
from typing import Protocol, overload

from .grammar import parse_time
from .model import Letter

#: a letter not decoded yet: its path and its file's (size, mtime_ns, inode, ctime_ns)
Pending = tuple[str, int, int, int, int]
#: the letters of one folder the store vouched for: its prefix ("seat/inbox/"), the names
#: of its letter files (sorted) and, four per name, their size, mtime_ns, inode, ctime_ns
KeptFolderLetters = tuple[str, list[str], list[int]]
#: the header fields ``KeptLetters.positions_with`` finds letters by (and ``count_by``
#: counts them by)
HEADER_COLUMNS = ("from", "to", "type", "deadline")
#: more pending letters of one folder than this asked for at once are decoded together
_TOGETHER = 32
#: the first this many file names are looked up in each folder's sorted names; after that,
#: through one map of every name (a command looking up every id: check)
_SEARCHED = 2048


class KeptSource(Protocol):
    """What the store gives ``KeptLetters``: letters decoded from the generation the scan
    proved unchanged, and its indexes."""

    def decode(self, pending: Pending) -> Letter:
        """The letter kept for one file."""
        ...

    def decode_folder(self, prefix: str, pending: list[Pending], of: int) -> list[Letter]:
        """The letters kept for ``pending`` (files of the folder ``prefix``, which holds
        ``of`` letter files), in order."""
        ...

    def paths_with(self, index: str, value: str) -> list[str] | None:
        """The paths the index ``index`` ("aliases": ids not their file's name, "threads":
        thread labels) holds for ``value``; None when the index cannot be used."""
        ...

    def column(self, name: str) -> dict[str, tuple[list[str], list[int]]] | None:
        """The header field ``name`` (one of ``HEADER_COLUMNS``) of the letters kept, by
        folder ("seat/inbox/"): its distinct values there, and each letter's value (in name
        order) as a position among them (each checked to be one); None when the index cannot
        be used."""
        ...


class KeptLetters(Sequence[Letter]):
    """The letters of a scan whose folders the store kept unchanged (see the module), and
    (``read``) of folders the scan read itself: those letters are given, and found by id
    and thread by looking at them, since the store's indexes are of the folders as kept."""

    __slots__ = ("_items", "_folders", "_starts", "_by_prefix", "_source", "_pending", "_lock", "_names",
                 "_searched", "_twice", "_read", "_read_folders")

    def __init__(self, folders: list[KeptFolderLetters], source: KeptSource,
                 read: dict[str, list[Letter]] | None = None) -> None:
        self._folders = folders
        #: where each folder's letters begin, in scan order
        self._starts: list[int] = []
        n = 0
        for _, names, _ in folders:
            self._starts.append(n)
            n += len(names)
        #: each letter once decoded
        self._items: list[Letter | None] = [None] * n
        self._by_prefix = {prefix: k for k, (prefix, _, _) in enumerate(folders)}
        self._source = source
        self._pending = n
        self._lock = RLock()  # the app and the MCP server ask from several threads
        #: file name -> where the file of that name is (``_named``), made once many names
        #: were looked up
        self._names: dict[str, int] | None = None
        self._searched = 0
        #: the names of files in more than one folder -> where each is (in scan order)
        self._twice: dict[str, list[int]] = {}
        #: where the letters of the folders the scan read are (their ids and threads)
        self._read: dict[str, list[int]] | None = None
        #: the folders the scan read itself (the store's columns are not of them)
        self._read_folders = frozenset(read or ())
        if read:
            found: dict[str, list[int]] = {}
            for prefix, letters in read.items():
                start = self._starts[self._by_prefix[prefix]]
                self._items[start:start + len(letters)] = letters
                self._pending -= len(letters)
                for j, x in enumerate(letters):
                    found.setdefault(x.id, []).append(start + j)
                    if x.thread and x.thread != x.id:
                        found.setdefault(x.thread, []).append(start + j)
            self._read = found

    @classmethod
    def of(cls, parts: list[tuple[str, object, bool]], source: KeptSource) -> KeptLetters:
        """The letters of a scan's folders in order: (prefix, (names, nums), True) as the
        store kept them, or (prefix, letters, False) as read (in name order)."""
        folders: list[KeptFolderLetters] = []
        read: dict[str, list[Letter]] = {}
        for prefix, items, kept in parts:
            if kept:
                folders.append((prefix, *items))  # type: ignore[arg-type]
            else:
                folders.append((prefix, [x.name for x in items],  # type: ignore[union-attr]
                                [n for x in items for n in (x.size, x.mtime_ns, x.inode, x.ctime_ns)]))  # type: ignore[union-attr]
                read[prefix] = items  # type: ignore[assignment]
        return cls(folders, source, read)

    def paths(self) -> list[str]:
        """Every letter's file, in scan order (none decoded)."""
        return [prefix + name for prefix, names, _ in self._folders for name in names]

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
        if item is None:
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

    def _pending_of(self, k: int, j: int) -> Pending:
        prefix, names, nums = self._folders[k]
        return (prefix + names[j], *nums[4 * j:4 * j + 4])  # type: ignore[return-value]

    def _decode(self, i: int) -> Letter:
        with self._lock:
            item = self._items[i]
            if item is None:
                k = bisect_right(self._starts, i) - 1
                item = self._items[i] = self._source.decode(self._pending_of(k, i - self._starts[k]))
                self._pending -= 1
            return item

    def _decode_all(self) -> None:
        with self._lock:
            self._decode_each()

    def _decode_each(self) -> None:
        items = self._items
        for k, (prefix, names, _) in enumerate(self._folders):
            start = self._starts[k]
            todo = [j for j in range(len(names)) if items[start + j] is None]
            if todo:
                decoded = self._source.decode_folder(prefix, [self._pending_of(k, j) for j in todo], len(names))
                for j, x in zip(todo, decoded):
                    items[start + j] = x
        self._pending = 0

    def many(self, positions: Iterable[int]) -> list[Letter]:
        """The letters at ``positions`` (each in ``range(len(self))``), in that order; a
        folder's pending ones decoded together when there are more than a few."""
        positions = list(positions)
        with self._lock:
            self._decode_many(positions)
        found = [self._items[i] for i in positions]
        if None in found:  # a folder's few pending ones: decoded one by one
            found = [self._decode(i) if x is None else x for i, x in zip(positions, found)]
        return found

    def _decode_many(self, positions: list[int]) -> None:
        items = self._items
        todo: dict[int, list[int]] = {}
        for i in positions:
            if items[i] is None:
                todo.setdefault(bisect_right(self._starts, i) - 1, []).append(i)
        for k, wanted in todo.items():
            if len(wanted) < _TOGETHER:
                continue
            start = self._starts[k]
            wanted = sorted(set(wanted))
            prefix, names, _ = self._folders[k]
            decoded = self._source.decode_folder(prefix, [self._pending_of(k, i - start) for i in wanted], len(names))
            for i, x in zip(wanted, decoded):
                items[i] = x
            self._pending -= len(wanted)

    # --- facts that need no letter decoded -----------------------------------------------
    def count_by_folder(self) -> dict[tuple[str, str], int]:
        out = {}
        for prefix, names, _ in self._folders:
            seat, folder, _ = prefix.split("/")
            out[(seat, folder)] = out.get((seat, folder), 0) + len(names)
        return out

    def count_by(self, field: str) -> dict[str, int] | None:
        found = self._codes(field)
        if found is None:
            return None
        counts: dict[str, int] = {}
        get = HEADER_ATTRS[field]
        for k, kept in enumerate(found):
            if kept is None:  # a folder read: its letters are looked at
                for x in self._in(k):
                    counts[getattr(x, get)] = counts.get(getattr(x, get), 0) + 1
                continue
            values, codes = kept
            for c, m in Counter(codes).items():
                counts[values[c]] = counts.get(values[c], 0) + m
        return counts

    def distinct(self, field: str) -> set[str] | None:
        """The values the letters carry in the header field ``field`` (one of
        ``HEADER_COLUMNS``), each once; None when the store cannot say."""
        found = self._codes(field)
        if found is None:
            return None
        get = HEADER_ATTRS[field]
        out: set[str] = set()
        for k, kept in enumerate(found):
            if kept is None:  # a folder read: its letters are looked at
                out.update(getattr(x, get) for x in self._in(k))
            else:
                values = kept[0]
                out.update(values[c] for c in set(kept[1]))
        return out

    def _codes(self, field: str) -> list[tuple[list[str], list[int]] | None] | None:
        """By folder (in scan order): the values of the header field ``field`` there and
        each letter's as a position among them, as the store keeps them (None for a folder
        the scan read); None when the store cannot say."""
        columns = self._source.column(field)
        if columns is None:
            return None
        read = self._read_folders
        out: list[tuple[list[str], list[int]] | None] = []
        for prefix, names, _ in self._folders:
            if prefix in read:
                out.append(None)
                continue
            kept = columns.get(prefix)
            if kept is None or len(kept[1]) != len(names):
                return None
            out.append(kept)
        return out

    def _in(self, k: int) -> list[Letter]:
        start = self._starts[k]
        end = start + len(self._folders[k][1])
        found = self._items[start:end]
        return found if None not in found else self.many(range(start, end))  # type: ignore[return-value]

    def in_folder(self, prefix: str) -> list[Letter]:
        k = self._by_prefix.get(prefix)
        return [] if k is None else self._in(k)

    def mtimes(self) -> list[int]:
        """Each letter's file's mtime_ns, in scan order."""
        return [m for _, _, nums in self._folders for m in nums[1::4]]

    # --- a few letters, found without decoding the others ------------------------------
    def positions_with(self, field: str, values: Iterable[str]) -> list[int] | None:
        """Where the letters whose header field ``field`` (one of ``HEADER_COLUMNS``) is
        one of ``values`` are, in scan order; None when the store cannot say."""
        found = self._codes(field)
        if found is None:
            return None
        wanted = set(values)
        get = HEADER_ATTRS[field]
        out: list[int] = []
        for k, (start, kept) in enumerate(zip(self._starts, found)):
            if kept is None:
                out.extend(start + j for j, x in enumerate(self._in(k)) if getattr(x, get) in wanted)
                continue
            hit = {i for i, v in enumerate(kept[0]) if v in wanted}
            if hit:  # (each code looked at in C: a folder holds thousands)
                codes = kept[1]
                out.extend(compress(range(start, start + len(codes)), map(hit.__contains__, codes)))
        return out

    def position(self, path: str) -> int:
        """Where the letter of the file at ``path`` is in scan order (-1: nowhere)."""
        prefix, _, name = path.rpartition("/")
        k = self._by_prefix.get(prefix + "/")
        if k is None:
            return -1
        names = self._folders[k][1]
        j = bisect_left(names, name)
        return self._starts[k] + j if j < len(names) and names[j] == name else -1

    def letter_at(self, path: str) -> Letter | None:
        """The letter of the file at ``path``, if the scan read one there."""
        i = self.position(path)
        return None if i < 0 else self[i]

    def _at_paths(self, paths: Iterable[str], also: Iterable[int] = ()) -> list[Letter]:
        at = {i for i in map(self.position, paths) if i >= 0}
        at.update(also)
        return self.many(sorted(at))

    def _named(self, letter_id: str) -> list[int]:
        """Where the files named ``<letter_id>.md`` are, in every folder (in scan order)."""
        name = letter_id + ".md"
        names = self._names
        if names is None and self._searched < _SEARCHED:  # a few names: each folder searched
            self._searched += 1
            found = []
            for start, (_, folder_names, _) in zip(self._starts, self._folders):
                j = bisect_left(folder_names, name)
                if j < len(folder_names) and folder_names[j] == name:
                    found.append(start + j)
            return found
        if names is None:
            names = self._name_map()
        found = self._twice.get(name)
        if found is not None:
            return found
        at = names.get(name)
        return [] if at is None else [at]

    def _name_map(self) -> dict[str, int]:
        """File name -> where the file of that name is (``_twice``: those in more than one
        folder), made once: a command may look up every id (check does)."""
        if self._names is None:
            names, twice = {}, self._twice
            for k, (_, folder_names, _) in enumerate(self._folders):
                start = self._starts[k]
                if not names.keys().isdisjoint(folder_names):  # (rare: one position each, else)
                    for j, folder_name in enumerate(folder_names):
                        if folder_name in names:
                            twice.setdefault(folder_name, [names[folder_name]]).append(start + j)
                names.update(zip(folder_names, range(start, start + len(folder_names))))
            self._names = names
        return self._names

    def _read_with(self, value: str) -> list[int]:
        """Where the letters of the folders read whose id or thread label is ``value`` are."""
        return self._read.get(value, []) if self._read is not None else []

    def letters_with_id(self, letter_id: str) -> list[Letter]:
        """Every letter whose id is ``letter_id``, in scan order."""
        return self.letters_with_ids((letter_id,))[letter_id]

    def letters_with_ids(self, ids: Iterable[str]) -> dict[str, list[Letter]]:
        """Each of ``ids`` -> every letter whose id it is, in scan order: the candidates of
        all of them decoded together (a folder's together when there are more than a few)."""
        wanted: dict[str, list[int]] = dict.fromkeys(ids)  # type: ignore[arg-type]
        if len(wanted) > _SEARCHED:  # many ids (an owed view's): through the map at once
            self._name_map()
        paths_with, named, read = self._source.paths_with, self._named, self._read
        for letter_id in wanted:
            aliases = paths_with("aliases", letter_id)
            if aliases is None:  # no index to trust: every letter is looked at
                held: dict[str, list[Letter]] = {i: [] for i in wanted}
                for x in self:
                    if x.id in held:
                        held[x.id].append(x)
                return held
            at = named(letter_id)  # in scan order, each once
            if aliases or read is not None:  # (most ids: only the files of their name)
                found = {i for i in map(self.position, aliases) if i >= 0}
                found.update(at)
                found.update(self._read_with(letter_id))
                at = sorted(found)
            wanted[letter_id] = at
        items = self._items
        todo = [i for at in wanted.values() for i in at if items[i] is None]
        if todo:
            self.many(todo)
        return {letter_id: [x for x in map(items.__getitem__, at) if x.id == letter_id]  # type: ignore[union-attr]
                for letter_id, at in wanted.items()}

    def letters_with_thread(self, thread_id: str) -> list[Letter]:
        """Every letter whose thread (its ``thread`` label, else its id) is ``thread_id``."""
        labelled = self._source.paths_with("threads", thread_id)
        aliases = self._source.paths_with("aliases", thread_id)
        if labelled is None or aliases is None:
            return [x for x in self if x.thread_id == thread_id]
        return [x for x in self._at_paths(labelled + aliases, self._named(thread_id) + self._read_with(thread_id))
                if x.thread_id == thread_id]


def by_path(letters: Sequence[Letter]) -> Callable[[str], Letter | None]:
    """A finder of the letter at a path among ``letters``, for many paths."""
    if isinstance(letters, KeptLetters):
        return letters.letter_at
    return {x.path: x for x in letters}.get


# --- facts about every letter that need none decoded --------------------------------------

def count_by_folder(letters: Sequence[Letter]) -> dict[tuple[str, str], int]:
    """(seat, folder) -> how many of ``letters`` lie there."""
    if isinstance(letters, KeptLetters):
        return letters.count_by_folder()
    counts: dict[tuple[str, str], int] = {}
    for x in letters:
        counts[(x.seat, x.folder)] = counts.get((x.seat, x.folder), 0) + 1
    return counts


def count_by(letters: Sequence[Letter], field: str) -> dict[str, int]:
    """Value -> how many of ``letters`` carry it in the header field ``field`` (one of
    ``HEADER_COLUMNS``)."""
    if isinstance(letters, KeptLetters) and (found := letters.count_by(field)) is not None:
        return found
    get = HEADER_ATTRS[field]
    counts: dict[str, int] = {}
    for x in letters:
        value = getattr(x, get)
        counts[value] = counts.get(value, 0) + 1
    return counts


def deadlines(letters: Sequence[Letter]) -> list[datetime]:
    """The distinct times the letters' deadlines name (``Letter.deadline_at``), sorted."""
    found = letters.distinct("deadline") if isinstance(letters, KeptLetters) else None
    if found is None:
        found = {x.deadline for x in letters}
    return sorted({at for value in found if value and (at := _time_of(value)) is not None})


#: a deadline's time, by its text (a resident process asks for mostly the same ones again)
_time_of = lru_cache(maxsize=1 << 16)(parse_time)


def with_field(letters: Sequence[Letter], field: str, values: Iterable[str]) -> list[Letter]:
    """The letters whose header field ``field`` (one of ``HEADER_COLUMNS``) is one of
    ``values``, in their order."""
    wanted = set(values)
    if isinstance(letters, KeptLetters) and (at := letters.positions_with(field, wanted)) is not None:
        return letters.many(at)
    get = HEADER_ATTRS[field]
    return [x for x in letters if getattr(x, get) in wanted]


def in_folder(letters: Sequence[Letter], seat: str, folder: str) -> list[Letter]:
    """The letters lying in ``seat``'s ``folder``, in their order."""
    if isinstance(letters, KeptLetters):
        return letters.in_folder(f"{seat}/{folder}/")
    return [x for x in letters if x.seat == seat and x.folder == folder]


def newer_than(letters: Sequence[Letter], mtime_ns: int) -> list[Letter]:
    """The letters whose file was modified after ``mtime_ns``, in their order."""
    if isinstance(letters, KeptLetters):
        return letters.many(i for i, m in enumerate(letters.mtimes()) if m > mtime_ns)
    return [x for x in letters if x.mtime_ns > mtime_ns]


def newest_mtime(letters: Sequence[Letter]) -> int:
    """The latest modification time of the letters' files (0 for none)."""
    if isinstance(letters, KeptLetters):
        return max(letters.mtimes(), default=0)
    return max((x.mtime_ns for x in letters), default=0)


#: the attribute of a ``Letter`` holding each of ``HEADER_COLUMNS``
HEADER_ATTRS = {"from": "sender", "to": "recipient", "type": "type", "deadline": "deadline"}

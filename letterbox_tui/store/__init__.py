"""The one derived store and its one entry: ``open_answers``.

Both faces (the command line, the app) and any later one get their answers here and
nowhere else. ``open_answers`` scans the letterbox with the store as its header cache (an
unchanged file costs a stat, never a parse); when every file the scan saw is one the
store's generation holds unchanged, and nothing else the answers rest on moved, the
answers are read back (``StoredAnswers``); otherwise they are computed by the resolver
and the store is rewritten with them, in this process, before they are returned. When
only letters (and their sidecars) changed, the resolver is asked only about the letters a
change can reach (``core.resolve.depends``), the others keep the answers kept, and only
the rows that moved are written.

When the store vouches for every folder the scan lists (each folder's letter files stat
exactly as when it last wrote them, settled), no letter is built to prove it: the scan's
letters are decoded from the store when first asked for (``core.lazy.KeptLetters``), and
the answers likewise, so a question about a few letters decodes a few.

The store is only ever an optimisation: one that cannot be found, opened, trusted or
written gives one notice line, and the answer comes from the letters.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from functools import partial
from weakref import WeakKeyDictionary
from hashlib import blake2b
from collections.abc import Callable, Iterable
from datetime import datetime

from letterbox_tui.core.answers import Answers
from letterbox_tui.core.lazy import KeptLetters, Pending
from letterbox_tui.core.listings import Listings
from letterbox_tui.core.model import (
    Letter, Snapshot, Unreadable, letter_at, letters_with_id, letters_with_thread,
)
from letterbox_tui.core.resolve import Resolution, resolve
from letterbox_tui.core.resolve.depends import doubted_threads, reach, thread_of
from letterbox_tui.core.resolve.structure import scan_structure
from letterbox_tui.core.scan import RACY_NS, KeptFolder, read_kept, scan, stat_digest

from . import indexes
from .db import (
    Decoded, Notice, Reader, Store, Unusable, context_of, default_notice, read_folder_indexes, read_index, sidecars_moved,
)
from .indexes import Folders, json_text as _json
from .records import (
    KEPT, Damaged, answers_checksum, answers_record, checksum, decode_answers, decode_item, item_record,
    structure_of, with_structure,
)
from .stored import StoredAnswers

__all__ = ["Answers", "open_answers"]


def open_answers(
    root: str | os.PathLike[str],
    at: datetime,
    *,
    participants: Iterable[str] | None = None,
    id_time_is_utc: bool | None = None,
    notice: Notice = default_notice,
    use_store: bool = True,
    write: Callable[[Callable[[], None]], None] | None = None,
    watched: Listings | None = None,
) -> Answers:
    """Every derived answer over the letterbox at ``root``, at the clock ``at``.

    ``participants`` restricts the scan (the scope is then partial: such answers are
    computed, never kept); ``id_time_is_utc`` defaults to the letterbox's own setting;
    ``notice`` is given one line when the store cannot be used. ``write``: when the answers
    were computed, how the store is written with them — None: before they are returned;
    else it is given the writing to run (a resident process runs it in a thread of its
    own, after the answers are in use: the next opening waits for it). ``watched``: the
    folder listings a watcher of the letterbox vouches for (``core.listings``), taken where
    the store vouches for the folder's files too; the store's index rows decoded for one
    ``watched`` are kept beside it for the next opening (``store.db.Decoded``). Raises
    ``LetterboxError`` when ``root`` cannot be read.
    """
    notice = _Once(notice)
    root_real = os.path.realpath(os.fspath(root))
    answers = _answers(root, root_real, at, participants, id_time_is_utc, notice, use_store, write, watched)
    from letterbox_tui.core.sync import status

    answers.snapshot.scope.sync = status(root_real)  # how current a copy kept in git is
    return answers


#: the index rows decoded for each resident process's listings (``open_answers``)
_DECODED: WeakKeyDictionary[Listings, Decoded] = WeakKeyDictionary()


def _answers(root, root_real: str, at: datetime, participants, id_time_is_utc, notice: Notice,
             use_store: bool, write: Callable[[Callable[[], None]], None] | None,
             watched: Listings | None = None) -> Answers:
    if id_time_is_utc is None:
        from letterbox_tui.core.settings import load_settings

        id_time_is_utc = load_settings(root_real).id_time_is_utc
    began = time.time_ns()
    decoded = None if watched is None else _DECODED.setdefault(watched, Decoded())
    store = Store.open(root_real, notice, decoded) if use_store and "\x00" not in root_real else None
    if store is not None and not _parsed_alike(store, id_time_is_utc):
        store.close()  # its headers were parsed under the other setting: it is made anew
        _discard(store)
        store = Store.open(root_real, notice, decoded)
    if store is None:
        return resolve(scan(root, participants, id_time_is_utc=id_time_is_utc), at)
    try:
        cache = _HeaderCache(store, began, root_real, id_time_is_utc, notice)
        try:
            snapshot = scan(root, participants, id_time_is_utc=id_time_is_utc, cache=cache,
                            watched=watched.begin() if watched is not None and participants is None else None)
        except (Damaged, Unusable) as why:
            notice(f"the store {_clean(store.path)} is damaged ({why}): answered from the letters")
            store.close()
            _discard(store)
            return resolve(scan(root, participants, id_time_is_utc=id_time_is_utc), at)
        scope = snapshot.scope
        whole = not scope.partial and scope.atomic
        context = context_of(snapshot, id_time_is_utc)
        if whole and cache.fresh(snapshot) and store.meta.get("context") == context:
            try:
                answers = _stored(store, snapshot, at, notice, lazy=not cache.same)
                if cache.same:  # the same headers under another stat: keep the stat now
                    _write(store, cache, snapshot, None, context)
                return answers
            except (Unusable, Damaged) as why:
                notice(f"the store {_clean(store.path)} is damaged ({why}): answered from the letters")
                store.close()
                _discard(store)  # the next command builds it anew
                return resolve(snapshot, at)
        found = _changed(store, cache, snapshot, context) if whole else None
        if found is not None:  # the part of the letters a change reaches, resolved again
            try:
                res, rows = _resolve_part(store, snapshot, at, notice, *found)
            except (Unusable, Damaged) as why:
                notice(f"the store {_clean(store.path)} is damaged ({why}): answered from the letters")
                store.close()
                _discard(store)
                return resolve(snapshot, at)
        else:
            res, rows = resolve(snapshot, at), None
        if whole:
            job = partial(_write_computed, store, cache, snapshot, res, context, rows)
            if write is not None:
                store = None  # the writing owns it now
                write(job)
            else:
                job()
        return res
    finally:
        if store is not None:
            store.close()


def _write_computed(store: Store, cache: _HeaderCache, snapshot: Snapshot, res: Resolution | StoredAnswers,
                    context: str, rows: _Rows | None) -> None:
    """Keep the answers the resolver computed (``rows``: only the rows a change moved); a
    store found damaged is removed."""
    try:
        if not _write(store, cache, snapshot, res, context, rows) and store.broken:
            store.close()
            _discard(store)
    finally:
        store.close()


def _stored(store: Store, snapshot: Snapshot, at: datetime, notice: Notice, *, lazy: bool) -> StoredAnswers:
    """The answers kept for ``snapshot``'s letters; each record's checksum is checked when
    the record is first read (``StoredAnswers``). ``lazy``: each record is read from the
    store when first asked for (the store's read transaction is then lent to them)."""
    reader = store.lend() if lazy else None
    kept: dict[str, tuple[bytes, int]] | _KeptAnswers
    if reader is not None:
        kept = _KeptAnswers(reader, store.count_answers())
    else:
        kept = store.answers()
    if len(kept) != len(snapshot.letters):
        raise Damaged("it holds answers for another number of letters")

    path = store.path  # not the store: its files' rows are not kept alive by the answers

    def index(name: str) -> dict[str, list[str]] | None:
        if reader is None:
            return None
        try:
            return read_index(reader, name)
        except Unusable as why:
            notice(f"the store {_clean(path)} is damaged ({why}): answered from the letters")
            return None

    return StoredAnswers(snapshot, at, kept, _on_damage(notice, path), index=index)


def _on_damage(notice: Notice, path: str) -> Callable[[Damaged], None]:
    """What answers read from the store at ``path`` do when they find it damaged: say so
    once and remove it (the next command builds it anew). The path, not the store: its
    files' rows are not kept alive by the answers."""
    def damaged(why: Damaged) -> None:
        from .db import _remove

        notice(f"the store {_clean(path)} is damaged ({why}): answered from the letters")
        _remove(path)

    return damaged


def _write(store: Store, cache: _HeaderCache, snapshot: Snapshot, res: Resolution | StoredAnswers | None,
           context: str, rows: _Rows | None = None) -> bool:
    """Keep this scan's files and (``res``) the answers the resolver computed for them, or
    (``rows``) the rows of the answers a change moved, or (neither) only the files' stats.
    After a change, or a touch, only the folders the scan read are made again
    (``store.indexes``); else every one."""
    refused = store.refused()
    if refused is not None:  # said once here, and the records are not even made
        store.notice(f"the store {_clean(store.path)} is not written: {refused}")
        return False
    answers = None
    first = None
    if rows is not None:
        answers, first = rows.rows, rows.first
    elif res is not None:
        answers = [_answers_row(res, letter) for letter in snapshot.letters]
        first = snapshot.letters[0].path if len(snapshot.letters) else ""
    try:
        part = _read_part(store, cache, snapshot) if res is None or rows is not None else None
        if part is not None:
            files, folders, index = part
        else:
            files = {item.path: cache.row(item) for item in (*snapshot.letters, *snapshot.unreadable)}
            folders, index = _made(snapshot, files)
    except Unusable as why:
        store.notice(f"the store {_clean(store.path)} is damaged ({why}): it is removed, to be built anew")
        store.broken = True
        return False
    if rows is not None:
        index["owed"] = _json(rows.owed)
        index["uncertain"] = _json(rows.uncertain)
    elif res is not None:  # else the answers, and what is owed, stay as kept
        index["owed"] = _json(_owed_index(res))
        index["uncertain"] = _json(_uncertain_index(res))
    return store.write(files, answers, context, folders, index, gone=rows.gone if rows is not None else None,
                       first=first, delta=part is not None)


def _made(snapshot: Snapshot, files: dict[str, tuple]) -> tuple[Folders, dict[str, str]]:
    """The folders vouched for and the indexes of a generation holding ``files``: made
    from every letter."""
    rows: dict[str, dict[str, tuple]] = {f"{rel}/": {} for rel in snapshot.devices}
    for path, row in files.items():
        rows.setdefault(path[:path.rindex("/") + 1], {})[path] = row
    folders, index = indexes.made(rows, _by_folder(snapshot.letters), _unreadable_names(snapshot), racy_ns=RACY_NS)
    return {p: v for p, v in folders.items() if p[:-1] in snapshot.devices}, index  # (a folder listed)


def _read_part(store: Store, cache: _HeaderCache, snapshot: Snapshot
               ) -> tuple[dict[str, tuple | None], Folders, dict[str, str]] | None:
    """The rows of the files of the folders the scan read (path -> row, None: the file
    went), and the folders and indexes of the generation, the other folders' as kept; None
    when the generation kept has files in folders the scan neither vouched for nor read
    (a folder went): then every folder is made again. The index rows of the folders
    vouched for stay as they are."""
    letters = snapshot.letters
    read = [f"{rel}/" for rel in snapshot.devices if f"{rel}/" not in cache.vouched]
    kept_files = sum(store.folders[p][1] + len(store.folders[p][3]) for p in cache.vouched)
    kept_files += sum(len(cache.kept_in(p)) for p in read)
    if kept_files != int(store.meta.get("files", -1)):
        return None
    unreadable = _unreadable_names(snapshot)
    rows: dict[str, dict[str, tuple]] = {}
    if isinstance(letters, KeptLetters):  # (a plain list: no folder was vouched for)
        in_read = {prefix: letters.in_folder(prefix) for prefix in read}
    else:
        in_read = _by_folder(letters)
    delta: dict[str, tuple | None] = {}
    for prefix in read:
        in_read.setdefault(prefix, [])
        kept = cache.kept_in(prefix)
        found = rows[prefix] = {}
        for path in [x.path for x in in_read[prefix]] + [prefix + name for name in unreadable.get(prefix, ())]:
            row = cache.new.get(path) or kept.get(path)
            if row is None:
                raise Unusable(f"damaged: no row kept for {path}")
            found[path] = row
            if kept.get(path) != row:
                delta[path] = row
        delta.update((path, None) for path in kept if path not in found)
    folders, index = indexes.made(rows, in_read, unreadable, racy_ns=RACY_NS)
    folders.update((p, store.folders[p]) for p in cache.vouched)
    return delta, folders, index


def _by_folder(letters: Iterable[Letter]) -> dict[str, list[Letter]]:
    found: dict[str, list[Letter]] = {}
    for x in letters:
        found.setdefault(x.path[:len(x.path) - len(x.name)], []).append(x)
    return found


def _unreadable_names(snapshot: Snapshot) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for u in snapshot.unreadable:
        prefix, _, name = u.path.rpartition("/")
        found.setdefault(prefix + "/", []).append(name)
    return found


def _answers_row(res: Resolution, letter: Letter, structure: dict | None = None) -> tuple[str, bytes, int]:
    """The row of ``letter``'s answers as ``res`` computes them (``structure``: instead of
    the one ``res`` gives)."""
    found = {name: getattr(res, name)(letter) for name in KEPT if name != "structure"}
    found["structure"] = res.structure(letter) if structure is None else structure
    head = res.head(letter)
    record = answers_record(found, head.path if head is not None else "")
    return letter.path, record, answers_checksum(letter.path, record)


class _Rows:
    """The answers rows a change moved: ``rows`` (path, record, crc) to write, the paths
    whose rows go, what is owed (as ``_owed_index``), what the digest may call uncertain
    (as ``_uncertain_index``) and the letter keeping the whole scan's structure."""

    __slots__ = ("rows", "gone", "owed", "uncertain", "first")

    def __init__(self, rows: list[tuple[str, bytes, int]], gone: list[str], owed: dict[str, list[str]],
                 uncertain: dict[str, list[str]], first: str) -> None:
        self.rows, self.gone, self.owed, self.uncertain, self.first = rows, gone, owed, uncertain, first


def _changed(store: Store, cache: _HeaderCache, snapshot: Snapshot, context: str
             ) -> tuple[list[Letter], list[Letter]] | None:
    """What changed since the generation the store holds, when the answers of the other
    letters can be kept (``core.resolve.depends``): the letters that are new or differ,
    and the versions they replaced or that went. None when the change cannot be bounded
    so (an unreadable file came, went or changed; anything but the letters and their
    sidecars moved; a store without the rows needed): then every letter is resolved."""
    if "first" not in store.meta:
        return None
    moved = sidecars_moved(store.meta.get("context", ""), context)
    if moved is None:
        return None
    letters = snapshot.letters
    changed: list[Letter] = []
    before: list[Letter] = []
    try:
        old: dict[str, tuple] = {}  # what the store keeps of the folders read (the others are as kept)
        for folder in snapshot.devices:
            if folder + "/" not in cache.vouched:
                old.update(cache.kept_in(folder + "/"))
        for path, item in cache.items.items():  # the files read by this scan
            kept = old.get(path)
            if kept is not None and kept[6] == cache.new[path][6]:
                continue  # the same header
            if type(item) is not Letter:
                return None
            if kept is not None:
                was = decode_item(path, kept[6], kept[7], *kept[:4])
                if type(was) is not Letter:
                    return None
                before.append(was)
            changed.append(item)
        present = set(letters.paths() if isinstance(letters, KeptLetters) else [x.path for x in letters])
        present.update(u.path for u in snapshot.unreadable)
        for path, kept in old.items():
            if path not in present:
                was = decode_item(path, kept[6], kept[7], *kept[:4])
                if type(was) is not Letter:
                    return None
                before.append(was)
    except (Unusable, Damaged):
        return None  # said, and the store rebuilt, by the full resolve's writing
    for path in moved:  # its sidecar came or went: the letter's accepted may move
        x = letter_at(letters, path)
        if x is not None:
            changed.append(x)
    if not changed and not before:
        return None
    return changed, before


def _resolve_part(store: Store, snapshot: Snapshot, at: datetime, notice: Notice, changed: list[Letter],
                  before: list[Letter]) -> tuple[StoredAnswers, _Rows]:
    """The answers after a change: the letters it may reach (``core.resolve.depends``)
    resolved again with what the whole snapshot shares, the rest as the store keeps them.
    The forks, cycles, dangling pointers, open disputes and letters owed of the rest are
    kept too, and those of the letters resolved again put in their place. ``Damaged`` or
    ``Unusable`` when what is kept cannot be read."""
    letters = snapshot.letters
    reader = store.lend()
    pointing = read_index(reader, "links")
    doubted = [x for x in map(partial(letter_at, letters), read_index(reader, "doubted").get("", ())) if x is not None]
    threads = doubted_threads([*doubted, *changed]) | doubted_threads(before)

    def holders(key: str) -> list[Letter]:
        thread = thread_of(key)
        if thread is not None:
            return [*letters_with_thread(letters, thread), *changed]
        found = letters_with_id(letters, key)
        found.extend(x for x in map(partial(letter_at, letters), pointing.get(key, ())) if x is not None)
        return [*found, *changed]  # the letters read now are not in the index kept

    found, keys = reach(changed, before, threads, holders)
    if isinstance(letters, KeptLetters):
        position = letters.position
    else:
        position = {x.path: i for i, x in enumerate(letters)}.__getitem__
    part = sorted(found.values(), key=lambda x: position(x.path))
    res = resolve(replace(snapshot, letters=part), at)
    first = letters[0].path if len(letters) else ""
    first_kept = store.meta["first"]
    redone = {x.path for x in part}
    dropped = redone | {x.path for x in before}

    def kept_row(path: str) -> tuple[bytes, int, dict]:
        rows = reader.rows("SELECT record, crc FROM answers WHERE path = ?", (path,))
        if not rows:
            raise Damaged(f"no answers kept for {path}")
        record, crc = rows[0]
        return record, crc, structure_of(decode_answers(path, record, crc))

    def place(path: str) -> tuple[str, str]:
        x = letter_at(letters, path) if type(path) is str else None
        if x is None:
            raise Damaged("a path kept in the structure is not a letter of the scan")
        return x.id, path

    kept_whole = {"forks": [], "cycles": [], "dangling": [], "open": []}
    if first_kept:
        kept_whole = kept_row(first_kept)[2].get("w")
        if kept_whole is None:
            raise Damaged("the scan's structure is not kept")
    new = scan_structure(res)
    try:
        whole = {
            "forks": sorted([f for f in kept_whole["forks"] if f[0] not in keys] + new["forks"], key=lambda f: f[0]),
            "cycles": sorted([c for c in kept_whole["cycles"] if keys.isdisjoint(c)] + new["cycles"]),
            "dangling": sorted([d for d in kept_whole["dangling"] if d[0] not in dropped] + new["dangling"],
                               key=lambda d: place(d[0])),
            "open": sorted([o for o in kept_whole["open"] if o[0] not in dropped] + new["open"],
                           key=lambda o: place(o[0])),
        }
    except (TypeError, IndexError, KeyError):
        raise Damaged("the scan's structure has another shape") from None

    rows = []
    for x in part:
        structure = res.structure(x)
        structure.pop("w", None)
        if x.path == first:
            structure["w"] = whole
        rows.append(_answers_row(res, x, structure))
    for path in {first, first_kept} - redone - {""}:  # keeps the whole scan's structure, or no longer
        if path == first_kept and path != first and letter_at(letters, path) is None:
            continue  # gone
        record, _, structure = kept_row(path)
        if path == first:
            structure["w"] = whole
        else:
            structure.pop("w", None)
        record = with_structure(record, structure)
        rows.append((path, record, answers_checksum(path, record)))
    gone = sorted({x.path for x in before} - redone)

    owed = _merged("owed", read_index(reader, "owed"), _owed_index(res), dropped, position)
    uncertain = _merged("uncertain", read_index(reader, "uncertain"), _uncertain_index(res), dropped, position)

    mine = {path: (record, crc) for path, record, crc in rows}
    answers = StoredAnswers(snapshot, at, _Overlay(reader, len(letters), mine), _on_damage(notice, store.path),
                            index={"owed": owed, "uncertain": uncertain}.get)
    return answers, _Rows(rows, gone, owed, uncertain, first)


def _merged(name: str, kept: dict[str, list[str]], new: dict[str, list[str]], dropped: set[str],
            position: Callable[[str], int]) -> dict[str, list[str]]:
    """The index ``name`` (key -> paths in scan order, keys in the order of their first
    path) after a change: the paths kept but those resolved again or gone, and those the
    resolver now gives (``Damaged`` when a path kept is not a letter of the scan)."""
    merged = {key: [p for p in paths if p not in dropped] for key, paths in kept.items()}
    for key, paths in new.items():
        merged.setdefault(key, []).extend(paths)
    for paths in merged.values():
        try:
            paths.sort(key=position)
        except KeyError:
            raise Damaged(f"the {name} index names a file that is not a letter of the scan") from None
        if paths and position(paths[0]) < 0:
            raise Damaged(f"the {name} index names a file that is not a letter of the scan")
    return dict(sorted(((key, paths) for key, paths in merged.items() if paths), key=lambda o: position(o[1][0])))


def _owed_index(res: Resolution) -> dict[str, list[str]]:
    """The letters owed (``core.owed.is_owed``, which depends on no clock), by the seat
    that owes them: where ``owed`` looks, instead of at every letter."""
    from letterbox_tui.core.owed import is_owed

    found: dict[str, list[str]] = {}
    for x in res.snapshot.letters:
        if is_owed(x, res):
            found.setdefault(x.recipient, []).append(x.path)
    return found


def _uncertain_index(res: Resolution) -> dict[str, list[str]]:
    """The letters the digest may list as uncertain (``core.digest.may_be_uncertain``,
    which depends on no clock): where it looks, instead of at every letter."""
    from letterbox_tui.core.digest import may_be_uncertain

    paths = [x.path for x in res.snapshot.letters if may_be_uncertain(x, res)]
    return {"letters": paths} if paths else {}  # (as ``_merged`` leaves it after a change)


class _HeaderCache:
    """The store as the scan's header cache (``core.scan.HeaderCache``).

    A file whose stat is the one kept, and that had not changed for ``RACY_NS`` when its
    header was read, is given back as kept without being read. Any other file is read; when
    its header's bytes are the ones kept (a touch, an edit of its body, a file that had
    just changed when read), it counts as unchanged all the same."""

    def __init__(self, store: Store, began: int, root: str, id_time_is_utc: bool, notice: Notice) -> None:
        self.store = store
        self.began = began
        self.root = root
        self.id_time_is_utc = id_time_is_utc
        self.notice = notice
        self.hit: set[str] = set()
        self.same: set[str] = set()
        self.new: dict[str, tuple] = {}
        self.items: dict[str, Letter | Unreadable] = {}  # the files read, as read
        self.vouched: set[str] = set()  # the folders taken as kept
        self._kept_in: dict[str, dict[str, tuple]] = {}
        self.kept = 0  # the files of the folders vouched for
        self._source: _KeptRecords | None = None

    @property
    def files(self) -> dict[str, tuple]:
        return self.store.files

    def folder(self, prefix: str, names: list[str], nums: list[int]) -> KeptFolder | None:
        """The folder ``prefix`` as kept, when its files stat exactly as when the store
        last wrote them and had settled by then (``core.scan.FolderCache``)."""
        vouched = self.store.folders.get(prefix)
        if vouched is None or vouched[0] != stat_digest(names, nums):
            return None
        _, letters, legacy, unreadable_names = vouched
        if letters + len(unreadable_names) != len(names):
            raise Damaged("a folder's summary does not match its files")
        unreadable: list[Unreadable] = []
        if unreadable_names:
            skip = set(unreadable_names)
            source = self.source()
            kept_names: list[str] = []
            kept_nums: list[int] = []
            for j, name in enumerate(names):
                stat = nums[4 * j:4 * j + 4]
                if name in skip:
                    item = source.decode((prefix + name, *stat))  # type: ignore[arg-type]
                    if type(item) is not Unreadable:
                        raise Damaged(f"the record kept for {prefix + name} is not an unreadable file's")
                    unreadable.append(item)
                else:
                    kept_names.append(name)
                    kept_nums.extend(stat)
            names, nums = kept_names, kept_nums
        self.kept += len(names) + len(unreadable)
        self.vouched.add(prefix)
        return names, nums, unreadable, legacy

    def source(self) -> _KeptRecords:
        if self._source is None:
            self._source = _KeptRecords(self.store, self.root, self.id_time_is_utc, self.notice)
        return self._source

    def kept_in(self, prefix: str) -> dict[str, tuple]:
        """The rows the store keeps of the files of a folder it does not vouch for (each
        such folder is read file by file), read when first asked."""
        found = self._kept_in.get(prefix)
        if found is None:
            found = self._kept_in[prefix] = self.store.folder_files(prefix)
        return found

    def get(self, path: str, size: int, mtime_ns: int, inode: int, ctime_ns: int) -> Letter | Unreadable | None:
        kept = self.kept_in(path[:path.rindex("/") + 1]).get(path)
        if (kept is None or kept[0] != size or kept[1] != mtime_ns or kept[2] != inode or kept[3] != ctime_ns
                or max(mtime_ns, ctime_ns) >= kept[4] - RACY_NS):
            return None
        item = decode_item(path, kept[6], kept[7], size, mtime_ns, inode, ctime_ns)
        self.hit.add(path)
        return item

    def put_many(self, items: list[Letter | Unreadable], data: list[bytes | None], ctimes: list[int]) -> None:
        for item, header, ctime_ns in zip(items, data, ctimes):
            digest = blake2b(header, digest_size=16).digest() if header is not None else None
            kept = self.kept_in(item.path[:item.path.rindex("/") + 1]).get(item.path)
            record = item_record(item)
            if digest is not None and kept is not None and kept[5] == digest and kept[6] == record:
                self.same.add(item.path)
            self.items[item.path] = item
            self.new[item.path] = (
                item.size, item.mtime_ns, item.inode, ctime_ns, self.began, digest, record, checksum(item.path, record))

    def row(self, item: Letter | Unreadable) -> tuple:
        path = item.path
        found = self.new.get(path)
        if found is None:  # read now, else kept (hit or vouched for)
            found = self.files.get(path)
            if found is None:
                raise Unusable(f"damaged: no row kept for {path}")
        return found

    def fresh(self, snapshot: Snapshot) -> bool:
        """Every file of the scan is one the store keeps, unchanged, and it keeps no other."""
        n = len(snapshot.letters) + len(snapshot.unreadable)
        return n == self.kept + len(self.hit) + len(self.same) == int(self.store.meta.get("files", -1))


class _KeptRecords:
    """The letters of the folders the store vouched for, decoded from its read
    transaction when asked (``core.lazy.KeptSource``). A record found damaged is said once
    and the store discarded; that letter is then read from its file (it stat-ed unchanged)."""

    def __init__(self, store: Store, root: str, id_time_is_utc: bool, notice: Notice) -> None:
        self.reader: Reader = store.lend()
        self.path = store.path
        self.root = root
        self.id_time_is_utc = id_time_is_utc
        self.notice = notice
        self._indexes: dict[str, dict[str, list[str]] | None] = {}
        self._headers: dict[str, dict] | None = None  # each folder's header fields ({}: not to be trusted)
        self._columns: dict[str, dict[str, tuple[list[str], list[int]]] | None] = {}

    def decode(self, pending: Pending) -> Letter | Unreadable:
        path, size, mtime_ns, inode, ctime_ns = pending
        try:
            rows = self.reader.rows("SELECT record, crc FROM files WHERE path = ?", (path,))
            if not rows:
                raise Damaged(f"no record kept for {path}")
            return decode_item(path, rows[0][0], rows[0][1], size, mtime_ns, inode, ctime_ns)
        except (Damaged, Unusable) as why:
            return self._from_file(pending, why, letter=False)

    def decode_folder(self, prefix: str, pending: list[Pending], of: int) -> list[Letter]:
        try:
            # more than half the folder: all of its records at once, by its range of paths
            # (measured at 6,000 letters a folder, the faster way from about half on)
            if 2 * len(pending) > of:
                kept = {path: (record, crc) for path, record, crc in self.reader.rows(
                    "SELECT path, record, crc FROM files WHERE path >= ? AND path < ?", (prefix, prefix[:-1] + "0"))}
            else:
                kept = _by_path(self.reader, "files", [p[0] for p in pending])
        except Unusable as why:
            return [self._from_file(p, why) for p in pending]  # type: ignore[misc]
        out = []
        for p in pending:
            path, size, mtime_ns, inode, ctime_ns = p
            found = kept.get(path)
            try:
                if found is None:
                    raise Damaged(f"no record kept for {path}")
                out.append(decode_item(path, found[0], found[1], size, mtime_ns, inode, ctime_ns))
            except Damaged as why:
                out.append(self._from_file(p, why))
        return out

    def _index(self, name: str) -> dict[str, list[str]] | None:
        """The index ``name``, read once; None when it is not to be trusted (said once):
        every letter is then looked at instead."""
        if name not in self._indexes:
            try:
                self._indexes[name] = read_index(self.reader, name)
            except Unusable as why:
                self._damaged(why)
                self._indexes[name] = None
        return self._indexes[name]

    def column(self, name: str) -> dict[str, tuple[list[str], list[int]]] | None:
        if name not in self._columns:  # read, and its shape checked, once
            self._columns[name] = self._column(name)
        return self._columns[name]

    def _column(self, name: str) -> dict[str, tuple[list[str], list[int]]] | None:
        if self._headers is None:
            try:
                self._headers = read_folder_indexes(self.reader, "headers")
            except Unusable as why:
                self._damaged(why)
                self._headers = {}
        if not self._headers:
            return None
        out = {}
        for prefix, found in self._headers.items():
            values, codes = found.get("values"), found.get(name)
            if not isinstance(values, list) or not isinstance(codes, list):
                return None
            if codes and (set(map(type, codes)) != {int} or min(codes) < 0 or max(codes) >= len(values)):
                return None  # each code must name one of the values
            out[prefix] = (values, codes)
        return out

    def paths_with(self, index: str, value: str) -> list[str] | None:
        found = self._index(index)
        if found is None:
            return None
        paths = found.get(value, [])
        return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else None

    def _from_file(self, pending: Pending, why: Exception, *, letter: bool = True):
        self._damaged(why)
        item = read_kept(self.root, pending, self.id_time_is_utc)
        if letter and type(item) is not Letter:
            from letterbox_tui.core.errors import LetterboxError

            raise LetterboxError(f"{_clean(pending[0])} changed while the letterbox was read: ask again")
        return item

    def _damaged(self, why: Exception) -> None:
        from .db import _remove

        self.notice(f"the store {_clean(self.path)} is damaged ({why}): answered from the letters")
        _remove(self.path)  # the next command builds it anew


#: paths named in one SQL statement
_CHUNK = 500


def _by_path(reader: Reader, table: str, paths: list[str]) -> dict[str, tuple[bytes, int]]:
    """path -> (record, crc) of the rows of ``table`` ("files", "answers") at ``paths``."""
    found: dict[str, tuple[bytes, int]] = {}
    for i in range(0, len(paths), _CHUNK):
        chunk = paths[i:i + _CHUNK]
        found.update((path, (record, crc)) for path, record, crc in reader.rows(
            f"SELECT path, record, crc FROM {table} WHERE path IN ({','.join('?' * len(chunk))})", tuple(chunk)))
    return found


class _KeptAnswers:
    """The answers records of the generation read, each read when first asked for (or
    ahead, for letters about to be asked about: ``warm``); all at once after ``BULK``
    single reads (a command that asks about most letters)."""

    BULK = 64

    def __init__(self, reader: Reader, count: int) -> None:
        self.reader = reader
        self.count = count
        self.asked = 0
        self.all: dict[str, tuple[bytes, int]] | None = None
        self.some: dict[str, tuple[bytes, int]] = {}

    def __len__(self) -> int:
        return self.count

    def warm(self, paths: list[str]) -> None:
        """Read the records of ``paths`` now, together (nearly all of them: every record at
        once; fewer by their paths, so that the others are not held)."""
        if self.all is None:
            todo = [p for p in paths if p not in self.some]
            try:
                if len(todo) > self.count * 3 // 4:
                    self._read_all()
                else:
                    self.some.update(_by_path(self.reader, "answers", todo))
            except Unusable as why:
                raise Damaged(str(why)) from None

    def get(self, path: str, default=None):
        found = self.some.get(path)
        if found is not None:
            return found
        if self.all is None:
            self.asked += 1
            try:
                if self.asked <= self.BULK:
                    rows = self.reader.rows("SELECT record, crc FROM answers WHERE path = ?", (path,))
                    return rows[0] if rows else default
                self._read_all()
            except Unusable as why:
                raise Damaged(str(why)) from None
        return self.all.get(path, default)

    def _read_all(self) -> None:
        """Every record of the generation, at once (``Unusable`` when it cannot be read)."""
        self.all = {p: (r, c) for p, r, c in self.reader.rows("SELECT path, record, crc FROM answers")}

    def pop(self, path: str, default=None):
        found = self.some.pop(path, None)
        if self.all is None:
            return default if found is None else found
        return self.all.pop(path, default)


class _Overlay(_KeptAnswers):
    """The answers records after a change: those resolved again (``mine``), and the kept
    ones of the generation read for the other letters."""

    def __init__(self, reader: Reader, count: int, mine: dict[str, tuple[bytes, int]]) -> None:
        super().__init__(reader, count)
        self.mine = mine

    def warm(self, paths: list[str]) -> None:
        super().warm([p for p in paths if p not in self.mine])

    def get(self, path: str, default=None):
        found = self.mine.get(path)
        return found if found is not None else super().get(path, default)

    def pop(self, path: str, default=None):
        found = self.mine.pop(path, None)
        other = super().pop(path, default)
        return found if found is not None else other


class _Once:
    """A notice that says one line per command, however many things went wrong."""

    def __init__(self, notice: Notice) -> None:
        self.notice = notice
        self.said = False

    def __call__(self, message: str) -> None:
        if not self.said:
            self.said = True
            self.notice(message)


def _parsed_alike(store: Store, id_time_is_utc: bool) -> bool:
    """The headers the store keeps were parsed with the same ``id_time_is_utc``, or it
    says nothing of it (``parsed_with``)."""
    from .db import parsed_with

    kept = parsed_with(store.meta.get("context", ""))
    return kept is None or kept == bool(id_time_is_utc)


def _discard(store: Store) -> None:
    from .db import _remove

    _remove(store.path)


def _clean(text: str) -> str:
    from .db import clean

    return clean(text)

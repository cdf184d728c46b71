"""The one derived store and its one entry: ``open_answers``.

Both faces (the command line, the app) and any later one get their answers here and
nowhere else. ``open_answers`` scans the letterbox with the store as its header cache (an
unchanged file costs a stat, never a parse); when every file the scan saw is one the
store's generation holds unchanged, and nothing else the answers rest on moved, the
answers are read back (``StoredAnswers``); otherwise they are computed by the resolver
and the store is rewritten with them, in this process, before they are returned.

The store is only ever an optimisation: one that cannot be found, opened, trusted or
written gives one notice line, and the answer comes from the letters.
"""

from __future__ import annotations

import os
import time
from hashlib import blake2b
from collections.abc import Iterable
from datetime import datetime

from letterbox_tui.core.answers import Answers
from letterbox_tui.core.model import Letter, Snapshot, Unreadable
from letterbox_tui.core.resolve import Resolution, resolve
from letterbox_tui.core.scan import RACY_NS, scan

from .db import Notice, Store, Unusable, context_of, default_notice
from .records import KEPT, Damaged, answers_checksum, answers_record, checksum, decode_item, item_record
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
) -> Answers:
    """Every derived answer over the letterbox at ``root``, at the clock ``at``.

    ``participants`` restricts the scan (the scope is then partial: such answers are
    computed, never kept); ``id_time_is_utc`` defaults to the letterbox's own setting;
    ``notice`` is given one line when the store cannot be used. Raises
    ``LetterboxError`` when ``root`` cannot be read.
    """
    notice = _Once(notice)
    root_real = os.path.realpath(os.fspath(root))
    answers = _answers(root, root_real, at, participants, id_time_is_utc, notice, use_store)
    from letterbox_tui.core.sync import status

    answers.snapshot.scope.sync = status(root_real)  # how current a copy kept in git is
    return answers


def _answers(root, root_real: str, at: datetime, participants, id_time_is_utc, notice: Notice,
             use_store: bool) -> Answers:
    if id_time_is_utc is None:
        from letterbox_tui.core.settings import load_settings

        id_time_is_utc = load_settings(root_real).id_time_is_utc
    began = time.time_ns()
    store = Store.open(root_real, notice) if use_store and "\x00" not in root_real else None
    if store is None:
        return resolve(scan(root, participants, id_time_is_utc=id_time_is_utc), at)
    try:
        cache = _HeaderCache(store, began)
        try:
            snapshot = scan(root, participants, id_time_is_utc=id_time_is_utc, cache=cache)
        except Damaged as why:
            notice(f"the store {_clean(store.path)} is damaged ({why}): answered from the letters")
            store.close()
            _discard(store)
            return resolve(scan(root, participants, id_time_is_utc=id_time_is_utc), at)
        scope = snapshot.scope
        whole = not scope.partial and scope.atomic
        context = context_of(snapshot, id_time_is_utc)
        if whole and cache.fresh(snapshot) and store.meta.get("context") == context:
            try:
                answers = _stored(store, snapshot, at, notice)
                if cache.same:  # the same headers under another stat: keep the stat now
                    _write(store, cache, snapshot, None, context)
                return answers
            except (Unusable, Damaged) as why:
                notice(f"the store {_clean(store.path)} is damaged ({why}): answered from the letters")
                store.close()
                _discard(store)  # the next command builds it anew
                return resolve(snapshot, at)
        res = resolve(snapshot, at)
        if whole and not _write(store, cache, snapshot, res, context) and store.broken:
            store.close()
            _discard(store)
        return res
    finally:
        store.close()


def _stored(store: Store, snapshot: Snapshot, at: datetime, notice: Notice) -> StoredAnswers:
    """The answers kept for ``snapshot``'s letters; each record's checksum is checked when
    the record is first read (``StoredAnswers``)."""
    kept = store.answers()
    if len(kept) != len(snapshot.letters):
        raise Damaged("it holds answers for another number of letters")

    path = store.path  # not the store: its files' rows are not kept alive by the answers

    def damaged(why: Damaged) -> None:
        from .db import _remove

        notice(f"the store {_clean(path)} is damaged ({why}): answered from the letters")
        _remove(path)  # the next command builds it anew

    return StoredAnswers(snapshot, at, kept, damaged)


def _write(store: Store, cache: _HeaderCache, snapshot: Snapshot, res: Resolution | None, context: str) -> bool:
    """Keep this scan's files and (``res``) the answers the resolver computed for them."""
    refused = store.refused()
    if refused is not None:  # said once here, and the records are not even made
        store.notice(f"the store {_clean(store.path)} is not written: {refused}")
        return False
    files = {item.path: cache.row(item) for item in (*snapshot.letters, *snapshot.unreadable)}
    answers = None
    if res is not None:
        answers = []
        for letter in snapshot.letters:
            found = {name: getattr(res, name)(letter) for name in KEPT}
            head = res.head(letter)
            record = answers_record(found, head.path if head is not None else "")
            answers.append((letter.path, record, answers_checksum(letter.path, record)))
    return store.write(files, answers, context)


class _HeaderCache:
    """The store as the scan's header cache (``core.scan.HeaderCache``).

    A file whose stat is the one kept, and that had not changed for ``RACY_NS`` when its
    header was read, is given back as kept without being read. Any other file is read; when
    its header's bytes are the ones kept (a touch, an edit of its body, a file that had
    just changed when read), it counts as unchanged all the same."""

    def __init__(self, store: Store, began: int) -> None:
        self.files = store.files
        self.began = began
        self.hit: set[str] = set()
        self.same: set[str] = set()
        self.new: dict[str, tuple] = {}

    def get(self, path: str, size: int, mtime_ns: int, inode: int, ctime_ns: int) -> Letter | Unreadable | None:
        kept = self.files.get(path)
        if (kept is None or kept[0] != size or kept[1] != mtime_ns or kept[2] != inode or kept[3] != ctime_ns
                or max(mtime_ns, ctime_ns) >= kept[4] - RACY_NS):
            return None
        item = decode_item(path, kept[6], kept[7], size, mtime_ns, inode, ctime_ns)
        self.hit.add(path)
        return item

    def put_many(self, items: list[Letter | Unreadable], data: list[bytes | None], ctimes: list[int]) -> None:
        files = self.files
        for item, header, ctime_ns in zip(items, data, ctimes):
            digest = blake2b(header, digest_size=16).digest() if header is not None else None
            kept = files.get(item.path)
            record = item_record(item)
            if digest is not None and kept is not None and kept[5] == digest and kept[6] == record:
                self.same.add(item.path)
            self.new[item.path] = (
                item.size, item.mtime_ns, item.inode, ctime_ns, self.began, digest, record, checksum(item.path, record))

    def row(self, item: Letter | Unreadable) -> tuple:
        path = item.path
        return self.files[path] if path in self.hit else self.new[path]

    def fresh(self, snapshot: Snapshot) -> bool:
        """Every file of the scan is one the store keeps, unchanged, and it keeps no other."""
        n = len(snapshot.letters) + len(snapshot.unreadable)
        return n == len(self.hit) + len(self.same) == len(self.files)


class _Once:
    """A notice that says one line per command, however many things went wrong."""

    def __init__(self, notice: Notice) -> None:
        self.notice = notice
        self.said = False

    def __call__(self, message: str) -> None:
        if not self.said:
            self.said = True
            self.notice(message)


def _discard(store: Store) -> None:
    from .db import _remove

    _remove(store.path)


def _clean(text: str) -> str:
    from .db import clean

    return clean(text)

"""What a generation keeps beside each file's row: the summary of each folder it vouches
for (``Store.folders``) and the indexes that find a letter without decoding the others
(``core.lazy``, ``core.resolve.depends``).

Both are made, and kept, folder by folder: each index of each folder is a row of its own,
named ``index:seat/folder/``. A generation written after a change keeps the rows of the
folders the scan vouched for as they are and makes only those of the folders it read: a
change costs the folders it touched, not every letter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from letterbox_tui.core.lazy import HEADER_ATTRS, HEADER_COLUMNS
from letterbox_tui.core.model import LEGACY_FLAGS, Letter
from letterbox_tui.core.resolve.depends import links
from letterbox_tui.core.scan import RACY_NS, stat_digest

from .db import row_name

#: "seat/inbox/" -> (digest of its files' stats, letters, legacy letters, names of its
#: unreadable files), as ``Store.folders``
Folders = dict[str, tuple[str, int, int, list[str]]]
#: the indexes kept as key -> paths (in scan order), one row per folder; beside them, also
#: by folder, "headers": the header fields ``core.lazy.HEADER_COLUMNS`` of each letter (the
#: values there, and each letter's as a position among them, in name order)
PATH_INDEXES = ("aliases", "threads", "links", "doubted")

_NO_THREADS: set[str] = set()


def entries(x: Letter) -> Iterator[tuple[str, str]]:
    """(index, key) of each place the letter ``x`` takes in the path indexes: its id when
    its file is not named by it (aliases), its thread label (threads), each id it points at
    (links: ``core.resolve.depends``) and, when it holds a malformed supersedes, the one key
    of the letters doing so (doubted)."""
    if x.name != x.id + ".md":
        yield "aliases", x.id
    if x.thread:
        yield "threads", x.thread
    if x.re or x.supersedes or x.disputes or x.rules_on or x.upholds:
        for key in set(links(x, _NO_THREADS)[1:]):
            yield "links", key
        if x.malformed and "supersedes" in x.malformed and x.supersedes:
            yield "doubted", ""


def made(rows: dict[str, dict[str, tuple]], letters: dict[str, list[Letter]], unreadable: dict[str, list[str]],
         *, racy_ns: int = RACY_NS) -> tuple[Folders, dict[str, str]]:
    """The summaries and the index rows (name -> JSON) of the folders ``rows`` (prefix ->
    path -> the file's row, as ``Store.files``), whose letters and unreadable files' names
    are ``letters`` and ``unreadable``. A folder is vouched for when each of its files had
    settled (not changed for ``racy_ns``) when read."""
    folders: Folders = {}
    out: dict[str, str] = {}
    for prefix, found in rows.items():
        in_folder = letters.get(prefix, ())
        summary = _summary(found, in_folder, unreadable.get(prefix, ()), racy_ns)
        if summary is not None:
            folders[prefix] = summary
        indexes: dict[str, dict[str, list[str]]] = {name: {} for name in PATH_INDEXES}
        for x in in_folder:
            for name, key in entries(x):
                indexes[name].setdefault(key, []).append(x.path)
        for name, found_paths in indexes.items():
            out[row_name(name, prefix)] = json_text(found_paths)
        values: dict[str, int] = {}
        code = values.setdefault
        headers: dict[str, list] = {name: [code(getattr(x, HEADER_ATTRS[name]), len(values)) for x in in_folder]
                                    for name in HEADER_COLUMNS}
        out[row_name("headers", prefix)] = json_text({"values": list(values), **headers})
    return folders, out


def _summary(rows: dict[str, tuple], letters: Iterable[Letter], unreadable: Iterable[str], racy_ns: int
             ) -> tuple[str, int, int, list[str]] | None:
    """The summary of a folder whose files are ``rows`` (path -> row), when each of them had
    settled when read (else None: the next scan reads it file by file)."""
    stats = []
    for path, (size, mtime_ns, inode, ctime_ns, seen_ns, *_) in rows.items():
        if max(mtime_ns, ctime_ns) >= seen_ns - racy_ns:
            return None
        stats.append((path.rpartition("/")[2], size, mtime_ns, inode, ctime_ns))
    stats.sort()
    n = legacy = 0
    for x in letters:
        n += 1
        if x.flags and not LEGACY_FLAGS.isdisjoint(x.flags):
            legacy += 1
    return stat_digest([s[0] for s in stats], [v for s in stats for v in s[1:]]), n, legacy, sorted(unreadable)


def json_text(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

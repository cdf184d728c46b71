"""``check --verify``: re-read every letter file and compare it with what the derived
header cache gave, for what no ``stat`` can show (a damaged or tampered cache row)."""

from __future__ import annotations

import os
import stat

from .. import flags as fsflags
from letterbox_tui.core.header import parse_header
from letterbox_tui.core.letters import build, letters_equal
from letterbox_tui.core.model import Snapshot
from letterbox_tui.core.reader import read_header_bytes

from .cache import cache_path, header_hash, read_cache_file, write_cache_file


def verify_cache(root: str | os.PathLike[str], snapshot: Snapshot, *, id_time_is_utc: bool | None = None) -> list[str]:
    """Re-read every letter file of ``snapshot`` and list the paths the cache got wrong.

    A path is listed when its header bytes no longer hash to what the cache recorded, or
    when parsing the file now gives another letter than the snapshot holds (the snapshot
    may have come from a stale row). Those rows are dropped from the cache file, so the
    next scan re-reads them. For ``check --verify``.
    """
    real = os.path.realpath(os.fspath(root))
    if id_time_is_utc is None:
        from letterbox_tui.core.settings import load_settings

        id_time_is_utc = load_settings(real).id_time_is_utc
    cache_file = cache_path(real, id_time_is_utc)
    parsed = read_cache_file(cache_file, real, id_time_is_utc)
    rows, hashes = parsed if parsed is not None else ({}, {})
    stale: list[str] = []
    dir_fds: dict[str, int] = {}
    flags = fsflags.DIR
    try:
        for item in [*snapshot.letters, *snapshot.unreadable]:
            rel = item.path
            seat_folder, _, name = rel.rpartition("/")
            fresh: bytes | None = None
            try:
                dfd = dir_fds.get(seat_folder)
                if dfd is None:
                    seat, folder = seat_folder.split("/")
                    sfd = os.open(seat, flags, dir_fd=_root_fd(dir_fds, real, flags))
                    try:
                        dfd = dir_fds[seat_folder] = os.open(folder, flags, dir_fd=sfd)
                    finally:
                        os.close(sfd)
                fd = os.open(name, fsflags.READ, dir_fd=dfd)
                try:
                    st = os.fstat(fd)
                    if stat.S_ISREG(st.st_mode):
                        fresh = read_header_bytes(fd)
                finally:
                    os.close(fd)
            except OSError:
                fresh = None
            if fresh is None:
                stale.append(rel)
                continue
            recorded = hashes.get(rel)
            if recorded is not None and recorded != header_hash(fresh):
                stale.append(rel)
                continue
            now_item = build(
                parse_header(fresh), path=rel, seat=item.seat, folder=item.folder, name=name,
                size=item.size, mtime_ns=item.mtime_ns, inode=item.inode, id_time_is_utc=id_time_is_utc,
            )
            if not letters_equal(now_item, item):
                stale.append(rel)
    finally:
        for fd in dir_fds.values():
            os.close(fd)
    if stale and parsed is not None:
        for rel in stale:
            rows.pop(rel, None)
            hashes.pop(rel, None)
        try:
            write_cache_file(cache_file, real, id_time_is_utc, rows, hashes)
        except OSError:
            pass
    return sorted(stale)


def _root_fd(dir_fds: dict[str, int], root: str, flags: int) -> int:
    fd = dir_fds.get("")
    if fd is None:
        fd = dir_fds[""] = os.open(root, flags)
    return fd

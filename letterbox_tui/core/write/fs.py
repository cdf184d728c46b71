"""The write gate's file system: folders opened without following symlinks, publication
by hidden temporary and exclusive link, the move to ``processed/`` and the sidecar's removal.
Nothing here rewrites or deletes a letter, or writes into another seat's ``processed/``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .. import flags as fsflags
from ..errors import LetterboxError
from ..files import read_file
from ..grammar import valid_seat
from ..header import MAX_HEADER, body_offset
from ..replace import forget, replace_in, write_temporary
from ..temporaries import sweep_own

_DIR_FLAGS = fsflags.DIR

def open_dir(root: Path, *parts: str) -> int:
    """Open ``root/parts...`` as a directory, following no symlink below the root."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise LetterboxError(f"cannot open {root}: {exc.strerror}") from None
    for part in parts:
        try:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            os.close(fd)
            raise LetterboxError(f"cannot open {root.joinpath(*parts)}: {exc.strerror}") from None
        os.close(fd)
        fd = nxt
    return fd


def publish_bytes(root: Path, folder: tuple[str, ...], name: str, data: bytes) -> None:
    """Publish ``data`` as ``root/folder/name``: hidden temporary, fsync, exclusive link.

    Raises ``FileExistsError`` when ``name`` exists (it is never overwritten); a reader
    sees either no file or the whole file.
    """
    dfd = open_dir(root, *folder)
    try:
        tmp = write_temporary(dfd, name, data)
        try:
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        finally:
            forget(dfd, tmp)
        os.fsync(dfd)
        sweep_own(dfd)  # our own temporaries a killed writer left here over a day ago
    finally:
        os.close(dfd)


def replace_bytes(root: Path, folder: tuple[str, ...], name: str, data: bytes) -> None:
    """Replace ``root/folder/name`` with ``data`` the protocol's way for metadata (the ack
    sidecar, the status note): ``core.replace`` through the folder opened without following
    a symlink below the root. Never used for a letter (letters are never rewritten)."""
    dfd = open_dir(root, *folder)
    try:
        replace_in(dfd, name, data, mode=0o644)
        sweep_own(dfd)
    finally:
        os.close(dfd)


def exists(root: Path, folder: tuple[str, ...], name: str) -> bool:
    try:
        os.lstat(root.joinpath(*folder, name))
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


#: the largest existing reply body compared when a reply is retried
_COMPARED_BODY = 16 * 1024 * 1024


def read_body(path: Path) -> bytes | None:
    """The body of a letter file (after the closing delimiter), or None when it cannot be
    read whole: not a regular file, a symlink, no closing delimiter, or over 16 MiB.
    Read through ``core.files`` (never follows the link, never blocks on a FIFO)."""
    f = read_file(path.parent, path.name, keep=_COMPARED_BODY + MAX_HEADER + 8, hashing=False)
    if f.error is not None or f.truncated:
        return None
    data = f.data.replace(b"\r\n", b"\n")
    start = body_offset(data)
    return None if start is None else data[start:]


def move_to_processed(root: Path, seat: str, name: str) -> bool:
    """Move ``seat/inbox/name`` to ``seat/processed/name`` (rename within the seat).

    Never overwrites: a different file already in ``processed/`` under that name is a
    refusal. Returns False when the letter was already moved (a retry converging).
    """
    src = root / seat / "inbox" / name
    dst = root / seat / "processed" / name
    try:
        src_st = os.lstat(src)
    except FileNotFoundError:
        if os.path.lexists(dst):
            return False
        raise LetterboxError(f"{seat}/inbox/{name} is gone") from None
    try:
        dst_st = os.lstat(dst)
    except FileNotFoundError:
        dst_st = None
    if dst_st is not None:
        if (dst_st.st_dev, dst_st.st_ino) == (src_st.st_dev, src_st.st_ino):
            os.unlink(src)
            _fsync_dirs(root, seat)
            return True
        raise LetterboxError(f"{seat}/processed/{name} already exists; not overwriting it")
    fd = open_dir(root, seat, "processed")  # refuses a symlinked processed/
    os.close(fd)
    os.rename(src, dst)
    _fsync_dirs(root, seat)
    return True


def _fsync_dirs(root: Path, seat: str) -> None:
    for folder in ("inbox", "processed"):
        try:
            fd = open_dir(root, seat, folder)
        except LetterboxError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_sidecar(root: Path, seat: str, name: str) -> None:
    try:
        os.unlink(root / seat / "inbox" / (name + ".ack"))
    except FileNotFoundError:
        pass


# --- init ------------------------------------------------------------------------------


def init_letterbox(directory: str | os.PathLike[str], seats: Iterable[str]) -> list[str]:
    """Create a letterbox the protocol's tools accept; idempotent, never deletes.

    Returns the relative paths it created.
    """
    names = [s.strip() for s in seats]
    if not names or any(not n for n in names):
        raise LetterboxError("--seats needs one or more seat names, comma-separated")
    for name in names:
        if not valid_seat(name):
            raise LetterboxError(f"{name!r} is not a seat name ([a-z][a-z0-9-]*, not 'locks')")
    root = Path(directory)
    if os.path.lexists(root) and not root.is_dir():
        raise LetterboxError(f"{root} exists and is not a directory")
    from ..root import is_letterbox

    for outer in Path(os.path.abspath(root)).parents:
        if is_letterbox(outer):  # (read there as an entry the layout does not hold)
            raise LetterboxError(f"{root} lies inside the letterbox {outer}: make it outside that one")
    wanted = ["locks"] + [f"{n}/{f}" for n in dict.fromkeys(names) for f in ("inbox", "processed")]
    for rel in wanted:
        cur = root
        for part in rel.split("/"):
            cur = cur / part
            if cur.is_symlink() or (os.path.lexists(cur) and not cur.is_dir()):
                raise LetterboxError(f"{cur} exists and is not a plain directory")
    created = []
    try:
        root.mkdir(parents=True, exist_ok=True)
        for rel in wanted:
            path = root / rel
            if not path.is_dir():
                path.mkdir(parents=True, exist_ok=True)
                created.append(rel)
    except OSError as exc:
        raise LetterboxError(f"cannot create {root}: {exc.strerror}") from None
    return created

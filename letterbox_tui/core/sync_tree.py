"""``sync``'s update of the working tree with what the upstream brought (step 4).

Every check is made before the first change: a file to be added that exists here with
other bytes, a file to be changed or removed that differs here from what was committed,
is a refusal with nothing changed. Then each new file is written the protocol's way (a
hidden temporary, fsync, an exclusive link: a reader never sees half a letter), a changed
file is replaced by rename, a removed one unlinked. A letter the upstream moved or closed
is not touched while a local writer holds its lifecycle lock (the protocol's lock, taken
as a writer takes it, in name order; ``core.write.lifecycle``).
"""

from __future__ import annotations

import os
import stat
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from . import flags as fsflags
from .sync import Repo, SyncError
from .sync_losses import Change, Loss, letter_losses, tree_changes
from .sync import user_git as git  # sync's steps run the user's hooks, as git does
from .replace import forget, replace_in, write_temporary

ZERO = "0" * 40
#: how long the update waits for a letter's lifecycle lock (a writer holds it briefly)
LOCK_LETTER_WAIT = 10.0


class LettersRefused(SyncError):
    """The upstream deleted or rewrote letters this copy holds: nothing was changed."""

    def __init__(self, losses: list[Loss]) -> None:
        self.losses = losses
        n = len(losses)
        super().__init__("")
        self.message = (  # one line per letter
            f"the remote deleted or rewrote {n} letter{'s' if n != 1 else ''} this copy holds; letters are "
            "never deleted or rewritten, so nothing here changed:"
            + "".join(f"\n  {loss.line()}" for loss in losses)
            + "\nsync --restore-letters takes the remote's other changes and commits these letters back as they were")


def update_tree(repo: Repo, old: str | None, new: str | None, *, restore: bool = False) -> TreeUpdate:
    """Make the working tree hold ``new`` where it held ``old`` (the upstream's changes),
    every check made before the first change. A failure part way (a lock not given in
    time) puts back what was changed.
    A letter this copy holds that ``new`` deletes or rewrites is never touched here:
    ``LettersRefused`` (nothing changed), or with ``restore`` kept as it is (the caller
    commits it back)."""
    assert new is not None
    if old is None:
        raw = git(repo, "ls-tree", "-r", "-z", "--full-tree", new).stdout
        changes = []
        for entry in raw.decode("utf-8", "surrogateescape").split("\0"):
            if entry:
                meta, path = entry.split("\t", 1)
                mode, _, sha = meta.split()
                changes.append(("000000", mode, ZERO, sha, "A", path))
        kept: list[Loss] = []
    else:
        changes = tree_changes(repo, old, new)
        kept = letter_losses(repo, changes, old, new)
        if kept and not restore:
            raise LettersRefused(kept)
        skip = {loss.top_path for loss in kept}
        changes = [c for c in changes if c[5] not in skip]
    if not changes:
        return TreeUpdate([], kept)
    if any(m not in ("000000", "100644", "100755") for c in changes for m in c[:2]):
        # a symlink or submodule among the changes: git writes those itself
        if kept:
            raise SyncError("update: a symlink or submodule arrives beside letters to restore; "
                            "nothing was changed (sync again without --restore-letters)")
        git(repo, "read-tree", "-m", "-u", old or new, new)
        return TreeUpdate([c[5] for c in changes], kept, None)
    _check_tree(repo, changes)  # every check before the first change
    applied: list[Applied] = []
    try:
        for batch in _batches(repo, changes):
            with ExitStack() as held:
                # a letter moved or closed by the upstream is not touched while a local
                # writer holds its lifecycle lock (a reply or a move in progress here): the
                # protocol's lock, taken as a writer takes it, in name order, a batch at a
                # time (each holds a descriptor): again checked under the locks
                for seat_dir, name in sorted({_letter_of(repo, c[5]) for c in batch} - {None}):
                    held.enter_context(_lifecycle(seat_dir, name))
                _check_tree(repo, batch)
                _apply(repo, batch, applied)
    except BaseException:
        undo_tree(repo, applied)
        raise
    return TreeUpdate([c[5] for c in changes], kept, applied)


#: letters whose lifecycle locks are held at once (each holds a descriptor of its inbox)
BATCH = 256


@dataclass
class TreeUpdate:
    """What ``update_tree`` did: the paths it changed, the letters it kept (``restore``),
    and how to put back what it changed (``undo_tree``; None: git wrote it, no undo)."""

    paths: list[str]
    kept: list[Loss] = field(default_factory=list)
    applied: list[Applied] | None = field(default_factory=list)


#: one change made to the working tree: (path from the top, the bytes and mode it held
#: before: None when it did not exist)
Applied = tuple[str, "bytes | None", int]


def _batches(repo: Repo, changes: list[Change]) -> list[list[Change]]:
    """``changes`` in batches of at most ``BATCH`` letters, a letter's changes (its move
    from ``inbox/`` to ``processed/``, its sidecar) in one batch."""
    by_letter: dict[object, list[Change]] = {}
    for c in changes:
        by_letter.setdefault(_letter_of(repo, c[5]) or c[5], []).append(c)
    groups = list(by_letter.values())
    return [[c for g in groups[i:i + BATCH] for c in g] for i in range(0, len(groups), BATCH)]


def undo_tree(repo: Repo, applied: list[Applied] | None) -> None:
    """Put back, newest first, what ``update_tree`` changed (a refusal after it, such as a
    hook refusing the HEAD update, leaves the tree as it was)."""
    for path, data, mode in reversed(applied or []):
        full = os.path.join(repo.top, path)
        try:
            if data is None:
                os.unlink(full)
            else:
                _publish(full, data, mode, replace=True)
        except OSError:
            pass


def _letter_of(repo: Repo, path: str) -> tuple[str, str] | None:
    """(the seat's directory, ``<id>.md``) when ``path`` is a letter or its sidecar whose
    seat has an inbox here, else None."""
    if not repo.inside(path):
        return None
    parts = repo.local(path).split("/")
    if len(parts) != 3 or parts[1] not in ("inbox", "processed"):
        return None
    name = parts[2].removesuffix(".ack")
    seat_dir = os.path.join(repo.top, repo.prefix, parts[0])
    if not name.endswith(".md") or name.startswith(".") or not os.path.isdir(os.path.join(seat_dir, "inbox")):
        return None
    return seat_dir, name


def _lifecycle(seat_dir: str, name: str):
    from pathlib import Path

    from .errors import LetterboxError
    from .write.lifecycle import lifecycle_lock

    @contextmanager
    def held():
        try:
            with lifecycle_lock(Path(seat_dir) / "inbox", name, timeout=LOCK_LETTER_WAIT):
                yield
        except LetterboxError as exc:
            if isinstance(exc, SyncError):
                raise
            raise SyncError(f"update: {exc}; nothing was changed, sync again") from None

    return held()


def _apply(repo: Repo, changes: list[Change], applied: list[Applied]) -> None:
    """Make each change in the working tree, each noted in ``applied`` (for ``undo_tree``)
    as it is made. The new bytes come from one ``git cat-file --batch``."""
    blobs = _blobs(repo, [c[3] for c in changes if c[4] != "D"])
    for m1, m2, s1, s2, kind, path in changes:
        full = os.path.join(repo.top, path)
        before = _held(full)
        if kind == "D":
            try:
                os.unlink(full)
            except FileNotFoundError:
                continue
            applied.append((path, *before))  # type: ignore[arg-type]
            continue
        mode = int(m2, 8) & 0o777
        if kind == "A" and before[0] is not None:
            continue  # the same file arrived here too (checked identical)
        if _publish(full, blobs[s2], mode, replace=kind != "A"):
            applied.append((path, *before))  # type: ignore[arg-type]


def _held(full: str) -> tuple[bytes | None, int]:
    """(the bytes at ``full``, its mode), (None, 0) when there is no file."""
    try:
        fd = os.open(full, fsflags.READ)
    except FileNotFoundError:
        return None, 0
    try:
        with os.fdopen(fd, "rb") as f:
            return f.read(), os.fstat(f.fileno()).st_mode & 0o777
    except OSError:
        return None, 0


def _blobs(repo: Repo, shas: list[str]) -> dict[str, bytes]:
    """Each blob's bytes, read by one ``git cat-file --batch``."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    raw = git(repo, "cat-file", "--batch", input="".join(f"{sha}\n" for sha in wanted).encode()).stdout
    out: dict[str, bytes] = {}
    pos = 0
    for sha in wanted:
        end = raw.index(b"\n", pos)
        header = raw[pos:end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise SyncError(f"update: git has no blob {sha}; nothing more was changed")
        size = int(header[2])
        out[sha] = raw[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return out


def _check_tree(repo: Repo, changes: list[tuple[str, str, str, str, str, str]]) -> None:
    """Refuse (before any change) when a path to be changed was changed here too: a file
    to be added exists with other bytes, a file to be changed or removed differs from
    what was committed."""
    expect: dict[str, str] = {}
    for m1, m2, s1, s2, kind, path in changes:
        full = os.path.join(repo.top, path)
        if kind == "A":
            if os.path.lexists(full):
                expect[path] = s2  # the same file arrived here too: fine when identical
        elif os.path.lexists(full):
            expect[path] = s1
        elif kind != "D":
            raise SyncError(f"conflict with the remote on {repo.local(path) if repo.inside(path) else path}: "
                            "removed here, changed there; nothing was rebased, this copy is as it was")
    if not expect:
        return
    paths = list(expect)
    for p in paths:
        if not stat.S_ISREG(os.lstat(os.path.join(repo.top, p)).st_mode):
            raise SyncError(f"update: {p} is not a regular file here; nothing was changed")
    hashes = git(repo, "hash-object", "--no-filters", "--stdin-paths",
                 input="".join(p + "\n" for p in paths).encode("utf-8", "surrogateescape")).stdout.decode().split()
    bad = [p for p, h in zip(paths, hashes) if h != expect[p]]
    if bad:
        shown = ", ".join(repo.local(p) if repo.inside(p) else p for p in bad[:5])
        raise SyncError(f"conflict with the remote on {shown}: changed here and there; "
                        "nothing was rebased, this copy is as it was")


def _publish(path: str, data: bytes, mode: int, *, replace: bool) -> bool:
    """Write ``data`` at ``path`` as the protocol publishes: a hidden temporary, fsync,
    then an exclusive link (a new file) or a rename (a changed one). False when a new
    file was there already (the same file arrived meanwhile)."""
    folder, name = os.path.split(path)
    os.makedirs(folder, exist_ok=True)
    dfd = os.open(folder, fsflags.DIR)
    try:
        if replace:
            replace_in(dfd, name, data, mode=mode or 0o644)
            return True
        tmp = write_temporary(dfd, name, data, mode or 0o644)
        try:
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        except FileExistsError:
            return False  # the same file arrived here meanwhile (checked identical above)
        finally:
            forget(dfd, tmp)
        return True
    finally:
        os.close(dfd)

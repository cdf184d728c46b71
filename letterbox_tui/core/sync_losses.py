"""Letters another machine deleted or rewrote in place (SPEC 4: letters are append-only).

``sync`` never applies such a change to this copy's letters (``core.sync_tree`` refuses, or
with ``--restore-letters`` commits them back); ``check`` reports what the upstream, as last
fetched, would take away (``remote_losses``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .sync import Repo, find_repo
from .sync_git import git


#: one change of a tree diff: (old mode, new mode, old blob, new blob, kind A/D/M, path)
Change = tuple[str, str, str, str, str, str]


@dataclass(frozen=True)
class Loss:
    """A letter this copy holds that the other side deleted or rewrote in place (letters
    are append-only, SPEC 4: never applied here)."""

    path: str  #: the letter's path in the letterbox
    kind: str  #: "deleted" or "rewritten"
    commit: str  #: the commit that did it
    author: str  #: its author, "Name <email>"
    top_path: str = ""  #: the path from the work tree's top

    @property
    def letter(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")

    def line(self) -> str:
        return f"{self.path} {self.kind} on {self.commit[:12]} by {self.author}"


def tree_changes(repo: Repo, old: str, new: str) -> list[Change]:
    """Every file ``new`` changes from ``old`` (no rename detection)."""
    raw = git(repo, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new).stdout
    items = raw.decode("utf-8", "surrogateescape").split("\0")
    changes = []
    for meta, path in zip(items[0::2], items[1::2]):
        if meta:
            m1, m2, s1, s2, kind = meta.lstrip(":").split()
            changes.append((m1, m2, s1, s2, kind[0], path))
    return changes


def _letter_path(repo: Repo, path: str) -> tuple[str, str] | None:
    """(its seat, its file name) when ``path`` (from the top) is a letter in a seat's
    ``inbox/`` or ``processed/``, else None."""
    if not repo.inside(path):
        return None
    parts = repo.local(path).split("/")
    if len(parts) != 3 or parts[1] not in ("inbox", "processed") or not parts[2].endswith(".md") \
            or parts[2].startswith("."):
        return None
    return parts[0], parts[2]


def letter_halves(repo: Repo, path: str) -> tuple[str, str] | None:
    """(its ``inbox/`` path, its ``processed/`` path), both from the top, when ``path`` (from
    the top) is a letter in a seat's ``inbox/`` or ``processed/``, else None: the two places
    one letter lies, before and after its owner moves it (one rename, inbox to processed)."""
    where = _letter_path(repo, path)
    if where is None:
        return None
    top = f"{repo.prefix}/" if repo.prefix else ""
    seat, name = where
    return f"{top}{seat}/inbox/{name}", f"{top}{seat}/processed/{name}"


def other_half(repo: Repo, path: str) -> str | None:
    """The letter at ``path`` (from the top) in its seat's other folder, None for no letter."""
    halves = letter_halves(repo, path)
    return None if halves is None else halves[halves[0] == path]


def letter_losses(repo: Repo, changes: list[Change], old: str, new: str) -> list[Loss]:
    """The letters ``changes`` (``old`` to ``new``) would delete or rewrite in place that this
    copy holds: a letter removed with no copy of the same bytes under its name in its
    seat's other folder in ``new`` (a move to ``processed/`` is no loss, whether its new
    half arrives in these changes or was there already: a commit made between a move's
    steps, or by a mover that links then unlinks, holds both), a letter whose bytes change.
    Each with the newest commit in ``old..new`` that deleted or changed it."""
    in_new = {c[5]: c[3] for c in changes if c[4] in ("A", "M")}
    lost: dict[str, str] = {}
    removed: dict[str, str] = {}  # a letter removed: its blob, by path
    for m1, m2, s1, s2, kind, path in changes:
        if kind not in ("D", "M") or _letter_path(repo, path) is None \
                or not os.path.lexists(os.path.join(repo.top, path)):
            continue
        if kind == "M" and s1 == s2:
            continue  # its mode alone
        lost[path] = "rewritten" if kind == "M" else "deleted"
        if kind == "D":
            removed[path] = s1
    halves = {p: other_half(repo, p) for p in removed}
    unseen = [h for h in halves.values() if h is not None and h not in in_new]
    in_new.update(_blobs_at(repo, new, unseen))
    for path, blob in removed.items():
        there = in_new.get(halves[path] or "")
        if there == blob:
            del lost[path]  # moved between its seat's folders, the same bytes
        elif there is not None:
            lost[path] = "rewritten"
    if not lost:
        return []
    # a letter put back as it first arrived (another copy's ``--restore-letters``) is no
    # rewrite: it undoes one
    rewrites = {c[5]: c[3] for c in changes if c[5] in lost and c[4] == "M"}
    for path, blob in _first_blobs(repo, new, list(rewrites)).items():
        if rewrites[path] == blob:
            del lost[path]
    if not lost:
        return []
    spec = f":(top,literal){repo.prefix}" if repo.prefix else ":/"
    done = git(repo, "log", "-z", "--no-renames", "--diff-filter=DM", "--name-only",
               "--format=%x01%H%x00%an <%ae>", f"{old}..{new}", "--", spec, check=False)
    by: dict[str, tuple[str, str]] = {}
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\x01"):
        if not entry:
            continue
        commit, author, rest = (entry.split("\0", 2) + ["", ""])[:3]
        for p in rest.lstrip("\n").split("\0"):
            if p in lost and p not in by:
                by[p] = (commit, "".join(c for c in author if c.isprintable()))
    return [Loss(repo.local(p), kind, *by.get(p, (new, "unknown")), top_path=p) for p, kind in sorted(lost.items())]


#: paths named on one ``git ls-tree`` command line
_PATHS_PER_CALL = 500


def _blobs_at(repo: Repo, commit: str, paths: list[str]) -> dict[str, str]:
    """The blob of each of ``paths`` (from the top) that ``commit`` holds (absent: not held)."""
    out: dict[str, str] = {}
    for i in range(0, len(paths), _PATHS_PER_CALL):
        listed = git(repo, "ls-tree", "-z", "--full-tree", commit, "--",
                     *(f":(top,literal){p}" for p in paths[i:i + _PATHS_PER_CALL])).stdout
        for entry in listed.decode("utf-8", "surrogateescape").split("\0"):
            if entry:
                meta, path = entry.split("\t", 1)
                out[path] = meta.split()[2]
    return out


def _first_blobs(repo: Repo, commit: str, paths: list[str]) -> dict[str, str]:
    """The bytes (blob) each of ``paths`` had when it was first added in ``commit``'s history."""
    if not paths:
        return {}
    done = git(repo, "log", "-z", "--no-renames", "--no-abbrev", "--diff-filter=A", "--raw", "--format=", commit, "--",
               *(f":(top,literal){p}" for p in paths), check=False)
    out: dict[str, str] = {}
    items = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    for meta, path in zip(items[0::2], items[1::2]):
        if meta.lstrip("\n").startswith(":"):
            out[path] = meta.split()[3]  # newest first: the oldest addition wins
    return out


def remote_losses(root: str | os.PathLike[str]) -> list[Loss]:
    """The letters the upstream, as last fetched, deleted or rewrote that this copy holds
    (what ``sync`` refuses to apply; ``check`` reports them). Empty outside git, without
    an upstream, or when nothing is lost."""
    repo = find_repo(root)
    if repo is None:
        return []
    up = git(repo, "rev-parse", "-q", "--verify", "@{upstream}^{commit}", check=False)
    upstream = up.stdout.decode().strip()
    if up.returncode != 0 or not upstream:
        return []
    base = git(repo, "merge-base", "HEAD", upstream, check=False).stdout.decode().strip()
    if not base or base == upstream:
        return []
    return letter_losses(repo, tree_changes(repo, base, upstream), base, upstream)

"""Provenance from git history: the commit that first brought each letter here (SPEC 9).

One ``git log`` walk answers for every letter a command shows (``added_all``). In a shallow
clone, a letter older than the cut has no known arrival: every field is None and
``unknown`` says why, rather than naming the cut as its arrival.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any

from .sync import Repo, find_repo
from .sync_git import git


def added(root: str | os.PathLike[str], path: str) -> dict[str, Any] | None:
    """The commit that first brought the letter at ``path`` (relative to the letterbox) into
    the repository — under the same name in its seat's ``inbox/`` or ``processed/``, so a
    filed letter is traced to its arrival — as ``{"commit", "committed_at", "author",
    "machine"}``: None outside git or before it is committed. ``machine`` is the
    ``Machine:`` line ``sync`` writes in its commits, else the host of the author's e-mail
    address when it has one. Facts beside the letter's own ``sent``: a late arrival shows.
    In a shallow clone whose history is cut before the letter's arrival, every field is
    None and ``unknown`` says why (the cut is not an arrival)."""
    return added_all(root, [path]).get(path)


#: past this many letters, the walk lists every arrival under the letterbox and picks
#: (the pathspecs would be longer than a command line should be)
_SPEC_LIMIT = 256


def added_all(root: str | os.PathLike[str], paths: list[str]) -> dict[str, dict[str, Any] | None]:
    """``added`` for each of ``paths``, from one walk of the history (one ``git log``
    whatever the number of letters)."""
    repo = find_repo(root)
    if repo is None:
        return {p: None for p in paths}
    base = repo.prefix + "/" if repo.prefix else ""
    names: dict[str, list[str]] = {}  # each path: its names from the top (inbox and processed)
    for path in paths:
        parts = path.split("/")
        local = [path]
        if len(parts) == 3 and parts[1] in ("inbox", "processed"):
            local = [f"{parts[0]}/{folder}/{parts[2]}" for folder in ("inbox", "processed")]
        names[path] = [base + n for n in local]
    every = sorted({n for ns in names.values() for n in ns})
    specs = [f":(top,literal){n}" for n in every] if len(every) <= _SPEC_LIMIT else \
        [f":(top,literal){repo.prefix}" if repo.prefix else ":/"]
    # a letter HEAD holds under neither name was never committed (letters are never
    # removed): one tree lookup spares it the walk
    held_raw = git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD", "--", *specs, check=False)
    if held_raw.returncode != 0:
        return {p: None for p in paths}
    held = set(held_raw.stdout.decode("utf-8", "surrogateescape").split("\0"))
    wanted = {p: ns for p, ns in names.items() if any(n in held for n in ns)}
    out: dict[str, dict[str, Any] | None] = {p: None for p in paths}
    if not wanted:
        return out
    # --remove-empty: the walk ends where none of the names is in the tree yet (a letter is
    # never removed, so nothing older can have brought it)
    done = git(repo, "log", "-z", "--diff-filter=A", "--no-renames", "--name-only", "--remove-empty",
               "--format=%x01%H%x00%cI%x00%an <%ae>%x00%B%x02", "--", *specs, check=False)
    if done.returncode != 0:
        return out
    first: dict[str, tuple[str, str, str, str]] = {}  # each name from the top: its oldest arrival
    for entry in done.stdout.decode("utf-8", "replace").split("\x01"):
        head, sep, listed = entry.partition("\x02")
        if not sep:
            continue
        commit, at, author, body = head.split("\0", 3)
        for n in listed.split("\0"):
            n = n.strip("\n")
            if n:
                first[n] = (commit, at, author, body)  # newest first: the oldest stays
    cut = _shallow(repo)
    for path, ns in wanted.items():
        arrivals = [first[n] for n in ns if n in first]
        if not arrivals:
            continue
        commit, at, author, body = min(arrivals, key=lambda e: e[1])  # the earlier name: its arrival
        if commit in cut:
            out[path] = {"commit": None, "committed_at": None, "author": None, "machine": None,
                         "unknown": f"this clone is shallow: its history is cut at {commit[:12]} "
                                    f"({_utc(at)}), so when this letter arrived is not known here"}
            continue
        machine = None
        for line in body.splitlines():
            if line.startswith("Machine: "):
                machine = line[len("Machine: "):].strip() or None
        if machine is None and "@" in author:
            machine = author.rsplit("@", 1)[1].rstrip(">") or None
        out[path] = {"commit": commit, "committed_at": _utc(at), "author": author, "machine": machine}
    return out


def _utc(at: str) -> str:
    return datetime.fromisoformat(at).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _shallow(repo: Repo) -> frozenset[str]:
    """The commits a shallow clone's history is cut at (its ``shallow`` file); empty when
    the clone is whole."""
    try:
        with open(os.path.join(repo.common_dir, "shallow"), encoding="ascii") as f:
            return frozenset(line.strip() for line in f if line.strip())
    except (OSError, UnicodeError):
        return frozenset()

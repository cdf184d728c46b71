"""Provenance from git history: the commit that first brought each letter here (SPEC 9).

One listing of the history answers for every letter a command shows (``added_all``): each
letter's arrival is found by bisecting it, never by walking every commit's change to its
folder. In a shallow
clone, a letter older than the cut has no known arrival: every field is None and
``unknown`` says why, rather than naming the cut as its arrival.
"""

from __future__ import annotations

import os
import re
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
    """``added`` for each of ``paths``, from one listing of the history whatever the
    number of letters (``_arrivals``)."""
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
    # removed): one tree lookup spares it the search
    held_raw = git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD", "--", *specs, check=False)
    if held_raw.returncode != 0:
        return {p: None for p in paths}
    held = set(held_raw.stdout.decode("utf-8", "surrogateescape").split("\0"))
    wanted = {p: ns for p, ns in names.items() if any(n in held for n in ns)}
    out: dict[str, dict[str, Any] | None] = {p: None for p in paths}
    if not wanted:
        return out
    try:
        brought = _arrivals(repo, wanted)
    except _NoHistory:
        return out
    listed = sorted(set(brought.values()))
    shown = git(repo, "log", "--no-walk=unsorted", "-z", "--format=%x01%H%x00%cI%x00%an <%ae>%x00%B%x02",
                *listed, "--", check=False) if listed else None
    if shown is not None and shown.returncode != 0:
        return out
    first: dict[str, tuple[str, str, str, str]] = {}  # each arrival commit: its facts
    for entry in (shown.stdout.decode("utf-8", "replace").split("\x01") if shown else ()):
        head, sep, _ = entry.partition("\x02")
        if sep:
            commit, at, author, body = head.split("\0", 3)
            first[commit] = (commit, at, author, body)
    cut = _shallow(repo)
    for path, arrival in brought.items():
        if arrival not in first:
            continue
        commit, at, author, body = first[arrival]
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


class _NoHistory(Exception):
    """git could not list or read the history: no provenance."""


def _arrivals(repo: Repo, wanted: dict[str, list[str]]) -> dict[str, str]:
    """The commit that brought each letter (``wanted``: its names from the top, held by
    HEAD): the oldest commit of HEAD's first-parent line that holds one of the names,
    found by bisecting that line (a letter, once here, stays under one of its names);
    when that commit is a merge whose other parent held the letter already, the search
    goes on along that parent's line, as ``git log``'s history simplification would.

    One ``rev-list`` lists the history once; each bisection step asks one ``cat-file``
    about every letter at once. The cost grows with the number of commits plus the
    logarithm of it times the folder's size, where walking every commit's change to the
    folder (``git log -- PATH``) costs commits times folder size."""
    listed = git(repo, "rev-list", "--parents", "HEAD", check=False)
    if listed.returncode != 0:
        raise _NoHistory
    parents: dict[str, list[str]] = {}
    head = None
    for line in listed.stdout.decode("ascii", "replace").splitlines():
        commit, *its = line.split()
        parents[commit] = its
        head = head or commit
    if head is None:
        raise _NoHistory
    lines: dict[str, list[str]] = {}

    def line_from(start: str) -> list[str]:
        # first parents from ``start``, newest first (a shallow clone's line ends at the cut)
        if start not in lines:
            chain, at = [], start
            while at is not None and at in parents and len(chain) <= len(parents):
                chain.append(at)
                at = parents[at][0] if parents[at] else None
            lines[start] = chain
        return lines[start]

    # each letter: [its line, lo (holds it), hi (does not, or the line's end)]
    search = {p: [line_from(head), 0, len(line_from(head))] for p in wanted if all("\n" not in n for n in wanted[p])}
    done: dict[str, str] = {}
    for _ in range(64 * 64):  # every round halves a line or steps to an older commit
        if not search:
            break
        probes: list[tuple[str, str]] = []  # (path, commit) asked this round
        for path, (chain, lo, hi) in search.items():
            if hi - lo > 1:
                probes.append((path, chain[(lo + hi) // 2]))
            else:
                probes += [(path, q) for q in parents.get(chain[lo], [])[1:]]
        held = _held(repo, [(c, wanted[p]) for p, c in probes])
        asked: dict[str, list[tuple[str, bool]]] = {}
        for (path, commit), yes in zip(probes, held):
            asked.setdefault(path, []).append((commit, yes))
        for path in list(search):
            chain, lo, hi = search[path]
            if hi - lo > 1:
                (_, yes), = asked[path]
                search[path] = [chain, (lo + hi) // 2, hi] if yes else [chain, lo, (lo + hi) // 2]
                continue
            other = next((q for q, yes in asked.get(path, ()) if yes), None)
            if other is None:
                done[path] = chain[lo]
                del search[path]
            else:
                search[path] = [line_from(other), 0, len(line_from(other))]
    return done


#: a ``cat-file --batch-check`` line for an object that is there
_FOUND = re.compile(r"[0-9a-f]{40,64} [a-z]+ [0-9]+")


def _held(repo: Repo, probes: list[tuple[str, list[str]]]) -> list[bool]:
    """For each (commit, names): does the commit's tree hold one of the names? One
    ``git cat-file`` answers every probe."""
    if not probes:
        return []
    asked = "".join(f"{commit}:{name}\n" for commit, names in probes for name in names)
    said = git(repo, "cat-file", "--batch-check", "--buffer",
               input=asked.encode("utf-8", "surrogateescape"), check=False)
    if said.returncode != 0:
        raise _NoHistory
    answers = said.stdout.decode("utf-8", "replace").split("\n")
    out, i = [], 0
    for _, names in probes:
        out.append(any(_FOUND.fullmatch(a) is not None for a in answers[i:i + len(names)]))
        i += len(names)
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

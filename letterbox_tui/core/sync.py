"""A letterbox kept in git: where its repository is and how current this copy is.

Several machines share one letterbox through git (SPEC 9): letters are unique,
append-only files, so their commits never conflict. This module finds the git work tree a
letterbox lies in (the letterbox may be a sub-directory of a larger repository) and says
how current the local copy is, as the scope's ``sync`` block::

    {"head", "upstream", "ahead", "behind", "fetched_at", "uncommitted"}

``head`` is HEAD's commit (null before the first commit), ``upstream`` the branch's
upstream (``origin/main``; null when none is set), ``ahead``/``behind`` the commits on
each side not in the other as of the last fetch (null without an upstream; ``behind``
is also null when the upstream was never fetched), ``fetched_at`` when the upstream's
remote-tracking ref last moved (its reflog; else ``FETCH_HEAD``'s time; null: never
fetched), ``uncommitted`` how many files under the letterbox ``sync`` would commit.

Everything goes through the real ``git`` command. Reading it never fetches and never
writes into the repository (``--no-optional-locks``). It costs one ``git status`` limited
to the letterbox, and less when nothing changed: the answer is kept in the user's cache
directory with the times of what it depends on (git's HEAD, index, refs, reflog and
FETCH_HEAD; the letterbox's directories and its seat-level files) and reused while they
all stat the same and none is racily recent. A letter is never rewritten in place, and
every writer publishes by creating a name in a folder (which changes the folder's times);
a sidecar or lease rewritten in place without a rename is seen at the next change of its
folder or of git's index. Outside git this costs a ``stat`` of ``.git`` per parent
directory.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass
from datetime import datetime, timezone
try:  # BLAKE2 without loading OpenSSL (hashlib's import costs ~3 ms of every answer's scope)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - every CPython build has _blake2
    from hashlib import blake2b
from typing import Any

from .sync_git import (  # noqa: F401  (re-exported: what sync's callers import from here)
    READING, NoRemote, SyncError, SyncTimeout, git, git_env, last_line, run_git, user_git,
)
from .user_files import replace_atomically

#: entries at these names are shared although hidden (they keep empty folders in git)
SHARED_HIDDEN = frozenset({".gitkeep", ".gitignore"})
#: files at the letterbox's top that the protocol's set-up writes for this machine alone
#: (its own paths, its terminal panes and sockets): never shared, even without the
#: .gitignore. Every edition's: ``env.sh``, and the cmux, tmux, zellij and herdr
#: editions' pane registries (``<m>-agents.tsv``) and title patterns (``<m>-patterns.tsv``)
MULTIPLEXERS = ("cmux", "tmux", "zellij", "herdr")
MACHINE_FILES = frozenset({"env.sh"} | {f"{m}-{kind}.tsv" for m in MULTIPLEXERS for kind in ("agents", "patterns")})
#: a cached answer is reused only when everything it depends on is older than this
RACY_SECONDS = 2.0
_CACHE_VERSION = 2  # 2: the answer may be None (not kept in git)


@dataclass(frozen=True)
class Repo:
    """The git work tree a letterbox lies in."""

    top: str  #: the work tree's top directory (real path)
    git_dir: str  #: this work tree's git directory
    common_dir: str  #: the repository's shared git directory (differs for a worktree)
    prefix: str  #: the letterbox's path inside the work tree, POSIX, "" at the top

    def inside(self, path: str) -> bool:
        """Whether ``path`` (relative to the top, as git prints it) lies in the letterbox."""
        return not self.prefix or path == self.prefix or path.startswith(self.prefix + "/")

    def local(self, path: str) -> str:
        """``path`` relative to the letterbox instead of the work tree's top."""
        return path[len(self.prefix) + 1 :] if self.prefix else path


def find_repo(root: str | os.PathLike[str]) -> Repo | None:
    """The git work tree holding the letterbox ``root``, or None outside git.

    Walks up from the root's real path to the first ``.git`` (a directory, or a file
    ``gitdir: …`` as in a linked worktree or a submodule)."""
    real = os.path.realpath(os.fspath(root))
    cur = real
    while True:
        dotgit = os.path.join(cur, ".git")
        try:
            st = os.lstat(dotgit)
        except OSError:
            st = None
        if st is not None:
            git_dir = _git_dir(cur, dotgit, st)
            if git_dir is None:
                return None
            common = git_dir
            try:
                with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as f:
                    common = os.path.normpath(os.path.join(git_dir, f.read().strip()))
            except OSError:
                pass
            prefix = os.path.relpath(real, cur)
            prefix = "" if prefix == "." else prefix.replace(os.sep, "/")
            return Repo(top=cur, git_dir=git_dir, common_dir=common, prefix=prefix)
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _git_dir(top: str, dotgit: str, st: os.stat_result) -> str | None:
    if stat.S_ISDIR(st.st_mode):
        return dotgit
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        with open(dotgit, encoding="utf-8") as f:
            line = f.readline().strip()
    except (OSError, UnicodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(top, line[len("gitdir:") :].strip()))


# --- what sync would commit ----------------------------------------------------------

def shareable(repo: Repo, path: str) -> bool:
    """Whether ``path`` (relative to the work tree's top) is something ``sync`` shares:
    inside the letterbox, no hidden part (writers' temporaries; ``.gitkeep`` and
    ``.gitignore`` excepted), nothing in a protocol lifecycle lock, not the protocol's
    machine-local set-up files (``MACHINE_FILES``)."""
    if not repo.inside(path):
        return False
    parts = repo.local(path).split("/")
    if len(parts) == 1 and parts[0] in MACHINE_FILES:
        return False
    for i, part in enumerate(parts):
        if part.endswith(".lifecycle.lock"):
            return False
        if part.startswith(".") and not (i == len(parts) - 1 and part in SHARED_HIDDEN):
            return False
    return True


def changed_paths(repo: Repo, status_z: bytes, skipped: list[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """(the ``# branch.*`` headers, every changed or untracked shareable path) of a
    ``git status --porcelain=v2 -z --no-renames`` output; ``skipped`` collects the changed
    paths that are not shareable."""
    headers: dict[str, str] = {}
    paths: list[str] = []
    for entry in status_z.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        kind = entry[0]
        if kind == "#":
            key, _, value = entry[2:].partition(" ")
            headers[key] = value
            continue
        if kind == "1":
            parts = entry.split(" ", 8)
        elif kind == "u":
            parts = entry.split(" ", 10)
        elif kind == "?":
            parts = ["?", entry[2:]]
        else:  # "!" ignored; "2" does not occur with --no-renames
            continue
        path = parts[-1]
        if shareable(repo, path):
            paths.append(path)
        elif skipped is not None:
            skipped.append(path)
    return headers, paths


def status_raw(repo: Repo) -> bytes:
    return git(repo, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all",
               "--no-renames", "--ignored=no", "--ignore-submodules=all",
               "--", f":(top,literal){repo.prefix}" if repo.prefix else ":/", options=_no_filters(repo)).stdout


def _no_filters(repo: Repo) -> tuple[str, ...]:
    """``-c`` options switching off every filter driver the repository's config defines
    (``filter.<driver>.clean`` is a program git runs on a file whose stat changed): an
    empty command is no filter, and the bytes are compared as they are."""
    done = git(repo, "config", "-z", "--name-only", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$",
               check=False)
    names = {n for n in done.stdout.decode("utf-8", "surrogateescape").split("\0") if n}
    return tuple(x for n in sorted(names) for x in ("-c", f"{n}="))


# --- how current is this copy -------------------------------------------------------

def status(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The scope's ``sync`` block for the letterbox ``root``: None outside git (or when
    git cannot read the repository, or the letterbox is not kept in it), else a dict as
    the module says."""
    repo = find_repo(root)
    if repo is None:
        return None
    return repo_status(repo)


def kept_in_git(repo: Repo) -> bool:
    """Whether the letterbox is kept in the repository it lies in, not merely inside one
    (a home directory kept in git for its dotfiles holds ``~/mail`` without sharing it):
    it is the work tree's top, or ``init --git`` wrote its ``.gitignore``, or HEAD holds
    its directory."""
    if not repo.prefix:
        return True
    try:
        with open(os.path.join(repo.top, repo.prefix, ".gitignore"), "rb") as f:
            if b"*.lifecycle.lock/" in f.read(64 * 1024):
                return True
    except OSError:
        pass
    return git(repo, "rev-parse", "-q", "--verify", f"HEAD:{repo.prefix}", check=False).returncode == 0


def repo_status(repo: Repo, *, cached: bool = True) -> dict[str, Any] | None:
    key_path = _cache_file(repo) if cached else None
    if key_path is not None:
        hit, kept = _cached(repo, key_path)
        if hit:
            return kept
    began = time.time()
    if not kept_in_git(repo):
        if key_path is not None:
            _remember(repo, key_path, None, [], began)
        return None
    try:
        headers, paths = changed_paths(repo, status_raw(repo))
    except SyncError:
        return None
    head = headers.get("branch.oid")
    upstream = headers.get("branch.upstream") or None
    ahead = behind = None
    if upstream is not None:
        ab = headers.get("branch.ab")
        if ab:
            a, b = ab.split()
            ahead, behind = int(a.lstrip("+")), int(b.lstrip("-"))
        elif head and head != "(initial)":
            # the upstream is set but its ref is not here (never fetched): every commit
            # is ahead as far as this copy knows, and behind is unknown
            done = git(repo, "rev-list", "--count", "HEAD", check=False)
            ahead = int(done.stdout.strip() or 0) if done.returncode == 0 else None
        else:
            ahead = 0
    # ``known``: the remote-tracking ref is here (git compared HEAD with it)
    fetched, depends = _fetched_at(repo, upstream, known=behind is not None)
    block = {
        "head": head if head and head != "(initial)" else None,
        "upstream": upstream,
        "ahead": ahead,
        "behind": behind,
        "fetched_at": fetched,
        "uncommitted": len(paths),
    }
    if key_path is not None:
        _remember(repo, key_path, block, depends, began)
    return block


def _fetched_at(repo: Repo, upstream: str | None, known: bool) -> tuple[str | None, list[str]]:
    """When the upstream's remote-tracking ref last moved, and the files that says it."""
    fetch_head = os.path.join(repo.git_dir, "FETCH_HEAD")
    if upstream is None:
        return None, [fetch_head]
    reflog = os.path.join(repo.common_dir, "logs", "refs", "remotes", *upstream.split("/"))
    when = None
    try:
        with open(reflog, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - 4096))
            lines = [ln for ln in f.read().split(b"\n") if ln.strip()]
        if lines:
            meta = lines[-1].split(b"\t", 1)[0].split()
            when = float(meta[-2])
    except (OSError, ValueError, IndexError):
        when = None
    # a fetch that brought nothing does not move the ref (no reflog line) but rewrites
    # FETCH_HEAD: its time counts when it names the upstream's branch
    fetched = _fetch_head_time(fetch_head, upstream.split("/", 1)[-1]) if known else None
    if fetched is not None and (when is None or fetched > when):
        when = fetched
    # neither (a fresh clone writes no reflog line for it): when the ref itself was
    # written, loose or packed
    loose = os.path.join(repo.common_dir, "refs", "remotes", *upstream.split("/"))
    packed = os.path.join(repo.common_dir, "packed-refs")
    for path in (loose, packed) if when is None and known else ():
        try:
            when = os.stat(path).st_mtime
            break
        except OSError:
            continue
    text = None if when is None else datetime.fromtimestamp(int(when), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return text, [reflog, fetch_head, loose]


def _fetch_head_time(path: str, branch: str) -> float | None:
    try:
        with open(path, "rb") as f:
            when = os.fstat(f.fileno()).st_mtime
            head = f.read(64 * 1024)
    except OSError:
        return None
    return when if f"branch '{branch}' of ".encode() in head else None


def behind_line(block: dict[str, Any] | None) -> str:
    """"local copy as of <fetched_at>, N behind" when this copy is not known current
    (behind its upstream as last fetched, or the upstream never fetched), else ""."""
    if not block or block.get("upstream") is None:
        return ""
    if block.get("fetched_at") is None:
        return "local copy never fetched from " + block["upstream"]
    if block.get("behind"):
        return f"local copy as of {block['fetched_at']}, {block['behind']} behind"
    return ""


def as_of(block: dict[str, Any] | None) -> str:
    """"in this copy, as of …" for an answer of absence in a letterbox in git, else ""."""
    if not block:
        return ""
    when = block.get("fetched_at")
    return f"in this copy, as of {when}" if when else "in this copy, never fetched"


def token(block: dict[str, Any] | None) -> str:
    """A short fingerprint of a sync block (keys an answer memo to the copy's state)."""
    if block is None:
        return "nogit"
    raw = json.dumps(block, sort_keys=True).encode()
    return blake2b(raw, digest_size=6).hexdigest()


# --- the kept answer ------------------------------------------------------------------

def _cache_file(repo: Repo) -> str | None:
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # pragma: no cover - a dependency
        return None
    real = os.path.join(repo.top, repo.prefix) if repo.prefix else repo.top
    digest = blake2b(os.fsencode(real), digest_size=12).hexdigest()
    return os.path.join(user_cache_dir("letterbox-tui"), f"{digest}.sync")


def _watched(repo: Repo, extra: list[str]) -> list[str]:
    """What the answer depends on: git's state files and the letterbox's directories and
    seat-level files (seat folders, lease directories, status notes)."""
    g, c = repo.git_dir, repo.common_dir
    paths = [os.path.join(g, "HEAD"), os.path.join(g, "index"), os.path.join(c, "packed-refs"),
             os.path.join(c, "config"), *extra]
    try:
        with open(os.path.join(g, "HEAD"), encoding="utf-8") as f:
            ref = f.read().strip()
        if ref.startswith("ref: "):
            paths.append(os.path.join(c, *ref[5:].split("/")))
    except OSError:
        pass
    root = os.path.join(repo.top, repo.prefix) if repo.prefix else repo.top
    paths.append(root)
    paths.extend(_tree_entries(root, depth=2))
    return paths


def _tree_entries(path: str, depth: int) -> list[str]:
    out: list[str] = []
    try:
        with os.scandir(path) as it:
            entries = sorted(e.name for e in it if e.name != ".git")
    except OSError:
        return out
    for name in entries:
        full = os.path.join(path, name)
        out.append(full)
        if depth > 1 and name not in ("inbox", "processed"):
            try:
                if stat.S_ISDIR(os.lstat(full).st_mode):
                    out.extend(_tree_entries(full, depth - 1))
            except OSError:
                pass
    return out


def _fingerprint(paths: list[str]) -> tuple[list[list[int]], float]:
    marks: list[list[int]] = []
    newest = 0.0
    for p in paths:
        try:
            st = os.lstat(p)
        except OSError:
            marks.append([0])
            continue
        marks.append([st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino])
        newest = max(newest, st.st_mtime_ns / 1e9, st.st_ctime_ns / 1e9)
    return marks, newest


def _cached(repo: Repo, key_path: str) -> tuple[bool, dict[str, Any] | None]:
    """(whether a kept answer holds, the answer: None when not kept in git)."""
    try:
        with open(key_path, encoding="utf-8") as f:
            kept = json.load(f)
        if kept.get("v") != _CACHE_VERSION or kept.get("top") != repo.top:
            return False, None
        marks, _ = _fingerprint(_watched(repo, kept["extra"]))
        if marks != kept["marks"]:
            return False, None
        return True, kept["block"]
    except (OSError, ValueError, KeyError, TypeError):
        return False, None


def _remember(repo: Repo, key_path: str, block: dict[str, Any] | None, extra: list[str], began: float) -> None:
    paths = _watched(repo, extra)
    marks, newest = _fingerprint(paths)
    if newest >= began - RACY_SECONDS:
        return  # something changed too recently to vouch for the answer next time
    kept = {"v": _CACHE_VERSION, "top": repo.top, "extra": extra, "marks": marks, "block": block}
    try:
        replace_atomically(key_path, json.dumps(kept))
    except OSError:
        pass


def remotes(root: str | os.PathLike[str]) -> list[str] | None:
    """The names of the remotes of the repository the letterbox lies in (None outside
    git): with none, a sync has nowhere to go."""
    repo = find_repo(root)
    if repo is None:
        return None
    done = git(repo, "remote", check=False)
    return done.stdout.decode("utf-8", "replace").split() if done.returncode == 0 else None


def unpushed(root: str | os.PathLike[str]) -> frozenset[str] | None:
    """The letterbox paths (relative to it) this copy holds and its upstream does not, as
    of the last fetch: files not committed yet, and files the local commits changed since
    they parted. Without an upstream (never pushed) every committed file. None outside
    git. Costs a ``git status`` and a ``git diff`` (the app runs it in its scan worker)."""
    repo = find_repo(root)
    if repo is None:
        return None
    try:
        headers, paths = changed_paths(repo, status_raw(repo))
    except SyncError:
        return None
    out = {repo.local(p) for p in paths}
    spec = f":(top,literal){repo.prefix}" if repo.prefix else ":/"
    if headers.get("branch.oid", "(initial)") == "(initial)":
        return frozenset(out)
    if headers.get("branch.ab"):
        done = git(repo, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=AM",
                   f"{headers['branch.upstream']}...HEAD", "--", spec, check=False)
    else:
        done = git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD", "--", spec, check=False)
    for p in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if p and shareable(repo, p):
            out.add(repo.local(p))
    return frozenset(out)

"""``letterbox-tui sync``: share this letterbox with the other machines through git.

One run, under a lock on the repository (two syncs of one copy never interleave):

1. **fetch** the branch from the remote (its progress reported). An unreachable remote,
   a refused login or no remote at all stops here: one line, nothing local changed.
2. **commit** what is new under the letterbox, and only there: letters, moves to
   ``processed/``, sidecars, status notes, leases. Never a hidden name (a writer's
   temporary: the protocol publishes a letter by an exclusive link of a finished hidden
   file, so a visible ``<id>.md`` is always whole), never anything in a protocol
   ``*.lifecycle.lock/``, never a letter whose lifecycle lock is held (a reply or move in
   progress: it waits for the next sync), never an ignored file, never a symlink or
   special file. The commit is built in a temporary index, so nothing the user staged is
   swept in.
3. **rebase** the local commits onto the upstream, each replayed by ``git merge-tree``
   (a real three-way merge, without touching the working tree). A conflict (one path
   with different bytes on two machines, one letter moved two ways) stops here: one line
   naming the paths, exit 2, HEAD, index and working tree exactly as before.
4. **update** (``core.sync_tree``) the working tree with what the upstream added, the protocol's way: each new
   file written hidden, then linked into place (a reader never sees half a letter), a
   changed file replaced by rename, a removed one unlinked; then the index and HEAD.
5. **push**; when another machine pushed first, back to 1 (a few times).
"""

from __future__ import annotations

import os
import secrets
import socket
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import flags as fsflags
from .sync import MACHINE_FILES, Repo, SyncError, changed_paths, find_repo, git, git_env, kept_in_git, last_line, status_raw
from .sync_tree import ZERO, update_tree

Progress = Callable[[str], None]
#: attempts when another machine pushes between our fetch and our push
PUSH_ATTEMPTS = 8
#: how long a sync waits for another sync of the same copy
LOCK_WAIT = 120.0


@dataclass
class SyncResult:
    """What one ``sync`` did (``--json``)."""

    remote: str
    branch: str
    committed: list[str] = field(default_factory=list)  #: letterbox paths committed by this run
    commit: str | None = None  #: the commit this run made, if any (before rebasing)
    rebased: int = 0  #: local commits replayed onto the upstream
    pulled: int = 0  #: files the upstream added, changed or removed here
    pushed: bool = False
    head: str | None = None
    waiting: list[str] = field(default_factory=list)  #: left for next time (a lifecycle lock)
    staged: list[str] = field(default_factory=list, repr=False)  #: committed paths, from the top

    def to_json(self) -> dict[str, Any]:
        return {
            "remote": self.remote, "branch": self.branch, "committed": list(self.committed),
            "commit": self.commit, "rebased": self.rebased, "pulled": self.pulled,
            "pushed": self.pushed, "head": self.head, "waiting": list(self.waiting),
        }


def sync(root: str | os.PathLike[str], *, push: bool = True, remote: str | None = None,
         progress: Progress | None = None) -> SyncResult:
    repo = find_repo(root)
    if repo is None:
        raise SyncError(f"{os.fspath(root)} is not in a git repository "
                        "(letterbox-tui init DIR --seats … --git makes one)")
    if not kept_in_git(repo):
        raise SyncError(f"the letterbox lies inside the git repository at {repo.top} but is not kept in it "
                        f"(letterbox-tui init {os.fspath(root)} --seats … --git keeps it there)")
    with _locked(repo):
        branch = _branch(repo)
        name = remote or _remote_of(repo, branch)
        _refuse_foreign_staging(repo)
        result = SyncResult(remote=name, branch=branch)
        for attempt in range(PUSH_ATTEMPTS):
            upstream = fetch_branch(repo, name, branch, progress)
            _one_pass(repo, result, upstream, first=attempt == 0)
            if not push:
                break
            if result.head == upstream or _push(repo, name, branch, result.head):  # equal: nothing to push
                result.pushed = True
                _track(repo, name, branch)
                break
            time.sleep(0.05 + secrets.randbelow(200) / 1000)  # another machine pushed first
        else:
            raise SyncError(f"push to {name}: the remote kept moving ({PUSH_ATTEMPTS} tries); "
                            "your letters are committed here, sync again")
        return result


def fetch(root: str | os.PathLike[str], *, remote: str | None = None,
          progress: Progress | None = None) -> None:
    """Fetch the letterbox's branch (reading commands' ``--fetch``); nothing else changes."""
    repo = find_repo(root)
    if repo is None or not kept_in_git(repo):
        raise SyncError(f"--fetch: {os.fspath(root)} is not kept in a git repository")
    branch = _branch(repo)
    fetch_branch(repo, remote or _remote_of(repo, branch), branch, progress)


# --- the repository's branch and remote -----------------------------------------------

def _branch(repo: Repo) -> str:
    done = git(repo, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    name = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not name:
        raise SyncError("HEAD is detached: check out a branch to sync")
    return name


def _config(repo: Repo, key: str) -> str | None:
    done = git(repo, "config", "--get", key, check=False)
    value = done.stdout.decode("utf-8", "replace").strip()
    return value if done.returncode == 0 and value else None


def _remote_of(repo: Repo, branch: str) -> str:
    configured = _config(repo, f"branch.{branch}.remote")
    if configured and configured != ".":
        return configured
    remotes = git(repo, "remote").stdout.decode("utf-8", "replace").split()
    if "origin" in remotes:
        return "origin"
    if len(remotes) == 1:
        return remotes[0]
    if not remotes:
        raise SyncError("no remote to sync with (git remote add origin URL, or --remote R)")
    raise SyncError(f"several remotes ({', '.join(remotes)}): name one with --remote R")


def _track(repo: Repo, remote: str, branch: str) -> None:
    """After a first push: the branch's upstream is the remote's branch (unless set)."""
    if _config(repo, f"branch.{branch}.remote") is None:
        git(repo, "config", f"branch.{branch}.remote", remote, check=False)
        git(repo, "config", f"branch.{branch}.merge", f"refs/heads/{branch}", check=False)


def _refuse_foreign_staging(repo: Repo) -> None:
    """Changes the user staged outside the letterbox would be disturbed by the update of
    the index: sync refuses rather than touch them."""
    if not repo.prefix or _head(repo) is None:
        return
    done = git(repo, "diff-index", "--cached", "--name-only", "-z", "HEAD", check=False)
    outside = [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p and not repo.inside(p)]
    if outside:
        raise SyncError(f"changes staged outside the letterbox ({outside[0]}"
                        f"{f' and {len(outside) - 1} more' if len(outside) > 1 else ''}): commit or unstage them first")


def _head(repo: Repo) -> str | None:
    done = git(repo, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


# --- 1. fetch --------------------------------------------------------------------------

def fetch_branch(repo: Repo, remote: str, branch: str, progress: Progress | None) -> str | None:
    """Fetch ``branch`` from ``remote`` into its remote-tracking ref; that ref's commit, or
    None when the remote has no such branch yet (a first push). ``SyncError`` when the
    remote cannot be reached (nothing local changed)."""
    tracking = f"refs/remotes/{remote}/{branch}"
    # a stalled HTTP transfer gives up after a minute below 1 KB/s (ssh: ConnectTimeout)
    cmd = ["git", "-C", repo.top, "-c", "core.quotepath=off", "-c", "http.lowSpeedLimit=1000",
           "-c", "http.lowSpeedTime=60", "fetch", "--progress", "--no-tags",
           remote, f"+refs/heads/{branch}:{tracking}"]
    code, err = _streamed(cmd, progress)
    if code != 0:
        text = err.decode("utf-8", "replace")
        if "couldn't find remote ref" in text:
            return None
        raise SyncError(f"fetch from {remote}: {last_line(err) or f'git exit {code}'}")
    done = git(repo, "rev-parse", "-q", "--verify", f"{tracking}^{{commit}}", check=False)
    return done.stdout.decode().strip() or None


def _streamed(cmd: list[str], progress: Progress | None) -> tuple[int, bytes]:
    """Run a git command whose stderr carries progress (``\\r``-separated updates): each
    update goes to ``progress``; the whole stderr is returned with the exit code."""
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=git_env())
    except FileNotFoundError:
        raise SyncError("git is not installed") from None
    err = bytearray()
    pending = b""
    assert proc.stderr is not None
    while chunk := proc.stderr.read1(4096):
        err += chunk
        pending += chunk
        *lines, pending = pending.replace(b"\r", b"\n").split(b"\n")
        if progress is not None:
            for ln in lines:
                shown = last_line(ln)
                if shown:
                    progress(shown)
    return proc.wait(), bytes(err)


# --- 2. commit -------------------------------------------------------------------------

def _one_pass(repo: Repo, result: SyncResult, upstream: str | None, *, first: bool) -> None:
    old = _head(repo)
    local = old
    if first:
        local = _commit_new(repo, old, result)
    new, rebased = _rebase(repo, local, upstream)
    result.rebased = max(result.rebased, rebased)
    if new != old:
        pulled = update_tree(repo, local, new)
        result.pulled += len(pulled)
        # the index follows, for the paths this pass committed or brought and only those
        # (every other entry already matches HEAD, or holds what the user staged): each
        # is read again from the working tree, which now holds exactly those bytes
        touched = (result.staged if local != old else []) + pulled
        if touched:
            _refresh_index(repo, list(dict.fromkeys(touched)))
        _set_head(repo, new, old)
    result.head = new


#: attempts at staging while writers move letters (git fails on a file that goes while
#: it reads it: "Unable to process path"); the listing is taken again each time
STAGE_ATTEMPTS = 5


def _while_letters_move(step):
    """``step()``, taken again a few times while git fails on a letter that a writer moves
    as git reads it ("Unable to process path")."""
    for attempt in range(STAGE_ATTEMPTS):
        try:
            return step()
        except SyncError as exc:
            if "Unable to process path" not in str(exc) or attempt == STAGE_ATTEMPTS - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


def _refresh_index(repo: Repo, paths: list[str]) -> None:
    """Read ``paths`` into the work tree's index again; a letter a writer moves as git
    reads it is read again where it now is not (``--remove``), and comes by the next sync."""
    data = b"".join(os.fsencode(p) + b"\0" for p in paths)
    _while_letters_move(lambda: git(repo, "update-index", "--add", "--remove", "-z", "--stdin", input=data))


def _commit_new(repo: Repo, head: str | None, result: SyncResult) -> str | None:
    keep_folders(os.path.join(repo.top, repo.prefix))
    mark = len(result.waiting)

    def stage():  # each attempt lists again: what waits is what the last listing found
        del result.waiting[mark:]
        return _stage(repo, head, result)

    staged, tree = _while_letters_move(stage)
    if not staged:
        return head
    if head is not None and tree == _tree(repo, head):
        return head
    host = socket.gethostname() or "unknown"
    message = f"letterbox-tui sync on {host}: {_summary(repo, staged)}\n\nMachine: {host}\n"
    args = ["commit-tree", tree, "-F", "-"] + (["-p", head] if head else [])
    commit = git(repo, *args, input=message.encode(), env=_identity(repo, host)).stdout.decode().strip()
    result.commit = commit
    result.committed = [repo.local(p) for p in staged]
    result.staged = staged
    return commit


def _stage(repo: Repo, head: str | None, result: SyncResult) -> tuple[list[str], str | None]:
    """The paths sync commits now (those a writer holds locked are left waiting) and the
    tree of HEAD with them staged (None when there are none)."""
    unshared: list[str] = []
    _, paths = changed_paths(repo, status_raw(repo), unshared)
    staged = []
    for path in paths:
        if _lifecycle_locked(repo, path):
            result.waiting.append(repo.local(path))
            continue
        try:
            mode = os.lstat(os.path.join(repo.top, path)).st_mode
        except FileNotFoundError:
            staged.append(path)  # gone: a move or a removal to commit
            continue
        except OSError:
            continue
        if stat.S_ISREG(mode):
            staged.append(path)
    if not staged:
        return staged, None
    # the commit is built in a copy of the index (its stat data and cache-tree make this
    # cheap at 100,000 entries); whatever the user staged that sync does not share is
    # set back to HEAD's in the copy, so only what is listed here is committed
    index = os.path.join(repo.git_dir, f"letterbox-tui-sync.{os.getpid()}.index")
    env = {**git_env(), "GIT_INDEX_FILE": index}
    try:
        if head is not None and not _copy_index(repo, index):
            git(repo, "read-tree", head, env=env)
        if head is not None and unshared:
            git(repo, "reset", "-q", head, "--pathspec-from-file=-", "--pathspec-file-nul",
                input=b"".join(b":(top,literal)" + os.fsencode(p) + b"\0" for p in unshared), env=env, check=False)
        git(repo, "update-index", "--add", "--remove", "-z", "--stdin",
            input=b"".join(os.fsencode(p) + b"\0" for p in staged), env=env)
        tree = git(repo, "write-tree", env=env).stdout.decode().strip()
    finally:
        try:
            os.unlink(index)
        except FileNotFoundError:
            pass
    return staged, tree


def _copy_index(repo: Repo, to: str) -> bool:
    """Copy this work tree's index to ``to``; False when there is none to copy."""
    import shutil

    try:
        shutil.copyfile(os.path.join(repo.git_dir, "index"), to)
        return True
    except OSError:
        return False


def _lifecycle_locked(repo: Repo, path: str) -> bool:
    """Whether ``path`` is a letter (or its sidecar) whose protocol lifecycle lock is held."""
    parts = repo.local(path).split("/")
    if len(parts) != 3 or parts[1] not in ("inbox", "processed"):
        return False
    name = parts[2].removesuffix(".ack")
    if not name.endswith(".md"):
        return False
    lock = os.path.join(repo.top, repo.prefix, parts[0], "inbox", name + ".lifecycle.lock")
    return os.path.isdir(lock)


def _summary(repo: Repo, paths: list[str]) -> str:
    letters = 0
    for p in paths:
        parts = repo.local(p).split("/")
        letters += len(parts) == 3 and parts[1] in ("inbox", "processed") and parts[2].endswith(".md")
    other = len(paths) - letters
    return f"{letters} letter file{'s' if letters != 1 else ''}, {other} other"


def _identity(repo: Repo, host: str) -> dict[str, str]:
    """git's environment for a commit: the user's identity when git has one, else the
    operating-system user at this machine."""
    env = git_env()
    if _config(repo, "user.email") is None or _config(repo, "user.name") is None:
        user = os.environ.get("USER") or os.environ.get("LOGNAME") or "letterbox-tui"
        for who in ("AUTHOR", "COMMITTER"):
            env.setdefault(f"GIT_{who}_NAME", user)
            env.setdefault(f"GIT_{who}_EMAIL", f"{user}@{host}")
    return env


def _tree(repo: Repo, commit: str) -> str:
    return git(repo, "rev-parse", f"{commit}^{{tree}}").stdout.decode().strip()


# --- 3. rebase -------------------------------------------------------------------------

def _rebase(repo: Repo, local: str | None, upstream: str | None) -> tuple[str | None, int]:
    """``local``'s commits replayed onto ``upstream``: (the new head, how many replayed).
    ``SyncError`` naming the paths when they conflict (nothing has been changed)."""
    if upstream is None or upstream == local:
        return local, 0
    if local is None or _is_ancestor(repo, local, upstream):
        return upstream, 0
    if _is_ancestor(repo, upstream, local):
        return local, 0
    commits = git(repo, "rev-list", "--reverse", "--topo-order", "--no-merges",
                  f"{upstream}..{local}").stdout.decode().split()
    base = upstream
    for commit in commits:
        done = git(repo, "merge-tree", "--write-tree", "--name-only", "-z",
                   "--allow-unrelated-histories", base, commit, check=False)
        if done.returncode not in (0, 1):
            raise SyncError(f"rebase: {last_line(done.stderr) or 'git merge-tree failed'}")
        fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
        if done.returncode == 1:
            end = fields.index("", 1) if "" in fields[1:] else len(fields)
            paths = list(dict.fromkeys(fields[1:end]))
            shown = ", ".join(repo.local(p) if repo.inside(p) else p for p in paths[:5])
            more = f" and {len(paths) - 5} more" if len(paths) > 5 else ""
            raise SyncError(f"conflict with the remote on {shown}{more}: nothing was rebased, "
                            "this copy is as it was (two machines wrote these paths differently)")
        base = _replay(repo, commit, fields[0], base)
    return base, len(commits)


def _replay(repo: Repo, commit: str, tree: str, parent: str) -> str:
    """A copy of ``commit`` with ``tree`` on ``parent``: its author, date and message kept."""
    fmt = git(repo, "show", "-s", "--format=%an%x00%ae%x00%ad%x00%B", "--date=raw", commit).stdout
    name, email, date, message = fmt.decode("utf-8", "surrogateescape").split("\0", 3)
    env = {**_identity(repo, socket.gethostname() or "unknown"),
           "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date}
    return git(repo, "commit-tree", tree, "-p", parent, "-F", "-",
               input=message.encode("utf-8", "surrogateescape"), env=env).stdout.decode().strip()


def _is_ancestor(repo: Repo, a: str, b: str) -> bool:
    return git(repo, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


# --- 4. HEAD (the working tree and index: core.sync_tree) ---------------------------

def _set_head(repo: Repo, new: str | None, old: str | None) -> None:
    if new is None:
        return
    git(repo, "update-ref", "-m", "letterbox-tui sync", "HEAD", new, old or ZERO)


# --- 5. push ---------------------------------------------------------------------------

def _push(repo: Repo, remote: str, branch: str, head: str | None) -> bool:
    """True when pushed (or nothing to push); False when the remote moved meanwhile."""
    if head is None:
        return True
    done = git(repo, "push", "--porcelain", remote, f"{head}:refs/heads/{branch}", check=False)
    if done.returncode == 0:
        tracking = f"refs/remotes/{remote}/{branch}"
        git(repo, "update-ref", "-m", "update by push", tracking, head, check=False)
        return True
    # a ref the remote refused ("!" in --porcelain): moved meanwhile (not a fast-forward,
    # or another push held its lock); tried again after a fetch, a few times
    if any(line.startswith("!") for line in done.stdout.decode("utf-8", "replace").splitlines()):
        return False
    raise SyncError(f"push to {remote}: {last_line(done.stderr) or 'failed'} "
                    "(your letters are committed here; sync again)")


# --- the lock ---------------------------------------------------------------------------

class _locked:
    """One sync of a copy at a time (an ``flock`` on a file in its git directory)."""

    def __init__(self, repo: Repo) -> None:
        self.path = os.path.join(repo.git_dir, "letterbox-tui-sync.lock")
        self.fd = -1

    def __enter__(self) -> _locked:
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise SyncError("another sync of this copy is still running") from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


# --- init --git ---------------------------------------------------------------------------

GITIGNORE = """\
# What a letterbox kept in git never shares (letterbox-tui init --git).
# The protocol's short-lived writer locks:
*.lifecycle.lock/
# Writers' hidden temporaries (a letter is published by linking a finished hidden file),
# and hidden files at the top (a benchmark letterbox's marker, a set-up's temporaries):
*/inbox/.*
*/processed/.*
!*/inbox/.gitkeep
!*/processed/.gitkeep
/.*
!/.gitignore
# The protocol's set-up files that name this machine's own paths, terminal panes and
# sockets (every edition: cmux, tmux, zellij, herdr):
/env.sh
/cmux-agents.tsv
/cmux-patterns.tsv
/tmux-agents.tsv
/tmux-patterns.tsv
/zellij-agents.tsv
/zellij-patterns.tsv
/herdr-agents.tsv
/herdr-patterns.tsv
# letterbox-tui keeps nothing of its own here (its caches are in the user's cache
# directory, drafts and history in the user's state directory).
"""


def keep_folders(root: str | os.PathLike[str]) -> list[str]:
    """An empty ``.gitkeep`` in every seat's ``inbox/`` and ``processed/`` that lacks one:
    git keeps no empty directory, and a clone without them would not be a letterbox.
    Hidden, so never a letter. Returns the letterbox paths it created."""
    from .grammar import valid_seat

    base = os.fspath(root)
    made = []
    try:
        seats = sorted(os.listdir(base))
    except OSError:
        return made
    for seat in seats:
        if not valid_seat(seat):
            continue
        for folder in ("inbox", "processed"):
            path = os.path.join(base, seat, folder)
            try:
                if not stat.S_ISDIR(os.lstat(path).st_mode) or stat.S_ISLNK(os.lstat(os.path.join(base, seat)).st_mode):
                    continue
            except OSError:
                continue
            keep = os.path.join(path, ".gitkeep")
            if not os.path.lexists(keep):
                try:
                    os.close(os.open(keep, fsflags.CREATE, 0o644))
                    made.append(f"{seat}/{folder}/.gitkeep")
                except OSError:
                    pass
    return made


def init_git(root: str | os.PathLike[str]) -> list[str]:
    """Make the letterbox at ``root`` shareable through git: ``git init`` unless it already
    lies in a git work tree (then that repository is used), a ``.gitignore`` for what is
    never shared, a ``.gitkeep`` per folder, and (in a repository made here) a first
    commit. Returns what it did, in words."""
    base = os.path.realpath(os.fspath(root))
    did = []
    repo = find_repo(base)
    made_repo = repo is None
    if made_repo:
        try:
            done = subprocess.run(["git", "init", "-q", base], capture_output=True, env=git_env(),
                                  stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise SyncError("git is not installed") from None
        if done.returncode != 0:
            raise SyncError(f"git init: {last_line(done.stderr)}")
        repo = find_repo(base)
        assert repo is not None
        did.append("a git repository")
    else:
        did.append(f"the git repository at {repo.top}")
    ignore = os.path.join(base, ".gitignore")
    try:
        with open(ignore, encoding="utf-8") as f:
            present = f.read()
    except FileNotFoundError:
        present = None
    except (OSError, UnicodeError) as exc:
        raise SyncError(f"cannot read {ignore}: {exc}") from None
    if present is None or "*.lifecycle.lock/" not in present:
        with open(ignore, "a", encoding="utf-8") as f:
            f.write(GITIGNORE if not present else ("\n" if not present.endswith("\n") else "") + GITIGNORE)
        did.append(".gitignore")
    else:  # an older one of ours: add the machine-local files it does not name yet
        lines = set(present.splitlines())
        missing = [f"/{n}" for n in sorted(MACHINE_FILES) if f"/{n}" not in lines]
        if missing:
            with open(ignore, "a", encoding="utf-8") as f:
                f.write(("" if present.endswith("\n") else "\n")
                        + "# machine-local set-up files of the protocol's other editions:\n"
                        + "".join(m + "\n" for m in missing))
            did.append(".gitignore (machine-local files)")
    keeps = keep_folders(base)
    if keeps:
        did.append(f"{len(keeps)} .gitkeep")
    if made_repo:
        paths = [".gitignore", *keeps]
        git(repo, "add", "--", *paths)
        env = _identity(repo, socket.gethostname() or "unknown")
        git(repo, "commit", "-q", "--no-verify", "-m", "letterbox-tui init --git", env=env)
        did.append("a first commit")
    return did

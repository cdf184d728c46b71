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
   special file. A letter is read in both its folders, so a move is committed whole.
   The commit is built in a temporary index, so nothing the user staged is swept in.
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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .sync import NoRemote, Repo, SyncError, changed_paths, find_repo, git_env, kept_in_git, last_line, run_git, status_raw
from .sync import user_git as git  # sync's steps run the user's hooks, as git does
from .sync_init import config as _config, identity as _identity, init_git, keep_folders  # noqa: F401
from .sync_losses import Loss, letter_halves, other_half
from .sync_tree import ZERO, undo_tree, update_tree

Progress = Callable[[str], None]
#: attempts when another machine pushes between our fetch and our push
PUSH_ATTEMPTS = 8
#: how long a sync waits for another sync of the same copy
LOCK_WAIT = 120.0


@dataclass
class SyncResult:
    """What one ``sync`` did (``--json``)."""

    remote: str | None  #: None: the copy has no remote (``--no-push``: committed here only)
    branch: str
    committed: list[str] = field(default_factory=list)  #: letterbox paths committed by this run
    commit: str | None = None  #: the commit this run made, if any (before rebasing)
    rebased: int = 0  #: local commits replayed onto the upstream
    pulled: int = 0  #: files the upstream added, changed or removed here
    pushed: bool = False
    head: str | None = None
    waiting: list[str] = field(default_factory=list)  #: left for next time (a lifecycle lock)
    restored: list[str] = field(default_factory=list)  #: letters the remote deleted or rewrote, committed back
    staged: list[str] = field(default_factory=list, repr=False)  #: committed paths, from the top

    def to_json(self) -> dict[str, Any]:
        return {
            "remote": self.remote, "branch": self.branch, "committed": list(self.committed),
            "commit": self.commit, "rebased": self.rebased, "pulled": self.pulled,
            "pushed": self.pushed, "head": self.head, "waiting": list(self.waiting),
            "restored": list(self.restored),
        }


def sync(root: str | os.PathLike[str], *, push: bool = True, remote: str | None = None,
         progress: Progress | None = None, timeout: float | None = None,
         restore_letters: bool = False) -> SyncResult:
    """One sync of the letterbox at ``root`` (the module says how). ``timeout``: how long
    a network step (the fetch, the push) may go without an answer, default the
    letterbox's ``[git] network_timeout``; past it ``SyncTimeout``, its git ended.
    Letters the remote deleted or rewrote are never touched here: ``LettersRefused``
    (nothing changed), or with ``restore_letters`` the rest is taken and they are
    committed back as this copy holds them."""
    timeout = network_timeout(root) if timeout is None else timeout
    repo = find_repo(root)
    if repo is None:
        raise SyncError(f"{os.fspath(root)} is not in a git repository "
                        "(letterbox-tui init DIR --seats … --git makes one)")
    if not kept_in_git(repo):
        raise SyncError(f"the letterbox lies inside the git repository at {repo.top} but is not kept in it "
                        f"(letterbox-tui init {os.fspath(root)} --seats … --git keeps it there)")
    with _locked(repo):
        branch = _branch(repo)
        # without a remote there is nothing to fetch: ``--no-push`` commits what is new, here
        name = remote or _remote_of(repo, branch, none_ok=not push)
        _refuse_foreign_staging(repo)
        result = SyncResult(remote=name, branch=branch)
        for attempt in range(PUSH_ATTEMPTS):
            upstream = fetch_branch(repo, name, branch, progress, timeout) if name is not None else None
            _one_pass(repo, result, upstream, first=attempt == 0, restore=restore_letters)
            if not push:
                break
            if result.head == upstream or _push(repo, name, branch, result.head, timeout):  # equal: nothing to push
                result.pushed = True
                _track(repo, name, branch)
                break
            time.sleep(0.05 + secrets.randbelow(200) / 1000)  # another machine pushed first
        else:
            raise SyncError(f"push to {name}: the remote kept moving ({PUSH_ATTEMPTS} tries); "
                            "your letters are committed here, sync again")
        return result


def fetch(root: str | os.PathLike[str], *, remote: str | None = None,
          progress: Progress | None = None, timeout: float | None = None) -> None:
    """Fetch the letterbox's branch (reading commands' ``--fetch``); nothing else changes.
    No hook runs (a reading command's fetch); ``timeout`` as for ``sync``."""
    timeout = network_timeout(root) if timeout is None else timeout
    repo = find_repo(root)
    if repo is None or not kept_in_git(repo):
        raise SyncError(f"--fetch: {os.fspath(root)} is not kept in a git repository")
    branch = _branch(repo)
    fetch_branch(repo, remote or _remote_of(repo, branch), branch, progress, timeout, hooks=False)


def fetch_for_reading(root: str | os.PathLike[str], *, timeout: float | None = None) -> str | None:
    """A reading command's ``--fetch``: None when fetched; when the remote gave no answer in
    time, the notice to show beside an answer from the local copy ("… as of <the last
    fetch>"). ``SyncError`` for every other failure (an unreachable remote, no remote)."""
    from .sync import SyncTimeout, as_of, status

    try:
        fetch(root, timeout=timeout)
    except SyncTimeout as exc:
        copy = as_of(status(root)).removeprefix("in this copy, ") or "never fetched"
        return f"{exc}; answering from the local copy ({copy})"
    return None


def network_timeout(root: str | os.PathLike[str]) -> float:
    """The letterbox's ``[git] network_timeout`` (``letterbox-tui.toml``)."""
    from .settings import load_settings

    return load_settings(root).network_timeout


# --- the repository's branch and remote -----------------------------------------------

def _branch(repo: Repo) -> str:
    done = git(repo, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    name = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not name:
        raise SyncError("HEAD is detached: check out a branch to sync")
    return name


def _remote_of(repo: Repo, branch: str, *, none_ok: bool = False) -> str | None:
    """The remote a sync of ``branch`` talks to: its upstream's, else ``origin``, else the
    only one; None when there is none and ``none_ok``, else ``SyncError``."""
    configured = _config(repo, f"branch.{branch}.remote")
    if configured and configured != ".":
        return configured
    remotes = git(repo, "remote").stdout.decode("utf-8", "replace").split()
    if "origin" in remotes:
        return "origin"
    if len(remotes) == 1:
        return remotes[0]
    if not remotes:
        if none_ok:
            return None
        raise NoRemote("no remote to sync with (git remote add origin URL, or --remote R)")
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

def fetch_branch(repo: Repo, remote: str, branch: str, progress: Progress | None,
                 timeout: float | None = None, *, hooks: bool = True) -> str | None:
    """Fetch ``branch`` from ``remote`` into its remote-tracking ref; that ref's commit, or
    None when the remote has no such branch yet (a first push). ``SyncError`` when the
    remote cannot be reached, ``SyncTimeout`` when it gives no answer in ``timeout``
    seconds (nothing local changed either way). ``hooks``: the repository's hooks run
    as git runs them (``sync``), else none does (a reading command's ``--fetch``)."""
    from .sync import READING, SyncTimeout

    tracking = f"refs/remotes/{remote}/{branch}"
    cmd = ["git", "-C", repo.top, "-c", "core.quotepath=off", *(() if hooks else READING),
           "fetch", "--progress", "--no-tags", remote, f"+refs/heads/{branch}:{tracking}"]
    try:
        code, _, err = run_git(cmd, env=git_env(), timeout=timeout, progress=progress)
    except SyncTimeout:
        raise SyncTimeout(f"fetch from {remote}: no answer in {timeout:g} s; stopped, nothing here changed") from None
    if code != 0:
        text = err.decode("utf-8", "replace")
        if "couldn't find remote ref" in text:
            return None
        raise SyncError(f"fetch from {remote}: {last_line(err) or f'git exit {code}'}")
    done = git(repo, "rev-parse", "-q", "--verify", f"{tracking}^{{commit}}", check=False)
    return done.stdout.decode().strip() or None


# --- 2. commit -------------------------------------------------------------------------

def _one_pass(repo: Repo, result: SyncResult, upstream: str | None, *, first: bool, restore: bool = False) -> None:
    old = _head(repo)
    local = old
    if first:
        local = _commit_new(repo, old, result)
    new, rebased = _rebase(repo, local, upstream)
    result.rebased = max(result.rebased, rebased)
    if new != old:
        update = update_tree(repo, local, new, restore=restore)
        pulled, kept = update.paths, update.kept
        index = _saved_index(repo)
        try:
            if kept:  # letters the remote deleted or rewrote: committed back as this copy has them
                new = _restore(repo, new, kept, local)
            # the index follows, for the paths this pass committed or brought and only those
            # (every other entry already matches HEAD, or holds what the user staged): each
            # is read again from the working tree, which now holds exactly those bytes
            touched = (result.staged if local != old else []) + pulled
            if touched:
                _refresh_index(repo, list(dict.fromkeys(touched)))
            _set_head(repo, new, old)
        except BaseException as exc:
            # refused (a reference-transaction hook, a failing index update): the index
            # and the working tree are put back as they were, HEAD never moved
            _put_back_index(repo, index)
            undo_tree(repo, update.applied)
            if isinstance(exc, SyncError) and update.applied is not None:
                raise SyncError(f"{exc}; HEAD, index and working tree are as they were") from None
            raise
        result.restored += [loss.path for loss in kept]
        result.pulled += len(pulled)
    result.head = new


def _saved_index(repo: Repo) -> bytes | None:
    """This work tree's index as it is now (None: there is none)."""
    try:
        with open(os.path.join(repo.git_dir, "index"), "rb") as f:
            return f.read()
    except OSError:
        return None


def _put_back_index(repo: Repo, saved: bytes | None) -> None:
    """Write ``saved`` back as the index, git's way (under ``index.lock``, then a rename)."""
    path = os.path.join(repo.git_dir, "index")
    if saved is None:
        return
    lock = path + ".lock"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except OSError:
        return  # git holds it: what it writes wins
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(saved)
        os.replace(lock, path)
    except OSError:
        try:
            os.unlink(lock)
        except OSError:
            pass


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
    base = None if head is None else _tree(repo, head)
    if base is not None and tree == base:
        return head
    committed = _changed(repo, base, tree)
    host = socket.gethostname() or "unknown"
    message = f"letterbox-tui sync on {host}: {_summary(repo, committed)}\n\nMachine: {host}\n"
    args = ["commit-tree", tree, "-F", "-"] + (["-p", head] if head else [])
    commit = git(repo, *args, input=message.encode(), env=_identity(repo, host)).stdout.decode().strip()
    result.commit = commit
    result.committed = [repo.local(p) for p in committed]
    result.staged = staged
    return commit


def _stage(repo: Repo, head: str | None, result: SyncResult) -> tuple[list[str], str | None]:
    """The paths sync reads into its commit now (those a writer holds locked are left
    waiting) and the tree of HEAD with them staged (None when there are none).

    A letter is read in both its folders, whichever the listing named: its owner moves it
    by one rename while ``git status`` lists, so the listing may have seen it still in
    ``inbox/`` and already in ``processed/`` (it names only the new half), or in neither;
    both halves read again here, after the listing, say where it is. A letter still in
    ``inbox/`` when git begins to read it and gone when git is done was moved as git read
    it (its inbox half may be read before the rename, its processed half after): it is
    read again, where it now stays. So no commit holds a letter in both folders, or in
    neither, because of a move."""
    unshared: list[str] = []
    _, paths = changed_paths(repo, status_raw(repo), unshared)
    listed = set(paths)
    staged = []
    for path in _with_other_halves(repo, paths):
        if _lifecycle_locked(repo, path):  # the letter waits, both halves
            if path in listed:
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

    def read(paths: list[str]) -> None:
        git(repo, "update-index", "--add", "--remove", "-z", "--stdin",
            input=b"".join(os.fsencode(p) + b"\0" for p in paths), env=env)

    try:
        if head is not None and not _copy_index(repo, index):
            git(repo, "read-tree", head, env=env)
        if head is not None and unshared:
            git(repo, "reset", "-q", head, "--pathspec-from-file=-", "--pathspec-file-nul",
                input=b"".join(b":(top,literal)" + os.fsencode(p) + b"\0" for p in unshared), env=env, check=False)
        in_inbox = [p for p in staged if _in_inbox(repo, p) and os.path.lexists(os.path.join(repo.top, p))]
        read(staged)
        moved = [p for p in in_inbox if not os.path.lexists(os.path.join(repo.top, p))]
        if moved:
            read(_with_other_halves(repo, moved))
        tree = git(repo, "write-tree", env=env).stdout.decode().strip()
    finally:
        try:
            os.unlink(index)
        except FileNotFoundError:
            pass
    return staged, tree


def _with_other_halves(repo: Repo, paths: list[str]) -> list[str]:
    """``paths`` and, for each letter among them, the same letter in its seat's other folder."""
    out = dict.fromkeys(paths)
    for p in paths:
        other = other_half(repo, p)
        if other is not None:
            out.setdefault(other)
    return list(out)


def _in_inbox(repo: Repo, path: str) -> bool:
    """Whether ``path`` (from the top) is a letter's ``inbox/`` half."""
    halves = letter_halves(repo, path)
    return halves is not None and halves[0] == path


def _changed(repo: Repo, base: str | None, tree: str) -> list[str]:
    """The paths (from the top) ``tree`` changes from the tree ``base`` (every path: None)."""
    if base is None:
        out = git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", tree).stdout
    else:
        out = git(repo, "diff-tree", "-r", "-z", "--name-only", "--no-renames", base, tree).stdout
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


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


def _tree(repo: Repo, commit: str) -> str:
    return git(repo, "rev-parse", f"{commit}^{{tree}}").stdout.decode().strip()


def _restore(repo: Repo, head: str, kept: list[Loss], source: str) -> str:
    """A commit on ``head`` that puts back the letters in ``kept`` as ``source`` (this
    copy's own commit) holds them."""
    index = os.path.join(repo.git_dir, f"letterbox-tui-restore.{os.getpid()}.index")
    env = {**git_env(), "GIT_INDEX_FILE": index}
    paths = [loss.top_path for loss in kept]
    try:
        git(repo, "read-tree", head, env=env)
        listed = git(repo, "ls-tree", "-z", "--full-tree", source, "--",
                     *(f":(top,literal){p}" for p in paths)).stdout
        git(repo, "update-index", "-z", "--index-info", input=listed, env=env)
        tree = git(repo, "write-tree", env=env).stdout.decode().strip()
    finally:
        try:
            os.unlink(index)
        except FileNotFoundError:
            pass
    host = socket.gethostname() or "unknown"
    n = len(kept)
    message = (f"letterbox-tui sync on {host}: {n} letter{'s' if n != 1 else ''} restored "
               "(deleted or rewritten elsewhere; letters are append-only)\n\n"
               + "".join(f"{loss.line()}\n" for loss in kept) + f"\nMachine: {host}\n")
    return git(repo, "commit-tree", tree, "-p", head, "-F", "-", input=message.encode("utf-8", "surrogateescape"),
               env=_identity(repo, host)).stdout.decode().strip()


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

def _push(repo: Repo, remote: str, branch: str, head: str | None, timeout: float | None = None) -> bool:
    """True when pushed (or nothing to push); False when the remote moved meanwhile;
    ``SyncTimeout`` when the remote (or a pre-push hook) gives no answer in ``timeout``."""
    from .sync import SyncTimeout

    if head is None:
        return True
    try:
        done = git(repo, "push", "--progress", "--porcelain", remote, f"{head}:refs/heads/{branch}", check=False, timeout=timeout)
    except SyncTimeout:
        raise SyncTimeout(f"push to {remote}: no answer in {timeout:g} s; stopped "
                          "(your letters are committed here; sync again)") from None
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

"""``letterbox-tui init --git``: a letterbox made shareable through git, and what sync's
commits are signed with (the user's identity, else this machine's user)."""

from __future__ import annotations

import os
import socket
import stat
import subprocess

from . import flags as fsflags
from .sync import MACHINE_FILES, Repo, SyncError, find_repo, git_env, last_line
from .sync import user_git as git  # sync's steps run the user's hooks, as git does


def config(repo: Repo, key: str) -> str | None:
    done = git(repo, "config", "--get", key, check=False)
    value = done.stdout.decode("utf-8", "replace").strip()
    return value if done.returncode == 0 and value else None


def identity(repo: Repo, host: str) -> dict[str, str]:
    """git's environment for a commit: the user's identity when git has one, else the
    operating-system user at this machine."""
    env = git_env()
    if config(repo, "user.email") is None or config(repo, "user.name") is None:
        user = os.environ.get("USER") or os.environ.get("LOGNAME") or "letterbox-tui"
        for who in ("AUTHOR", "COMMITTER"):
            env.setdefault(f"GIT_{who}_NAME", user)
            env.setdefault(f"GIT_{who}_EMAIL", f"{user}@{host}")
    return env


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
        env = identity(repo, socket.gethostname() or "unknown")
        git(repo, "commit", "-q", "--no-verify", "-m", "letterbox-tui init --git", env=env)
        did.append("a first commit")
    return did

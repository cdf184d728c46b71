"""A letterbox in git: the scope's sync block and one ``sync`` between two machines."""

from __future__ import annotations

import subprocess

import pytest

from letterbox_tui.core import sync as state
from letterbox_tui.core.scan import scan
from letterbox_tui.core.sync import SyncError, find_repo
from letterbox_tui.core.sync_run import fetch, init_git, sync
from letterbox_tui.core.write import init_letterbox
from tests.core.sync_helpers import git, letter_text, letters, machines, put, tree

L1 = "2026-01-01T000000-alpha-info-one-aaaaaaaa"
L2 = "2026-01-01T000100-beta-info-two-bbbbbbbb"


@pytest.fixture(autouse=True)
def _trust_recent(monkeypatch):
    # the kept sync block is reused even for files changed a moment ago (tests are quick)
    monkeypatch.setattr(state, "RACY_SECONDS", -1e9)


def test_outside_git_the_block_is_null(tmp_path):
    init_letterbox(tmp_path / "box", ["alpha"])
    assert find_repo(tmp_path / "box") is None
    assert scan(tmp_path / "box").scope.to_json()["sync"] is None


def test_the_scope_holds_the_block_and_runs_no_git(tmp_path, monkeypatch):
    """``Scope.sync`` is data: whoever makes the scope for a face fills it from
    ``status(root)``; making, reading or printing a scope never runs git."""
    _, a, _ = machines(tmp_path)
    block = state.status(a)
    assert block is not None and block["head"] is not None

    def no_git(*args, **kwargs):
        raise AssertionError(f"git ran: {args}")

    monkeypatch.setattr(subprocess, "Popen", no_git)
    monkeypatch.setattr(subprocess, "run", no_git)
    scope = scan(a).scope
    assert scope.sync is None and scope.to_json()["sync"] is None  # not filled: null, no git
    scope.sync = block
    assert scope.to_json()["sync"] == block


def test_a_letterbox_in_a_sub_directory_of_a_larger_repository(tmp_path):
    git(tmp_path, "init", "-q")
    init_letterbox(tmp_path / "team" / "mail", ["alpha", "beta"])
    repo = find_repo(tmp_path / "team" / "mail")
    assert repo is not None and repo.prefix == "team/mail"
    put(tmp_path, "team/mail/beta/inbox/" + L1 + ".md", letter_text(L1))
    put(tmp_path, "README.txt", "not mail")
    # merely inside a repository (a home kept in git for its dotfiles): not kept in git
    assert state.status(tmp_path / "team" / "mail") is None
    with pytest.raises(SyncError, match="lies inside the git repository at .* but is not kept in it"):
        sync(tmp_path / "team" / "mail")  # never swept into someone's dotfiles
    init_git(tmp_path / "team" / "mail")  # now it is
    block = state.status(tmp_path / "team" / "mail")
    assert block["head"] is None and block["upstream"] is None
    # the letter, .gitignore and 4 .gitkeep; not the file outside the letterbox
    assert block["uncommitted"] == 6


def test_never_fetched_ahead_and_behind(tmp_path):
    remote, a, b = machines(tmp_path)
    # never fetched: an upstream is configured but its ref is not here
    c = tmp_path / "c"
    init_letterbox(c, ["alpha", "beta"])
    init_git(c)
    branch = git(c, "symbolic-ref", "--short", "HEAD").strip()
    git(c, "remote", "add", "origin", str(remote))
    git(c, "config", f"branch.{branch}.remote", "origin")
    git(c, "config", f"branch.{branch}.merge", f"refs/heads/{branch}")
    block = state.status(c)
    assert block["upstream"] == f"origin/{branch}"
    assert (block["fetched_at"], block["behind"], block["ahead"]) == (None, None, 1)
    assert state.behind_line(block) == f"local copy never fetched from origin/{branch}"

    # current: a clone, nothing new
    block = state.status(b)
    assert (block["ahead"], block["behind"], block["uncommitted"]) == (0, 0, 0)
    assert block["fetched_at"] is not None and state.behind_line(block) == ""

    # ahead: a letter written (uncommitted), then committed without pushing
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    assert state.status(a)["uncommitted"] == 1
    sync(a, push=False)
    block = state.status(a)
    assert (block["ahead"], block["behind"], block["uncommitted"]) == (1, 0, 0)
    assert block["head"] == git(a, "rev-parse", "HEAD").strip()

    # behind: another machine pushed; reading never fetches, --fetch does
    put(b, f"alpha/inbox/{L2}.md", letter_text(L2, frm="beta", to="alpha"))
    sync(b)
    assert state.status(a)["behind"] == 0
    fetch(a)
    block = state.status(a)
    assert (block["ahead"], block["behind"]) == (1, 1)
    assert state.behind_line(block) == f"local copy as of {block['fetched_at']}, 1 behind"
    # a fetch that brings nothing still says when this copy was last compared
    import time as _time

    _time.sleep(1.1)  # fetched_at has whole seconds
    fetch(a)
    assert state.status(a)["fetched_at"] > block["fetched_at"]
    # then a sync takes the other machine's letter and gives its own
    sync(a)
    assert (state.status(a)["ahead"], state.status(a)["behind"]) == (0, 0)
    assert set(letters(a)) == {f"beta/inbox/{L1}.md", f"alpha/inbox/{L2}.md"}


def test_the_kept_block_follows_every_change(tmp_path, monkeypatch):
    _, a, _ = machines(tmp_path)
    first = state.status(a)
    calls = []
    real = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert state.status(a) == first and calls == []  # nothing changed: no git call
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    assert state.status(a)["uncommitted"] == 1 and calls
    git(a, "add", "-A")
    git(a, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "x")
    block = state.status(a)
    assert (block["uncommitted"], block["ahead"]) == (0, 1)
    # a seat's status note, rewritten in place as the protocol writes it (no rename)
    put(a, "alpha/status.md", "state: working\n")
    sync(a)
    assert state.status(a)["uncommitted"] == 0
    with open(a / "alpha" / "status.md", "w") as f:
        f.write("state: idle\n")
    assert state.status(a)["uncommitted"] == 1


def test_sync_commits_only_the_letterbox_and_never_temporaries_or_locks(tmp_path):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q")
    put(top, "code.py", "print(1)\n")
    git(top, "add", "code.py")
    git(top, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "code")
    git(top, "remote", "add", "origin", str(remote))
    mail = top / "mail"
    init_letterbox(mail, ["alpha", "beta"])
    init_git(mail)  # the existing repository is used, with the letterbox's .gitignore
    assert not (mail / ".git").exists()
    put(top, "code.py", "print(2)\n")  # a change outside the letterbox
    put(top, "notes.txt", "outside\n")  # an untracked file outside it
    put(mail, f"beta/inbox/{L1}.md", letter_text(L1))
    put(mail, f"beta/inbox/.{L2}.md.tmp.123456", "half a lett")  # a writer's temporary
    put(mail, f"beta/inbox/{L2}.md.lifecycle.lock/pid", "99999\n")  # a lifecycle lock
    put(mail, "alpha/status.md", "busy\n")
    put(mail, "locks/deploy/lease", "owner=alpha taken=2026-01-01T00:00:00Z\n")
    put(mail, "env.sh", f"export LETTERBOX_DIR='{mail}'\n")  # the protocol's set-up: this machine's paths
    put(mail, "cmux-agents.tsv", "alpha\tsurface:3\t2026-01-01T00:00:00Z\n")  # this machine's panes
    put(mail, "AGENT-LETTERBOX.md", "# startup rule\n")  # the set-up's shared instructions
    put(mail, ".cmux-agents.tmp.abc123", "half")  # a set-up temporary at the top
    git(top, "add", "-f", f"mail/beta/inbox/.{L2}.md.tmp.123456")  # staged by hand, all the same
    result = sync(mail)
    assert result.pushed
    changed = git(top, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([
        "mail/.gitignore", "mail/alpha/inbox/.gitkeep", "mail/alpha/processed/.gitkeep",
        "mail/beta/inbox/.gitkeep", "mail/beta/processed/.gitkeep",
        f"mail/beta/inbox/{L1}.md", "mail/alpha/status.md", "mail/locks/deploy/lease",
        "mail/AGENT-LETTERBOX.md",
    ])
    # a letterbox put in git without init's .gitignore keeps them out all the same
    (mail / ".gitignore").write_text("")
    assert state.status(mail)["uncommitted"] == 1  # only the emptied .gitignore
    assert git(top, "status", "--porcelain", "--", "code.py", "notes.txt").split() == ["M", "code.py", "??", "notes.txt"]
    assert git(top, "show", "HEAD:code.py") == "print(1)\n"
    # what the user staged by hand and sync does not share stays staged, uncommitted
    assert git(top, "diff", "--cached", "--name-only") == f"mail/beta/inbox/.{L2}.md.tmp.123456\n"


def test_a_letter_whose_lifecycle_lock_is_held_waits_for_the_next_sync(tmp_path):
    _, a, _ = machines(tmp_path)
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    (a / "beta" / "inbox" / f"{L1}.md.lifecycle.lock").mkdir()
    result = sync(a)
    assert result.waiting == [f"beta/inbox/{L1}.md"] and result.committed == []
    (a / "beta" / "inbox" / f"{L1}.md.lifecycle.lock").rmdir()
    assert sync(a).committed == [f"beta/inbox/{L1}.md"]


def test_a_same_path_conflict_is_refused_and_both_sides_keep_their_letters(tmp_path):
    _, a, b = machines(tmp_path)
    put(a, f"beta/inbox/{L2}.md", letter_text(L2))
    put(b, f"beta/inbox/{L1}.md", letter_text(L1, body="from b\n"))
    sync(b)
    put(a, f"beta/inbox/{L1}.md", letter_text(L1, body="from a\n"))  # same path, other bytes
    before, head = tree(a), git(a, "rev-parse", "HEAD")
    index = (a / ".git" / "index").read_bytes()
    with pytest.raises(SyncError, match=f"conflict with the remote on beta/inbox/{L1}.md"):
        sync(a)
    assert tree(a) == before and git(a, "rev-parse", "HEAD") == head
    assert (a / ".git" / "index").read_bytes() == index
    assert letters(a)[f"beta/inbox/{L1}.md"].endswith(b"from a\n")
    assert letters(b)[f"beta/inbox/{L1}.md"].endswith(b"from b\n")
    assert f"beta/inbox/{L2}.md" in letters(a)


def test_one_letter_moved_two_ways_is_refused(tmp_path):
    _, a, b = machines(tmp_path, seats=("alpha", "beta"))
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    sync(a)
    sync(b)
    (b / "beta" / "inbox" / f"{L1}.md").rename(b / "beta" / "processed" / f"{L1}.md")
    sync(b)
    (a / "beta" / "archive").mkdir()
    (a / "beta" / "inbox" / f"{L1}.md").rename(a / "beta" / "archive" / f"{L1}.md")
    before = tree(a)
    with pytest.raises(SyncError, match="conflict"):
        sync(a)
    assert tree(a) == before


@pytest.mark.parametrize("url", ["missing.git", "ssh://nobody@127.0.0.1:1/x.git"])
def test_an_unreachable_remote_changes_nothing_here(tmp_path, url):
    _, a, _ = machines(tmp_path)
    git(a, "remote", "set-url", "origin", str(tmp_path / url) if "://" not in url else url)
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    before, head = tree(a), git(a, "rev-parse", "HEAD")
    with pytest.raises(SyncError, match="fetch from origin: "):
        sync(a)
    assert tree(a) == before and git(a, "rev-parse", "HEAD") == head
    assert state.status(a)["uncommitted"] == 1


def test_no_remote_and_no_repository_are_one_line_refusals(tmp_path):
    init_letterbox(tmp_path / "box", ["alpha"])
    with pytest.raises(SyncError, match="not in a git repository"):
        sync(tmp_path / "box")
    init_git(tmp_path / "box")
    with pytest.raises(SyncError, match="no remote"):
        sync(tmp_path / "box")


def test_unpushed_lists_what_the_upstream_lacks(tmp_path):
    _, a, _ = machines(tmp_path)
    assert state.unpushed(a) == frozenset()
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    sync(a, push=False)
    put(a, f"alpha/inbox/{L2}.md", letter_text(L2, frm="beta", to="alpha"))
    assert state.unpushed(a) == {f"beta/inbox/{L1}.md", f"alpha/inbox/{L2}.md"}
    sync(a)
    assert state.unpushed(a) == frozenset()


def test_after_a_sync_only_the_files_that_arrived_are_read_again(tmp_path, monkeypatch):
    """sync rewrites no file whose bytes it does not change (new ones are linked in, gone
    ones unlinked): a header cache keeps every other letter, keyed by its unchanged stat."""

    class Cache:  # what the scan asks of a header cache (``core.scan.HeaderCache``)
        def __init__(self):
            self.items, self.hits, self.misses = {}, 0, 0

        def get(self, path, size, mtime_ns, inode, ctime_ns):
            kept = self.items.get(path)
            if kept is not None and kept[0] == (size, mtime_ns, inode, ctime_ns):
                self.hits += 1
                return kept[1]
            self.misses += 1
            return None

        def put_many(self, items, data, ctimes):
            for item, ctime_ns in zip(items, ctimes):
                self.items[item.path] = ((item.size, item.mtime_ns, item.inode, ctime_ns), item)

    cache = Cache()
    _, a, b = machines(tmp_path)
    ids = [f"2026-01-01T0000{i:02d}-alpha-info-n{i}-{i:08x}" for i in range(30)]
    for i in ids:
        put(a, f"beta/inbox/{i}.md", letter_text(i))
    sync(a)
    sync(b)

    def scanned_with_cache():
        cache.hits = cache.misses = 0
        return cache, scan(b, cache=cache)

    scanned_with_cache()  # warm
    new = [f"2026-01-02T0000{i:02d}-alpha-info-m{i}-{i:08x}" for i in range(3)]
    for i in new:
        put(a, f"beta/inbox/{i}.md", letter_text(i))
    (a / "beta" / "inbox" / f"{ids[0]}.md").rename(a / "beta" / "processed" / f"{ids[0]}.md")
    sync(a)
    assert sync(b).pulled == 5  # 3 new, 1 moved (gone from inbox, new in processed)
    cache, snap = scanned_with_cache()
    assert len(snap.letters) == 33
    assert (cache.hits, cache.misses) == (29, 4)  # not a cold scan: only what arrived is read


def test_the_update_waits_for_a_letters_lifecycle_lock(tmp_path, monkeypatch):
    """A letter the upstream moved is not touched while a local writer holds its lock."""
    import os

    from letterbox_tui.core import sync_tree

    _, a, b = machines(tmp_path)
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    sync(a)
    sync(b)
    (b / "beta" / "inbox" / f"{L1}.md").rename(b / "beta" / "processed" / f"{L1}.md")  # filed on b
    sync(b)
    lock = a / "beta" / "inbox" / f"{L1}.md.lifecycle.lock"
    lock.mkdir()
    (lock / "pid").write_text(f"{os.getpid()}\n")  # a live writer holds it
    monkeypatch.setattr(sync_tree, "LOCK_LETTER_WAIT", 0.2)
    before = tree(a)
    with pytest.raises(SyncError, match="lifecycle lock"):
        sync(a)
    assert tree(a) == before
    (lock / "pid").unlink()
    lock.rmdir()
    sync(a)
    assert f"beta/processed/{L1}.md" in letters(a) and f"beta/inbox/{L1}.md" not in letters(a)

"""sync at the limits: a copy far behind under the usual open-file limit, and a hook that
refuses the HEAD update (issue 28 items 5-6). Real git."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from letterbox_tui.core import sync as state
from letterbox_tui.core.sync import SyncError
from letterbox_tui.core.sync_run import sync
from tests.core.sync_helpers import git, letter_text, letters, machines, put, tree

BOB = ("-c", "user.name=Bob", "-c", "user.email=bob@other")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(state, "RACY_SECONDS", -1e9)


def ids(prefix: str, n: int) -> list[str]:
    return [f"2026-01-01T{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}-alpha-info-{prefix}{i}-{i:08x}" for i in range(n)]


@pytest.mark.slow
def test_a_copy_a_thousand_letters_behind_syncs_under_ulimit_1024(tmp_path):
    _, a, b = machines(tmp_path)
    old = ids("old", 400)
    for i in old:
        put(a, f"beta/inbox/{i}.md", letter_text(i))
    sync(a)
    sync(b)
    new = ids("new", 1000)
    for i in new:
        put(b, f"beta/inbox/{i}.md", letter_text(i))
    for i in old:  # and every old one filed there: moves out of the inbox
        os.rename(b / "beta" / "inbox" / f"{i}.md", b / "beta" / "processed" / f"{i}.md")
    git(b, "add", "-A")
    git(b, *BOB, "commit", "-qm", "a busy day")
    git(b, "push", "-q", "origin", "HEAD")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    done = subprocess.run(["sh", "-c", 'ulimit -n 1024 && exec "$0" -m letterbox_tui --root "$1" sync',
                           sys.executable, str(a)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert letters(a) == letters(b) and len(letters(a)) == 1400
    assert git(a, "status", "--porcelain") == "" and git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD")


def test_a_hook_refusing_the_head_update_leaves_index_and_tree_as_they_were(tmp_path):
    _, a, b = machines(tmp_path)
    for i in ids("x", 3):
        put(b, f"beta/inbox/{i}.md", letter_text(i))
    sync(b)
    hook = a / ".git" / "hooks" / "reference-transaction"
    hook.write_text('#!/bin/sh\n[ "$1" = prepared ] && grep -q " HEAD$" && exit 1\nexit 0\n')
    hook.chmod(0o755)
    put(a, "alpha/status.md", "here\n")
    before, head, index = tree(a), git(a, "rev-parse", "HEAD"), (a / ".git" / "index").read_bytes()
    with pytest.raises(SyncError, match="HEAD"):
        sync(a)
    assert tree(a) == before and git(a, "rev-parse", "HEAD") == head
    assert (a / ".git" / "index").read_bytes() == index
    assert git(a, "diff", "--cached", "--name-only") == ""
    hook.unlink()
    sync(a)
    assert len([p for p in letters(a) if "/inbox/" in p]) == 3

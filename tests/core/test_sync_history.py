"""Provenance from git history: a shallow clone says its history is cut, and one walk of the
history serves every letter a command shows (issue 28 items 7-8). Real git."""

from __future__ import annotations

import json
import subprocess

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core import sync as state
from letterbox_tui.core.schema import validate
from letterbox_tui.core import sync_history
from letterbox_tui.core.sync_history import added, added_all
from letterbox_tui.core.sync_run import sync
from tests.core.sync_helpers import git, letter_text, machines, put

OLD = "2026-01-01T000000-alpha-info-old-aaaaaaaa"
NEW = "2026-01-02T000000-alpha-info-new-bbbbbbbb"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(state, "RACY_SECONDS", -1e9)


def test_a_shallow_clone_says_the_history_is_cut(tmp_path, capsys):
    remote, a, _ = machines(tmp_path)
    put(a, f"beta/inbox/{OLD}.md", letter_text(OLD))
    sync(a)
    put(a, "alpha/status.md", "busy\n")
    sync(a)  # a later commit: the shallow clone's boundary
    c = tmp_path / "c"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{remote}", str(c)], check=True, capture_output=True)
    put(a, f"beta/inbox/{NEW}.md", letter_text(NEW))
    sync(a)
    git(c, "pull", "-q")
    old = added(c, f"beta/inbox/{OLD}.md")
    assert old["commit"] is None and old["committed_at"] is None and old["author"] is None
    assert old["unknown"].startswith("this clone is shallow: its history is cut at ")
    new = added(c, f"beta/inbox/{NEW}.md")
    assert new["commit"] == git(a, "rev-parse", "HEAD").strip() and "unknown" not in new
    assert added(a, f"beta/inbox/{OLD}.md")["commit"] is not None  # a full clone knows
    # show says so, in text and JSON (the schema holds)
    assert main(["--root", str(c), "show", OLD, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate("show", doc)
    assert doc["letters"][0]["provenance"]["history"] == old
    assert main(["--root", str(c), "show", OLD]) == 0
    assert "arrival unknown: this clone is shallow" in capsys.readouterr().out


def test_one_walk_serves_every_letter(tmp_path, monkeypatch):
    _, a, _ = machines(tmp_path)
    ids = [f"2026-01-01T0000{i:02d}-alpha-info-n{i}-{i:08x}" for i in range(5)]
    for i in ids:
        put(a, f"beta/inbox/{i}.md", letter_text(i))
        sync(a)
    (a / "beta" / "inbox" / f"{ids[0]}.md").rename(a / "beta" / "processed" / f"{ids[0]}.md")
    sync(a)
    paths = [f"beta/processed/{ids[0]}.md"] + [f"beta/inbox/{i}.md" for i in ids[1:]] + ["beta/inbox/none.md"]
    one_by_one = {p: added(a, p) for p in paths}
    logs = []
    real = sync_history.git
    monkeypatch.setattr(sync_history, "git", lambda repo, *args, **kw: logs.append(args[0]) or real(repo, *args, **kw))
    assert added_all(a, paths) == one_by_one
    assert logs.count("log") == 1 and one_by_one["beta/inbox/none.md"] is None
    assert len({h["commit"] for h in one_by_one.values() if h}) == 5  # each its own arrival


def test_a_letter_merged_from_another_line_names_the_commit_that_brought_it(tmp_path):
    _, a, _ = machines(tmp_path)
    git(a, "config", "user.name", "A")
    git(a, "config", "user.email", "a@m")
    git(a, "checkout", "-q", "-b", "side")
    put(a, f"beta/inbox/{OLD}.md", letter_text(OLD))
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "on the other line")
    brought = git(a, "rev-parse", "HEAD").strip()
    git(a, "checkout", "-q", "-")
    put(a, f"beta/inbox/{NEW}.md", letter_text(NEW))
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "here")
    git(a, "merge", "-q", "--no-ff", "-m", "merge", "side")
    got = added_all(a, [f"beta/inbox/{OLD}.md", f"beta/inbox/{NEW}.md"])
    assert got[f"beta/inbox/{OLD}.md"]["commit"] == brought  # not the merge
    assert got[f"beta/inbox/{NEW}.md"]["commit"] == git(a, "rev-parse", "HEAD^1").strip()


def _history(root, commits: int):
    """A repository where each of ``commits`` commits brings one letter into beta/inbox."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    stream = []
    for i in range(commits):
        text = letter_text(f"l-{i}").encode()
        stream += [b"commit refs/heads/main\n", b"committer A <a@m> %d +0000\n" % (1700000000 + i),
                   b"data 3\nl%d\n" % (i % 10), b"M 100644 inline beta/inbox/l-%d.md\n" % i,
                   b"data %d\n%s\n" % (len(text), text)]
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "main"], check=True)


def test_the_oldest_letter_is_found_by_bisecting_the_history(tmp_path, monkeypatch):
    """Walking every commit's change to a folder (``git log -- PATH``) costs commits x
    folder size: x5 in CPU from 2,000 to 8,000 commits into one inbox, x11 from 4,000 to
    16,000. The history is listed once and bisected: each step one ``cat-file`` for every
    letter, about log2(commits) of them, and one ``log`` of the arrivals alone."""
    calls = []
    real = sync_history.git
    monkeypatch.setattr(sync_history, "git", lambda repo, *args, **kw: calls.append(args) or real(repo, *args, **kw))
    for n in (64, 256):
        _history(tmp_path / str(n), n)
        calls.clear()
        got = added_all(tmp_path / str(n), ["beta/inbox/l-0.md", f"beta/inbox/l-{n // 3}.md", f"beta/inbox/l-{n - 1}.md"])
        for i in (0, n // 3, n - 1):
            want = git(tmp_path / str(n), "log", "--format=%H", "--diff-filter=A", "--", f"beta/inbox/l-{i}.md").split()
            assert got[f"beta/inbox/l-{i}.md"]["commit"] == want[-1]
        kinds = [c[0] for c in calls]
        assert kinds.count("rev-list") == 1 and kinds.count("log") == 1
        assert "--no-walk=unsorted" in next(c for c in calls if c[0] == "log")  # the arrivals alone
        assert kinds.count("cat-file") <= n.bit_length() + 1

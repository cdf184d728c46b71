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

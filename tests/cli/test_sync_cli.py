"""``letterbox-tui sync``, ``init --git`` and what reading commands say about a copy in git."""

from __future__ import annotations

import json
import pytest

from letterbox_tui.cli import main
from letterbox_tui.core import sync as state
from letterbox_tui.core.schema import validate
from tests.core.sync_helpers import git, letter_text, machines, put, tree

L1 = "2026-01-01T000000-alpha-info-one-aaaaaaaa"


@pytest.fixture(autouse=True)
def _trust_recent(monkeypatch):
    monkeypatch.setattr(state, "RACY_SECONDS", -1e9)


def run(capsys, root, *argv):
    code = main(["--root", str(root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_init_git_then_sync_json(tmp_path, capsys):
    code, out, _ = run(capsys, tmp_path / "box", "init", str(tmp_path / "box"), "--seats", "alpha,beta", "--git")
    assert code == 0 and "kept in git: a git repository, .gitignore, 4 .gitkeep, a first commit" in out
    assert "*.lifecycle.lock/" in (tmp_path / "box" / ".gitignore").read_text()
    code, _, err = run(capsys, tmp_path / "box", "sync")
    assert (code, err) == (2, "letterbox-tui: no remote to sync with (git remote add origin URL, or --remote R)\n")
    # --no-push asks nothing of a remote: with none, what is new is committed here
    L0 = "2026-01-01T000000-alpha-info-zero-bbbbbbbb"
    put(tmp_path / "box", f"beta/inbox/{L0}.md", letter_text(L0))
    code, out, err = run(capsys, tmp_path / "box", "sync", "--no-push")
    assert (code, err) == (0, "") and out.startswith("committed on ") and "1 file committed; no remote" in out
    assert git(tmp_path / "box", "status", "--porcelain") == ""
    put(tmp_path / "box", f"beta/inbox/{L0[:-8]}cccccccc.md", letter_text(L0[:-8] + "cccccccc"))
    code, out, _ = run(capsys, tmp_path / "box", "sync", "--no-push", "--json")
    data = json.loads(out)
    assert code == 0 and data["remote"] is None and not data["pushed"] and len(data["committed"]) == 1
    validate("sync", data)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path / "box", "remote", "add", "origin", str(remote))
    put(tmp_path / "box", f"beta/inbox/{L1}.md", letter_text(L1))
    code, out, _ = run(capsys, tmp_path / "box", "sync", "--json")
    data = json.loads(out)
    assert code == 0 and data["pushed"] and data["committed"] == [f"beta/inbox/{L1}.md"]
    assert data["sync"]["ahead"] == 0 and data["sync"]["uncommitted"] == 0
    assert git(remote, "rev-list", "--count", "HEAD").strip() == "4"  # init's, two made without a remote, this one
    validate("sync", data)  # the schema module's SyncDocument, strict


def test_outside_git_and_unreachable_are_one_line_exit_2(tmp_path, capsys):
    _, a, _ = machines(tmp_path)
    code, _, err = run(capsys, a, "query", "--fetch")
    assert code == 0 and err == ""
    git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    before = tree(a)
    code, out, err = run(capsys, a, "sync")
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("letterbox-tui: fetch from origin: ")
    assert tree(a) == before
    code, _, err = run(capsys, a, "query", "--fetch")
    assert code == 2 and err.startswith("letterbox-tui: fetch from origin: ")


def test_reading_commands_say_how_current_the_copy_is(tmp_path, capsys):
    _, a, b = machines(tmp_path)
    put(b, f"beta/inbox/{L1}.md", letter_text(L1))
    assert run(capsys, b, "sync")[0] == 0
    code, out, _ = run(capsys, a, "exists", "type=info")
    assert code == 0 and out.startswith("no (in this copy, as of ")
    code, out, _ = run(capsys, a, "query", "type=info", "--fetch")
    block = state.status(a)
    assert f"local copy as of {block['fetched_at']}, 1 behind" in out
    code, out, _ = run(capsys, a, "query", "type=info", "--json")
    assert json.loads(out)["scope"]["sync"] == block and block["behind"] == 1
    validate("query", json.loads(out))  # the scope's sync block as the schema says
    run(capsys, a, "sync")
    code, out, _ = run(capsys, a, "exists", "type=info")
    assert out.startswith("yes") and "behind" not in out


def test_an_answer_follows_the_copy_state(tmp_path, capsys):
    _, a, b = machines(tmp_path)
    first = json.loads(run(capsys, a, "query", "--json")[1])["scope"]["sync"]
    put(b, f"beta/inbox/{L1}.md", letter_text(L1))
    run(capsys, b, "sync")
    run(capsys, a, "exists", "--fetch", "--json")  # a fetch: no letter file changed here
    again = json.loads(run(capsys, a, "query", "--json")[1])["scope"]["sync"]
    assert (first["behind"], again["behind"]) == (0, 1)


def test_show_gives_the_commit_that_brought_the_letter(tmp_path, capsys):
    import socket

    _, a, b = machines(tmp_path)
    put(b, f"beta/inbox/{L1}.md", letter_text(L1))
    code, out, _ = run(capsys, b, "show", L1, "--json")
    assert json.loads(out)["letters"][0]["provenance"]["history"] is None  # not committed yet
    run(capsys, b, "sync")
    run(capsys, a, "sync")
    (a / "beta" / "inbox" / f"{L1}.md").rename(a / "beta" / "processed" / f"{L1}.md")  # filed later
    run(capsys, a, "sync")
    code, out, _ = run(capsys, a, "show", L1, "--json")
    doc = json.loads(out)
    validate("show", doc)
    history = doc["letters"][0]["provenance"]["history"]
    arrival = git(b, "log", "--format=%H", "-1", "--", f"beta/inbox/{L1}.md").strip()
    assert history["commit"] == arrival  # its arrival, not the later move
    assert history["machine"] == socket.gethostname()
    code, out, _ = run(capsys, a, "show", L1)
    assert f"committed {history['committed_at']} by " in out and "(sent 2026-01-01T00:00:00Z)" in out


def test_a_long_fetch_shows_a_progress_line(tmp_path, capsys, monkeypatch):
    from letterbox_tui.cli import sync as sync_cli

    _, a, b = machines(tmp_path)
    for i in range(40):
        put(b, f"beta/inbox/2026-01-01T0000{i:02d}-alpha-info-p{i}-{i:08x}.md",
            letter_text(f"2026-01-01T0000{i:02d}-alpha-info-p{i}-{i:08x}", body=f"{i}\n" * 2000))
    run(capsys, b, "sync")
    monkeypatch.setattr(sync_cli, "PROGRESS_AFTER", 0.0)  # every fetch counts as long here
    code, out, err = run(capsys, a, "sync")
    assert code == 0 and "40 from origin" in out
    lines = err.splitlines()
    assert lines and all(ln and "\r" not in ln for ln in lines)  # whole lines on a pipe
    assert any("objects" in ln for ln in lines), lines  # git's own progress, e.g. "Unpacking objects: 100% …"


def test_a_conflict_is_one_line_naming_the_path_exit_2(tmp_path, capsys):
    _, a, b = machines(tmp_path)
    put(b, f"beta/inbox/{L1}.md", letter_text(L1, body="from b\n"))
    run(capsys, b, "sync")
    put(a, f"beta/inbox/{L1}.md", letter_text(L1, body="from a\n"))
    before = tree(a)
    code, out, err = run(capsys, a, "sync")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"letterbox-tui: conflict with the remote on beta/inbox/{L1}.md: nothing was rebased")
    assert tree(a) == before

"""Letters are append-only across machines: another clone's deletion or in-place rewrite
of a letter is never applied here (issue 28 items 1-2). Real git, two clones."""

from __future__ import annotations

import json

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core import sync as state
from letterbox_tui.core.sync_losses import remote_losses
from letterbox_tui.core.sync_run import fetch, sync
from letterbox_tui.core.sync_tree import LettersRefused
from tests.core.sync_helpers import git, letter_text, letters, machines, put, tree

IDS = [f"2026-01-01T0000{i:02d}-alpha-info-n{i}-{i:08x}" for i in range(6)]
BOB = ("-c", "user.name=Bob", "-c", "user.email=bob@other")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(state, "RACY_SECONDS", -1e9)


def shared(tmp_path):
    """Two clones holding the same six letters."""
    remote, a, b = machines(tmp_path)
    for i in IDS:
        put(a, f"beta/inbox/{i}.md", letter_text(i))
    sync(a)
    sync(b)
    return a, b


def pushed(b, *args):
    git(b, *BOB, "commit", "-qm", "tidy up", *args)
    git(b, "push", "-q", "origin", "HEAD")
    return git(b, "rev-parse", "HEAD").strip()


def snapshot(a):
    return tree(a), git(a, "rev-parse", "HEAD"), (a / ".git" / "index").read_bytes()


def test_another_machines_deletion_is_refused_and_the_letters_kept(tmp_path):
    a, b = shared(tmp_path)
    git(b, "rm", "-q", *(f"beta/inbox/{i}.md" for i in IDS[:5]))
    commit = pushed(b)
    before = snapshot(a)
    with pytest.raises(LettersRefused) as caught:
        sync(a)
    assert snapshot(a) == before and len(letters(a)) == 6
    lines = str(caught.value).splitlines()
    assert lines[1:6] == [f"  beta/inbox/{i}.md deleted on {commit[:12]} by Bob <bob@other>" for i in IDS[:5]]
    assert len(lines) == 7 and "--restore-letters" in lines[-1]
    # check says so, as a problem, until it is settled
    losses = remote_losses(a)
    assert [(x.path, x.kind, x.commit) for x in losses] == [(f"beta/inbox/{i}.md", "deleted", commit) for i in IDS[:5]]


def test_an_in_place_rewrite_is_refused(tmp_path):
    a, b = shared(tmp_path)
    put(b, f"beta/inbox/{IDS[0]}.md", letter_text(IDS[0], to="alpha"))  # to: changed
    git(b, "add", "-A")
    commit = pushed(b)
    before = snapshot(a)
    with pytest.raises(LettersRefused, match=f"beta/inbox/{IDS[0]}.md rewritten on {commit[:12]} by Bob"):
        sync(a)
    assert snapshot(a) == before
    assert b"to: beta" in letters(a)[f"beta/inbox/{IDS[0]}.md"]


def test_a_move_to_processed_is_no_loss_but_a_move_that_rewrites_is(tmp_path):
    a, b = shared(tmp_path)
    git(b, "mv", f"beta/inbox/{IDS[0]}.md", f"beta/processed/{IDS[0]}.md")
    git(b, "mv", f"beta/inbox/{IDS[1]}.md", f"beta/processed/{IDS[1]}.md")
    put(b, f"beta/processed/{IDS[1]}.md", letter_text(IDS[1], body="changed\n"))
    git(b, "add", "-A")
    pushed(b)
    with pytest.raises(LettersRefused) as caught:
        sync(a)
    assert [x.path for x in caught.value.losses] == [f"beta/inbox/{IDS[1]}.md"]
    assert caught.value.losses[0].kind == "rewritten"



def test_a_move_committed_in_two_steps_is_no_loss(tmp_path):
    """A commit holding a letter in both folders (made between a move's steps: by a mover
    that links then unlinks, or by an earlier sync whose listing straddled the rename),
    then one removing its inbox half: the letter was moved, not deleted, although its
    processed half arrived in an earlier sync."""
    a, b = shared(tmp_path)
    put(b, f"beta/processed/{IDS[0]}.md", letter_text(IDS[0]))
    git(b, "add", "-A")
    pushed(b)
    sync(a)
    assert f"beta/inbox/{IDS[0]}.md" in letters(a) and f"beta/processed/{IDS[0]}.md" in letters(a)
    git(b, "rm", "-q", f"beta/inbox/{IDS[0]}.md")
    pushed(b)
    fetch(a)
    assert remote_losses(a) == []  # check agrees
    assert sync(a).pulled == 1
    assert f"beta/inbox/{IDS[0]}.md" not in letters(a) and letters(a) == letters(b)


def test_a_letter_removed_from_inbox_beside_other_bytes_in_processed_is_a_loss(tmp_path):
    """The same two steps where the processed half holds other bytes: the inbox letter is
    rewritten, refused as before."""
    a, b = shared(tmp_path)
    put(b, f"beta/processed/{IDS[0]}.md", letter_text(IDS[0], body="other\n"))
    git(b, "add", "-A")
    pushed(b)
    sync(a)
    git(b, "rm", "-q", f"beta/inbox/{IDS[0]}.md")
    commit = pushed(b)
    with pytest.raises(LettersRefused, match=f"beta/inbox/{IDS[0]}.md rewritten on {commit[:12]} by Bob"):
        sync(a)


def test_restore_letters_takes_the_rest_and_commits_the_letters_back(tmp_path):
    a, b = shared(tmp_path)
    git(b, "rm", "-q", f"beta/inbox/{IDS[0]}.md")
    put(b, f"beta/inbox/{IDS[1]}.md", letter_text(IDS[1], to="alpha"))
    new = "2026-01-02T000000-beta-info-new-cccccccc"
    put(b, f"alpha/inbox/{new}.md", letter_text(new, frm="beta", to="alpha"))
    git(b, "add", "-A")
    pushed(b)
    kept = letters(a)
    result = sync(a, restore_letters=True)
    assert result.restored == [f"beta/inbox/{IDS[0]}.md", f"beta/inbox/{IDS[1]}.md"] and result.pushed
    mine = letters(a)
    assert {k: mine[k] for k in kept} == kept and f"alpha/inbox/{new}.md" in mine  # the rest arrived
    assert state.status(a)["uncommitted"] == 0 and git(a, "status", "--porcelain") == ""
    assert remote_losses(a) == []
    sync(b)  # the other machine gets them back as they were
    assert letters(b) == mine


def test_check_reports_it_and_sync_on_the_command_line_is_one_line_per_letter(tmp_path, capsys):
    a, b = shared(tmp_path)
    git(b, "rm", "-q", f"beta/inbox/{IDS[0]}.md", f"beta/inbox/{IDS[2]}.md")
    commit = pushed(b)
    code = main(["--root", str(a), "sync"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.splitlines()[1:3] == [f"  beta/inbox/{i}.md deleted on {commit[:12]} by Bob <bob@other>"
                                     for i in (IDS[0], IDS[2])]
    code = main(["--root", str(a), "check", "--json"])
    found = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "remote-deletion"]
    assert code == 1 and [f["paths"] for f in found] == [[f"beta/inbox/{IDS[0]}.md"], [f"beta/inbox/{IDS[2]}.md"]]
    assert found[0]["severity"] == "problem" and f"deleted on {commit[:12]} by Bob" in found[0]["detail"]
    code = main(["--root", str(a), "sync", "--restore-letters", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["restored"] == [f"beta/inbox/{IDS[0]}.md",
                                                                               f"beta/inbox/{IDS[2]}.md"]
    assert main(["--root", str(a), "check"]) == 0

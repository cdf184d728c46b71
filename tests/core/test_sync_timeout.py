"""A remote that never answers: network steps stop after the letterbox's timeout, end their
git and ssh, and leave this copy as it was (issue 27 item 7, issue 28 item 6)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core import sync as state
from letterbox_tui.core.sync import SyncTimeout
from letterbox_tui.core.sync_run import sync
from tests.core.sync_helpers import alive, git, hanging_ssh, letter_text, machines, put, tree, wait_for

L1 = "2026-01-01T000000-alpha-info-one-aaaaaaaa"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(state, "RACY_SECONDS", -1e9)


def stalled(tmp_path, monkeypatch, seconds: float = 1):
    """Machine a, whose remote's transport connects and never answers, with a short
    ``[git] network_timeout``."""
    _, a, _ = machines(tmp_path)
    ssh, pids = hanging_ssh(tmp_path)
    monkeypatch.setenv("GIT_SSH_COMMAND", ssh)
    git(a, "remote", "set-url", "origin", "ssh://nobody@remote.invalid/x.git")
    put(a, "letterbox-tui.toml", f"[git]\nnetwork_timeout = {seconds}\n")
    return a, pids


def ended(pids):
    return [int(p) for p in pids.read_text().split()] if pids.exists() else []


def gone(pids):
    """The stalled transport's processes end: a SIGKILL sent to their group takes effect
    when each is next scheduled, which on a loaded machine may be a moment after the
    command returned (one never sent it runs on, and this fails)."""
    wait_for(lambda: not any(alive(p) for p in ended(pids)), timeout=10, what="the stalled ssh to end")


def test_a_fetch_that_never_answers_stops_with_nothing_changed(tmp_path, monkeypatch):
    a, pids = stalled(tmp_path, monkeypatch)
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    before, head = tree(a), git(a, "rev-parse", "HEAD")
    began = time.monotonic()
    with pytest.raises(SyncTimeout, match=r"^fetch from origin: no answer in 1 s; stopped, nothing here changed$"):
        sync(a)
    assert time.monotonic() - began < 20
    assert tree(a) == before and git(a, "rev-parse", "HEAD") == head
    assert ended(pids)
    gone(pids)  # its ssh too


def test_sync_on_the_command_line_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    a, pids = stalled(tmp_path, monkeypatch)
    before = tree(a)
    code = main(["--root", str(a), "sync"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and err == "letterbox-tui: fetch from origin: no answer in 1 s; stopped, nothing here changed\n"
    assert tree(a) == before
    gone(pids)


def test_query_fetch_answers_from_the_local_copy_as_of_the_last_fetch(tmp_path, monkeypatch, capsys):
    a, pids = stalled(tmp_path, monkeypatch)
    fetched = state.status(a)["fetched_at"]
    assert fetched is not None
    code = main(["--root", str(a), "query", "--fetch", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["scope"]["sync"]["fetched_at"] == fetched
    assert err == ("letterbox-tui: fetch from origin: no answer in 1 s; stopped, nothing here changed; "
                   f"answering from the local copy (as of {fetched})\n")
    gone(pids)


def test_a_hanging_pre_push_hook_is_stopped_and_ended(tmp_path, monkeypatch):
    _, a, _ = machines(tmp_path)
    put(a, "letterbox-tui.toml", "[git]\nnetwork_timeout = 1\n")
    pids = tmp_path / "hook.pids"
    hook = a / ".git" / "hooks" / "pre-push"
    hook.write_text(f"#!/bin/sh\necho $$ >> '{pids}'\nexec sleep 600\n")
    hook.chmod(0o755)
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    with pytest.raises(SyncTimeout, match=r"^push to origin: no answer in 1 s; stopped \(your letters are committed here"):
        sync(a)
    assert ended(pids)
    # the hook's group was sent SIGKILL; on a loaded machine the kernel takes a moment to end it
    wait_for(lambda: not any(alive(p) for p in ended(pids)), timeout=10, what="the hook's processes to end")
    hook.unlink()
    assert sync(a).pushed  # the next sync pushes what was committed


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_sync_killed_meanwhile_leaves_no_git_or_ssh_running(tmp_path, monkeypatch, sig):
    a, pids = stalled(tmp_path, monkeypatch, seconds=600)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, "-m", "letterbox_tui", "--root", str(a), "sync"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        ssh = wait_for(lambda: ended(pids) or proc.poll() is not None, timeout=120, what="the transport to start")
    except AssertionError:
        proc.kill()
        raise
    assert proc.poll() is None, proc.communicate()[1]
    ssh = ended(pids)[0]
    assert alive(ssh)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode in (130, 128 + signal.SIGTERM), err
    wait_for(lambda: not alive(ssh), timeout=30, what=f"the transport to end ({err!r})")
    assert b"Traceback" not in err


def test_the_timeout_is_a_letterbox_setting(tmp_path):
    from letterbox_tui.core.errors import LetterboxError
    from letterbox_tui.core.settings import load_settings
    from letterbox_tui.core.write import init_letterbox

    init_letterbox(tmp_path, ["alpha"])
    assert load_settings(tmp_path).network_timeout == 30.0  # the default, no file
    put(tmp_path, "letterbox-tui.toml", "[git]\nnetwork_timeout = 2.5\n")
    assert load_settings(tmp_path).network_timeout == 2.5
    for bad, said in (('"soon"', "must be a number of seconds"), ("0", "greater than 0"), ("true", "number of seconds")):
        put(tmp_path, "letterbox-tui.toml", f"[git]\nnetwork_timeout = {bad}\n")
        with pytest.raises(LetterboxError, match=said) as caught:
            load_settings(tmp_path)
        assert "\n" not in str(caught.value) and "[git]" in str(caught.value)

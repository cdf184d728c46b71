"""A draft survives the app being killed (kill -9) mid-compose, in a real terminal: the next
start offers it back. Nothing is written into the letterbox."""

from __future__ import annotations

import os
import signal
import time

from tests.app.test_terminal_tmux import cli, needs_tmux, tmux  # noqa: F401  (the fixture)
from tests.conftest import make_box


@needs_tmux
def test_a_draft_survives_kill_9_and_is_offered_back(tmux, tmp_path):  # noqa: F811
    box = make_box(tmp_path / "box", "alpha", "beta")
    box.letter("2026-11-27T090000-beta-info-hello-abcdef03", frm="beta", to="alpha", sent="2026-11-27T09:00:00Z")
    before = box.tree_bytes()
    tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "app", cli(box.root))
    tmux.wait("app", lambda s: "Owed" in s)
    tmux("send-keys", "-t", "app", "c")
    tmux.wait("app", lambda s: "Compose a letter" in s and "Send" in s)  # Send is on screen at 80x24
    time.sleep(0.5)
    for _ in range(2):  # To -> Type -> Slug
        tmux("send-keys", "-t", "app", "Tab")
        time.sleep(0.3)
    tmux("send-keys", "-t", "app", "-l", "crash-proof")
    tmux.wait("app", lambda s: "crash-proof" in s)
    time.sleep(1.0)  # the form keeps itself as it is typed
    pid = int(tmux.info("app", "#{pane_pid}"))
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    tmux.wait_dead("app")
    assert box.tree_bytes() == before
    tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "again", cli(box.root))
    shown = tmux.wait("again", lambda s: "A draft was kept" in s)
    assert "crash-proof" in shown
    tmux("send-keys", "-t", "again", "Enter")  # Restore has the focus
    shown = tmux.wait("again", lambda s: "Compose a letter" in s)
    assert "crash-proof" in shown

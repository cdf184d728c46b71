"""A draft survives the app being killed (kill -9) mid-compose, in a real terminal: the next
start offers it back. Nothing is written into the letterbox."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from tests.app.test_terminal_tmux import cli, needs_tmux, tmux  # noqa: F401  (the fixture)
from tests.conftest import make_box


def kept_slugs(home: Path) -> list[str]:
    """The slugs of the drafts kept under ``home``'s state directory (XDG's default)."""
    out = []
    for path in home.glob(".local/state/letterbox-tui/drafts/*/*.json"):
        try:
            out.append(json.loads(path.read_text())["fields"].get("slug", ""))
        except (OSError, ValueError, KeyError):
            pass  # (replaced atomically, but a listing may name one just renamed over)
    return out


def wait_for(predicate, timeout: float = 12.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached")


@needs_tmux
def test_a_draft_survives_kill_9_and_is_offered_back(tmux, tmp_path):  # noqa: F811
    box = make_box(tmp_path / "box", "alpha", "beta")
    box.letter("2026-11-27T090000-beta-info-hello-abcdef03", frm="beta", to="alpha", sent="2026-11-27T09:00:00Z")
    before = box.tree_bytes()
    home = Path(tmux.env["HOME"])
    tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "app", cli(box.root))
    tmux.wait("app", lambda s: "Owed" in s)
    tmux("send-keys", "-t", "app", "c")
    tmux.wait("app", lambda s: "Compose a letter" in s and "Send" in s)  # Send is on screen at 80x24
    # To -> Type -> Slug, typed at once: Tab is handled in order with the keys behind it
    tmux("send-keys", "-t", "app", "Tab", "Tab")
    tmux("send-keys", "-t", "app", "-l", "crash-proof")
    tmux.wait("app", lambda s: "crash-proof" in s)
    wait_for(lambda: "crash-proof" in kept_slugs(home))  # the form keeps itself as it is typed
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

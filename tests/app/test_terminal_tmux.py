"""Terminal safety in a real terminal (issue 7): the app and the reading commands run in
tmux on a letterbox of hostile letters, and the terminal is asked what happened.

A letter's text carries OSC 0/2 (set the title), OSC 8 (hyperlink), OSC 52 (set the
clipboard), CSI 2J (clear the screen), ESC c (reset), C1 CSI (``\\x9b`` as a character, as
UTF-8 bytes and as a raw byte), bidi overrides, zero-width characters and Textual markup
(``[@click=app.quit]``), in subjects, bodies, ids and file names. Afterwards the pane's
title was never changed, no paste buffer was set, the screen still shows what was there
before (never cleared or reset), the markup is shown as literal text, and the app is still
running until it is asked to quit.

Controls first prove the probes can fail: the same sequences printed raw do change the
title and set a buffer in this tmux.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import make_box



def needs_tmux(test):
    return pytest.mark.tmux(pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is absent")(test))


EVIL = "2026-11-28T120000-alpha-request-evil-abcdef01"
PLAIN = "2026-11-27T090000-beta-info-hello-abcdef03"
OSC_TITLE = "\x1b]0;PWNED\x07\x1b]2;PWNED\x07"
OSC_CLIP = "\x1b]52;c;UFdORUQ=\x07"  # base64 of PWNED
SUBJECT = "[@click=app.quit]Click me[/] \x9b2J \u202eevil\u202c z\u200bw"
BODY = (
    "Hello [@click=app.quit]quit now[/] and [bold]not bold[/bold]\n"
    f"{OSC_TITLE} {OSC_CLIP} \x1b[2J\x1b[H \x1bc \x9b2J \x1b[31mred\x1b[0m\n"
    "\x1b]8;;https://evil.example\x1b\\a link\x1b]8;;\x1b\\\n"
    "bidi \u202eolleh\u202c zero\u200bwidth\u2060 tag\U000e0041 end-of-body\n"
)
# Headers a reader cannot take (control characters): unreadable files with hostile names.
BAD_NAME = "\x1b]2;PWNED\x07\x1bc.md"


def hostile_box(root: Path):
    box = make_box(root, "alpha", "beta")
    box.letter(PLAIN, frm="beta", to="alpha", type="info", sent="2026-11-27T09:00:00Z", subject="Hello there")
    box.letter(EVIL, frm="alpha", to="beta", type="request", requires_ack="true",
               sent="2026-11-28T12:00:00Z", subject=SUBJECT, body=BODY)
    # The raw byte 0x9b (C1 CSI in an 8-bit terminal) in a body that is not UTF-8.
    box.raw("alpha/inbox/2026-11-28T130000-beta-info-raw-abcdef04.md",
            b"---\nid: 2026-11-28T130000-beta-info-raw-abcdef04\nfrom: beta\nto: alpha\ntype: info\n"
            b"re:\nthread:\npriority: next\nrequires_ack: false\ndeadline:\nsent: 2026-11-28T13:00:00Z\n"
            b"---\nraw \x9b2J byte \x1b]2;PWNED\x07\n")
    box.raw(f"beta/inbox/{BAD_NAME}", b"---\nid: x\x1b]2;PWNED\x07\nfrom: alpha\n---\n")
    box.raw("beta/inbox/2026-11-28T120001-alpha-info-bad-abcdef02.md",
            b"---\nid: 2026-11-28T120001-alpha-info-bad-abcdef02\nfrom: alpha\nto: beta\ntype: info\n"
            b"subject: " + OSC_TITLE.encode() + b"\x1b[2J\n---\nbody\n")
    box.raw("beta/status.md", f"{OSC_TITLE}[@click=app.quit]busy\u202e\n")
    return box


class Tmux:
    """One private tmux server (its own socket), killed in ``close``."""

    def __init__(self, tmp_path: Path) -> None:
        self.socket = f"lbx-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.conf = tmp_path / "tmux.conf"
        self.conf.write_text("set -g remain-on-exit on\nset -g set-clipboard on\nset -g history-limit 5000\n")
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        }

    def __call__(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(self.conf), *args],
            capture_output=True, text=True, timeout=15, env=self.env,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def start(self, name: str, command: str, height: int = 48) -> None:
        self("new-session", "-d", "-x", "160", "-y", str(height), "-s", name, command)

    def screen(self, name: str) -> str:
        return self("capture-pane", "-p", "-t", name)

    def info(self, name: str, fmt: str) -> str:
        return self("display-message", "-p", "-t", name, fmt).strip()

    def buffers(self) -> str:
        return self("list-buffers", check=False)

    def wait(self, name: str, predicate, timeout: float = 12.0) -> str:
        end = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < end:
            shown = self.screen(name)
            if predicate(shown):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"timed out; the screen shows:\n{shown}")

    def wait_dead(self, name: str, timeout: float = 12.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.info(name, "#{pane_dead}") == "1":
                return
            time.sleep(0.1)
        raise AssertionError(f"{name} still running; the screen shows:\n{self.screen(name)}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10, env=self.env)


@pytest.fixture
def tmux(tmp_path):
    t = Tmux(tmp_path)
    try:
        yield t
    finally:
        t.close()


def cli(root: Path, *args: str) -> str:
    return shlex.join([sys.executable, "-m", "letterbox_tui", "--root", str(root), *args])


def pane_id(screen: str) -> str | None:
    """The id of the letter the app's letter pane shows (its ``Id`` line), if any."""
    found = re.search(r"│ Id +(\S+)", screen)
    return found.group(1) if found else None


def assert_unharmed(tmux: Tmux, name: str) -> None:
    title = tmux.info(name, "#{pane_title}")
    assert "PWNED" not in title, title
    assert "PWNED" not in tmux.buffers()


@needs_tmux
def test_controls_the_probes_can_see_a_title_and_a_clipboard_change(tmux):
    """Printed raw, the sequences do what they are for: the tests below could fail."""
    # The pane stays alive until its output has been read (a pane that dies at once can be
    # marked dead before tmux has parsed what it printed).
    tmux.start("control", "printf 'BEFORE\\n\\033]2;CONTROL-TITLE\\007\\033]52;c;Q09OVFJPTA==\\007after\\n'; sleep 60")
    tmux.wait("control", lambda s: "after" in s)
    assert tmux.info("control", "#{pane_title}") == "CONTROL-TITLE"
    assert "CONTROL" in tmux.buffers()
    tmux.start("clear", "printf 'BEFORE-MARK\\n\\033[2J'; echo EXIT=0; sleep 60", height=120)
    shown = tmux.wait("clear", lambda s: "EXIT=" in s)
    assert "BEFORE-MARK" not in shown


@needs_tmux
def test_the_app_shows_hostile_letters_literally_and_keeps_the_terminal(tmux, tmp_path):
    box = hostile_box(tmp_path / "box")
    tmux.start("app", cli(box.root, "--view", "all"))
    shown = tmux.wait("app", lambda s: "Click me" in s and "Mailboxes" in s, timeout=25)
    title_before = tmux.info("app", "#{pane_title}")
    # Select the hostile letter (rows are in an order of the app's choosing) and open its body.
    for _ in range(4):
        shown = tmux.wait("app", lambda s: pane_id(s) is not None)
        if pane_id(shown) == EVIL:
            break
        tmux("send-keys", "-t", "app", "Down")
        tmux.wait("app", lambda s, was=pane_id(shown): pane_id(s) not in (None, was))
    shown = tmux.wait("app", lambda s: "quit now[/]" in s)
    tmux("send-keys", "-t", "app", "Enter")
    shown = tmux.wait("app", lambda s: "end-of-body" in s)
    assert "[@click=app.quit]Click me[/]" in shown
    assert "[@click=app.quit]quit now[/] and [bold]not bold[/bold]" in shown
    assert "\u241b]0;PWNED\u2407" in shown and "\u241b]52;c;" in shown and "\u241b[2J" in shown
    assert "<U+009B>2J" in shown and "<U+202E>olleh<U+202C>" in shown and "zero<U+200B>width<U+2060>" in shown
    assert "letterbox-tui" in shown.splitlines()[0]  # the app's own header: nothing cleared the screen
    assert tmux.info("app", "#{pane_title}") == title_before
    assert_unharmed(tmux, "app")

    # Every tab of the letter, the problems view (hostile file names) and the status note.
    for keys in (["]"], ["]"], ["]"], ["p"], ["Down"], ["4"]):
        before = tmux.screen("app")
        tmux("send-keys", "-t", "app", *keys)
        tmux.wait("app", lambda s, was=before: s != was)  # each key changes what is shown
        assert tmux.info("app", "#{pane_dead}") == "0", tmux.screen("app")
        assert_unharmed(tmux, "app")
        screen = tmux.screen("app")
        assert "letterbox-tui" in screen.splitlines()[0] and "Mailboxes" in screen
    tmux("send-keys", "-t", "app", "p")
    problems = tmux.wait("app", lambda s: "unreadable-file" in s)
    assert "\u241b]2;PWNED\u2407\u241bc.md" in problems

    # Still running after all that markup was shown; quitting is still ours to do.
    assert tmux.info("app", "#{pane_dead}") == "0"
    tmux("send-keys", "-t", "app", "Q")  # Q quits from anywhere (q goes back first)
    tmux.wait_dead("app")
    assert_unharmed(tmux, "app")


COMMANDS = {
    "show": (["show", EVIL], ["[@click=app.quit]Click me[/]", "[@click=app.quit]quit now[/]", "end-of-body",
                              "\u241b]0;PWNED\u2407", "<U+009B>2J", "<U+202E>olleh", "zero<U+200B>width"]),
    "show-raw": (["show", "2026-11-28T130000-beta-info-raw-abcdef04"], ["byte", "\u241b]2;PWNED\u2407"]),
    "query": (["query", "subject~=click"], [EVIL, "1 match"]),
    "query-all": (["query"], [EVIL, PLAIN]),
    "query-json": (["query", "--json", "type=request"], ['"[@click=app.quit]Click me[/] \\u009b2J \\u202eevil']),
    "check": (["check"], ["\u241b]2;PWNED\u2407\u241bc.md", "unreadable-file"]),
}


@needs_tmux
def test_the_reading_commands_print_hostile_letters_literally(tmux, tmp_path):
    box = hostile_box(tmp_path / "box")
    for name, (args, _) in COMMANDS.items():
        # Tall enough that nothing scrolls, and kept alive (tmux's "Pane is dead" line
        # would scroll it): a screen whose first line is not the marker was cleared or reset.
        tmux.start(name, f"echo BEFORE-MARK; {cli(box.root, *args)}; echo EXIT=$?; sleep 60", height=120)
    for name, (args, expected) in COMMANDS.items():
        shown = tmux.wait(name, lambda s: "EXIT=" in s, timeout=20)
        assert shown.splitlines()[0] == "BEFORE-MARK", f"{name}: the screen was cleared or reset:\n{shown}"
        assert "EXIT=" in shown and "Traceback" not in shown, shown
        for text in expected:
            assert text in shown, f"{name}: {text!r} not shown:\n{shown}"
        for raw in ("\x1b", "\x9b", "\u202e", "\u200b"):
            assert raw not in shown, f"{name}: {raw!r} reached the screen"
        assert_unharmed(tmux, name)


def test_cli_text_and_json_never_carry_invisible_characters():
    """What the tmux test sees, without tmux: the reading commands' text and JSON show
    zero-width and tag characters as placeholders or escapes, and JSON stays equivalent."""
    import json

    from letterbox_tui.cli.output import clean, dumps_json

    value = "zero\u200bwidth\u2060 tag\U000e0041 \u202eevil\x9b\x1b]2;PWNED\x07"
    shown = clean(value)
    assert shown == "zero<U+200B>width<U+2060> tag<U+E0041> <U+202E>evil<U+009B>\u241b]2;PWNED\u2407"
    for indent in (2, None):
        text = dumps_json({"subject": value}, indent=indent)
        assert text.isascii() or not any(c in text for c in "\u200b\u2060\U000e0041\u202e\x9b\x1b")
        assert json.loads(text) == {"subject": value}

"""A writing command whose stdout is closed or full (SPEC 7, issue 28 item 4): the letter is
published, then exit 4 with its id on stderr (a retry would send it twice), never
"internal error". A reading command with stderr closed exits as it would with it open.

Real processes, as a shell runs them: ``python -m letterbox_tui ... >&-``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from letterbox_tui.core.scan import scan

REPO = Path(__file__).resolve().parents[2]


def sh(box, redirect: str, *argv: str, stdin: str = "Body.\n") -> subprocess.CompletedProcess:
    """Run ``letterbox-tui --root BOX ARGV REDIRECT`` through a shell; the redirect is the
    shell's (``>&-`` closes the descriptor before the program starts)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "LETTERBOX_TUI_NO_CACHE": "1"}
    env.pop("LETTERBOX_TUI_DEBUG", None)
    words = " ".join(f"'{a}'" for a in (sys.executable, "-m", "letterbox_tui", "--root", str(box.root), *argv))
    return subprocess.run(["sh", "-c", f"exec {words} {redirect}"], input=stdin.encode(), capture_output=True,
                          env=env, timeout=60)


def ids(box) -> set[str]:
    return {x.id for x in scan(box.root).letters}


def send(box, *extra: str) -> str:
    done = sh(box, "", "send", "--as", "alpha", "--to", "beta", "--type", "request", "--slug", "plan", *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().strip()


def test_send_with_stdout_closed_publishes_once_and_exits_4_with_the_id_on_stderr(box):
    done = sh(box, ">&-", "send", "--as", "alpha", "--to", "beta", "--type", "info", "--slug", "note")
    err = done.stderr.decode()
    [new] = ids(box)
    assert done.returncode == 4, err
    assert f"published {new}" in err and "do not send it again" in err and "internal error" not in err
    assert err.count("\n") == 1


def test_send_with_stdout_full_exits_4(box):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    done = sh(box, ">/dev/full", "send", "--as", "alpha", "--to", "beta", "--type", "info", "--slug", "note")
    [new] = ids(box)
    assert done.returncode == 4 and new in done.stderr.decode()


@pytest.mark.parametrize("command", ["ack", "result", "nack", "info", "file", "supersede", "progress",
                                     "dispute", "dispute-notify", "rule", "review", "status"])
def test_every_writing_command_with_stdout_closed_exits_4_naming_what_it_wrote(box, command):
    task = send(box, "--ack")
    other = send(box, "--ack")
    argv = {
        "ack": ("reply", task, "ack", "--as", "beta"),
        "result": ("reply", task, "result", "--as", "beta"),
        "nack": ("reply", task, "nack", "--as", "beta"),
        "info": ("reply", task, "info", "--as", "beta"),
        "supersede": ("supersede", task, "--as", "alpha"),
        "dispute": ("dispute", task, other, "--as", "beta"),
        "dispute-notify": ("dispute", task, other, "--as", "beta", "--notify"),
        "review": ("review", "--as", "beta"),
        "status": ("status", "beta", "working", "on", "the", "plan"),
    }.get(command)
    if command == "file":
        note = sh(box, "", "send", "--as", "alpha", "--to", "beta", "--type", "info", "--slug", "fyi").stdout
        argv = ("file", note.decode().strip(), "--as", "beta")
    elif command == "progress":
        assert sh(box, "", "reply", task, "ack", "--as", "beta").returncode == 0
        argv = ("progress", task, "--as", "beta", "half", "done")
    elif command == "rule":
        dispute = sh(box, "", "dispute", task, other, "--as", "beta").stdout.decode().strip()
        argv = ("rule", dispute, "--as", "beta", "--upholds", task)
    before = ids(box)
    status_before = (box.root / "beta/status.md").exists()
    done = sh(box, ">&-", *argv)
    err = done.stderr.decode()
    assert done.returncode == 4, err
    assert "internal error" not in err
    # a letter is named with a warning against a retry; the status note is merely rewritten by one
    assert ("wrote beta/status.md, but could not say so" in err) if command == "status" \
        else ("do not send it again" in err)
    new = ids(box) - before
    for letter_id in new:  # every letter written is named on stderr
        assert letter_id in err
    if command in ("file", "progress", "status"):
        assert not new
        assert command != "status" or (not status_before and (box.root / "beta/status.md").is_file())
    elif command == "dispute-notify":
        assert len(new) == 2  # the dispute and the info letter to the other author
    else:
        assert len(new) == 1


def test_query_with_stderr_closed_exits_as_with_it_open(box):
    send(box)
    assert sh(box, "", "query").returncode == 0
    done = sh(box, "2>&-", "query")
    assert done.returncode == 0 and b"complete" in done.stdout


@pytest.mark.parametrize("argv", [("query",), ("query", "--json"), ("check",), ("schema",)])
def test_a_reading_command_with_stdout_closed_exits_2_in_one_line(box, argv):
    """Nothing can be printed: one line saying why and exit 2, never "internal error", a
    traceback or exit 1 (which a script reads as "check found a problem")."""
    send(box)
    done = sh(box, ">&-", *argv)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "stdout is closed" in err and "internal error" not in err and "Traceback" not in err
    assert err.count("\n") == 1, err


@pytest.mark.parametrize("argv", [("query",), ("owed", "--fail-late"), ("query", "--json"), ("show", "LETTER")])
def test_a_reading_command_whose_reader_went_away_ends_quietly_with_0(box, argv):
    """Its stdout a pipe nobody reads (``| head`` done): no "Broken pipe" and exit 0, as
    the command line's own handler says, not Rich's exit 1, which SPEC 7 gives to "check
    found a problem" and "owed --fail-late found a late item"."""
    letter = send(box, "--ack", "--deadline", "2020-01-01T00:00:00Z")  # late: owed would say 1
    read, write = os.pipe()
    os.close(read)  # every write the command makes meets a closed pipe
    env = {**os.environ, "PYTHONPATH": str(REPO), "LETTERBOX_TUI_NO_CACHE": "1"}
    env.pop("LETTERBOX_TUI_DEBUG", None)
    argv = [letter if a == "LETTER" else a for a in argv]
    try:
        done = subprocess.run([sys.executable, "-m", "letterbox_tui", "--root", str(box.root), *argv],
                              stdout=write, stderr=subprocess.PIPE, env=env, timeout=60)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (0, "")

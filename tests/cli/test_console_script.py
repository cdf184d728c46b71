"""The console script (``cli.run``) as a user meets it: the whole output and the exit code
come out, a usage error is one line and exit 2, a reader that went away is no error, and
``python -m letterbox_tui`` is the same entry."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import letterbox_tui.cli as cli_mod


@pytest.fixture
def mail(box):
    for i in range(30):
        box.letter(f"ask-{i:02d}", frm="alpha", to="beta", type="request", requires_ack="true",
                   sent="2026-09-01T10:00:00Z")
    return box


def letterbox_tui(box, *argv: str, stdout=subprocess.PIPE, stdin=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "letterbox_tui", "--root", str(box.root), *argv],
        stdout=stdout, stderr=subprocess.PIPE, input=stdin, timeout=60,
    )


def test_the_whole_answer_and_its_exit_code_come_out(mail):
    proc = letterbox_tui(mail, "query", "type=request", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    assert len(json.loads(proc.stdout)["matches"]) == 30
    mail.raw("beta/inbox/broken.md", "---\nid: broken\nfrom alpha\n---\n")
    proc = letterbox_tui(mail, "query", "type=request")
    assert proc.returncode == 3 and b"1 unreadable file" in proc.stdout


def test_usage_errors_are_one_line_and_exit_2(mail):
    proc = letterbox_tui(mail, "query", "colour=blue")
    assert proc.returncode == 2
    assert len(proc.stderr.decode().strip().splitlines()) == 1 and b"Traceback" not in proc.stderr


def test_a_reader_that_went_away_is_no_error(mail):
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read what is written
    try:
        proc = letterbox_tui(mail, "query", "type=request", "--json", stdout=write_end)
    finally:
        os.close(write_end)
    assert proc.returncode == 0
    assert proc.stderr == b""


def test_a_writing_command_then_a_reading_one(mail):
    proc = letterbox_tui(mail, "reply", "ask-00", "ack", "--as", "beta", stdin=b"a body\n")
    assert proc.returncode == 0, proc.stderr
    proc = letterbox_tui(mail, "answered", "ask-00")
    assert proc.returncode == 0 and b"ask-00" in proc.stdout


def test_python_m_and_the_console_script_are_the_same_entry():
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["letterbox-tui"] == "letterbox_tui.cli:run"
    main_py = (Path(cli_mod.__file__).parents[1] / "__main__.py").read_text()
    assert "run()" in main_py

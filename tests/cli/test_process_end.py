"""The console script's end (``cli.run``): a reading command's process ends at once after
its answer, without freeing what it built, and nothing it owed is lost on the way: the
whole output, the exit code, the cache written after the answer, a quiet end when the
reader has gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import letterbox_tui.cli as cli_mod
import letterbox_tui.core.speed.ending as ending_mod
from letterbox_tui.core.speed.cache import cache_path
from tests.cli.helpers import cli


@pytest.fixture
def mail(box):
    for i in range(30):
        box.letter(f"ask-{i:02d}", frm="alpha", to="beta", type="request", requires_ack="true",
                   sent="2026-09-01T10:00:00Z")
    return box


def letterbox_tui(box, *argv: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "letterbox_tui", "--root", str(box.root), *argv],
        stdout=stdout, stderr=subprocess.PIPE, timeout=60,
    )


def test_in_process_nothing_is_kept(capsys, mail):
    code, out, _ = cli(capsys, mail, "query", "type=request", "--json")
    assert code == 0 and json.loads(out)["matches"]
    assert ending_mod._kept is None


def test_the_whole_answer_and_its_exit_code_come_out(mail):
    proc = letterbox_tui(mail, "query", "type=request", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    assert len(json.loads(proc.stdout)["matches"]) == 30
    mail.raw("beta/inbox/broken.md", "---\nid: broken\nfrom alpha\n---\n")
    proc = letterbox_tui(mail, "query", "type=request")
    assert proc.returncode == 3 and b"1 unreadable file" in proc.stdout


def test_the_cache_is_written_after_the_answer(mail):
    path = cache_path(mail.root, False)
    assert not os.path.exists(path)
    proc = letterbox_tui(mail, "exists", "type=request", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["exists"] == "yes"
    assert os.path.getsize(path) > 0


def test_usage_errors_still_end_as_before(mail):
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


def test_python_m_and_the_console_script_are_the_same_entry():
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["letterbox-tui"] == "letterbox_tui.cli:run"
    main_py = (Path(cli_mod.__file__).parents[1] / "__main__.py").read_text()
    assert "run()" in main_py


def test_a_reading_command_about_to_end_the_process_leaves_the_collector_off(capsys, mail, monkeypatch):
    import gc

    monkeypatch.setattr(cli_mod, "_script", True)  # as under the console script
    monkeypatch.setattr(ending_mod, "_kept", None)
    try:
        assert cli_mod.main(["--root", str(mail.root), "exists", "type=request", "--json"]) == 0
        assert not gc.isenabled()  # no last full pass over what the process drops anyway
        # what it built is kept until then, and last the work done after the answer
        (after,) = ending_mod._kept[-1]
        assert len(ending_mod._kept) > 1 and after and all(callable(w) for w in after)
    finally:
        gc.enable()
    assert json.loads(capsys.readouterr().out)["exists"] == "yes"
    monkeypatch.setattr(cli_mod, "_script", False)
    monkeypatch.setattr(ending_mod, "_kept", None)
    assert cli_mod.main(["--root", str(mail.root), "exists", "type=request", "--json"]) == 0
    assert gc.isenabled() and ending_mod._kept is None  # in process: as it was


def test_a_writing_command_ends_as_usual_under_the_console_script(mail, monkeypatch):
    import gc

    monkeypatch.setattr(cli_mod, "_script", True)
    monkeypatch.setattr(ending_mod, "_kept", None)
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("a body\n"))
    code = cli_mod.main(["--root", str(mail.root), "reply", "ask-00", "ack", "--as", "beta"])
    assert code == 0
    assert ending_mod._kept is None and gc.isenabled()  # nothing kept: run() exits as usual
    proc = letterbox_tui(mail, "answered", "ask-00")
    assert proc.returncode == 0 and b"ask-00" in proc.stdout


def test_big_work_after_the_answer_is_done_by_a_child_that_outlives_the_command(mail):
    """Under the console script the detached work is not waited for: the command ends,
    its child writes the cache and the memo all the same."""
    import time

    code = (
        "import sys, letterbox_tui.core.speed.after as c, letterbox_tui.core.speed.memo as m\n"
        "c.BACKGROUND_ROWS = m.BACKGROUND_ROWS = 1\n"
        "m.RACY_NS = 0  # the letters were just written: trusted all the same here\n"
        "from letterbox_tui.cli import run\n"
        f"sys.argv = ['letterbox-tui', '--root', {str(mail.root)!r}, 'query', 'type=request', '--json']\n"
        "run()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["matches"]) == 30
    path = cache_path(mail.root, False)
    deadline = time.monotonic() + 30
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.path.getsize(path) > 0
    memos = lambda: [n for n in os.listdir(os.path.dirname(path)) if n.endswith(".answer")]  # noqa: E731
    while not memos() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert memos()

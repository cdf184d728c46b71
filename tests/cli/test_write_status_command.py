"""``letterbox-tui status SEAT STATE [NOTE]`` and ``letterbox-tui --version`` (issue 23,
parity item 4)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import letterbox_tui
from letterbox_tui.cli import main


def run(capsys, box, *argv):
    code = main(["--root", str(box.root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_status_writes_the_seats_note(capsys, box):
    code, out, err = run(capsys, box, "status", "beta", "blocked", "waiting", "on", "the", "key")
    assert (code, err) == (0, "") and out == "status: beta blocked (beta/status.md)\n"
    lines = (box.root / "beta/status.md").read_text().splitlines()
    assert lines[0] == "state: blocked" and lines[1].startswith("since: 20") and lines[1].endswith("Z")
    assert lines[2] == "notes: waiting on the key" and len(lines) == 3


def test_status_refuses_bad_input_in_one_line_writing_nothing(capsys, box):
    before = box.tree_bytes()
    for argv in (("status", "beta", "busy"), ("status", "gamma", "idle"), ("status", "beta", "idle", "a\x1b[2Jb"),
                 ("--participant", "beta", "status", "beta", "idle")):
        code, out, err = run(capsys, box, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
    assert box.tree_bytes() == before


def test_version_prints_the_packages_version(capsys):
    try:
        main(["--version"])
    except SystemExit as done:
        assert done.code == 0
    out = capsys.readouterr().out
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    assert out == f"letterbox-tui {letterbox_tui.__version__}\n" and letterbox_tui.__version__ == project["version"]

"""Helpers the command-line tests share: running a command in process on a test
letterbox, and the exact JSON keys SPEC 7 gives the scope."""

from __future__ import annotations

import json

from letterbox_tui.cli import main

SCOPE_KEYS = [
    "root", "participants", "files", "letters", "legacy", "unreadable", "unsupported",
    "partial", "atomic", "complete", "sync", "scanned_at",
]


def cli(capsys, box, *argv):
    """(exit code, stdout, stderr) of ``letterbox-tui --root BOX ARGV``."""
    code = main(["--root", str(box.root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, box, *argv):
    """(exit code, parsed JSON) of the command with ``--json``; nothing on stderr unless it
    was refused (exit 2)."""
    code, out, err = cli(capsys, box, *argv, "--json")
    assert err == "" or code == 2, err
    return code, json.loads(out)

"""``status SEAT STATE [NOTE]``: the seat's status note as the protocol writes it."""

from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.scan import scan
from letterbox_tui.core.views.letterfile import status_line
from letterbox_tui.core.write.status import write_status

NOW = datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)


def test_the_note_is_the_protocols_three_lines(box):
    path = write_status(box.root, "beta", "blocked", "waiting on the key", now=NOW)
    assert path == box.root / "beta/status.md"
    assert path.read_text() == "state: blocked\nsince: 2026-11-29T14:05:12Z\nnotes: waiting on the key\n"
    snap = scan(box.root)
    assert snap.status_notes == {"beta": "beta/status.md"} and snap.letters == []
    assert status_line(str(box.root), "beta/status.md") == "blocked since 2026-11-29T14:05:12Z · waiting on the key"


def test_a_new_note_replaces_the_old_whole_and_leaves_no_temporary(box):
    write_status(box.root, "beta", "working", "drafting", now=NOW)
    old = os.stat(box.root / "beta/status.md").st_ino
    write_status(box.root, "beta", "idle", now=NOW)
    assert (box.root / "beta/status.md").read_text() == "state: idle\nsince: 2026-11-29T14:05:12Z\nnotes: \n"
    assert os.stat(box.root / "beta/status.md").st_ino != old  # renamed into place, never rewritten in place
    assert sorted(p.name for p in (box.root / "beta").iterdir()) == ["inbox", "processed", "status.md"]


@pytest.mark.parametrize("seat, state, note, match", [
    ("beta", "busy", "", "working, idle, blocked"),
    ("gamma", "idle", "", "no seat 'gamma'"),
    ("Beta", "idle", "", "not a seat name"),
    ("beta", "idle", "two\nlines", "control characters"),
    ("beta", "idle", "bell\x07", "control characters"),
])
def test_bad_input_is_refused_and_nothing_written(box, seat, state, note, match):
    before = box.tree_bytes()
    with pytest.raises(LetterboxError, match=match):
        write_status(box.root, seat, state, note, now=NOW)
    assert box.tree_bytes() == before

"""The query history file: bounded, deduplicated, atomic, and harmless when damaged."""

from __future__ import annotations

import os

import pytest

from letterbox_tui.core.history import KEEP, QueryHistory


def test_history_keeps_the_newest_last_without_duplicates(tmp_path):
    h = QueryHistory(tmp_path / "h")
    for q in ["a=1", "b=2", "a=1", "  c=3  "]:
        h.add(q)
    assert h.entries == ["b=2", "a=1", "c=3"]
    assert QueryHistory(tmp_path / "h").entries == ["b=2", "a=1", "c=3"]
    assert [p.name for p in tmp_path.iterdir()] == ["h"]  # no temporary left


@pytest.mark.slow
def test_history_is_bounded(tmp_path):
    h = QueryHistory(tmp_path / "h")
    for i in range(KEEP + 20):
        h.add(f"id=x{i}")
    again = QueryHistory(tmp_path / "h").entries
    assert len(again) == KEEP and again[-1] == f"id=x{KEEP + 19}"


def test_a_damaged_or_odd_history_is_empty_not_an_error(tmp_path):
    (tmp_path / "h").write_bytes(b"ok=1\n\xff\xfe\x1b[31m\n")
    assert QueryHistory(tmp_path / "h").entries == ["ok=1"]
    os.mkfifo(tmp_path / "fifo")
    assert QueryHistory(tmp_path / "fifo").entries == []  # never blocks
    (tmp_path / "dir").mkdir()
    h = QueryHistory(tmp_path / "dir")
    h.add("x=1")  # cannot be saved: kept for the session
    assert h.entries == ["x=1"]
    h = QueryHistory(tmp_path / "h")
    h.add("bad\x1b[2J")  # never a control character
    assert "bad\x1b[2J" not in QueryHistory(tmp_path / "h").entries

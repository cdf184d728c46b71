"""Relative times on the command line: query, exists and owed --at (SPEC 6)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tests.cli.helpers import cli, cli_json


def stamp(delta: timedelta) -> str:
    return (datetime.now(timezone.utc) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def recent(box):
    box.letter("old", sent=stamp(-timedelta(days=30)))
    box.letter("fresh", sent=stamp(-timedelta(hours=2)))
    box.letter("task", sent=stamp(-timedelta(days=1)), requires_ack="true", type="request",
               deadline=stamp(timedelta(days=3)))
    return box


def test_query_and_exists_take_relative_times(capsys, recent):
    code, data = cli_json(capsys, recent, "query", "since=-7d")
    assert code == 0 and sorted(r["id"] for r in data["matches"]) == ["fresh", "task"]
    code, data = cli_json(capsys, recent, "query", "since=-3h", "until=now")
    assert [r["id"] for r in data["matches"]] == ["fresh"]
    code, data = cli_json(capsys, recent, "query", "due<=+2d")
    assert data["matches"] == []
    code, data = cli_json(capsys, recent, "query", "due<=+2d", "at=+2d")
    assert [r["id"] for r in data["matches"]] == ["task"]
    code, data = cli_json(capsys, recent, "exists", "until=-7d")
    assert data["exists"] == "yes" and data["matches"] == 1
    code, data = cli_json(capsys, recent, "exists", "since=today", "type=status")
    assert data["exists"] == "no"


def test_owed_at_relative(capsys, recent):
    code, data = cli_json(capsys, recent, "owed", "--at=+5d")
    assert data["owed"][0]["items"][0]["late"] == "yes"
    code, data = cli_json(capsys, recent, "owed", "--at", "now")
    assert data["owed"][0]["items"][0]["late"] == "no"


@pytest.mark.parametrize("argv", [["query", "since=-7w"], ["owed", "--at=soon"], ["exists", "until=+1y"]])
def test_bad_relative_times_exit_2_in_one_line(capsys, recent, argv):
    code, out, err = cli(capsys, recent, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "relative" in err

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


@pytest.mark.parametrize("argv", [("owed", "--at", "-1d"), ("inbox", "alpha", "--at", "-36h"),
                                  ("send", "--as", "alpha", "--to", "beta", "--type", "request", "--slug", "x",
                                   "--deadline", "-1d")])
def test_a_time_that_starts_with_a_dash_given_apart_says_to_use_the_equals(capsys, recent, argv):
    """argparse takes ``-1d`` for an option: 'expected one argument' alone leaves the reader
    guessing, so the refusal says how to give it."""
    code, out, err = cli(capsys, recent, *argv)
    option, value = argv[-2], argv[-1]
    assert code == 2 and err.count("\n") == 1, err
    assert f"a value that starts with '-' goes after '=': {option}={value}" in err
    code, out, err = cli(capsys, recent, "send", "--as")
    assert code == 2 and "goes after '='" not in err  # a value merely left out: no such hint

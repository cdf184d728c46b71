"""The CLI's text shows times in local time with their offset (``TZ`` honoured, ``[time]
zone = "utc"`` for UTC); JSON keeps them as written; ``today`` is the same local day."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from letterbox_tui.cli import common
from tests.cli.helpers import cli, cli_json

NOW = datetime(2026, 12, 1, 22, 30, tzinfo=timezone.utc)  # 23:30 in Berlin


@pytest.fixture
def berlin(box, monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    monkeypatch.setattr(common, "now", lambda: NOW)
    box.letter("late-tonight", type="request", requires_ack="true", sent="2026-12-01T20:00:00Z",
               deadline="2026-12-01T22:59:00Z")  # 23:59 in Berlin: today
    box.letter("past-midnight", type="request", requires_ack="true", sent="2026-12-01T20:00:00Z",
               deadline="2026-12-01T23:01:00Z")  # 00:01 tomorrow in Berlin, today in UTC
    box.letter("this-morning", sent="2026-12-01T06:00:00Z")
    box.letter("just-after-midnight", sent="2026-11-30T23:30:00Z")  # 00:30 on 1 December in Berlin
    box.letter("yesterday-evening", sent="2026-11-30T22:30:00Z")  # 23:30 on 30 November in Berlin
    yield box
    monkeypatch.undo()
    time.tzset()


def test_text_shows_local_times_with_their_offset(capsys, berlin):
    code, out, _ = cli(capsys, berlin, "owed")
    assert code == 0
    assert "owed at 2026-12-01 23:30 +01:00" in out
    assert "2026-12-01 23:59 +01:00" in out and "2026-12-02 00:01 +01:00" in out
    assert "22:59:00Z" not in out.split("attention")[0]  # the table is local; details stay as written
    code, out, _ = cli(capsys, berlin, "show", "late-tonight")
    assert "2026-12-01T22:59:00Z  (2026-12-01 23:59 +01:00)" in out


def test_json_keeps_times_as_written(capsys, berlin):
    code, data = cli_json(capsys, berlin, "owed")
    deadlines = sorted(i["deadline"] for g in data["owed"] for i in g["items"])
    assert deadlines == ["2026-12-01T22:59:00Z", "2026-12-01T23:01:00Z"] and data["at"] == "2026-12-01T22:30:00Z"


def test_today_is_the_local_day(capsys, berlin):
    code, data = cli_json(capsys, berlin, "query", "since=today")
    assert sorted(r["id"] for r in data["matches"]) == ["just-after-midnight", "late-tonight", "past-midnight",
                                                                  "this-morning"]
    berlin.raw("letterbox-tui.toml", '[time]\nzone = "utc"\n')  # the setting is the calendar too
    code, data = cli_json(capsys, berlin, "query", "since=today")
    assert sorted(r["id"] for r in data["matches"]) == ["late-tonight", "past-midnight", "this-morning"]


def test_the_utc_setting(capsys, berlin):
    berlin.raw("letterbox-tui.toml", '[time]\nzone = "utc"\n')
    code, out, _ = cli(capsys, berlin, "owed")
    assert "owed at 2026-12-01 22:30 UTC" in out and "2026-12-01 22:59 UTC" in out and "+01:00" not in out
    berlin.raw("letterbox-tui.toml", '[time]\nzone = "Mars/Base"\n')
    code, out, err = cli(capsys, berlin, "owed")
    assert code == 2 and "[time] zone: expected" in err and "Traceback" not in err

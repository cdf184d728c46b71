"""Relative times in the query language (SPEC 6, additive): now, today, yesterday (local
midnight in the user's calendar), -7d, -36h, +2d, -90m, relative to at= (default now)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.query import is_relative, parse_query, parse_term, parse_when, run_query
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan

NOW = datetime(2026, 10, 14, 12, 30, tzinfo=timezone.utc)
BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize("value, expected", [
    ("now", NOW),
    ("-7d", NOW - timedelta(days=7)),
    ("+2d", NOW + timedelta(days=2)),
    ("-36h", NOW - timedelta(hours=36)),
    ("-90m", NOW - timedelta(minutes=90)),
    ("+0d", NOW),
])
def test_offsets_count_from_now(value, expected):
    assert parse_when(value, NOW) == expected
    assert parse_term(f"since={value}", NOW).when == expected


def test_today_and_yesterday_are_local_midnight_in_the_users_calendar():
    assert parse_when("today", NOW, BERLIN) == datetime(2026, 10, 14, tzinfo=BERLIN)
    assert parse_when("yesterday", NOW, BERLIN) == datetime(2026, 10, 13, tzinfo=BERLIN)
    # 23:30 UTC is already tomorrow in Berlin, still today in New York
    late = datetime(2026, 10, 14, 23, 30, tzinfo=timezone.utc)
    assert parse_when("today", late, BERLIN).date().day == 15
    assert parse_when("today", late, ZoneInfo("America/New_York")) == datetime(2026, 10, 14, tzinfo=ZoneInfo("America/New_York"))
    # across the daylight-saving change (Berlin, 25 October 2026): midnight keeps its own offset
    after = datetime(2026, 10, 26, 12, tzinfo=timezone.utc)
    assert parse_when("yesterday", after, BERLIN).utcoffset() == timedelta(hours=2)  # summer time
    assert parse_when("today", after, BERLIN).utcoffset() == timedelta(hours=1)  # winter time
    utc = lambda v: parse_when(v, after, BERLIN).astimezone(timezone.utc)
    assert utc("today") - utc("yesterday") == timedelta(hours=25)


def test_today_defaults_to_the_system_time_zone(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        got = parse_when("today", NOW)
        assert got == datetime(2026, 10, 14, tzinfo=ZoneInfo("Asia/Tokyo"))
    finally:
        monkeypatch.undo()
        time.tzset()


def test_relative_times_count_from_at_which_counts_from_now():
    q = parse_query(["at=-1d", "since=-7d", "due<=+2d"], NOW)
    assert q.at == NOW - timedelta(days=1)
    by = {t.key: t for t in q.terms}
    assert by["since"].when == NOW - timedelta(days=8)
    assert by["due"].when == NOW + timedelta(days=1)
    assert by["since"].value == "-7d"  # the term as typed is kept
    assert q.relative
    q = parse_query(["at=2026-01-01T00:00:00Z", "until=today"], NOW, timezone.utc)
    assert q.terms[0].when == datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert not parse_query(["since=2026-01-01T00:00:00Z"]).relative


@pytest.mark.parametrize("raw", ["since=-7", "since=7d", "since=-7w", "since=Today", "since=-d", "due<=+99999999d",
                                 "since=tomorrow", "since= -7d"])
def test_bad_relative_times_are_one_line_errors(raw):
    with pytest.raises(LetterboxError) as err:
        parse_query([raw], NOW)
    assert raw in str(err.value) or "surrounding spaces" in str(err.value)
    assert "\n" not in str(err.value)


def test_huge_offsets_are_refused_not_an_overflow():
    with pytest.raises(LetterboxError) as err:
        parse_query(["since=-9999999d"], NOW)
    assert "relative" in str(err.value)


def test_a_relative_range_that_no_time_satisfies_is_refused():
    with pytest.raises(LetterboxError) as err:
        parse_query(["since=today", "until=yesterday"], NOW)
    assert "no time is both" in str(err.value)


def test_is_relative():
    assert all(map(is_relative, ["now", "today", "yesterday", "-7d", "+2d", "-36h", "-90m"]))
    assert not any(map(is_relative, ["", "2026-01-01T00:00:00Z", "-7", "7d", "now ", "+1y"]))


def test_relative_terms_select_letters(box):
    box.letter("old", sent="2026-10-01T00:00:00Z")
    box.letter("recent", sent="2026-10-10T00:00:00Z")
    box.letter("due-soon", sent="2026-10-12T00:00:00Z", requires_ack="true", deadline="2026-10-15T00:00:00Z")
    res = resolve(scan(box.root), NOW)
    ids = lambda *terms: sorted(x.id for x in run_query(parse_query(list(terms), NOW), res).matches)
    assert ids("since=-7d") == ["due-soon", "recent"]
    assert ids("until=-7d") == ["old"]
    assert ids("due<=+2d") == ["due-soon"]
    assert ids("due<=+2d", "at=-7d") == []

"""Times shown to a person and the one "today" (core.times): the display zone, its
calendar day's edges, and that the app's "due today" and the query's ``today`` agree."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from letterbox_tui.core.query import parse_when
from letterbox_tui.core.settings import display_zone, load_settings, load_user_settings
from letterbox_tui.core.settings_types import SettingsError
from letterbox_tui.core.times import day_bounds, full, is_today, short, stamp, zone_label, zone_named, zone_words

BERLIN = ZoneInfo("Europe/Berlin")
# 1 December 2026, 22:30 UTC: 23:30 in Berlin, still 1 December there
AT = datetime(2026, 12, 1, 22, 30, tzinfo=timezone.utc)


def test_today_is_local_midnight_to_midnight():
    start, end = day_bounds(AT, BERLIN)
    assert start == datetime(2026, 12, 1, tzinfo=BERLIN) and end == datetime(2026, 12, 2, tzinfo=BERLIN)
    assert start.astimezone(timezone.utc) == datetime(2026, 11, 30, 23, tzinfo=timezone.utc)


def test_a_deadline_at_23_59_local_is_today_and_00_01_is_not():
    due_2359 = datetime(2026, 12, 1, 23, 59, tzinfo=BERLIN)  # 22:59Z
    due_0001 = datetime(2026, 12, 2, 0, 1, tzinfo=BERLIN)  # 23:01Z, still 1 December in UTC
    assert is_today(due_2359, AT, BERLIN)
    assert not is_today(due_0001, AT, BERLIN)
    assert is_today(due_0001, AT, timezone.utc)  # in UTC it is: the zone decides
    assert is_today(datetime(2026, 12, 1, 0, 0, tzinfo=BERLIN), AT, BERLIN)  # the first moment counts
    assert not is_today(datetime(2026, 11, 30, 23, 59, 59, tzinfo=BERLIN), AT, BERLIN)


def test_a_day_across_daylight_saving_has_25_hours():
    start, end = day_bounds(datetime(2026, 10, 25, 12, tzinfo=timezone.utc), BERLIN)
    assert end.astimezone(timezone.utc) - start.astimezone(timezone.utc) == timedelta(hours=25)
    assert day_bounds(datetime(2026, 10, 26, 12, tzinfo=timezone.utc), BERLIN, -1) == (start, end)


def test_the_query_today_is_the_same_day():
    for zone in (BERLIN, timezone.utc, ZoneInfo("America/New_York"), ZoneInfo("Asia/Kolkata")):
        assert parse_when("today", AT, zone) == day_bounds(AT, zone)[0]
        assert parse_when("yesterday", AT, zone) == day_bounds(AT, zone, -1)[0]


def test_the_app_says_due_today_exactly_within_the_query_today():
    from types import SimpleNamespace

    from letterbox_tui.app.widgets.row_text import deadline_state

    start = parse_when("today", AT, BERLIN)
    for minutes in range(-90, 24 * 60 + 90, 7):
        deadline = start + timedelta(minutes=minutes)
        if deadline <= AT:
            continue  # (past due is its own state)
        said, _ = deadline_state(SimpleNamespace(deadline_at=deadline, deadline="x"), AT, False, BERLIN)
        assert said.startswith("due today") == (start <= deadline < start + timedelta(days=1)), (deadline, said)
    said, _ = deadline_state(SimpleNamespace(deadline_at=datetime(2026, 12, 1, 23, 59, tzinfo=BERLIN), deadline="x"),
                             AT, False, BERLIN)
    assert said == "due today 23:59"
    said, _ = deadline_state(SimpleNamespace(deadline_at=datetime(2026, 12, 2, 0, 1, tzinfo=BERLIN), deadline="x"),
                             AT, False, BERLIN)
    assert said == "due in 31m"


def test_local_time_follows_tz(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    assert stamp(AT, None) == "2026-12-02 07:30 +09:00"
    assert zone_label(AT, None) == "JST" and zone_words(AT, None) == "local time, JST (UTC+09:00)"
    assert day_bounds(AT, None)[0] == datetime(2026, 12, 2, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert is_today(datetime(2026, 12, 2, 23, 59, tzinfo=ZoneInfo("Asia/Tokyo")), AT, None)
    assert not is_today(datetime(2026, 12, 3, 0, 1, tzinfo=ZoneInfo("Asia/Tokyo")), AT, None)


def test_formats():
    assert stamp(AT, timezone.utc) == "2026-12-01 22:30 UTC"
    assert stamp(AT, BERLIN) == "2026-12-01 23:30 +01:00"
    assert full(AT, BERLIN) == "Tue 2026-12-01 23:30 CET"
    assert full(AT, timezone.utc) == "Tue 2026-12-01 22:30 UTC"
    assert short(AT, AT, BERLIN) == "Dec 01 23:30"
    assert short(AT - timedelta(days=400), AT, BERLIN) == "2025-10-27"
    assert zone_label(AT, ZoneInfo("Asia/Kolkata")) == "IST"
    assert zone_label(AT, ZoneInfo("America/Sao_Paulo")) == "UTC-03:00"  # no letters of its own: "-03"
    assert zone_words(AT, BERLIN) == "Europe/Berlin, CET (UTC+01:00)"


def test_zone_names():
    assert zone_named("local") is None and zone_named("UTC") is timezone.utc
    assert zone_named("Europe/Berlin") == BERLIN
    for bad in ("Mars/Base", "", "../etc/passwd"):
        with pytest.raises(ValueError, match="time zone name"):
            zone_named(bad)


def test_the_setting_user_beats_letterbox(box, tmp_path):
    assert display_zone(load_settings(box.root)) is None  # default: local
    box.raw("letterbox-tui.toml", '[time]\nzone = "utc"\n')
    assert display_zone(load_settings(box.root)) is timezone.utc
    mine = tmp_path / "config.toml"
    mine.write_text('[time]\nzone = "Europe/Berlin"\n')
    assert display_zone(load_settings(box.root), load_user_settings(mine)) == BERLIN
    mine.write_text('theme = "x"\n')
    assert display_zone(load_settings(box.root), load_user_settings(mine)) is timezone.utc
    box.raw("letterbox-tui.toml", '[time]\nzone = "Mars/Base"\n')
    with pytest.raises(SettingsError, match=r"\[time\] zone: expected"):
        load_settings(box.root)
    mine.write_text('[time]\nzone = "nowhere"\n')
    with pytest.raises(SettingsError, match=r"\[time\] zone: expected"):
        load_user_settings(mine)

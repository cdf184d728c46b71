"""The small grammars of SPEC 3: ids, seats, tokens, times and slugs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from letterbox_tui.core.grammar import id_time, parse_time, slug_of, tokens, valid_id, valid_seat


@pytest.mark.parametrize("value", ["a", "A-1", "x_y.z:w-9", "a" * 128, "a" * 243, "2026-11-29T140512-planner-request-x-3f9a1c07"])
def test_valid_ids(value):
    assert valid_id(value)


@pytest.mark.parametrize("value", ["", "a" * 244, "a b", "a/b", "a\nb", "caf\u00e9", "a,b", "a\x00", "\u0661"])
def test_invalid_ids(value):
    assert not valid_id(value)


@pytest.mark.parametrize("value", ["a", "alpha", "a-1", "external-bridge", "b2b"])
def test_valid_seats(value):
    assert valid_seat(value)


@pytest.mark.parametrize("value", ["locks", "", "A", "1a", "-a", "a_b", "a.b", "Alpha", "\u00e9", "a\n"])
def test_invalid_seats(value):
    assert not valid_seat(value)


def test_tokens_find_id_shaped_words():
    assert tokens("supersedes -> old-1, and x:y.z!") == {"supersedes", "-", "old-1", "and", "x:y.z"}


# --- time -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,expected",
    [
        ("2026-11-29T14:05:12Z", datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)),
        ("2026-11-29T14:05:12+00:00", datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)),
        ("2026-11-29T15:05:12+01:00", datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)),
        ("2026-11-29T09:05:12.250-05:00", datetime(2026, 11, 29, 14, 5, 12, 250000, tzinfo=timezone.utc)),
    ],
)
def test_times_with_an_offset(value, expected):
    parsed = parse_time(value)
    assert parsed is not None and parsed == expected and parsed.tzinfo is not None


@pytest.mark.parametrize(
    "value",
    [
        "", "2026-11-29T14:05:12", "2026-11-29", "yesterday", "2026-13-01T00:00:00Z", "2026-11-29T25:00:00Z",
        "2026-11-29T14:05:12-00:00", "2026-11-29T14:05:12-0000", "2026-11-29T14:05:12-00:00:00",
        "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
    ],
    ids=[
        "empty", "naive", "date-only", "words", "bad-month", "bad-hour", "minus-zero", "minus-zero-basic",
        "minus-zero-seconds", "underflow", "overflow",
    ],
)
def test_ambiguous_times(value):
    assert parse_time(value) is None


def test_plus_zero_is_not_ambiguous():
    assert parse_time("2026-11-29T14:05:12+00:00") is not None


@given(st.text(max_size=40))
def test_parse_time_never_raises_and_results_compare(value):
    parsed = parse_time(value)
    if parsed is not None:
        assert parsed.utcoffset() is not None
        parsed.astimezone(timezone.utc)
        assert (parsed < datetime(2026, 1, 1, tzinfo=timezone.utc)) in (True, False)


@given(st.datetimes(timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))])))
def test_isoformat_round_trip(dt):
    if dt.utcoffset() == timedelta(0):
        value = dt.isoformat().replace("+00:00", "Z")
    else:
        value = dt.isoformat()
    try:
        dt.astimezone(timezone.utc)
    except OverflowError:
        assert parse_time(value) is None
        return
    assert parse_time(value) == dt


def test_id_time_reads_the_utc_prefix():
    assert id_time("2026-11-29T140512-planner-request-x-3f9a1c07") == datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)


@pytest.mark.parametrize("value", ["no-time", "2026-11-29T14:05:12-x", "2026-13-29T140512-x", "2026-11-29T246060-x", ""])
def test_id_time_none_without_a_valid_prefix(value):
    assert id_time(value) is None


# --- slug -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "letter_id,sender,kind,slug",
    [
        ("2026-11-29T140512-planner-request-renewal-plan-3f9a1c07", "planner", "request", "renewal-plan"),
        ("planner-request-renewal-plan-3f9a1c07", "planner", "request", "renewal-plan"),
        ("2026-11-29T140512-renewal-plan", "planner", "request", "renewal-plan"),
        ("2026-11-29T140512-planner-request-renewal-plan", "planner", "request", "renewal-plan"),
        # the "<from>-<type>-" strip only applies with the letter's own parties
        ("2026-11-29T140512-other-request-renewal-plan-3f9a1c07", "planner", "request", "other-request-renewal-plan"),
        # an upper-case or short tail is not an 8-hex suffix
        ("2026-11-29T140512-planner-info-x-3F9A1C07", "planner", "info", "x-3F9A1C07"),
        ("2026-11-29T140512-planner-info-x-3f9a1c0", "planner", "info", "x-3f9a1c0"),
        ("plain", "a", "info", "plain"),
        # each step once: the time prefix only at the start
        ("2026-11-29T140512-2026-11-29T140512-x", "a", "info", "2026-11-29T140512-x"),
    ],
)
def test_slug_of_a_letter(letter_id, sender, kind, slug):
    assert slug_of(letter_id, sender, kind) == slug


@pytest.mark.parametrize(
    "letter_id,slug",
    [
        ("2026-11-29T140512-planner-request-renewal-plan-3f9a1c07--builder--ack", "renewal-plan"),
        ("2026-11-29T140512-planner-request-renewal-plan-3f9a1c07--builder--nack", "renewal-plan"),
        ("2026-11-29T140512-planner-request-renewal-plan-3f9a1c07--builder--result", "renewal-plan"),
        # a reply to a reply: the slug of the first parent
        ("2026-11-29T140512-planner-request-renewal-plan-3f9a1c07--builder--result--planner--ack", "renewal-plan"),
        # the earliest "-<type>-" is the parent's type, even when the slug names a type
        ("2026-11-29T140512-planner-info-request-form-3f9a1c07--builder--ack", "request-form"),
        ("2026-11-29T140512-info-desk-request-form-3f9a1c07--builder--ack", "form"),
        ("2026-11-29T140512-judge-ruling-on-x-3f9a1c07--builder--ack", "on-x"),
    ],
)
def test_slug_of_a_reply_is_the_slug_of_its_parent(letter_id, slug):
    assert slug_of(letter_id, "builder", "ack") == slug
    assert slug_of(letter_id) == slug


@pytest.mark.parametrize(
    "letter_id", ["x--Builder--ack", "x--builder--info", "x--builder-ack", "x--1seat--ack"]
)
def test_not_a_reply_id(letter_id):
    # not "<parent>--<seat>--<ack|nack|result>": the id's own slug
    assert slug_of(letter_id, "a", "info") == letter_id


@given(st.from_regex(r"\A[A-Za-z0-9_.:-]{1,128}\Z"), st.from_regex(r"\A[a-z][a-z0-9-]{0,10}\Z"), st.sampled_from(["info", "request", "ack"]))
def test_slug_never_raises(letter_id, sender, kind):
    assert isinstance(slug_of(letter_id, sender, kind), str)
    assert isinstance(slug_of(letter_id), str)

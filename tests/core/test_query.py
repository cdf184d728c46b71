"""Parsing the query language (SPEC 6): every term, and every way a term can be wrong."""

from datetime import datetime, timezone

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.query import KEYS, parse_query, parse_term

T = "2026-10-04T00:00:00Z"


@pytest.mark.parametrize(
    "raw, key, op, values",
    [
        ("from=alpha", "from", "=", ("alpha",)),
        ("to=alpha,beta", "to", "=", ("alpha", "beta")),
        ("type=request", "type", "=", ("request",)),
        ("re=x-1", "re", "=", ("x-1",)),
        ("id=a.b:c_d-1", "id", "=", ("a.b:c_d-1",)),
        ("priority=now,next", "priority", "=", ("now", "next")),
        ("thread=root-1", "thread", "=", ("root-1",)),
        ("state=open", "state", "=", ("open",)),
        ("state=closed", "state", "=", ("closed",)),
        ("state=any", "state", "=", ("any",)),
        ("state=unknown", "state", "=", ("unknown",)),
        ("answered=yes", "answered", "=", ("yes",)),
        ("accepted=no", "accepted", "=", ("no",)),
        ("current=unknown", "current", "=", ("unknown",)),
        ("late=yes", "late", "=", ("yes",)),
        ("superseded=head", "superseded", "=", ("head",)),
        ("superseded=no", "superseded", "=", ("no",)),
        ("slug~=Renewal", "slug", "~=", ("renewal",)),
        ("subject~=Plan B", "subject", "~=", ("plan b",)),
        ("task=yes", "task", "=", ("yes",)),
        ("task=no", "task", "=", ("no",)),
    ],
)
def test_each_term_parses(raw, key, op, values):
    term = parse_term(raw)
    assert (term.key, term.op, term.values) == (key, op, values)
    assert term.raw == raw


@pytest.mark.parametrize("raw", [f"since={T}", f"until={T}", f"due<={T}", f"due<{T}", f"due>={T}", f"due>{T}"])
def test_time_terms_parse_with_offset(raw):
    term = parse_term(raw)
    assert term.when == datetime(2026, 10, 4, tzinfo=timezone.utc)


def test_offsets_other_than_utc_are_kept():
    term = parse_term("since=2026-10-04T02:00:00+02:00")
    assert term.when == datetime(2026, 10, 4, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "raw, words",
    [
        ("", "empty term"),
        ("   ", "empty term"),
        ("from=", "empty value"),
        ("answered=", "empty value"),
        ("from=a,,b", "empty alternative"),
        ("from=a,", "empty alternative"),
        ("bogus=1", "unknown key"),
        ("requires_ack=true", "unknown key"),
        ("alpha", "expected KEY=VALUE"),
        ("=alpha", "expected KEY=VALUE"),
        ("answered=maybe", "yes|no|unknown"),
        ("state=done", "open|closed|any|unknown"),
        ("superseded=current", "yes|no|head"),
        ("task=unknown", "yes|no"),
        ("due=" + T, "due takes"),
        ("from~=alp", "from takes"),
        ("slug=renewal", "slug takes"),
        ("since>=" + T, "since takes"),
        ("since=2026-10-04T00:00:00", "offset"),
        ("until=2026-10-04", "offset"),
        ("due<=2026-10-04T00:00:00-00:00", "offset"),
        ("at=tomorrow", "offset"),
        ("from= alpha", "spaces"),
        ("slug~=", "empty value"),
    ],
)
def test_invalid_terms_name_the_term(raw, words):
    with pytest.raises(LetterboxError) as err:
        parse_query([raw])
    assert repr(raw) in str(err.value)
    assert words in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "terms",
    [
        ["from=a", "from=b"],
        ["answered=yes", "answered=no"],
        [f"since={T}", f"since={T}"],
        [f"due<={T}", f"due<=2026-11-01T00:00:00Z"],
        ["slug~=a", "slug~=b"],
        [f"at={T}", f"at={T}"],
        ["state=open", "state=any"],
    ],
)
def test_same_key_same_operator_twice_is_an_error(terms):
    with pytest.raises(LetterboxError) as err:
        parse_query(terms)
    assert "repeated term" in str(err.value)
    assert repr(terms[1]) in str(err.value)


def test_a_range_is_the_same_key_with_two_operators():
    q = parse_query([f"due>={T}", "due<=2026-11-01T00:00:00Z", f"due>{T}", "due<2026-12-01T00:00:00Z"])
    assert sorted(t.op for t in q.terms) == ["<", "<=", ">", ">="]


def test_at_is_the_clock_not_a_filter():
    q = parse_query([f"at={T}", "type=request"])
    assert q.at == datetime(2026, 10, 4, tzinfo=timezone.utc)
    assert [t.key for t in q.terms] == ["type"]


def test_default_state_is_any():
    assert parse_query([]).state == "any"
    assert parse_query(["state=open"]).state == "open"


def test_header_terms_are_evaluated_before_derived_answers():
    q = parse_query(["late=yes", "state=open", "answered=no", "current=yes", f"since={T}", "type=request", "from=a"])
    keys = [t.key for t in q.terms]
    assert keys.index("type") < keys.index("since") < keys.index("current") < keys.index("answered") < keys.index("late")
    assert keys.index("from") < keys.index("state")


def test_every_key_has_a_documented_shape():
    assert set(KEYS) == {
        "from", "to", "type", "re", "id", "priority", "thread", "state", "answered", "accepted",
        "current", "late", "superseded", "since", "until", "due", "slug", "subject", "task", "at",
    }


@pytest.mark.parametrize(
    "terms",
    [
        ["since=2026-01-02T00:00:00Z", "until=2026-01-01T00:00:00Z"],
        ["due>=2026-01-02T00:00:00Z", "due<=2026-01-01T00:00:00Z"],
        ["due>2026-01-01T00:00:00Z", "due<=2026-01-01T00:00:00Z"],
        ["due>=2026-01-01T00:00:00Z", "due<2026-01-01T00:00:00Z"],
        ["since=2026-01-01T03:00:00+02:00", "until=2026-01-01T00:00:00Z"],
    ],
)
def test_an_empty_time_range_is_an_error(terms):
    with pytest.raises(LetterboxError) as err:
        parse_query(terms)
    assert repr(terms[1]) in str(err.value)


def test_a_one_instant_range_is_fine():
    parse_query(["since=2026-01-01T00:00:00Z", "until=2026-01-01T00:00:00Z"])
    parse_query(["due>=2026-01-01T00:00:00Z", "due<=2026-01-01T00:00:00Z"])
    parse_query(["since=2026-01-01T02:00:00+02:00", "until=2026-01-01T00:00:00Z"])

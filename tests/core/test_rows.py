"""The row of SPEC 6 for one letter, against the real resolver."""

from datetime import datetime, timezone

from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.rows import ROW_KEYS, row
from letterbox_tui.core.scan import scan

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)


def rows(box, at=AT):
    res = resolve(scan(box.root), at)
    return {x.id: row(x, res) for x in res.snapshot.letters}


def test_keys_in_spec_order(box):
    box.letter("a-1")
    assert list(rows(box)["a-1"]) == list(ROW_KEYS)
    assert len(ROW_KEYS) == 26


def test_values_as_written(box):
    box.letter("2026-05-01T090000-alpha-request-plan-b-0a1b2c3d", frm="alpha", to="beta", type="request",
               requires_ack="true", deadline="2026-05-20T12:00:00+02:00", sent="2026-05-01T09:00:00+00:00",
               folder="processed", x_custom="kept")
    r = rows(box)["2026-05-01T090000-alpha-request-plan-b-0a1b2c3d"]
    assert r["path"] == "beta/processed/2026-05-01T090000-alpha-request-plan-b-0a1b2c3d.md"
    assert (r["seat"], r["folder"]) == ("beta", "processed")
    assert r["deadline"] == "2026-05-20T12:00:00+02:00"  # as written, not normalised
    assert r["sent"] == "2026-05-01T09:00:00+00:00"
    assert (r["slug"], r["subject"]) == ("plan-b", "plan-b")
    assert r["fields"]["x_custom"] == "kept" and list(r["fields"])[-1] == "x_custom"
    assert r["state"] == "closed"  # lies in processed/
    assert r["late"] == "no"
    assert r["legacy"] == []


def test_thread_is_the_letters_thread(box):
    box.letter("root-1")
    box.letter("reply-2", re="root-1", thread="root-1")
    r = rows(box)
    assert r["root-1"]["thread"] == "root-1" and r["root-1"]["fields"]["thread"] == ""
    assert r["reply-2"]["thread"] == "root-1" and r["reply-2"]["re"] == "root-1"


def test_supersession_columns(box):
    box.letter("v-1")
    box.letter("v-2", supersedes="v-1")
    r = rows(box)
    assert (r["v-1"]["current"], r["v-1"]["superseded"], r["v-1"]["head"]) == ("no", "yes", "v-2")
    assert (r["v-2"]["current"], r["v-2"]["superseded"], r["v-2"]["head"]) == ("yes", "no", "v-2")
    assert r["v-2"]["supersedes"] == "v-1"


def test_unknown_answers_bring_their_reasons(box):
    box.letter("f-1")
    box.letter("f-2", supersedes="f-1")
    box.letter("f-3", supersedes="f-1")
    r = rows(box)["f-2"]
    assert (r["current"], r["head"]) == ("unknown", None)
    assert {(x["code"], x["about"]) for x in r["reasons"]} >= {("fork", "current")}
    assert all(set(x) == {"code", "about", "detail", "letters", "paths"} for x in r["reasons"])
    # no reason is listed twice
    assert len({repr(x) for x in r["reasons"]}) == len(r["reasons"])


def test_flags_and_subject(box):
    box.letter("s-1", name="s-1-0123abcd.md", sent="2026-01-01T00:00:00", requires_ack=None, subject="Hello")
    r = rows(box)["s-1"]
    assert set(r["legacy"]) >= {"filename-alias", "missing-requires-ack"}
    assert r["subject"] == "Hello" and r["slug"] == "s-1"
    assert r["requires_ack"] == ""

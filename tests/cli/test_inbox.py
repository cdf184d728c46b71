"""``inbox [SEAT] [--recent|--all]``: a seat's inbox as the protocol's ``check`` lists it,
live first and stale last (issue 23 parity item 3), with our answers beside each letter."""

from __future__ import annotations

import pytest

from letterbox_tui.core.schema import validate
from tests.cli.helpers import cli, cli_json

AT = "2026-12-01T12:00:00Z"
# ids carry their time: the protocol's activity of a letter without a sidecar
EXACT = "2026-11-17T120000-alpha-request-exactly-fourteen-00000001"  # 14 days before AT, to the second
OVER = "2026-11-17T115959-alpha-request-one-second-more-00000002"
NEW = "2026-11-30T120000-alpha-info-new-00000003"
OLD_BUT_ACKED = "2026-10-01T000000-alpha-request-old-but-acked-00000004"


@pytest.fixture
def inbox_box(box):
    box.letter(EXACT, type="request", requires_ack="true")
    box.letter(OVER, type="request", requires_ack="true")
    box.letter(NEW)
    box.letter(OLD_BUT_ACKED, type="request", requires_ack="true")
    box.raw(f"beta/inbox/{OLD_BUT_ACKED}.md.ack",
            "ack_id: x\nacked_at: 2026-11-01T00:00:00Z\nby: beta\nprogress: drafting\nprogress_at: 2026-11-29T00:00:00Z\n")
    box.letter("2026-11-30T000000-beta-result-elsewhere-00000005", frm="beta", to="alpha")  # alpha's inbox
    return box


def test_live_first_stale_last_at_the_boundary(inbox_box, capsys):
    code, doc = cli_json(capsys, inbox_box, "inbox", "beta", "--at", AT)
    assert code == 0
    validate("inbox", doc)
    order = [(i["letter"]["id"], i["stale"]) for i in doc["letters"]]
    # live newest activity first (the progress note makes the old letter active), then stale
    assert order == [(NEW, False), (OLD_BUT_ACKED, False), (EXACT, False), (OVER, True)]
    assert doc["counts"] == {"letters": 4, "live": 3, "stale": 1, "hidden": 0}
    acked = doc["letters"][1]
    assert acked["activity_from"] == "progress_at" and acked["progress"]["note"] == "drafting"
    assert acked["letter"]["accepted"] == "yes" and acked["letter"]["state"] == "open"


def test_recent_hides_and_counts_the_stale(inbox_box, capsys):
    code, doc = cli_json(capsys, inbox_box, "inbox", "beta", "--recent", "--at", AT)
    assert [i["letter"]["id"] for i in doc["letters"]] == [NEW, OLD_BUT_ACKED, EXACT]
    assert doc["counts"]["hidden"] == 1 and doc["counts"]["stale"] == 1
    code, out, err = cli(capsys, inbox_box, "inbox", "beta", "--recent", "--at", AT)
    assert code == 0 and "1 stale letter hidden;" in out and OVER not in out


def test_stale_days_from_the_environment(inbox_box, capsys, monkeypatch):
    monkeypatch.setenv("LETTERBOX_CHECK_STALE_DAYS", "1")
    code, doc = cli_json(capsys, inbox_box, "inbox", "beta", "--at", AT)
    assert [(i["letter"]["id"], i["stale"]) for i in doc["letters"]] == [  # NEW is exactly 1 day old
        (NEW, False), (OLD_BUT_ACKED, True), (EXACT, True), (OVER, True)]
    monkeypatch.setenv("LETTERBOX_CHECK_STALE_DAYS", "two")
    code, out, err = cli(capsys, inbox_box, "inbox", "beta")
    assert code == 2 and "LETTERBOX_CHECK_STALE_DAYS" in err


def test_answers_beside_each_letter(box, capsys):
    box.letter("2026-11-30T000000-alpha-request-done-00000006", type="request", requires_ack="true",
               deadline="2026-12-01T00:00:00Z")
    box.letter("2026-11-30T000000-alpha-request-late-00000007", type="request", requires_ack="true",
               deadline="2026-12-01T00:00:00Z")
    box.letter("2026-11-30T000000-alpha-request-done-00000006--beta--result", frm="beta", to="alpha",
               type="result", re="2026-11-30T000000-alpha-request-done-00000006")
    code, doc = cli_json(capsys, box, "inbox", "beta", "--at", AT)
    got = {i["letter"]["slug"]: (i["letter"]["answered"], i["letter"]["state"], i["letter"]["late"]) for i in doc["letters"]}
    assert got == {"done": ("yes", "closed", "no"), "late": ("no", "open", "yes")}


def test_seat_defaults_to_letterbox_agent(inbox_box, capsys, monkeypatch):
    monkeypatch.setenv("LETTERBOX_AGENT", "alpha")
    code, doc = cli_json(capsys, inbox_box, "inbox", "--at", AT)
    assert doc["seat"] == "alpha" and len(doc["letters"]) == 1
    monkeypatch.delenv("LETTERBOX_AGENT")
    code, out, err = cli(capsys, inbox_box, "inbox")
    assert code == 2 and "LETTERBOX_AGENT" in err
    code, out, err = cli(capsys, inbox_box, "inbox", "nobody")
    assert code == 2 and "no seat 'nobody'" in err


def test_malformed_letters_are_listed_and_the_scope_is_incomplete(inbox_box, capsys):
    inbox_box.raw("beta/inbox/broken.md", "---\nid: broken\n")
    code, doc = cli_json(capsys, inbox_box, "inbox", "beta", "--at", AT)
    assert code == 3 and [u["path"] for u in doc["unreadable"]] == ["beta/inbox/broken.md"]
    code, out, err = cli(capsys, inbox_box, "inbox", "beta", "--at", AT)
    assert "MALFORMED  beta/inbox/broken.md" in out and "incomplete" in out

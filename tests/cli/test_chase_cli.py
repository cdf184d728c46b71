"""``letterbox-tui chase ID --as S [NOTE]`` (SPEC 7): an ``info`` letter ``re:`` the owed
letter to the seat that owes it, through the gate; every refusal exits 2 and writes nothing."""

from __future__ import annotations

import pytest

from letterbox_tui.core.scan import scan

from tests.cli.helpers import cli, cli_json


@pytest.fixture
def owed_box(box):
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true")
    return box


def test_a_chase_asks_the_owing_seat(capsys, owed_box):
    code, out, err = cli(capsys, owed_box, "chase", "ask", "--as", "alpha", "is", "it", "on", "track?")
    assert code == 0 and "chased beta on ask" in err
    (chase,) = [x for x in scan(owed_box.root).letters if x.id == out.strip()]
    assert (chase.sender, chase.recipient, chase.type, chase.re, chase.thread) == ("alpha", "beta", "info", "ask", "ask")
    assert chase.folder == "inbox" and chase.seat == "beta"
    assert (owed_box.root / chase.path).read_text().endswith("---\nis it on track?\n")
    _, data = cli_json(capsys, owed_box, "owed")
    (row,) = data["owed"][0]["items"]
    assert row["attention"][-1]["code"] == "chased" and row["attention"][-1]["since"] == chase.sent
    assert row["answered"] == "no"  # a chase is no answer


def test_the_default_ask_is_status(capsys, owed_box):
    code, out, _ = cli(capsys, owed_box, "chase", "ask", "--as", "alpha")
    assert code == 0
    assert (owed_box.root / "beta" / "inbox" / (out.strip() + ".md")).read_text().endswith("---\nstatus?\n")


def test_chasing_twice_within_the_silence_needs_again(capsys, owed_box):
    assert cli(capsys, owed_box, "chase", "ask", "--as", "alpha")[0] == 0
    before = owed_box.tree_bytes()
    code, out, err = cli(capsys, owed_box, "chase", "ask", "--as", "alpha", "again?")
    assert code == 2 and out == "" and "within the silence setting (2d); give --again" in err
    assert owed_box.tree_bytes() == before
    assert cli(capsys, owed_box, "chase", "ask", "--as", "alpha", "--again")[0] == 0


@pytest.mark.parametrize("case, argv, said", [
    ("closed", ["chase", "done", "--as", "alpha"], "already closed"),
    ("answered", ["chase", "replied", "--as", "alpha"], "already closed"),
    ("not a task", ["chase", "fyi", "--as", "alpha"], "is not a task"),
    ("superseded", ["chase", "old", "--as", "alpha"], "superseded by new"),
    ("unknown seat", ["chase", "ask", "--as", "nobody"], "'nobody': no such seat"),
    ("no such letter", ["chase", "nope", "--as", "alpha"], "no letter nope in scope"),
    ("no seat at all", ["chase", "ask"], "which seat writes?"),
])
def test_refusals_write_nothing(capsys, owed_box, case, argv, said):
    b = owed_box
    b.letter("done", frm="alpha", to="beta", type="request", requires_ack="true", folder="processed")
    b.letter("replied", frm="alpha", to="beta", type="request", requires_ack="true")
    b.letter("replied--beta--result", frm="beta", to="alpha", type="result", re="replied")
    b.letter("fyi", frm="alpha", to="beta", type="info")
    b.letter("old", frm="alpha", to="beta", type="request", requires_ack="true")
    b.letter("new", frm="alpha", to="beta", type="request", requires_ack="true", supersedes="old")
    before = b.tree_bytes()
    code, out, err = cli(capsys, b, *argv)
    assert code == 2 and out == "" and said in err, (case, err)
    assert len(err.strip().splitlines()) == 1
    assert b.tree_bytes() == before

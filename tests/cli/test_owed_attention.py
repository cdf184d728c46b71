"""``owed``'s attention codes on the command line (SPEC 7): the rows' ``attention``, the
``--attention`` filter, ``--as``, and what an empty answer says about the scope."""

from __future__ import annotations

from letterbox_tui.core.schema import validate

from tests.cli.helpers import cli, cli_json

AT = "2026-03-01T00:00:00Z"


def test_rows_carry_their_attention_codes(capsys, box):
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-02-01T00:00:00Z")
    code, data = cli_json(capsys, box, "owed", "--at", AT)
    assert code == 0
    (row,) = data["owed"][0]["items"]
    assert row["attention"] == [
        {"code": "late", "since": "2026-02-01T00:00:00Z", "detail": "due 2026-02-01T00:00:00Z, 28d overdue"},
        {"code": "never-acked", "since": "2026-01-01T00:00:00Z",
         "detail": "sent 2026-01-01T00:00:00Z, 59d ago; no ack, no sidecar, no reply from beta"},
    ]
    validate("owed", data)
    _, out, _ = cli(capsys, box, "owed", "--at", AT)
    assert "ask attention: late (due 2026-02-01T00:00:00Z, 28d overdue) · never-acked (" in out
    assert "attention: late 1, never-acked 1" in out


def test_the_attention_filter(capsys, box):
    box.seat("gamma")
    box.letter("late-1", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-02-01T00:00:00Z")
    box.letter("acked", frm="alpha", to="gamma", type="request", requires_ack="true")
    box.raw("gamma/inbox/acked.md.ack", "acked_at: 2026-01-02T00:00:00Z\n")
    _, data = cli_json(capsys, box, "owed", "--at", AT, "--attention", "accepted-silent")
    assert [(g["seat"], [r["id"] for r in g["items"]]) for g in data["owed"]] == [("gamma", ["acked"])]
    _, data = cli_json(capsys, box, "owed", "--at", AT, "--attention", "accepted-silent", "--attention", "late")
    assert [g["seat"] for g in data["owed"]] == ["beta", "gamma"]
    code, out, _ = cli(capsys, box, "owed", "--at", AT, "--attention", "chased")
    assert code == 0 and "nothing owed with attention chased" in out


def test_an_unknown_code_exits_2(capsys, box):
    code, out, err = cli(capsys, box, "owed", "--attention", "sleepy")
    assert code == 2 and out == "" and "--attention 'sleepy': one of late, late-unknown" in err


def test_the_readers_own_seat(capsys, box):
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true")
    _, data = cli_json(capsys, box, "owed", "--at", AT, "--as", "beta")
    assert "waiting-on-human" in [c["code"] for c in data["owed"][0]["items"][0]["attention"]]
    code, _, err = cli(capsys, box, "owed", "--as", "nobody")
    assert code == 2 and "nobody" in err


def test_nothing_owed_only_on_a_complete_scope(capsys, box):
    code, out, _ = cli(capsys, box, "owed", "--at", AT)
    assert code == 0 and "nothing owed" in out.splitlines()
    box.raw("beta/inbox/broken.md", "---\nid: broken\nbroken line\n---\n")
    code, out, _ = cli(capsys, box, "owed", "--at", AT)
    assert code == 3
    assert "nothing owed among the letters read; 1 file unread (see check)" in out
    assert "nothing owed" not in out.splitlines()


def test_nothing_owed_on_a_partial_scope(capsys, box):
    code, out, _ = cli(capsys, box, "--participant", "beta", "owed", "--at", AT)
    assert code == 3
    assert "nothing owed among the letters read; only beta was read" in out


def test_text_orders_each_seat_by_the_most_urgent_code_json_by_deadline(capsys, box):
    box.letter("acked-early", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-04-01T00:00:00Z")
    box.raw("beta/inbox/acked-early.md.ack", "acked_at: 2026-01-02T00:00:00Z\n")  # accepted-silent
    box.letter("unacked-later", frm="alpha", to="beta", type="request", requires_ack="true",
               deadline="2026-05-01T00:00:00Z")  # never-acked: more urgent
    _, data = cli_json(capsys, box, "owed", "--at", AT)
    assert [r["id"] for r in data["owed"][0]["items"]] == ["acked-early", "unacked-later"]  # SPEC 7's order
    _, out, _ = cli(capsys, box, "owed", "--at", AT)
    assert out.index("unacked-later  ") < out.index("acked-early  ")

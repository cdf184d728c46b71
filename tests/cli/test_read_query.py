"""``letterbox-tui query`` and ``exists`` (SPEC 6, 7): JSON shape, text, exit codes, and
that reading never reads a body nor changes a file."""

import json
import os
import subprocess
import sys
import time

import pytest

from letterbox_tui.cli import main
from tests.cli.helpers import SCOPE_KEYS, cli, cli_json

ROW_KEYS = [
    "id", "path", "seat", "folder", "from", "to", "type", "re", "thread", "supersedes",
    "priority", "requires_ack", "deadline", "sent", "slug", "subject", "fields", "state",
    "answered", "accepted", "current", "head", "superseded", "late", "legacy", "reasons",
]
REASON_KEYS = ["code", "about", "detail", "letters", "paths"]
ACCOUNTABILITY = ["state=open", "answered=no", "type=request", "until=2026-10-04T00:00:00Z"]


@pytest.fixture
def mail(box):
    """Requests: one owed and late, one answered by a result, one acked; a reply; a note."""
    box.letter("2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07", frm="alpha", to="beta",
               type="request", requires_ack="true", deadline="2026-09-10T17:00:00Z",
               sent="2026-09-01T10:00:00Z", priority="now")
    box.letter("ask-2", frm="alpha", to="beta", type="request", requires_ack="true",
               sent="2026-09-02T10:00:00Z", subject="Budget [bold]numbers[/bold]")
    box.letter("ask-2--beta--result", frm="beta", to="alpha", type="result", re="ask-2", thread="ask-2",
               requires_ack="false", sent="2026-09-03T10:00:00Z")
    box.letter("ask-3", frm="alpha", to="beta", type="request", requires_ack="true",
               sent="2026-11-01T10:00:00Z")
    box.letter("note-4", frm="beta", to="alpha", type="info", requires_ack="false", sent="2026-09-05T00:00:00Z")
    return box


def test_query_json_shape_field_for_field(capsys, mail):
    code, data = cli_json(capsys, mail, "query", "id=2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07")
    assert code == 0
    assert list(data) == ["matches", "unknown", "scope"]
    assert list(data["scope"]) == SCOPE_KEYS
    assert data["scope"]["complete"] is True and data["scope"]["letters"] == 5
    [row] = data["matches"]
    assert list(row) == ROW_KEYS
    assert row == {
        "id": "2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07",
        "path": "beta/inbox/2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07.md",
        "seat": "beta",
        "folder": "inbox",
        "from": "alpha",
        "to": "beta",
        "type": "request",
        "re": "",
        "thread": "2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07",
        "supersedes": "",
        "priority": "now",
        "requires_ack": "true",
        "deadline": "2026-09-10T17:00:00Z",
        "sent": "2026-09-01T10:00:00Z",
        "slug": "renewal-plan",
        "subject": "renewal-plan",
        "fields": {
            "id": "2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07", "from": "alpha", "to": "beta",
            "type": "request", "re": "", "thread": "", "priority": "now", "requires_ack": "true",
            "deadline": "2026-09-10T17:00:00Z", "sent": "2026-09-01T10:00:00Z",
        },
        "state": "open",
        "answered": "no",
        "accepted": "no",
        "current": "yes",
        "head": "2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07",
        "superseded": "no",
        "late": "yes",
        "legacy": [],
        "reasons": [],
    }
    assert list(row["fields"]) == ["id", "from", "to", "type", "re", "thread", "priority",
                                   "requires_ack", "deadline", "sent"]


def test_fields_keep_unknown_fields_in_written_order(capsys, box):
    box.letter("x-1", frm="alpha", to="beta", zeta="last?", subject="S", alpha_field="a")
    _, data = cli_json(capsys, box, "query")
    fields = data["matches"][0]["fields"]
    assert list(fields)[-3:] == ["zeta", "subject", "alpha_field"]
    assert data["matches"][0]["subject"] == "S"


def test_accountability_line(capsys, mail):
    code, out, err = cli(capsys, mail, "query", *ACCOUNTABILITY)
    assert code == 0, err
    assert "renewal-plan" in out  # the owed request (id column)
    assert "ask-2 " not in out and "ask-3" not in out  # answered; sent after the bound
    assert "1 match, 0 unknown" in out
    assert "complete" in out and "incomplete" not in out
    code, data = cli_json(capsys, mail, "query", *ACCOUNTABILITY)
    assert [r["id"] for r in data["matches"]] == ["2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07"]


def test_accountability_line_as_a_subprocess(mail):
    proc = subprocess.run(
        [sys.executable, "-m", "letterbox_tui", "--root", str(mail.root), "query", *ACCOUNTABILITY],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "scope complete" in proc.stdout
    assert "renewal-plan" in proc.stdout


def test_incomplete_scope_exits_3_and_still_prints(capsys, mail):
    mail.raw("beta/inbox/broken.md", "---\nid: broken\nfrom alpha\n---\n")
    code, out, err = cli(capsys, mail, "query", *ACCOUNTABILITY)
    assert code == 3
    assert "renewal-plan" in out
    assert "incomplete" in out and "not proof of global absence" in out
    assert "1 unreadable file" in out
    code, data = cli_json(capsys, mail, "query", *ACCOUNTABILITY)
    assert code == 3 and data["scope"]["complete"] is False
    assert data["scope"]["unreadable"][0]["path"] == "beta/inbox/broken.md"


def test_partial_scope_is_incomplete(capsys, mail):
    code, out, _ = cli(capsys, mail, "--participant", "beta", "query", "type=request")
    assert code == 3
    assert "partial scope (beta only)" in out and "not proof of global absence" in out


@pytest.mark.parametrize("term", ["bogus=1", "answered=maybe", "from=", "", "since=2026-01-01T00:00:00"])
def test_invalid_term_exits_2_naming_it(capsys, mail, term):
    code, out, err = cli(capsys, mail, "query", "type=request", term)
    assert code == 2
    assert out == ""
    assert repr(term) in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_repeated_term_exits_2(capsys, mail):
    code, _, err = cli(capsys, mail, "query", "from=alpha", "from=beta")
    assert code == 2 and "repeated term 'from=beta'" in err
    code, _, err = cli(capsys, mail, "query", "due>=2026-01-01T00:00:00Z", "due<=2026-12-01T00:00:00Z")
    assert code == 0


def test_unknown_rows_carry_their_reasons(capsys, box):
    box.letter("naive-1", frm="alpha", to="beta", type="request", requires_ack="true", sent="2026-09-01T10:00:00")
    box.letter("ok-2", frm="alpha", to="beta", type="request", requires_ack="true", sent="2026-09-01T10:00:00Z")
    code, data = cli_json(capsys, box, "query", "until=2026-10-04T00:00:00Z")
    assert [r["id"] for r in data["matches"]] == ["ok-2"]
    [row] = data["unknown"]
    assert list(row) == ROW_KEYS and row["id"] == "naive-1"
    reason = row["reasons"][0]
    assert list(reason) == REASON_KEYS
    assert (reason["code"], reason["about"], reason["letters"]) == ("ambiguous-timestamp", "match", ["naive-1"])
    assert "ambiguous-sent" in row["legacy"]
    code, out, _ = cli(capsys, box, "query", "until=2026-10-04T00:00:00Z")
    assert "1 match, 1 unknown" in out and "ambiguous-timestamp (match)" in out


def test_answered_unknown_is_selectable(capsys, box):
    box.letter("bridge-1", frm="alpha", to="external-bridge", type="request", requires_ack="true", seat="beta")
    box.seat("external-bridge")
    box.letter("plain-2", frm="alpha", to="beta", type="request", requires_ack="true")
    _, data = cli_json(capsys, box, "query", "answered=unknown")
    assert [r["id"] for r in data["matches"]] == ["bridge-1"]
    _, data = cli_json(capsys, box, "query", "answered=no")
    assert [r["id"] for r in data["matches"]] == ["plain-2"]
    [row] = data["unknown"]
    assert row["id"] == "bridge-1"
    assert {(r["code"], r["about"]) for r in row["reasons"]} >= {("external-route", "answered")}


def test_at_term_is_the_clock_for_late(capsys, mail):
    late_id = "2026-09-01T100000-alpha-request-renewal-plan-3f9a1c07"
    _, data = cli_json(capsys, mail, "query", "late=yes", "at=2026-09-10T16:00:00Z")
    assert data["matches"] == []
    _, data = cli_json(capsys, mail, "query", "late=yes", "at=2026-09-10T18:00:00Z")
    assert [r["id"] for r in data["matches"]] == [late_id]


def test_exists(capsys, mail):
    code, data = cli_json(capsys, mail, "exists", "type=request", "answered=yes")
    assert code == 0
    assert list(data) == ["exists", "matches", "unknown", "reasons", "scope"]
    assert (data["exists"], data["matches"], data["unknown"], data["reasons"]) == ("yes", 1, 0, [])
    code, out, _ = cli(capsys, mail, "exists", "type=request", "answered=yes")
    assert "1 match, 0 unknown; scope complete" in out  # (it said "1 matches", as query did not)
    code, data = cli_json(capsys, mail, "exists", "type=decision")
    assert (code, data["exists"], data["matches"]) == (0, "no", 0)


def test_exists_is_unknown_on_an_incomplete_scope(capsys, mail):
    mail.raw("alpha/inbox/bad.md", b"---\nid: bad\n\xff\n---\n")
    code, data = cli_json(capsys, mail, "exists", "type=decision")
    assert code == 3
    assert data["exists"] == "unknown"
    assert [(r["code"], r["about"], r["paths"]) for r in data["reasons"]] == [
        ("unreadable-file", "match", ["alpha/inbox/bad.md"])
    ]
    code, data = cli_json(capsys, mail, "--participant", "alpha", "exists", "type=decision")
    assert data["exists"] == "unknown" and data["reasons"][0]["code"] == "unreadable-file"
    assert "outside-scope" in [r["code"] for r in data["reasons"]]


def test_exists_is_unknown_with_unknown_rows(capsys, box):
    box.letter("naive-1", frm="alpha", to="beta", sent="2026-09-01T10:00:00")
    code, data = cli_json(capsys, box, "exists", "since=2026-01-01T00:00:00Z")
    assert code == 0
    assert (data["exists"], data["matches"], data["unknown"]) == ("unknown", 0, 1)
    assert data["reasons"][0]["code"] == "ambiguous-timestamp"
    code, out, _ = cli(capsys, box, "exists", "since=2026-01-01T00:00:00Z")
    assert out.startswith("unknown")


READING = (["query", "answered=no"], ["exists", "answered=yes"], ["check"], ["owed"], ["digest"],
           ["disputes"], ["current", "ask-1"], ["answered", "ask-1"], ["thread", "ask-1"])


def test_reading_commands_never_read_bodies_nor_write(capsys, box):
    # A body that looks like a header answering the request: a reader of bodies is fooled.
    box.letter("ask-1", frm="alpha", to="beta", type="request", requires_ack="true",
               body="---\nid: ask-1--beta--result\nanswered: yes\ntype: result\nre: ask-1\n---\n")
    box.letter("junk-2", frm="beta", to="alpha", type="info", body="\x1b[2J garbage \xff\n" * 1000)
    box.raw("beta/inbox/ask-1.md.ack", "")
    before = box.tree_bytes()
    for argv in READING:
        code, data = cli_json(capsys, box, *argv)
        assert code == 0, argv
        code, out, err = cli(capsys, box, *argv)
        assert code == 0 and err == "", argv
    _, data = cli_json(capsys, box, "query", "answered=no")
    assert sorted(r["id"] for r in data["matches"]) == ["ask-1", "junk-2"]
    _, data = cli_json(capsys, box, "exists", "answered=yes")
    assert data["exists"] == "no"
    assert box.tree_bytes() == before


def test_a_huge_body_costs_nothing(capsys, box):
    # A sparse 8 GiB letter: reading its body would never finish in time.
    box.letter("ask-1", frm="alpha", to="beta", type="request", requires_ack="true")
    trap = box.letter("huge-2", frm="beta", to="alpha", type="info")
    os.truncate(trap, 8 << 30)
    st = trap.stat()
    start = time.monotonic()
    for argv in READING:
        code, _ = cli_json(capsys, box, *argv)
        assert code == 0, argv
    assert time.monotonic() - start < 20
    assert (trap.stat().st_size, trap.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


HOSTILE_SUBJECT = "[bold]loud[/bold] [@click=app.quit]quit[/] \u202eevil\u202c \u009b31mred"


def test_hostile_header_values_print_literally(capsys, box):
    box.letter("h-1", frm="[red]alpha[/red]\u202e\u009b", to="beta", type="[@click=app.quit]x", subject=HOSTILE_SUBJECT)
    code, out, _ = cli(capsys, box, "query")
    assert code == 0
    assert "[red]alpha[/red]<U+202E><U+009B>" in out
    assert "[@click=app.quit]x" in out
    for bad in ("\u202e", "\u009b", "\x1b"):
        assert bad not in out
    # JSON keeps the values exactly, with controls escaped rather than raw
    code, out, _ = cli(capsys, box, "query", "--json")
    assert "\u202e" not in out and "\u009b" not in out
    assert json.loads(out)["matches"][0]["subject"] == HOSTILE_SUBJECT


def test_a_non_atomic_scan_makes_absence_unknown(capsys, mail, monkeypatch):
    import letterbox_tui.cli.read as read

    real = read.answers

    def unsettled(args, at):
        root, settings, res = real(args, at)
        res.snapshot.scope.atomic = False
        return root, settings, res

    monkeypatch.setattr(read, "answers", unsettled)
    code, data = cli_json(capsys, mail, "exists", "type=decision")
    assert code == 3
    assert data["exists"] == "unknown"
    assert [(r["code"], r["about"]) for r in data["reasons"]] == [("non-atomic-scan", "match")]
    code, out, _ = cli(capsys, mail, "query", "type=decision")
    assert code == 3 and "files changed during the scan" in out and "not proof of global absence" in out


def test_not_a_letterbox_exits_2_with_one_line(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["--root", str(empty), "query", "type=request"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_unknown_participant_exits_2(capsys, mail):
    code, out, err = cli(capsys, mail, "--participant", "nobody", "query")
    assert code == 2 and out == "" and "nobody" in err

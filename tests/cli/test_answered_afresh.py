"""A reading command answers from what the letterbox holds now: a letter added, a letter
edited in place (its size and mtime restored), a deadline the clock passes, or another
``--participant`` each give the answer a first run would give."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone

from letterbox_tui.cli import common, main
from tests.cli.helpers import cli

ASK = "2026-01-01T000000-alpha-request-ask-aaaaaaaa"


def _mail(box):
    box.letter(ASK, type="request", requires_ack="true")
    box.letter("2026-01-01T000100-beta-info-note-bbbbbbbb", frm="beta", to="alpha")
    return box


def _ids(out: str, key: str = "matches") -> list[str]:
    return [r["id"] for r in json.loads(out)[key]]


def test_a_changed_letterbox_is_answered_afresh(capsys, box):
    mail = _mail(box)
    _, first, _ = cli(capsys, mail, "query", "type=request", "--json")
    assert _ids(first) == [ASK]
    mail.letter("2026-01-02T000000-alpha-request-two-cccccccc", type="request", requires_ack="true")
    _, second, _ = cli(capsys, mail, "query", "type=request", "--json")
    assert len(_ids(second)) == 2


def test_an_edit_in_place_is_answered_afresh(capsys, box):
    mail = _mail(box)
    cli(capsys, mail, "query", "type=request", "--json")
    path = mail.root / "beta/inbox" / f"{ASK}.md"
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"type: request", b"type: info   "))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime
    _, out, _ = cli(capsys, mail, "query", "type=request", "--json")
    assert json.loads(out)["matches"] == []


def test_a_passing_deadline_is_answered_afresh(capsys, box, monkeypatch):
    clock = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
    box.letter(ASK, type="request", requires_ack="true", deadline="2026-03-01T12:00:30Z")
    monkeypatch.setattr(common, "now", lambda: clock)
    _, before, _ = cli(capsys, box, "query", "late=yes", "--json")
    assert json.loads(before)["matches"] == []
    monkeypatch.setattr(common, "now", lambda: clock + timedelta(minutes=1))
    _, after, _ = cli(capsys, box, "query", "late=yes", "--json")
    assert _ids(after) == [ASK]


def test_a_partial_scope_is_answered_apart(capsys, box):
    mail = _mail(box)
    _, whole, _ = cli(capsys, mail, "query", "type=request", "--json")
    _, part, _ = cli(capsys, mail, "--participant", "alpha", "query", "type=request", "--json")
    assert json.loads(part)["scope"]["partial"] is True
    assert json.loads(whole)["scope"]["partial"] is False
    _, whole2, _ = cli(capsys, mail, "query", "type=request", "--json")
    assert json.loads(whole2)["scope"]["partial"] is False


def test_a_bad_term_is_exit_2_after_an_answer(capsys, box):
    mail = _mail(box)
    cli(capsys, mail, "query", "type=request", "--json")
    assert main(["--root", str(mail.root), "query", "nokey=1", "--json"]) == 2

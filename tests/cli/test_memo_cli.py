"""``query --json`` and ``exists --json`` replay a memoised answer on an unchanged letterbox
(core.speed.memo), and answer afresh the moment anything the answer rests on changes."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone

import pytest

from letterbox_tui.cli import main, read
from letterbox_tui.core.speed import memo as memo_mod
from tests.cli.helpers import cli

ASK = "2026-01-01T000000-alpha-request-ask-aaaaaaaa"


@pytest.fixture(autouse=True)
def _trust_fresh_files(monkeypatch):
    monkeypatch.setattr(memo_mod, "RACY_NS", 0)


@pytest.fixture
def mail(box):
    box.letter(ASK, type="request", requires_ack="true")
    box.letter("2026-01-01T000100-beta-info-note-bbbbbbbb", frm="beta", to="alpha")
    time.sleep(0.05)
    return box


def without_time(out: str) -> dict:
    data = json.loads(out)
    del data["scope"]["scanned_at"]
    return data


@pytest.fixture
def no_fresh_answer(monkeypatch):
    """From here on, the reading commands may not run: only a replay can answer."""
    def refuse(*_a, **_k):
        raise AssertionError("answered afresh, not replayed")

    def arm():
        monkeypatch.setattr(read, "cmd_query", refuse)
        monkeypatch.setattr(read, "cmd_exists", refuse)

    return arm


@pytest.mark.parametrize("argv", [["query", "type=request", "--json"], ["exists", "state=open", "--json"]])
def test_a_repeated_answer_is_replayed_with_its_own_scan_time(capsys, mail, no_fresh_answer, argv):
    code, first, _ = cli(capsys, mail, *argv)
    no_fresh_answer()
    time.sleep(0.01)
    code2, second, _ = cli(capsys, mail, *argv)
    assert (code2, without_time(second)) == (code, without_time(first))
    assert json.loads(second)["scope"]["scanned_at"] != json.loads(first)["scope"]["scanned_at"]
    assert second.endswith("}\n")


def test_a_changed_letterbox_is_answered_afresh(capsys, mail):
    _, first, _ = cli(capsys, mail, "query", "type=request", "--json")
    assert [r["id"] for r in json.loads(first)["matches"]] == [ASK]
    mail.letter("2026-01-02T000000-alpha-request-two-cccccccc", type="request", requires_ack="true")
    _, second, _ = cli(capsys, mail, "query", "type=request", "--json")
    assert len(json.loads(second)["matches"]) == 2


def test_an_edit_in_place_is_answered_afresh(capsys, mail):
    cli(capsys, mail, "query", "type=request", "--json")
    path = mail.root / "beta/inbox" / f"{ASK}.md"
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"type: request", b"type: info   "))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime
    _, out, _ = cli(capsys, mail, "query", "type=request", "--json")
    assert json.loads(out)["matches"] == []


def test_a_passing_deadline_is_answered_afresh(capsys, box):
    deadline = datetime.now(timezone.utc) + timedelta(seconds=1.5)
    box.letter(ASK, type="request", requires_ack="true", deadline=deadline.isoformat().replace("+00:00", "Z"))
    time.sleep(0.05)
    _, before, _ = cli(capsys, box, "query", "late=yes", "--json")
    assert json.loads(before)["matches"] == []
    time.sleep(max(0.0, (deadline - datetime.now(timezone.utc)).total_seconds()) + 0.1)
    _, after, _ = cli(capsys, box, "query", "late=yes", "--json")
    assert [r["id"] for r in json.loads(after)["matches"]] == [ASK]


def test_text_output_is_never_memoised(capsys, mail):
    cli(capsys, mail, "query", "type=request")
    assert not os.path.isdir(memo_mod.cache_dir()) or not os.listdir(memo_mod.cache_dir()) or not [
        n for n in os.listdir(memo_mod.cache_dir()) if n.endswith((".state", ".answer"))
    ]


def test_no_cache_switch_keeps_no_memo(capsys, mail, monkeypatch, no_fresh_answer):
    monkeypatch.setenv("LETTERBOX_TUI_NO_CACHE", "1")
    cli(capsys, mail, "query", "type=request", "--json")
    d = memo_mod.cache_dir()
    assert not os.path.isdir(d) or not [n for n in os.listdir(d) if n.endswith((".state", ".answer"))]


def test_a_bad_term_is_still_exit_2_with_memos_around(capsys, mail):
    cli(capsys, mail, "query", "type=request", "--json")
    code = main(["--root", str(mail.root), "query", "nokey=1", "--json"])
    assert code == 2


def test_check_verify_forgets_the_memos(capsys, mail):
    cli(capsys, mail, "query", "type=request", "--json")
    d = memo_mod.cache_dir()
    assert [n for n in os.listdir(d) if n.endswith(".answer")]
    cli(capsys, mail, "check", "--verify")
    assert not [n for n in os.listdir(d) if n.endswith((".state", ".answer"))]


def test_a_partial_scope_is_memoised_apart(capsys, mail):
    _, whole, _ = cli(capsys, mail, "query", "type=request", "--json")
    _, part, _ = cli(capsys, mail, "--participant", "alpha", "query", "type=request", "--json")
    assert json.loads(part)["scope"]["partial"] is True
    assert json.loads(whole)["scope"]["partial"] is False
    _, part2, _ = cli(capsys, mail, "--participant", "alpha", "query", "type=request", "--json")
    assert without_time(part2) == without_time(part)


def test_a_terminal_is_never_given_a_replayed_answer(capsys, mail, monkeypatch):
    """What reaches a terminal is made afresh by the sanitizing printers every time."""
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    cli(capsys, mail, "query", "type=request", "--json")
    cli(capsys, mail, "query", "type=request", "--json")
    d = memo_mod.cache_dir()
    assert not os.path.isdir(d) or not [n for n in os.listdir(d) if n.endswith((".state", ".answer"))]

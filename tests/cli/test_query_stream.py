"""``query --json`` writes its rows a slice at a time (issue 15: the peak memory of a cold
query), and what it writes is exactly the document encoded at once, also when a forked
helper makes its second half (``cli.halves``) and when that helper fails; a large answer's
memo is recorded from the pieces made again after the answer, and replays the same answer."""

from __future__ import annotations

import functools
import json
import sys
import time
from datetime import datetime, timezone

import pytest

from letterbox_tui.cli import output, read
from letterbox_tui.core.query import parse_query, run_query
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.rows import row
from letterbox_tui.core.scan import scan
from letterbox_tui.core.speed import after
from letterbox_tui.core.speed import memo as memo_mod
from tests.cli.helpers import cli


@pytest.fixture
def mail(box):
    for i in range(7):
        box.letter(f"2026-01-01T00000{i}-alpha-request-ask-{i:08x}", type="request", requires_ack="true",
                   subject=f"ask {i} \u202eevil\u202c caf\u00e9 \U0001d11e")
    box.letter("2026-01-01T000100-beta-info-note-bbbbbbbb", frm="beta", to="alpha", re="nowhere")
    box.letter("2026-01-01T000200-beta-ack-x-cccccccc", frm="beta", to="alpha", type="ack",
               re="2026-01-01T000001-alpha-request-ask-00000001", sent="2026-01-01 00:02")  # ambiguous sent
    for seat in ("alpha", "beta"):  # one id in two files: its answers are unknown
        box.letter("2026-01-01T000300-alpha-request-twice-dddddddd", type="request", requires_ack="true",
                   seat=seat, folder="processed", subject=f"in {seat}")
    time.sleep(0.05)
    return box


@pytest.mark.parametrize("size", [1, 2, 3, 2000])
def test_the_parts_are_the_document_encoded_at_once(mail, monkeypatch, size):
    monkeypatch.setattr(output, "json_pieces", functools.partial(output.json_pieces, size=size))
    snapshot = scan(mail.root, id_time_is_utc=False)
    now = datetime(2026, 1, 2, tzinfo=timezone.utc)
    res = resolve(snapshot, now)
    result = run_query(parse_query(["answered=no"], now), res)
    assert len(result.matches) > 3 and result.unknown  # several parts of each list
    whole = output.dumps_json({"matches": [row(x, res) for x in result.matches],
                               "unknown": [row(x, res, why) for x, why in result.unknown],
                               "scope": snapshot.scope.to_json()}, indent=None)
    pieces = read._query_json(result, res, snapshot.scope)
    assert "".join(p() for p in pieces) == whole
    assert "".join(p() for p in pieces) == whole  # made again: the same
    assert "\\u202e" in whole and "\u202e" not in whole  # escaped in every part


def test_the_command_writes_the_same_document(capsys, mail, monkeypatch):
    monkeypatch.setenv("LETTERBOX_TUI_NO_CACHE", "1")  # no memo: the plain streamed path
    monkeypatch.setattr(output, "json_pieces", functools.partial(output.json_pieces, size=2))
    code, out, _ = cli(capsys, mail, "query", "answered=no", "--json")
    data = json.loads(out)
    assert out == output.dumps_json(data, indent=None) + "\n"
    assert len(data["matches"]) >= 8 and data["unknown"] and code == 0


def test_a_large_answer_s_memo_is_made_again_after_the_answer_and_replays_it(capsys, mail, monkeypatch):
    monkeypatch.setattr(memo_mod, "RACY_NS", 0)
    monkeypatch.setattr(after, "BACKGROUND_ROWS", 0)  # "large": recorded from the parts made again
    monkeypatch.setattr(memo_mod, "BACKGROUND_ROWS", 0)
    monkeypatch.setattr(after, "detached", lambda work, ending=False: False)  # here, not forked
    monkeypatch.setattr(output, "json_pieces", functools.partial(output.json_pieces, size=3))
    made = []
    real = read._query_json
    monkeypatch.setattr(read, "_query_json", lambda *a: made.append(1) or real(*a))
    code, first, _ = cli(capsys, mail, "query", "answered=no", "--json")
    assert made == [1]

    def refuse(*_a, **_k):
        raise AssertionError("answered afresh, not replayed")

    monkeypatch.setattr(read, "cmd_query", refuse)
    code2, second, _ = cli(capsys, mail, "query", "answered=no", "--json")
    strip = lambda t: {**json.loads(t), "scope": {**json.loads(t)["scope"], "scanned_at": None}}  # noqa: E731
    assert (code2, strip(second)) == (code, strip(first))
    assert second.endswith("}\n") and len(second) == len(first)


def _pieces(n: int = 40):
    return [functools.partial(lambda i: f"<{i}:{'x' * (i * 997 % 5000)}\u00e9>", i) for i in range(n)]


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 40])
def test_two_halves_at_once_write_what_one_writes(capfd, n):
    from letterbox_tui.cli.halves import write_pieces

    whole = "".join(p() for p in _pieces(n)) + "\n"
    write_pieces(_pieces(n), fork=True)  # the second half by a forked helper (from 16 pieces)
    sys.stdout.flush()
    assert capfd.readouterr().out == whole
    write_pieces(_pieces(n), fork=False)
    sys.stdout.flush()
    assert capfd.readouterr().out == whole


@pytest.mark.parametrize("how", ["raises", "killed"])
def test_a_helper_that_fails_leaves_the_second_half_to_this_process(capfd, how):
    import os
    import signal

    from letterbox_tui.cli import halves

    me = os.getpid()
    made_here = []

    def fragile(i):
        if os.getpid() != me:  # in the helper only
            if how == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("the helper fails")
        made_here.append(i)
        return f"[{i}]"

    pieces = [functools.partial(fragile, i) for i in range(20)]
    halves.write_pieces(pieces, fork=True)
    sys.stdout.flush()
    assert capfd.readouterr().out == "".join(f"[{i}]" for i in range(20)) + "\n"
    assert made_here == list(range(20))  # the first half, then the second made here too

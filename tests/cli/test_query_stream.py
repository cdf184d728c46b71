"""``query --json`` writes its rows a slice at a time (the peak memory of a large answer),
and what it writes is exactly the document encoded at once."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from letterbox_tui.cli import output, read
from letterbox_tui.core.query import parse_query, run_query
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.rows import row
from letterbox_tui.core.scan import scan
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
    return box


@pytest.mark.parametrize("size", [1, 2, 3, 2000])
def test_the_parts_are_the_document_encoded_at_once(mail, monkeypatch, size):
    monkeypatch.setattr(output, "PIECE_ROWS", size)
    snapshot = scan(mail.root, id_time_is_utc=False)
    now = datetime(2026, 1, 2, tzinfo=timezone.utc)
    res = resolve(snapshot, now)
    result = run_query(parse_query(["answered=no"], now), res)
    assert len(result.matches) > 3 and result.unknown  # several parts of each list
    whole = output.dumps_json({"matches": [row(x, res) for x in result.matches],
                               "unknown": [row(x, res, why) for x, why in result.unknown],
                               "scope": snapshot.scope.to_json()}, indent=None)
    pieces = output.json_pieces(read.query_json(result, res))
    assert "".join(p() for p in pieces) == whole
    assert "".join(p() for p in pieces) == whole  # made again: the same
    assert "\\u202e" in whole and "\u202e" not in whole  # escaped in every part


def test_the_command_writes_the_same_document(capsys, mail, monkeypatch):
    monkeypatch.setattr(output, "PIECE_ROWS", 2)
    code, out, _ = cli(capsys, mail, "query", "answered=no", "--json")
    data = json.loads(out)
    assert out == output.dumps_json(data, indent=None) + "\n"
    assert len(data["matches"]) >= 8 and data["unknown"] and code == 0

"""A long answer in parts (``core.paging``): ``query`` and ``owed`` with ``--limit`` and
``--offset`` on the command line and as the MCP tools' ``limit``/``offset``. Walking the
parts by ``page.next`` gives back exactly the whole answer, in its order; every cut
document says it is one; bad values are one-line refusals; and the MCP server cuts every
part of one question from one evaluation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from letterbox_tui import mcp
from letterbox_tui.core import documents
from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.paging import Page, page_of
from letterbox_tui.core.schema import validate
from tests.cli.helpers import cli, cli_json

AT = "2026-11-29T12:00:00Z"


@given(st.lists(st.integers(0, 12), min_size=1, max_size=4), st.integers(1, 7), st.integers(0, 40))
def test_walking_the_parts_gives_the_lists_back(sizes, limit, start):
    lists = [[(k, i) for i in range(n)] for k, n in enumerate(sizes)]
    whole = [x for held in lists for x in held]
    got, offset = [], start
    while offset is not None:
        page = Page(offset, limit)
        parts = page.cut(*lists)
        shown = page.to_json(len(whole))
        flat = [x for part in parts for x in part]
        assert len(flat) == shown["shown"] <= limit
        assert shown["total"] == len(whole)
        got += flat
        offset = shown["next"]
    assert got == whole[start:]
    assert Page(start).cut(*lists) == [held[max(start - sum(sizes[:k]), 0):] for k, held in enumerate(lists)]


@pytest.mark.parametrize("limit, offset, message", [
    (0, None, "limit: a whole number of at least 1, not 0"),
    (True, None, "limit: a whole number of at least 1, not True"),
    (None, -1, "offset: a whole number of at least 0, not -1"),
    ("3", None, "limit: a whole number of at least 1, not '3'"),
])
def test_bad_parts_are_refused(limit, offset, message):
    with pytest.raises(LetterboxError, match=message):
        page_of(limit, offset, option="")
    assert page_of() is None and page_of(None, 0) == Page(0, None)


@pytest.fixture
def demo(tmp_path):
    root = tmp_path / "demo"
    write_demo(root)

    class Demo:
        pass

    box = Demo()
    box.root = root
    return box


def _walk(capsys, demo, *argv, limit=3):
    """Every part of the answer, walked by ``page.next`` from offset 0."""
    parts, offset = [], 0
    while offset is not None:
        code, doc = cli_json(capsys, demo, *argv, "--limit", str(limit), "--offset", str(offset))
        assert code in (0, 1, 3)
        validate(argv[0], doc)
        parts.append(doc)
        offset = doc["page"]["next"]
    return parts


def test_query_parts_walked_are_the_whole_answer(capsys, demo):
    _, whole = cli_json(capsys, demo, "query", f"at={AT}")
    assert "page" not in whole
    parts = _walk(capsys, demo, "query", f"at={AT}")
    rows = [r for p in parts for r in p["matches"] + p["unknown"]]
    assert [r["path"] for r in rows] == [r["path"] for r in whole["matches"] + whole["unknown"]]
    assert all(p["page"]["total"] == len(rows) for p in parts) and len(parts) > 2
    assert parts[-1]["page"]["next"] is None and all(p["scope"]["files"] == whole["scope"]["files"] for p in parts)


def test_owed_parts_walked_are_the_whole_answer_seat_by_seat(capsys, demo):
    _, whole = cli_json(capsys, demo, "owed", "--at", AT)
    items = [(g["seat"], r["id"], r["attention"]) for g in whole["owed"] for r in g["items"]]
    parts = _walk(capsys, demo, "owed", "--at", AT, limit=2)
    got = [(g["seat"], r["id"], r["attention"]) for p in parts for g in p["owed"] for r in g["items"]]
    assert got == items and len(parts) == (len(items) + 1) // 2
    assert all(g["items"] for p in parts for g in p["owed"])  # a seat with nothing in a part is left out


def test_a_text_part_says_it_is_one(capsys, demo):
    code, whole, _ = cli(capsys, demo, "owed", "--at", AT)
    code, out, err = cli(capsys, demo, "owed", "--at", AT, "--limit", "1")
    assert err == ""
    heads = [line for line in out.splitlines() if " owes " in line]
    assert len(heads) == 1 and heads[0].endswith("; 1 shown")  # the seat's whole count, and what is shown
    assert heads[0].split("; ")[0] in whole
    _, owed = cli_json(capsys, demo, "owed", "--at", AT)
    total = sum(len(g["items"]) for g in owed["owed"])
    assert f"{total} owed; rows 1-1 of {total} shown, --offset 1 for the rest" in out
    _, out, _ = cli(capsys, demo, "query", f"at={AT}", "--offset", "1000")
    _, every = cli_json(capsys, demo, "query", f"at={AT}")
    assert f"none of {len(every['matches']) + len(every['unknown'])} rows shown from --offset 1000" in out


@pytest.mark.parametrize("argv, message", [
    (["owed", "--limit", "0"], "--limit: a whole number of at least 1, not 0"),
    (["query", "--offset", "x"], "--offset: a whole number of at least 0, not 'x'"),
    (["query", "--compat-v2", "--limit", "2"], "--limit and --offset do not apply to --compat-v2"),
])
def test_bad_parts_on_the_command_line_exit_2_in_one_line(capsys, demo, argv, message):
    code, out, err = cli(capsys, demo, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_the_server_cuts_every_part_from_one_evaluation(demo, monkeypatch):
    resident = mcp.Resident(str(demo.root))
    evaluated = []
    real = documents.query_result
    monkeypatch.setattr(documents, "query_result", lambda *a: evaluated.append(1) or real(*a))
    try:
        terms = {"terms": [f"at={AT}"]}
        whole, _, _ = mcp.answer(resident, "query", terms)
        rows, offset = [], 0
        while offset is not None:
            doc, meta, _ = mcp.answer(resident, "query", {**terms, "limit": 4, "offset": offset})
            validate("query", doc)
            rows += doc["matches"] + doc["unknown"]
            offset = doc["page"]["next"]
        assert rows == whole["matches"] + whole["unknown"]
        assert len(evaluated) == 1  # the whole and each part: one result
        total = len(rows)
        assert f"a part: rows 1-4 of {total} shown, offset 4 for the rest" in mcp._summary(mcp.answer(resident, "query", {**terms, "limit": 4})[0])
        with pytest.raises(LetterboxError, match="limit: a whole number"):
            mcp.answer(resident, "owed", {"limit": 0})
    finally:
        resident.close()


def test_the_server_cuts_the_parts_of_one_owed_at_one_clock_from_one_view(demo, monkeypatch):
    from letterbox_tui.core.views import owed as owed_views

    resident = mcp.Resident(str(demo.root))
    made = []
    real = owed_views.owed_view
    monkeypatch.setattr(owed_views, "owed_view", lambda *a, **k: made.append(1) or real(*a, **k))
    try:
        whole, _, _ = mcp.answer(resident, "owed", {"at": AT})
        items, offset = [], 0
        while offset is not None:
            doc, _, _ = mcp.answer(resident, "owed", {"at": AT, "limit": 3, "offset": offset})
            validate("owed", doc)
            assert doc["at"] == whole["at"]
            items += [(g["seat"], r) for g in doc["owed"] for r in g["items"]]
            offset = doc["page"]["next"]
        assert items == [(g["seat"], r) for g in whole["owed"] for r in g["items"]]
        assert len(made) == 2  # the whole once, and every part from one view
    finally:
        resident.close()

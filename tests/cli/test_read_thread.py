"""``thread`` on deep reply chains: the JSON is built without recursion and the text names
every letter, whatever the terminal's width (issue 18, items 4-5)."""

from __future__ import annotations

import json
import re
import sys

import pytest

from letterbox_tui.cli import output, read
from tests.cli.helpers import cli, cli_json


def _chain(box, n: int) -> list[str]:
    ids = [f"m-{i:04d}" for i in range(n)]
    for i, letter_id in enumerate(ids):
        box.letter(letter_id, re=ids[i - 1] if i else "", thread=ids[0] if i else "",
                   sent=f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z")
    return ids


def test_thread_json_of_a_reply_chain_600_deep(box, capsys):
    ids = _chain(box, 600)
    code, out, err = cli(capsys, box, "thread", ids[-1], "--json")
    assert code == 0 and err == ""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # Python's own json.loads recurses (jq does not)
    try:
        doc = json.loads(out)
    finally:
        sys.setrecursionlimit(limit)
    assert doc["thread"] == ids[0] and doc["root"] == ids[0]
    node, seen = doc["tree"], []
    while node:
        assert len(node) == 1
        seen.append(node[0]["id"])
        node = node[0]["children"]
    assert seen == ids


@pytest.mark.parametrize("width", [80, 160, None])
def test_thread_text_names_every_letter_of_a_deep_chain(box, capsys, monkeypatch, width):
    ids = _chain(box, 300)
    if width is not None:  # a terminal of that width (None: a pipe)
        real = output.console

        def sized():
            con = real()
            con.width = width
            return con

        monkeypatch.setattr(output, "console", sized)
    code, out, err = cli(capsys, box, "thread", ids[0])
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"thread {ids[0]}: 300 letters; 299 deep"
    shown = [re.search(r"m-\d{4}", ln).group() for ln in lines[1:-1]]
    assert shown == ids, "every letter on its own line, in tree order"
    assert f"[depth {read.THREAD_INDENT + 1}] {ids[read.THREAD_INDENT + 1]}" in out


def test_thread_text_says_why_a_letter_is_an_extra_root(box, capsys):
    box.letter("root-1")
    box.letter("lost-1", re="gone-1", thread="root-1")
    box.letter("tag-1", thread="root-1")
    _, out, _ = cli(capsys, box, "thread", "root-1")
    assert "lost-1  alpha → beta info  (replies to gone-1, not in this thread)" in out
    assert "tag-1  alpha → beta info  (in the thread by its label; no re)" in out
    _, doc = cli_json(capsys, box, "thread", "root-1")
    assert [n["id"] for n in doc["tree"]] == ["root-1", "lost-1", "tag-1"]
    json.dumps(doc)


def test_thread_json_on_a_terminal_is_indented_like_every_document(box, capsys, monkeypatch):
    box.letter("root-1")
    box.letter("r-1", re="root-1", thread="root-1")
    monkeypatch.setattr(output, "json_indent", lambda: 2)
    code, out, _ = cli(capsys, box, "thread", "root-1", "--json")
    doc = json.loads(out)
    assert out == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert doc["tree"] == [{"id": "root-1", "children": [{"id": "r-1", "children": []}]}]

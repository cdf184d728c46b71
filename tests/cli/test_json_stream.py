"""The one streamed JSON writer (``cli.output.json_pieces``, what ``emit_json`` writes on a
pipe): its pieces are byte for byte the document encoded at once, for documents holding
``Rows`` at any depth, for the ``owed`` and ``query`` documents of the demo and of a
generated letterbox, and whatever the size of a piece."""

from __future__ import annotations

import contextlib
import io
import re
from datetime import datetime, timezone

import pytest

from letterbox_tui.cli import output, read
from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.query import parse_query, run_query
from letterbox_tui.core.views import owed_view
from letterbox_tui.core.views.attention import Rules
from letterbox_tui.store import open_answers
from tests.cli.helpers import cli
from tests.conftest import make_box

CLOCK = datetime(2026, 12, 1, 9, tzinfo=timezone.utc)
AT = "2026-12-01T09:00:00Z"


def streamed(doc) -> str:
    return "".join(piece() for piece in output.json_pieces(doc))


def whole(doc) -> str:
    return output.dumps_json(doc, indent=None)


def unclocked(text: str) -> str:
    """The text with its scope's ``scanned_at`` (when the files were read) left out."""
    return re.sub(r'"scanned_at":"[^"]*"', '"scanned_at":""', text)


@pytest.mark.parametrize("size", [1, 2, 3, 100])
def test_rows_anywhere_in_a_document(monkeypatch, size):
    monkeypatch.setattr(output, "PIECE_ROWS", size)
    doc = {"a": 1, "none": output.Rows([], str), 2: [{"rows": output.Rows(range(5), lambda i: {"i": i, "t": "\u202e"})},
                                                     "x", None, 1.5],
           "plain": {"k": [1, 2, {"j": True}]}, "last": output.Rows(("é", "\x85"), lambda s: s * 2)}
    text = streamed(doc)
    assert text == whole(doc) == whole({**doc, "none": [], "last": ["éé", "\x85\x85"],
                                        2: [{"rows": [{"i": i, "t": "\u202e"} for i in range(5)]}, "x", None, 1.5]})
    assert "\\u202e" in text and "\\u0085" in text and "\u202e" not in text
    assert streamed(doc) == text  # made again: the same
    assert streamed(output.Rows([], str)) == "[]" and streamed([]) == "[]" and streamed({}) == "{}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "box"
    write_demo(root)
    return make_box(root.resolve())


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from tests.gen_letterbox import main as generate

    root = tmp_path_factory.mktemp("gen") / "box"
    with contextlib.redirect_stdout(io.StringIO()):
        assert generate([str(root), "--letters", "600", "--seed", "3"]) == 0
    return make_box(root.resolve())


@pytest.mark.parametrize("which", ["demo", "generated"])
@pytest.mark.parametrize("size", [1, 3])
def test_owed_and_query_documents_streamed_and_whole(capsys, request, monkeypatch, which, size):
    box = request.getfixturevalue(which)
    monkeypatch.setattr(output, "PIECE_ROWS", size)
    res = open_answers(box.root, CLOCK)
    view = owed_view(res, rules=Rules.of_letterbox(str(box.root)))
    assert view.total > size  # several pieces of rows
    doc = view.to_json(rows=output.Rows)
    assert streamed(doc) == whole(doc) == whole(view.to_json())
    result = run_query(parse_query(["answered=no"], CLOCK), res)
    qdoc = read.query_json(result, res)
    assert streamed(qdoc) == whole(qdoc)
    # and what the command writes on a pipe is that document
    code, out, err = cli(capsys, box, "owed", "--json", "--at", AT)
    assert code in (0, 3), err
    assert unclocked(out) == unclocked(whole(view.to_json()) + "\n")

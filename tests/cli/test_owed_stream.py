"""``owed --json`` on a pipe is written a few rows at a time; the text is byte for byte the
document ``OwedView.to_json`` encodes whole (what a terminal, the MCP tool and the digest
see), for every seat, none, and letter text that must be escaped."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from letterbox_tui.cli.output import dumps_json
from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.views import owed_view
from letterbox_tui.core.views.attention import Rules
from letterbox_tui.store import open_answers
from tests.cli.helpers import cli
from tests.conftest import make_box

AT = "2026-12-01T09:00:00Z"
CLOCK = datetime(2026, 12, 1, 9, tzinfo=timezone.utc)


def whole(root, seat=None, own=None) -> str:
    res = open_answers(root, CLOCK)
    view = owed_view(res, seat, rules=Rules.of_letterbox(str(root), own))
    return unclocked(dumps_json(view.to_json(), indent=None) + "\n")


def unclocked(text: str) -> str:
    """The text with its scope's ``scanned_at`` (when the files were read) left out."""
    return re.sub(r'"scanned_at":"[^"]*"', '"scanned_at":""', text)


def streamed(capsys, box, *argv) -> str:
    code, out, err = cli(capsys, box, "owed", "--json", "--at", AT, *argv)
    assert code in (0, 3), err
    return unclocked(out)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "box"
    write_demo(root)
    return make_box(root.resolve())


@pytest.mark.parametrize("argv", [(), ("--seat", "builder"), ("--as", "simon")])
def test_the_pieces_are_the_whole_document(capsys, demo, argv):
    out = streamed(capsys, demo, *argv)  # (first: the store written, then read back)
    seat = argv[1] if argv[:1] == ("--seat",) else None
    own = argv[1] if argv[:1] == ("--as",) else None
    assert streamed(capsys, demo, *argv) == out == whole(demo.root, seat, own)
    assert out.count('{"seat":') == len({g.seat for g in owed_view(open_answers(demo.root, CLOCK), seat).groups})


def test_nothing_owed_and_text_to_escape(capsys, tmp_path):
    box = make_box(tmp_path / "box", "alpha", "beta")
    assert streamed(capsys, box) == whole(box.root)
    assert '"owed":[]' in streamed(capsys, box)
    box.letter("ask-1", type="request", requires_ack="true", subject="bidi \u202e and \x85 C1 \u00e9")
    for i in range(150):  # more than one piece of rows
        box.letter(f"ask-{i + 2}", type="request", requires_ack="true", to="alpha", frm="beta")
    out = streamed(capsys, box)
    assert out == whole(box.root) and "\\u202e" in out and "\u00e9" in out

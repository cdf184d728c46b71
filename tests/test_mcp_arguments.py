"""The MCP tools' arguments and the text of their results, in process (``mcp.answer``): a
tool called without what it needs is refused in one line, as the command line refuses it,
and the JSON text a result carries escapes what a letter may hide in it."""

from __future__ import annotations

import pytest

from letterbox_tui import mcp
from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.errors import LetterboxError


@pytest.fixture
def resident(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "box"
    write_demo(root)
    resident = mcp.Resident(str(root))
    yield resident
    resident.close()


@pytest.mark.parametrize("name", ["show", "current", "answered", "thread"])
def test_a_tool_called_without_its_id_is_refused_in_one_line(resident, name):
    with pytest.raises(LetterboxError) as caught:
        mcp.call(resident, name, {})
    message = str(caught.value)
    assert message == f"{name}: the argument 'id' is required (a letter's id, display id, token or path)"
    doc, _meta = mcp.call(resident, "check", {})  # and the server goes on answering
    assert doc["findings"]


def test_the_json_text_of_a_result_escapes_what_a_header_hides(resident):
    """A subject with a bidi override, a C1 control and an invisible mark: the result's
    JSON text (what a client shows or hands a model) escapes them as the command line's
    ``--json`` does, and still says the same document."""
    import json
    from pathlib import Path

    letter_id = "2026-11-29T100000-planner-info-hostile-0000cccc"
    Path(resident.root, "builder", "inbox", f"{letter_id}.md").write_text(
        f"---\nid: {letter_id}\nfrom: planner\nto: builder\ntype: info\nrequires_ack: false\n"
        "sent: 2026-11-29T10:00:00Z\nsubject: see \u202egnp.exe\u0085 \u200bx\n---\nbody\n")
    for name, arguments in [("query", {"terms": ["slug~=hostile"]}), ("show", {"id": letter_id})]:
        doc, _meta, text = mcp.answer(resident, name, arguments)
        assert "\u202egnp.exe\u0085 \u200bx" in json.dumps(doc, ensure_ascii=False)  # the data as written
        assert not any(c in text for c in "\u202e\u0085\u200b"), name
        assert "see \\u202egnp.exe\\u0085 \\u200bx" in text and json.loads(text) == doc

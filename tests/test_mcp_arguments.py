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

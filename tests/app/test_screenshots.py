"""The screenshot script renders from the demo letterbox (one view here, to stay quick)."""

from __future__ import annotations

import asyncio

import pytest

from letterbox_tui.app import screenshots

# Its letterbox lies at a fixed path, which the screens show: one worker runs every such
# test (pyproject: --dist loadgroup), so no two of them share it at once.
pytestmark = pytest.mark.xdist_group("fixed-paths")


def test_screenshot_of_the_owed_view(tmp_path):
    shot = next(s for s in screenshots.SHOTS if s[0] == "owed.svg")
    written = asyncio.run(screenshots.render_all(tmp_path, (shot,)))
    assert written == [tmp_path / "owed.svg"]
    svg = written[0].read_text()
    assert "Owed&#160;&amp;&#160;late" in svg or "Owed &amp; late" in svg
    assert "demo-letterbox" in svg
    assert "\x1b" not in svg


def test_every_shot_has_a_distinct_file_name():
    names = [s[0] for s in screenshots.SHOTS]
    assert len(names) == len(set(names)) and all(n.endswith(".svg") for n in names)

"""Problems shows an unreadable file's offending line, sanitized, with its byte offset."""

from __future__ import annotations

from tests.app.helpers import SIZE, app_for, scanned, until


async def test_problems_shows_the_offending_line_and_its_byte_offset(letterbox):
    header = (b"---\nid: 2026-11-28T170000-builder-result-x-abcd0001\nfrom: builder\nto: planner\n"
              b"summary: licences\tall three MIT \x1b]2;owned\x07\n---\nbody\n")
    letterbox.raw("planner/inbox/2026-11-28T170000-builder-result-x-abcd0001.md", header)
    app = app_for(letterbox, view="problems")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        head = app.query_one("#letter-head")
        await until(pilot, lambda: "offending line" in head.render().plain)
        text = head.render().plain
        offset = header.index(b"summary")
        assert f"offending line 5 at byte {offset}" in text
        assert "summary: licences␉all three MIT ␛]2;owned␇" in text
        assert "\x1b" not in text and "\t" not in text

"""The app's start imports only what its first screen shows: the Markdown rendering of a
body (its widget, markdown-it, Textual's Markdown) and the screens (help, the forms) are
imported when first wanted, and then work as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from letterbox_tui.app.widgets.letter_pane import LetterPane
from letterbox_tui.core.demo import write_demo

from tests.app.helpers import SIZE, app_for, body_of, scanned

#: what showing a body as written never needs (each was imported by every start before)
NO_MARKDOWN = ("markdown_it", "textual.widgets._markdown", "letterbox_tui.app.widgets.body")
#: nor the first frame (the screens were imported to check a keymap there was none of; the
#: store, the resolver and the evaluator are the reading worker's, after it)
NOT_IN_THE_FIRST_FRAME = NO_MARKDOWN + ("letterbox_tui.app.screens.help", "letterbox_tui.app.screens.write",
                                        "letterbox_tui.app.screens.progress", "letterbox_tui.store",
                                        "letterbox_tui.core.resolve", "letterbox_tui.core.query")

_CHILD = textwrap.dedent("""
    import asyncio, json, sys
    from letterbox_tui.app import make_app
    from letterbox_tui.core.demo import DEMO_NOW
    from letterbox_tui.core.settings import UserSettings

    async def main():
        app = make_app(sys.argv[1], now=DEMO_NOW, poll_interval=None, user_settings=UserSettings())
        display, first = app._display, []

        def counted(screen, renderable):  # the modules at the first frame (as bench_app counts it)
            display(screen, renderable)
            if renderable is not None and not first:
                first.append(sorted(sys.modules))

        app._display = counted
        async with app.run_test(size=(160, 48)) as pilot:
            for _ in range(500):  # the whole demo scanned and shown, a letter selected
                await pilot.pause(0.01)
                if app.scan_count and not app.scanning and not app.views_building:
                    break
            await pilot.pause(0.2)
            shown = len(app.letter_list.rows)
            app.exit()
        print(json.dumps({"rows": shown, "first": first[0], "modules": sorted(sys.modules)}))

    asyncio.run(main())
""")


def test_the_first_screen_imports_no_markdown_and_no_screens(tmp_path):
    root = tmp_path / "demo"
    write_demo(root)
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", _CHILD, str(root)], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["rows"] > 0  # (Owed & late shown)
    assert "letterbox_tui.app.widgets.letter_pane" in got["modules"]  # (the child did start the app)
    assert [m for m in NOT_IN_THE_FIRST_FRAME if m in got["first"]] == []
    # scanned, a letter shown (as written), the kept drafts looked for
    assert [m for m in NO_MARKDOWN if m in got["modules"]] == []


async def test_the_markdown_rendering_is_mounted_when_first_asked_for_and_works(box):
    box.letter("2026-11-28T140000-alpha-info-md-abcdef09", frm="alpha", to="beta",
               sent="2026-11-28T14:00:00Z", subject="md",
               body="# Title\n\nsee [the plan](http://example.org/plan)\n")
    app = app_for(box, letter="2026-11-28T140000-alpha-info-md-abcdef09")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        pane = app.query_one(LetterPane)
        await body_of(pilot, app)
        assert not app.query("#letter-body")  # not mounted before it is wanted
        await pilot.press("M")
        await pilot.pause()
        await pilot.pause(0.1)
        md = app.query_one("#letter-body")
        assert md is pane.body and md.display and not pane.plain_body.display
        text = " ".join(str(b.render()) if hasattr(b, "render") else "" for b in md.walk_children())
        assert "http://example.org/plan" in text  # the link's target, shown beside its text
        await pilot.press("M")  # as written again: the rendering hidden, the text shown
        await pilot.pause()
        assert not md.display and pane.plain_body.display
        assert "[the plan](http://example.org/plan)" in pane.plain_body.render().plain
        await pilot.press("M")  # and rendered again, by the same widget
        await pilot.pause()
        await pilot.pause(0.1)
        assert app.query_one("#letter-body") is md and md.display


async def test_the_rendering_asked_for_before_it_is_mounted_is_what_it_shows(box):
    box.letter("2026-11-28T140000-alpha-info-md2-abcdef0a", frm="alpha", to="beta",
               sent="2026-11-28T14:00:00Z", subject="md2", body="first *body*\n")
    app = app_for(box, letter="2026-11-28T140000-alpha-info-md2-abcdef0a")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        pane = app.query_one(LetterPane)
        body = pane.body  # made (hidden) and mounted now; asked to show another text at once
        body.show("# second\n")
        await pilot.pause()
        await pilot.pause(0.1)
        assert body.source == "# second\n"

"""The app's first frame (the top bar and the "reading" state) needs no letter: the
letter model and what rests on it (findings, leases, attention codes, records), the list's
row text, the letter pane's tabs and the query, search and pipe bars come after it. An
import creeping back into the start would put them before it again. Nor does it wait for
the file watcher, whose setting up holds the interpreter: it starts once the first answers
are shown, and what changed before it was up is still noticed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from textual.widgets import Input

from letterbox_tui.core.demo import write_demo

from tests.app.helpers import SIZE, app_for, hold_scans, letters, scanned, until

#: imported where the answers are used or the pane's tabs are built, never by the start
AFTER_THE_FIRST_FRAME = (
    "letterbox_tui.core.model", "letterbox_tui.core.check", "letterbox_tui.core.leases",
    "letterbox_tui.core.views.attention", "letterbox_tui.core.records", "letterbox_tui.core.lazy",
    "letterbox_tui.core.files", "letterbox_tui.core.views.letterfile",
    "letterbox_tui.app.widgets.row_text", "letterbox_tui.app.widgets.letter_text",
    "letterbox_tui.app.widgets.thread_view", "letterbox_tui.app.widgets.query_input",
    "textual.widgets._tabbed_content",
)


#: the app started as ``letterbox-tui`` starts it: the modules at its first frame (as
#: scripts/bench_app.py counts it), then once Owed & late is shown
_FIRST_FRAME = """
import asyncio, json, sys
from letterbox_tui.app import make_app

async def main():
    app = make_app(sys.argv[1], poll_interval=None)
    display, first = app._display, []

    def counted(screen, renderable):
        display(screen, renderable)
        if renderable is not None and not first:
            first.append(sorted(sys.modules))

    app._display = counted
    async with app.run_test(size=(160, 48)) as pilot:
        # (the letter's tabs and the bars follow the first answers: ``mount_after_read``)
        while not (app.scan_count and not app.scanning and app.letter_list.rows and app.letter_pane.ready
                   and app.bars_mounted):
            await pilot.pause(0.01)
        rows = len(app.letter_list.rows)
        app.exit()
    print(json.dumps({"rows": rows, "first": first[0], "modules": sorted(sys.modules)}))

asyncio.run(main())
"""


def _env(tmp_path) -> dict[str, str]:
    return dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"),
                XDG_CACHE_HOME=str(tmp_path / "cache"))


def test_importing_the_app_entry_imports_none_of_what_comes_after_the_first_frame(tmp_path):
    probe = ("import json, sys\nimport letterbox_tui.cli.app_launch, letterbox_tui.app.app\n"
             "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env=_env(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    modules = json.loads(out.stdout.strip().splitlines()[-1])
    assert "letterbox_tui.app.widgets.letter_pane" in modules  # (the probe did import the app)
    assert [m for m in AFTER_THE_FIRST_FRAME if m in modules] == []


def test_the_first_frame_imports_none_of_it_and_the_scan_then_does(tmp_path):
    root = tmp_path / "demo"
    write_demo(root)
    out = subprocess.run([sys.executable, "-c", _FIRST_FRAME, str(root)], capture_output=True, text=True,
                         timeout=120, env=_env(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["rows"] > 0  # (Owed & late shown)
    assert [m for m in AFTER_THE_FIRST_FRAME if m in got["first"]] == []
    # the same modules once the letterbox is read and a letter shown (so the list above
    # names modules the app does use)
    assert [m for m in AFTER_THE_FIRST_FRAME if m not in got["modules"]] == []


async def test_the_bars_come_after_the_first_frame_and_a_key_before_them_waits(letterbox):
    app = app_for(letterbox)
    display, at_first = app._display, []

    def counted(screen, renderable):
        display(screen, renderable)
        if renderable is not None and not at_first:
            at_first.append(bool(app.query("#query-bar")))

    app._display = counted

    async def tabs_without_bars() -> None:  # (as the app's, less the bars: a key came first)
        await app.letter_pane.build()

    app.mount_after_read = tabs_without_bars
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert at_first == [False]
        assert not app.bars_mounted
        await pilot.press("backslash", *"type=request")
        query = app.query_one("#query", Input)
        assert app.bars_mounted and app.query_bar.display and app.focused is query
        assert query.value == "type=request"
        await pilot.press("enter")
        assert app.query_text == "type=request"
        await pilot.press("slash", *"plan")
        assert app.focused is app.search_input and app.search_input.value == "plan"


async def test_the_watch_starts_once_the_first_answers_are_shown_and_catches_up(letterbox, monkeypatch):
    import letterbox_tui.app.reading as reading

    new = "2026-11-29T140000-planner-info-late-comer-ffff0009"
    real = reading.watch_letterbox

    def after_a_letter_came(*a, **kw):  # a letter lands after the first read, before the watch is up
        letterbox.letter(new, frm="planner", to="builder", sent="2026-11-29T14:00:00Z", subject="late comer")
        return real(*a, **kw)

    monkeypatch.setattr(reading, "watch_letterbox", after_a_letter_came)
    release = hold_scans(monkeypatch)
    app = app_for(letterbox, view="all", poll_interval=60)  # (the poll never fires here)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.scanning and app.scan_stage == "reading the letterbox")
        assert not app.watching  # (reading: no watcher yet)
        release.set()
        await scanned(pilot, app)
        await until(pilot, lambda: any(r.letter is not None and r.letter.id == new for r in letters(app).rows))
        assert app.watching and app.scan_count >= 2

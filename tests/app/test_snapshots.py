"""Snapshot tests of the main views at 80x24 and 120x40 (and 160x48), at the fixed clock.

The letterbox lives at ``~/letterbox-tui-snapshot/shared`` in the test's own home (the header
shows it). Update with
``pytest tests/app/test_snapshots.py --snapshot-update`` and review each SVG by eye.
"""

from __future__ import annotations

import pytest

from letterbox_tui.app.themes import shipped_themes_dir
from letterbox_tui.app.screens.help import HelpScreen
from tests.app.helpers import SIZE, app_for, body_of, home_root, reads_done, scanned, until
from tests.app.letterboxes import fill, ruling
from tests.conftest import make_box


V3A = "2026-11-14T090000-planner-decision-db-choice-bbbb0003"


@pytest.fixture
def fixed_box():
    root = home_root("letterbox-tui-snapshot")
    box = fill(make_box(root, "planner", "builder", "reviewer"))
    ruling(box)
    return box


def _app(box, **kw):
    return app_for(box, theme_dirs=[shipped_themes_dir()], **kw)


async def _wait(pilot):
    await scanned(pilot, pilot.app)
    if pilot.app.letter_pane.letter is not None:
        await body_of(pilot, pilot.app)
    await reads_done(pilot, pilot.app)
    await pilot.wait_for_scheduled_animations()  # the list's scroll to its most urgent row
    await pilot.pause()


def test_owed_view(snap_compare, fixed_box):
    assert snap_compare(_app(fixed_box), terminal_size=SIZE, run_before=_wait)


def test_incomplete_scope_problems_view(snap_compare, fixed_box):
    fixed_box.raw("builder/inbox/broken.md", "---\nid: x\nfrom planner\n---\n")

    async def run_before(pilot):
        await _wait(pilot)
        await pilot.press("p")
        await _wait(pilot)

    assert snap_compare(_app(fixed_box), terminal_size=SIZE, run_before=run_before)


def test_chain_tab_with_settled_fork(snap_compare, fixed_box):
    async def run_before(pilot):
        await _wait(pilot)
        pilot.app.action_show_tab("chain")
        await pilot.pause()

    assert snap_compare(_app(fixed_box, view="truth", letter=V3A), terminal_size=SIZE, run_before=run_before)


SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("view", ["owed", "disputes", "truth", "all", "problems"])
def test_each_view_at_80x24_and_120x40(snap_compare, fixed_box, view, size):
    if view == "problems":
        fixed_box.raw("builder/inbox/broken.md", "---\nid: x\nfrom planner\n---\n")
    assert snap_compare(_app(fixed_box, view=view), terminal_size=SIZES[size], run_before=_wait)


@pytest.mark.parametrize("size", SIZES)
def test_reading_a_letter_at_80x24_and_120x40(snap_compare, fixed_box, size):
    async def run_before(pilot):
        await _wait(pilot)
        await pilot.press("enter")
        await _wait(pilot)

    assert snap_compare(_app(fixed_box), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_help_at_80x24_and_120x40(snap_compare, fixed_box, size):
    async def run_before(pilot):
        await _wait(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen) and pilot.app.screen.is_mounted)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(_app(fixed_box), terminal_size=SIZES[size], run_before=run_before)

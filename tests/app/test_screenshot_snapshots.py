"""Snapshots of the screens the README's screenshots lacked (compose and reply forms, the
help, the command palette, the git banner, the demo as written with its incomplete scope)
at 80x24 and 160x48, taken by the screenshot
generator's own steps on the demo letterbox, so the generator and the tests agree.

Update with ``pytest tests/app/test_screenshot_snapshots.py --snapshot-update`` and
review each SVG by eye.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from letterbox_tui.app import screenshots
from letterbox_tui.app.themes import shipped_themes_dir
from letterbox_tui.core.settings import UserSettings

# Its letterbox lies at a fixed path, which the screens show: one worker runs every such
# test (pyproject: --dist loadgroup), so no two of them share it at once.
pytestmark = pytest.mark.xdist_group("fixed-paths")


NEW = ("compose", "reply", "help", "palette", "git", "as written")
SHOTS = [s for s in screenshots.SHOTS if screenshots._action(s[3]) in NEW]


@pytest.fixture(scope="module")
def demo():
    root = screenshots.write_demo_letterbox()
    return root, screenshots.write_git_demo(root)


def test_every_new_screen_is_in_the_generator_at_both_sizes():
    sizes = {(screenshots._action(s[3]), screenshots.size_of(s[3])) for s in SHOTS}
    assert sizes == {(a, size) for a in NEW for size in ((80, 24), (160, 48))}


@pytest.mark.slow
@pytest.mark.parametrize("shot", SHOTS, ids=[s[0].removesuffix(".svg") for s in SHOTS])
def test_screen_snapshot(snap_compare, demo, shot):
    from letterbox_tui.app import make_app
    from letterbox_tui.core.demo import DEMO_NOW

    plain, in_git = demo
    name, view, theme, step = shot
    root = screenshots.shot_root(step, plain, in_git)
    app = make_app(root, view=view, theme=theme, now=DEMO_NOW + timedelta(hours=3), poll_interval=None,
                   theme_dirs=[shipped_themes_dir()], user_settings=UserSettings())

    async def run_before(pilot):
        await screenshots._wait_scanned(pilot.app, pilot)
        await screenshots.prepare(pilot.app, pilot, step)
        await pilot.pause()

    assert snap_compare(app, terminal_size=screenshots.size_of(step), run_before=run_before)

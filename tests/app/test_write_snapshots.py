"""Every writing form at 80x24 (and 120x40): it fits (Send on screen, a body to type in) and looks as
reviewed. Update with ``pytest tests/app/test_write_snapshots.py --snapshot-update`` and
review each SVG by eye."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Select, TextArea

from letterbox_tui.app.screens.write import WriteScreen
from letterbox_tui.app.themes import shipped_themes_dir
from letterbox_tui.core.settings import UserSettings
from tests.app.helpers import app_for, home_root, scanned, until
from tests.app.letterboxes import fill, ruling
from tests.conftest import make_box


SMALL = (80, 24)
PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"
DISPUTE2 = "2026-11-26T090000-reviewer-dispute-plans-cccc0002"
# form -> (view, letter, keys before the form's key)
FORMS = {
    "compose": ("all", None, ["c"]),
    "reply": ("all", PLAN, ["r"]),
    "supersede": ("all", PLAN, ["s"]),
    "dispute": ("owed", None, ["g", "j", "m", "j", "m", "d"]),
    "rule": ("disputes", DISPUTE2, ["u"]),
    "review": ("owed", None, ["R"]),
}


@pytest.fixture
def fixed_box():
    root = home_root("letterbox-tui-snapshot-forms")
    box = fill(make_box(root, "planner", "builder", "reviewer"))
    ruling(box)
    return box


def _app(box, form: str):
    view, letter, _ = FORMS[form]
    return app_for(box, view=view, letter=letter, theme_dirs=[shipped_themes_dir()], user_settings=UserSettings())


def _open(form: str):
    async def run_before(pilot):
        await scanned(pilot, pilot.app)
        await pilot.press(*FORMS[form][2])
        await until(pilot, lambda: isinstance(pilot.app.screen, WriteScreen))
        await pilot.pause()

    return run_before


#: the field each form opens on (#14 point 7: compose opened with nothing focused): the
#: first one to decide (a ruling's choice; a reply's body: its seat and kind have defaults)
FOCUS = {"compose": "w-to", "reply": "w-body", "supersede": "w-slug", "dispute": "w-slug", "rule": "w-upholds",
         "review": "w-body"}


@pytest.mark.parametrize("size", [SMALL, (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("form", list(FORMS))
async def test_each_form_fits_and_opens_on_a_field(fixed_box, form, size, monkeypatch):
    monkeypatch.delenv("LETTERBOX_AGENT", raising=False)
    app = _app(fixed_box, form)
    async with app.run_test(size=size) as pilot:
        await _open(form)(pilot)
        screen = app.screen
        assert app.focused is not None and app.focused.id == FOCUS[form] and screen in app.focused.ancestors
        screen_box = screen.region
        for button in screen.query(Button):
            assert screen_box.contains_region(button.region), f"{button.id} off screen"
            assert button.region.width > 0
        body = screen.query_one("#w-body", TextArea)
        assert body.region.height >= 3 and screen_box.contains_region(body.region)
        assert screen.query_one("#w-as", Select).region.height == 1  # compact rows


def test_compose_snapshot_120x40(snap_compare, fixed_box, monkeypatch):
    monkeypatch.delenv("LETTERBOX_AGENT", raising=False)
    assert snap_compare(_app(fixed_box, "compose"), terminal_size=(120, 40), run_before=_open("compose"))


@pytest.mark.parametrize("form", list(FORMS))
def test_form_snapshot_80x24(snap_compare, fixed_box, form, monkeypatch):
    monkeypatch.delenv("LETTERBOX_AGENT", raising=False)
    assert snap_compare(_app(fixed_box, form), terminal_size=SMALL, run_before=_open(form))

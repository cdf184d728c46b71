"""The app's chase key (issue 24 part 4): ``C`` on a task opens the chase form (the seat to
chase as, the note, "status?" by default); Send writes one ``info`` letter ``re:`` the task
to the seat that owes it through the write gate, and the task shows ``chased`` once the app
has read the letterbox again. What ``core.chase`` refuses (closed, not a task, the owing
seat itself) is the form's error while it is filled, and nothing is written; a second chase
within the silence setting asks first. Snapshots of the form at 80x24 and 160x48.

The letterbox, at the app tests' clock (NOW)::

    ask    alpha asks beta (a task, owed)
    done   alpha asked beta; beta's result closed it
    fyi    alpha tells beta (no task)
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from textual.widgets import Button, Select, Static

from letterbox_tui.app.screens.chase import ChaseScreen
from letterbox_tui.app.screens.choice import ChoiceScreen
from letterbox_tui.app.themes import shipped_themes_dir
from letterbox_tui.core.scan import scan
from tests.app.helpers import app_for, home_root, letters, scanned, until
from tests.app.test_footer import footer_words
from tests.app.letterboxes import NOW
from tests.conftest import make_box


def z(**delta) -> str:
    return (NOW + timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def tasks(root: Path):
    box = make_box(root, "alpha", "beta")
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true", sent=z(days=-3),
               subject="the renewal plan")
    box.letter("done", frm="alpha", to="beta", type="request", requires_ack="true", sent=z(days=-4),
               subject="the budget")
    box.letter("done--result", frm="beta", to="alpha", type="result", re="done", thread="done", sent=z(days=-1))
    box.letter("fyi", frm="alpha", to="beta", type="info", sent=z(days=-2), subject="for your information")
    return box


@pytest.fixture
def box(tmp_path):
    return tasks(tmp_path / "box")


def chases_of(root, letter_id: str) -> list:
    return [x for x in scan(root).letters if x.type == "info" and x.re == letter_id]


def error_line(app) -> str:
    return app.screen.query_one("#chase-error", Static).render().plain


def select(app, letter_id: str) -> None:
    lst = letters(app)
    lst.cursor = next(i for i, r in enumerate(lst.rows) if r.letter is not None and r.letter.id == letter_id)


def codes(app, letter_id: str) -> list[str]:
    row = next(r for r in letters(app).rows if r.heading is None and r.letter is not None and r.letter.id == letter_id)
    return [c.code for c in row.item.attention]


async def test_C_on_an_owed_task_sends_one_info_letter_to_the_owing_seat_and_it_shows_chased(box):
    app = app_for(box)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        assert letters(app).current.letter.id == "ask" and "chased" not in codes(app, "ask")
        # the footer names the key in Owed & late (where F, bodies, was), within 80 columns
        await until(pilot, lambda: footer_words(app))
        assert "C Chase" in footer_words(app) and sum(len(w) + 2 for w in footer_words(app)) <= 80
        before = box.tree_bytes()
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ChaseScreen) and app.screen.is_mounted)
        form = app.screen
        assert form.values() == ("alpha", "status?")  # the asker, and what a chase asks by default
        assert "Ready to send: an info letter to beta" in error_line(app)
        await pilot.press(*"is the plan on track?")  # (the default is selected: typing replaces it)
        assert form.values()[1] == "is the plan on track?"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, ChaseScreen))
        (chase,) = chases_of(box.root, "ask")
        assert (chase.sender, chase.recipient, chase.type, chase.re, chase.thread) == ("alpha", "beta", "info", "ask", "ask")
        assert (chase.seat, chase.folder, chase.sent) == ("beta", "inbox", z())
        assert (box.root / chase.path).read_text().endswith("---\nis the plan on track?\n")
        new = {k for k in box.tree_bytes() if k not in before and k.endswith(".md")}
        assert new == {chase.path}  # exactly one letter written
        # the app reads the letterbox again: the task carries its chased code, the cursor stays
        await until(pilot, lambda: "chased" in codes(app, "ask"))
        assert letters(app).current.letter.id == "ask"
        await pilot.press("4")  # elsewhere the list's own keys: F searches the bodies there
        await until(pilot, lambda: "F Bodies" in footer_words(app) and "C Chase" not in footer_words(app))
        await pilot.press("Q")


async def test_refusals_are_the_forms_error_and_write_nothing(box):
    """A closed task, a letter that is no task, the owing seat chasing itself: the form
    says why, Send is off, and neither Send nor Enter writes anything."""
    app = app_for(box, view="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        before = box.tree_bytes()
        for letter_id, said in (("done", "done is already closed: nothing is owed on it to chase"),
                                ("fyi", "fyi is not a task (requires_ack is not true)")):
            select(app, letter_id)
            await until(pilot, lambda: app.letter_pane.letter is not None and app.letter_pane.letter.id == letter_id)
            await pilot.press("C")
            await until(pilot, lambda: isinstance(app.screen, ChaseScreen) and app.screen.is_mounted)
            assert error_line(app).startswith("Refused: " + said) and error_line(app).endswith("(nothing is written)")
            assert app.screen.query_one("#chase-send", Button).disabled
            await pilot.press("ctrl+s", "enter")
            await pilot.pause()
            assert isinstance(app.screen, ChaseScreen) and box.tree_bytes() == before
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, ChaseScreen))
        select(app, "ask")
        await until(pilot, lambda: app.letter_pane.letter is not None and app.letter_pane.letter.id == "ask")
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ChaseScreen) and app.screen.is_mounted)
        assert not app.screen.query_one("#chase-send", Button).disabled
        app.screen.query_one("#chase-as", Select).value = "beta"  # the seat that owes it
        await until(pilot, lambda: error_line(app).startswith("Refused: beta owes ask: a seat does not chase itself"))
        await pilot.press("ctrl+s", "enter")
        await pilot.pause()
        assert box.tree_bytes() == before and chases_of(box.root, "ask") == []
        await pilot.press("Q")


async def test_a_second_chase_within_the_silence_asks_first(box):
    box.letter("ask--chase", frm="alpha", to="beta", type="info", re="ask", thread="ask", sent=z(hours=-5))
    app = app_for(box)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        assert "chased" in codes(app, "ask")
        before = box.tree_bytes()
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ChaseScreen) and app.screen.is_mounted)
        assert "Chased 5h ago by alpha (the silence setting is 2d): Send asks first." in error_line(app)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("b")  # Back: nothing is written, the form is still there
        await until(pilot, lambda: isinstance(app.screen, ChaseScreen))
        assert box.tree_bytes() == before
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("s")  # Send again
        await until(pilot, lambda: len(chases_of(box.root, "ask")) == 2)
        await until(pilot, lambda: not isinstance(app.screen, (ChaseScreen, ChoiceScreen)))
        newest = max(chases_of(box.root, "ask"), key=lambda x: x.sent)
        assert (newest.sender, newest.recipient, newest.sent) == ("alpha", "beta", z())
        assert (box.root / newest.path).read_text().endswith("---\nstatus?\n")
        await pilot.press("Q")


# --- snapshots -------------------------------------------------------------------------------

@pytest.fixture
def fixed_box():
    root = home_root("letterbox-tui-snapshot-chase")
    box = tasks(root)
    box.letter("ask--chase", frm="alpha", to="beta", type="info", re="ask", thread="ask", sent=z(hours=-5))
    return box


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_chase_form_snapshot(snap_compare, fixed_box, size):
    async def run_before(pilot):
        await scanned(pilot, pilot.app)
        await pilot.press("C")
        await until(pilot, lambda: isinstance(pilot.app.screen, ChaseScreen) and pilot.app.screen.is_mounted)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(app_for(fixed_box, theme_dirs=[shipped_themes_dir()]), terminal_size=size,
                        run_before=run_before)

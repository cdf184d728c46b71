"""80x24 is a normal terminal: the sidebar folds away (b toggles it), rows keep their
state, subject and deadline, Enter reads a letter under a few rows of the list, q goes
back; the status line names the view, its sort and its filter."""

from __future__ import annotations

from tests.app.helpers import app_for, body_of, letters, scanned, screen_text


async def test_80x24_rows_keep_state_subject_and_due(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        assert not app.query_one("#mailboxes-pane").display
        shown = screen_text(app)
        lines = shown.splitlines()
        plan = next(ln for ln in lines if "Renewal plan" in ln)
        assert plan.split("│")[1].lstrip().startswith("! LATE 1d 22h")
        assert "Renewal plan for the storage cluster" in plan
        assert any("● due in 18h" in ln and "Review the docs" in ln for ln in lines)
        assert any("no deadline" in ln and "Write release notes" in ln for ln in lines)
        status = app.query_one("#status").render().plain
        assert "Owed & late" in status and "by owing seat" in status and "no filter" in status
        # every row of All keeps its mark, subject and status at 80 columns
        await pilot.press("4")
        row = next(r for r in letters(app).rows if r.letter is not None and r.letter.subject == "Approve the budget")
        text = letters(app).describe(row, 76).plain
        assert text.startswith("!") and "Approve the budget" in text and text.rstrip().endswith("late")
        assert len(text) <= 76


async def test_80x24_sidebar_toggles_and_reading_shows_the_letter(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await pilot.press("b")
        assert app.query_one("#mailboxes-pane").display and app.focused.id == "mailboxes"
        await pilot.press("j", "enter")
        assert app.mailbox_id == "view:disputes"
        # picked: the sidebar folds away again and the list has the keys (it stayed, focused)
        assert not app.query_one("#mailboxes-pane").display and app.focused is letters(app)
        await pilot.press("b", "b")
        assert not app.query_one("#mailboxes-pane").display and app.focused is letters(app)
        assert not app.letter_pane.display or app.letter_pane.region.height == 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.letter_pane.region.height >= 12
        assert "Plan and budget disagree" in screen_text(app)
        await body_of(pilot, app)
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and app.focused is letters(app)
        assert app.letter_pane.region.height == 0


async def test_wide_screens_keep_the_sidebar_and_the_letter(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=(120, 40)) as pilot:
        await scanned(pilot, app)
        assert app.query_one("#mailboxes-pane").display
        assert app.letter_pane.region.height > 10


async def test_80x24_with_the_sidebar_rows_fit_and_the_subject_has_the_room(letterbox):
    """With the sidebar shown at 80 columns the rows were wider than the list: the subject
    was cut to 8 cells while the parties and the status note ran past the list's edge."""
    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await pilot.press("b")
        assert app.query_one("#mailboxes-pane").display
        for view in ("1", "4"):
            app.set_focus(letters(app))
            await pilot.press(view)
            await scanned(pilot, app)
            lst = letters(app)
            width = lst.scrollable_content_region.width - 1
            assert width < 50
            for row in lst.rows:
                if row.letter is None or row.heading is not None:
                    continue
                text = lst.describe(row, width).plain
                assert len(text) <= width, (view, text)
                subject = row.letter.subject
                assert subject[:11] in text, (view, text)

"""The #14 journeys as a new user does them, key by key (found in tmux at 80x24 and
160x48): each test is one journey, and each assertion a surprise that was fixed."""

from __future__ import annotations

import pytest

from tests.app.helpers import app_for, body_of, letters, scanned, until

BUDGET = "2026-11-21T090000-builder-request-budget-aaaa0004"
LATE_WORD = "2026-11-26T090000-planner-info-budget-eeee0001"


def _with_a_reply(box):
    box.letter(LATE_WORD, frm="planner", to="builder", type="info", re=BUDGET, thread=BUDGET,
               sent="2026-11-26T09:00:00Z", subject="Approve the budget", body="Two more days, please.\n")
    return box


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_morning_review_follows_the_thread_and_q_comes_back(letterbox, size):
    """Owed & late opens on the most urgent row; Enter reads it; ] Thread, j, Enter reads
    the reply without leaving Owed & late; h reads its parent; q goes back to the list
    where it was (it quit the app: nothing had focus after Enter in the Thread tab)."""
    app = app_for(_with_a_reply(letterbox))
    async with app.run_test(size=size) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        assert app.mailbox_id == "view:owed" and lst.current.letter.id == BUDGET  # most overdue
        await pilot.press("enter")
        assert app.focused.id == "body-scroll"
        await pilot.press("right_square_bracket")
        tv = app.letter_pane.thread_view
        assert app.focused is tv and tv.highlighted_letter.id == BUDGET
        await pilot.press("j", "enter")
        await until(pilot, lambda: app.letter_pane.letter.id == LATE_WORD)
        assert "Two more days" in await body_of(pilot, app)
        assert app.focused.id == "body-scroll", "reading the reply keeps the keys in the pane"
        assert app.mailbox_id == "view:owed" and lst.current.letter.id == BUDGET, "the list stays where it was"
        assert app.selected_letter().id == LATE_WORD  # r, d, s, e and | act on the letter read
        await pilot.press("h")  # to the letter it replies to
        await until(pilot, lambda: app.letter_pane.letter.id == BUDGET)
        await pilot.press("q")
        assert app.is_running and app.focused is lst
        assert app.mailbox_id == "view:owed" and lst.current.letter.id == BUDGET
        assert app.letter_pane.letter.id == BUDGET
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_q_with_nothing_focused_goes_to_the_list_not_out(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        app.set_focus(None)
        await pilot.press("q")
        assert app.is_running and app.focused is letters(app)

"""Owed & late (issue 14 point 2): every row keeps its deadline state, an uncertain one
shows its reason beside it; the list opens on the most urgent item; o switches between by
owing seat and most overdue first across seats; seats fold (z, Z) and { } jump."""

from __future__ import annotations

from tests.app.helpers import SIZE, app_for, letters, list_text, scanned

PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"
BUDGET = "2026-11-21T090000-builder-request-budget-aaaa0004"
DOCS = "2026-11-28T100000-planner-request-review-docs-aaaa0002"
NOTES = "2026-11-28T110000-planner-request-notes-aaaa0003"


def ids(app) -> list[str]:
    return [r.letter.id for r in letters(app).rows if r.heading is None and r.letter is not None]


async def test_an_uncertain_row_still_shows_its_deadline(incomplete_box):
    app = app_for(incomplete_box)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        row = next(r for r in list_text(app) if "Approve the budget" in r)
        # the unreadable file may be builder's answer: answered is unknown, and the row
        # still says how overdue the deadline is
        assert "LATE 4d 3h" in row or "past due 4d 3h" in row
        assert "? unreadable-file" in row
    app = app_for(incomplete_box)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        row = next(r for r in lst.rows if r.letter is not None and r.letter.id == BUDGET)
        text = lst.describe(row, 77).plain
        assert "4d 3h" in text and "? unreadable" in text and "Approve the budget" in text


async def test_opens_on_the_most_urgent_and_o_orders_across_seats(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).current.letter.id == BUDGET  # 4d 3h late beats 1d 22h
        assert ids(app) == [PLAN, DOCS, NOTES, BUDGET]  # by owing seat: builder, planner
        await pilot.press("o")
        assert ids(app) == [BUDGET, PLAN, DOCS, NOTES]
        assert letters(app).current.letter.id == BUDGET  # the cursor stays
        assert "most overdue first" in app.query_one("#status").render().plain
        assert list_text(app)[0].startswith(" Most overdue first, across 2 seats: 4 owed · 2 late")
        await pilot.press("o")
        assert ids(app) == [PLAN, DOCS, NOTES, BUDGET]
        assert "by owing seat" in app.query_one("#status").render().plain
        # opened again (1, or from the sidebar), it opens as at the start: on the most
        # urgent task (it opened on the first seat's heading, where Enter folds the seat)
        await pilot.press("4", "1")
        assert letters(app).current.letter is not None and letters(app).current.letter.id == BUDGET


async def test_seat_groups_fold_and_jump(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        await pilot.press("left_curly_bracket")  # from budget (planner's) to builder's group
        assert lst.current.key == "group:builder"
        await pilot.press("z")
        assert ids(app) == [BUDGET]
        assert list_text(app)[0].strip().startswith("▸ builder owes 3 · 1 late")
        assert lst.current.key == "group:builder"
        assert "builder owes 3 tasks" in app.query_one("#letter-head").render().plain
        await pilot.press("right_curly_bracket")
        assert lst.current.key == "group:planner"
        await pilot.press("Z")  # fold every seat: one line a seat
        assert ids(app) == [] and len(lst.rows) == 2
        await pilot.press("Z")
        assert ids(app) == [PLAN, DOCS, NOTES, BUDGET]
        await pilot.press("4", "z")  # elsewhere, z says what it is for
        assert any("arrange Owed & late" in str(n.message) for n in app._notifications)


async def test_the_sidebar_says_owed_items_whose_lateness_is_unknown(letterbox):
    """An unsupported entry (an ``archive/``) makes every answer it may bear on unknown:
    the sidebar said "Owed & late  N" alone, as if nothing were late, when most items
    were past due with late unknown. It says them ("· K late?"), as the status line's ?K."""
    from letterbox_tui.app.widgets.mailboxes import _view_counts
    from letterbox_tui.app.model import Mailbox

    (letterbox.root / "builder" / "archive").mkdir()
    app = app_for(letterbox)
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        m = app.model
        unsure = sum(1 for g in m.owed.groups for i in g.items if i.late.unknown)
        assert m.late_count == 0 and unsure > 0
        ol = app.mailbox_list
        line = next(ol.get_option_at_index(i).prompt.plain for i in range(ol.option_count)
                    if ol.get_option_at_index(i).id == "view:owed")
        assert line.split()[-3:] == ["·", str(unsure), "late?"], line
    # a late count first, the unknown ones after it when there is room
    said = [c.plain for c in _view_counts(Mailbox("view:owed", "Owed & late", 8, late=2, late_unknown=3), 0)]
    assert said[0] == "8 · 2 late · 3 late?" and "8 · 2 late" in said

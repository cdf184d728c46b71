"""The query bar: relative times (SPEC 6), history (Up/Down, kept in the user's state
directory) and completion of keys and values."""

from __future__ import annotations

from textual.widgets import Input, Static

from tests.app.helpers import SIZE, app_for, letters, scanned

PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"
BUDGET = "2026-11-21T090000-builder-request-budget-aaaa0004"


async def run_query(pilot, app, text: str) -> None:
    await pilot.press("backslash")
    app.query_one("#query", Input).value = text
    await pilot.press("enter")
    await pilot.pause()


async def test_relative_times_in_the_query_bar_count_from_the_apps_clock(letterbox):
    app = app_for(letterbox)  # the clock: 2026-11-29T15:00Z
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await run_query(pilot, app, "type=request since=-2d")
        ids = {r.letter.id for r in letters(app).rows}
        assert ids == {"2026-11-28T100000-planner-request-review-docs-aaaa0002",
                       "2026-11-28T110000-planner-request-notes-aaaa0003"}
        await run_query(pilot, app, "late=yes at=-3d")  # Nov 26: only the budget was late
        assert {r.letter.id for r in letters(app).rows} == {BUDGET}
        await run_query(pilot, app, "since=-2w")
        assert "invalid term 'since=-2w'" in app.query_one("#query-error", Static).render().plain

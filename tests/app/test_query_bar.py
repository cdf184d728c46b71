"""The query bar: relative times (SPEC 6), history (Up/Down, kept in the user's state
directory) and completion of keys and values."""

from __future__ import annotations

from textual.widgets import Input, Static
from textual.worker import WorkerState

from letterbox_tui.core.settings import user_state_dir as user_state_path
from tests.app.helpers import SIZE, app_for, letters, scanned, until

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


async def test_query_history_walks_with_up_and_down_and_survives_a_restart(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await run_query(pilot, app, "type=request late=yes")
        await run_query(pilot, app, "late=maybe")  # refused: not remembered
        await run_query(pilot, app, "type=decision")
        await run_query(pilot, app, "type=request   late=yes")  # the same query again: moves up
    history = user_state_path() / "query-history"
    assert history.read_text().splitlines() == ["type=decision", "type=request late=yes"]
    assert not str(history).startswith(str(letterbox.root))

    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        app.action_query()
        await pilot.pause()
        inp = app.query_one("#query", Input)
        inp.value = "half typed"
        await pilot.press("up")
        assert inp.value == "type=request late=yes"
        await pilot.press("up")
        assert inp.value == "type=decision"
        await pilot.press("up")  # the oldest stays
        assert inp.value == "type=decision"
        await pilot.press("down", "down")
        assert inp.value == "half typed"  # back to what was being typed
        await pilot.press("up", "enter")
        await pilot.pause()
        assert app.query_text == "type=request late=yes"


async def test_query_terms_complete_keys_values_seats_and_ids(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        app.action_query()
        await pilot.pause()
        inp = app.query_one("#query", Input)

        def suggesting() -> bool:  # the input's suggestion (and id index) workers
            return any(w.node is inp and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                       for w in app.workers)

        async def completes(typed: str) -> str:
            # All but the last character set at once (the suggester sees only the whole
            # value), the last one typed; then wait until its suggestion was made.
            inp.value = typed[:-1]
            inp.cursor_position = len(inp.value)
            await until(pilot, lambda: not suggesting())  # the id index, first time asked
            await pilot.press(typed[-1])
            await until(pilot, lambda: not suggesting())
            await pilot.pause()
            await pilot.press("right")
            return inp.value

        assert await completes("ty") == "type="
        assert await completes("type=req") == "type=request"
        assert await completes("type=request,dele") == "type=request,delegate"
        assert await completes("late=yes fr") == "late=yes from="
        assert await completes("from=pla") == "from=planner"
        assert await completes("to=re") == "to=reviewer"
        assert await completes("state=cl") == "state=closed"
        assert await completes("du") == "due<="
        assert await completes("since=yes") == "since=yesterday"
        assert await completes("id=2026-11-20") == "id=" + PLAN
        assert await completes("thread=nothing-like-it") == "thread=nothing-like-it"


def test_completion_without_a_scan_still_knows_the_language():
    from letterbox_tui.app.widgets.query_input import complete_term

    assert complete_term("answ", None) == "answered="
    assert complete_term("answered=u", None) == "answered=unknown"
    assert complete_term("from=pl", None) is None  # seats come from the scan
    assert complete_term("type=request ", None) is None

"""New letters: watched with watchfiles (the mtime poll only as fallback), marked as new
since the user last looked (state in the XDG state directory, never in the letterbox),
counted in the sidebar and announced."""

from __future__ import annotations

import os

from letterbox_tui.app.seen import state_path
from tests.app.helpers import SIZE, app_for, letters, scanned, until

NEW = "2026-11-29T140000-planner-info-hello-ffff0001"


def _arrive(box):
    box.letter(NEW, frm="planner", to="builder", sent="2026-11-29T14:00:00Z", subject="A new letter arrives")


def _mailbox_prompts(app) -> str:
    ol = app.query_one("#mailboxes")
    return "\n".join(ol.get_option_at_index(i).prompt.plain for i in range(ol.option_count))


async def test_a_letter_that_arrives_is_marked_counted_and_announced(letterbox):
    app = app_for(letterbox, view="all", poll_interval=60)  # the poll never fires here
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: app.watching)
        before = {n.message for n in app._notifications}
        assert not any(app.is_fresh(r) for r in letters(app).rows)
        _arrive(letterbox)
        await until(pilot, lambda: any(r.letter is not None and r.letter.id == NEW for r in letters(app).rows))
        row = next(r for r in letters(app).rows if r.letter is not None and r.letter.id == NEW)
        assert app.is_fresh(row)
        assert letters(app).describe(row, 120).plain[1] == "◆"
        prompts = _mailbox_prompts(app)
        assert "All letters   15 +1 new" in prompts
        assert "builder +1 new\n  Inbox      8 +1 new" in prompts  # builder's inbox
        # the status line counts them too (the sidebar is folded away at 80 columns)
        assert "◆ 1 new" in app.query_one("#status").render().plain
        assert any("A new letter arrives" in str(n.message) for n in app._notifications if n.message not in before)
        # opening it makes it seen
        lst = letters(app)
        lst.cursor = lst.index_of(row.key)
        await pilot.press("enter")
        assert not app.is_fresh(row)
        assert "+1 new" not in _mailbox_prompts(app)
        assert "◆" not in app.query_one("#status").render().plain
    # the state is the user's, outside the letterbox
    assert state_path(app.root).is_file()
    assert not str(state_path(app.root)).startswith(str(letterbox.root))
    assert not any(".seen" in name or name.endswith(".json") for _, _, names in os.walk(letterbox.root) for name in names)


async def test_letters_that_arrived_between_sessions_are_new_next_time(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
    _arrive(letterbox)
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        fresh = [r.letter.id for r in letters(app).rows if r.letter is not None and app.is_fresh(r)]
        assert fresh == [NEW]
        assert "+1 new" in _mailbox_prompts(app)


async def test_without_a_native_watcher_the_poll_notices(letterbox, monkeypatch):
    import letterbox_tui.app.reading as app_module

    monkeypatch.setattr(app_module, "watch_letterbox", lambda *a, **kw: False)
    app = app_for(letterbox, view="all", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: not app.watching)
        _arrive(letterbox)
        await until(pilot, lambda: any(r.letter is not None and r.letter.id == NEW for r in letters(app).rows))


async def test_a_burst_of_changes_is_one_rescan(letterbox):
    app = app_for(letterbox, view="all", poll_interval=60)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: app.watching)
        scans = app.scan_count
        for i in range(20):
            letterbox.letter(f"2026-11-29T14{i:02d}00-planner-info-burst-ffff{i:04d}", frm="planner", to="builder",
                             sent=f"2026-11-29T14:{i:02d}:00Z")
        await until(pilot, lambda: app.scan_count > scans and not app.scanning)
        await pilot.pause(1.0)
        assert app.scan_count - scans <= 2
        assert sum(1 for r in letters(app).rows if r.letter is not None and "burst" in r.letter.id) == 20


async def test_the_new_letters_are_found_before_the_model_is_shown_and_match_a_plain_walk(letterbox):
    """The walk for letters newer than the watermark runs in the scan worker: when the
    answers reach the UI thread it is already done, and it is exactly the plain walk."""
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
    _arrive(letterbox)
    app = app_for(letterbox, view="all")
    seen_at_done: list = []
    handled = app._after_scan_seen

    def after_scan_seen(first):  # (the model the worker handed over, before the UI thread asks)
        seen_at_done.append(("newer than", app.seen.watermark) in app.model._once)
        handled(first)

    app._after_scan_seen = after_scan_seen
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        mark = app.seen.watermark
        plain = [x.path for x in app.model.snapshot.letters if x.mtime_ns > mark and app.seen.is_new(x)]
        assert [x.path for x in app.fresh_letters()] == plain
        assert [x.id for x in app.fresh_letters()] == [NEW]
    assert seen_at_done and all(seen_at_done)

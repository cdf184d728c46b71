"""Owed & late opens first, on a generated letterbox of a few hundred letters: the list
opens on its most urgent row (on the screen, however far down), every other view is
built once, when first opened, and kept; the UI thread opens no file meanwhile (the
answers, the status notes and the bodies are read in workers)."""

from __future__ import annotations

import asyncio
import contextlib
import io
from datetime import datetime, timezone

from letterbox_tui.app import make_app
from letterbox_tui.app import model as model_mod
from letterbox_tui.app import owed_rows as owed_mod
from letterbox_tui.app.owed_rows import most_urgent_key
from letterbox_tui.core.settings import UserSettings
from tests.app.helpers import SIZE, hold_scans, scanned, until, view_built

GEN_NOW = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def _generated(root):
    from tests.gen_letterbox import main as generate

    with contextlib.redirect_stdout(io.StringIO()):
        generate([str(root), "--letters", "600", "--seed", "11"])
    return GEN_NOW


def _app(root, now):
    return make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())


class _Files:
    """Counts what the UI thread opens or lists while ``on``."""

    def __init__(self, monkeypatch):
        import builtins
        import os
        import sys
        import threading

        self.seen: list[str] = []
        self.on = False
        main_thread = threading.main_thread()

        def counted(name, real):
            def call(*a, **k):
                if threading.current_thread() is main_thread and self.on:
                    f, where = sys._getframe(1), []
                    while f is not None:  # where from, in the package (no source read: that opens files)
                        if "letterbox_tui" in f.f_code.co_filename:
                            where.append(f"{f.f_code.co_filename.rsplit('letterbox_tui/', 1)[-1]}:{f.f_lineno}")
                        f = f.f_back
                    self.seen.append(f"{name}({a[0] if a else ''}) from {' < '.join(where[:4])}")
                return real(*a, **k)
            return call

        for mod, name in ((builtins, "open"), (os, "open"), (os, "scandir"), (os, "listdir"), (os, "stat"),
                          (os, "lstat")):
            monkeypatch.setattr(mod, name, counted(name, getattr(mod, name)))


def test_each_view_is_built_once_when_first_opened_and_the_ui_thread_reads_no_file(tmp_path, monkeypatch):
    root = tmp_path / "gen"
    now = _generated(root)
    calls: list[str] = []
    for vid, builder in list(model_mod.BUILDERS.items()):
        def counted(self, _b=builder, _v=vid):
            calls.append(_v)
            return _b(self)
        monkeypatch.setitem(model_mod.BUILDERS, vid, counted)
    arranged = owed_mod._arranged
    monkeypatch.setattr(owed_mod, "_arranged", lambda *a: calls.append("arranged") or arranged(*a))
    files = _Files(monkeypatch)

    async def run():
        app = _app(root, now)
        async with app.run_test(size=SIZE) as pilot:
            files.on = True
            await scanned(pilot, app)
            # the opening view, which is Owed & late, and nothing else: not even All letters
            assert sorted(calls) == ["arranged", "view:owed"]
            assert [vid for vid in model_mod.BUILDERS if app.model.built(vid)] == ["view:owed"]
            assert app.model.counts["view:all"] > 0  # (its count is the letters', known without it)
            mailboxes = app.mailbox_list
            prompts = [mailboxes.get_option_at_index(i).prompt.plain for i in range(mailboxes.option_count)]
            assert prompts[1].strip() == "Open disputes"  # no count until it is built
            for view in "2345":
                await pilot.press(view)
                await view_built(pilot, app)
                assert app.model.built(model_mod.VIEW_BY_NAME[{"2": "disputes", "3": "truth", "4": "all", "5": "problems"}[view]])
            assert sorted(calls) == sorted([*model_mod.BUILDERS, "arranged"])  # each built once
            before = list(calls)
            for view in "2345121":
                await pilot.press(view)
                await pilot.pause()
            assert calls == before  # switching back rebuilt nothing
            await pilot.press("1", "o", "o")  # another order is arranged once, then kept
            await pilot.pause()
            assert calls == before + ["arranged"]
            files.on = False
            await pilot.press("Q")

    asyncio.run(run())
    assert files.seen == []


def test_views_opened_before_a_new_read_are_built_with_it(tmp_path):
    root = tmp_path / "gen"
    now = _generated(root)

    async def run():
        app = _app(root, now)
        async with app.run_test(size=SIZE) as pilot:
            await scanned(pilot, app)
            await pilot.press("5")
            await view_built(pilot, app)
            problems = app.model.counts["view:problems"]
            await pilot.press("1")
            app.action_rescan()
            await scanned(pilot, app, count=2)
            assert app.model.built("view:problems") and app.model.counts["view:problems"] == problems
            assert not app.model.built("view:disputes")  # never opened
            await pilot.press("Q")

    asyncio.run(run())


def test_the_most_urgent_row_is_on_the_screen_when_the_list_opens(tmp_path, monkeypatch):
    from tests.conftest import Box

    root = tmp_path / "gen"
    now = _generated(root)
    # the most overdue task, owed by the last seat: far below the first screen
    Box(root).seat("zz").letter("2020-01-01T000000-zz-request-oldest-aaaa0001", frm="zz", to="zz", type="request",
                                requires_ack="true", deadline="2020-01-02T00:00:00Z", sent="2020-01-01T00:00:00Z")

    async def run():
        app = _app(root, now)
        async with app.run_test(size=SIZE) as pilot:
            await scanned(pilot, app)
            await pilot.wait_for_scheduled_animations()
            lst = app.letter_list
            assert lst.current.key == most_urgent_key(app.model)
            assert lst.cursor > lst.scrollable_content_region.height  # below the first screen
            top, height = lst.scroll_offset.y, lst.scrollable_content_region.height
            assert top <= lst.cursor < top + height
            await pilot.press("Q")

    asyncio.run(run())


def test_keys_pressed_while_the_letterbox_is_read_are_kept(tmp_path, monkeypatch):
    """The order (o), a view (2) and a form (c) asked for before the answers arrive: each
    takes effect when they do."""
    from letterbox_tui.app.screens.write import WriteScreen

    root = tmp_path / "gen"
    now = _generated(root)
    held = hold_scans(monkeypatch)

    async def run():
        app = _app(root, now)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.scanning)
            await pilot.press("o", "2", "c")
            await pilot.pause()
            assert app.model is None and len(app.screen_stack) == 1
            held.set()
            await scanned(pilot, app)
            await until(pilot, lambda: isinstance(app.screen, WriteScreen))  # the compose asked for
            assert app.mailbox_id == "view:disputes"
            assert list(app.letter_list.rows) == list(app.model.rows("view:disputes"))
            await pilot.press("escape")  # unchanged: closes without asking
            await until(pilot, lambda: len(app.screen_stack) == 1)
            await pilot.press("1")
            await pilot.pause()
            assert app.owed_order == owed_mod.MOST_OVERDUE  # the o pressed while reading
            assert app.letter_list.rows[0].key == "group:all"
            await pilot.press("Q")

    asyncio.run(run())

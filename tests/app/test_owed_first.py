"""Owed & late first, from the derived index (#14 speed, #15 "the app uses the same
index"): on an unchanged letterbox the app shows the owed view from the index's stored
answers (``core.speed.index_owed``, ``AppModel.from_preview``) before it has loaded the
whole letterbox, and those rows are exactly the ones the whole letterbox gives: every row,
its text, its deadline state and its uncertain reasons, in both orders. A changed
letterbox, or none indexed, is never previewed. Counts, not times."""

from __future__ import annotations

import asyncio
import contextlib
import io
from datetime import datetime, timezone

import pytest

from letterbox_tui.app import make_app
from letterbox_tui.app import early, scanning
from letterbox_tui.app import owed_rows as owed_mod
from letterbox_tui.app.model import AppModel
from letterbox_tui.app.owed_rows import BY_SEAT, MOST_OVERDUE, most_urgent_key, owed_rows
from letterbox_tui.app.screens.write import WriteScreen
from letterbox_tui.app.widgets.letter_text import head_text
from letterbox_tui.app.widgets.row_text import describe
from letterbox_tui.cli import main
from letterbox_tui.core.demo import DEMO_NOW, write_demo
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.core.settings import UserSettings, load_settings
from letterbox_tui.core.speed import memo
from letterbox_tui.core.speed.index_owed import owed_preview
from tests.app.helpers import SIZE, hold_scans, scanned, until

GEN_NOW = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def settled(monkeypatch):
    """Files written a moment ago count as settled (a test's whole life is in the racy
    window), and a small letterbox is previewed too."""
    monkeypatch.setattr(memo, "RACY_NS", 0)
    monkeypatch.setattr(early, "PREVIEW_MIN_LETTERS", 0)


def _indexed(root) -> None:
    """Build the derived index the way a command does (a query, then its build)."""
    from letterbox_tui.core.speed.index import Index

    with contextlib.redirect_stdout(io.StringIO()):
        main(["--root", str(root), "query", "state=any", "--json"])  # its exit code says what matched
    ix = Index(str(root), load_settings(root).id_time_is_utc)
    try:
        assert ix.open() and ix.why_not() is None
    finally:
        ix.close()


def _generated(root):
    from tests.gen_letterbox import main as generate

    with contextlib.redirect_stdout(io.StringIO()):
        generate([str(root), "--letters", "600", "--seed", "11"])
    return GEN_NOW


@pytest.fixture(params=["demo", "generated"])
def box(request, tmp_path, settled):
    root = tmp_path / request.param
    if request.param == "demo":
        write_demo(root, seed=7, now=DEMO_NOW)
        now = DEMO_NOW
    else:
        now = _generated(root)
    _indexed(root)
    return root, now


def _text(c) -> tuple:
    return (c.plain, tuple(c.spans))


def _rows(model, rows, width: int = 150) -> list[tuple]:
    out = []
    for r in rows:
        if r.heading is not None:
            out.append((r.key, _text(r.heading)))
        else:
            out.append((r.key, r.note, r.note_style, dict(r.extra), _text(describe(model, r, width, owed=True)),
                        _text(describe(model, r, 80, owed=True)), _text(head_text(model, r.letter))))
    return out


@pytest.mark.parametrize("window", [None, 2])
def test_owed_rows_from_the_index_are_the_whole_letterbox_s(box, window, monkeypatch):
    root, now = box
    if window is not None:  # the first screen is 2 rows each side of the cursor: the others are read later
        monkeypatch.setattr(owed_mod, "WINDOW", window)
    settings = load_settings(root)
    preview = owed_preview(root, id_time_is_utc=settings.id_time_is_utc, now=now)
    assert preview is not None
    fast = AppModel.from_preview(str(root), settings, preview, now)
    snapshot = scan(root, id_time_is_utc=settings.id_time_is_utc)
    whole = AppModel.build(str(root), settings, snapshot, resolve(snapshot, now), now)
    assert fast.partial and not whole.partial
    assert len(fast.snapshot.letters) < len(whole.snapshot.letters)  # only what may be owed was read
    seats = [g.seat for g in whole.owed.groups]
    for order, folded in ((BY_SEAT, set()), (MOST_OVERDUE, set()), (BY_SEAT, set(seats[:1]))):
        got, want = owed_rows(fast, order, folded), owed_rows(whole, order, folded)
        assert _rows(fast, got) == _rows(whole, want), (order, folded)
    assert most_urgent_key(fast) == most_urgent_key(whole)
    assert fast.counts["view:owed"] == whole.counts["view:owed"] and fast.late_count == whole.late_count
    items = [i for g in whole.owed.groups for i in g.items]
    kinds = {i.standing for i in items}
    assert {"late", "uncertain"} <= kinds  # what the test is about is there
    assert any(i.standing == "uncertain" and i.letter.deadline for i in items)  # uncertain, with a deadline


def test_the_preview_reads_the_first_screen_s_letters_and_notes_then_the_rest(tmp_path, settled, monkeypatch):
    from letterbox_tui.core import sidecar

    root = tmp_path / "gen"
    now = _generated(root)
    _indexed(root)
    monkeypatch.setattr(owed_mod, "WINDOW", 2)
    read: list[str] = []
    real = sidecar.read_sidecar
    monkeypatch.setattr(sidecar, "read_sidecar", lambda r, x: (read.append(x.path), real(r, x))[1])
    settings = load_settings(root)
    preview = owed_preview(root, id_time_is_utc=False, now=now)
    fast = AppModel.from_preview(str(root), settings, preview, now)
    listed = owed_rows(fast, BY_SEAT, set())
    rows = [r for r in listed if r.heading is None]
    assert len(rows) > 40
    keys = [r.key for r in listed]
    # 2 rows each side of the cursor it opens on, of each seat's heading, and at the end
    anchors = [keys.index(most_urgent_key(fast)), len(keys)] + [i for i, r in enumerate(listed) if r.heading]
    first = {k for i in anchors for k in keys[max(0, i - 2):i + 2] if not k.startswith("group:")}
    assert set(preview.res._more) == first  # what a key shows at once, no more
    assert len(first) < len(rows) / 2
    assert set(read) <= first  # only their sidecars were read
    fast.read_rest()
    preview.res._done.wait(10)
    assert set(preview.res._more) == {r.key for r in rows}  # then every row's, in one more read
    assert sorted(read) == sorted(set(read))  # each sidecar once
    assert preview.res._ix is None  # its read transaction ended, its connection closed


def test_a_row_the_index_fails_to_give_later_is_drawn_without_its_letter(tmp_path, settled, monkeypatch):
    root = tmp_path / "gen"
    now = _generated(root)
    _indexed(root)
    monkeypatch.setattr(owed_mod, "WINDOW", 2)
    preview = owed_preview(root, id_time_is_utc=False, now=now)
    fast = AppModel.from_preview(str(root), load_settings(root), preview, now)
    rows = [r for r in owed_rows(fast, BY_SEAT, set()) if r.heading is None]
    later = [r for r in rows if r.key not in preview.res._more]
    assert later
    preview.res._ix.db.close()  # the rest's read fails
    fast.read_rest()
    assert later[0].letter is None and later[0].extra == {}  # not an exception while drawing
    describe(fast, later[0], 150, owed=True)
    first = next(r for r in rows if r.key in preview.res._more)
    assert first.letter is not None and first.letter.path == first.key


def test_a_changed_letterbox_or_none_indexed_is_not_previewed(tmp_path, settled):
    root = tmp_path / "box"
    write_demo(root, seed=7, now=DEMO_NOW)
    assert owed_preview(root, id_time_is_utc=False, now=DEMO_NOW) is None  # no index yet
    _indexed(root)
    assert owed_preview(root, id_time_is_utc=False, now=DEMO_NOW) is not None
    assert owed_preview(root, id_time_is_utc=False, now=DEMO_NOW, min_letters=10**6) is None  # too small
    letter = next(root.glob("*/inbox/*.md"))
    letter.write_bytes(letter.read_bytes().replace(b"\n---\n", b"\nnote: edited\n---\n", 1))
    assert owed_preview(root, id_time_is_utc=False, now=DEMO_NOW) is None  # changed: the app scans


class _Files:
    """Counts what the UI thread opens or lists while it is installed."""

    def __init__(self, monkeypatch):
        import builtins
        import os
        import threading

        self.seen: list[str] = []
        main_thread = threading.main_thread()

        def counted(name, real):
            def call(*a, **k):
                if threading.current_thread() is main_thread and self.on:
                    import sys
                    f, where = sys._getframe(1), []
                    while f is not None:  # where from, in the package (no source read: that opens files)
                        if "letterbox_tui" in f.f_code.co_filename:
                            where.append(f"{f.f_code.co_filename.rsplit('letterbox_tui/', 1)[-1]}:{f.f_lineno}")
                        f = f.f_back
                    self.seen.append(f"{name}({a[0] if a else ''}) from {' < '.join(where[:4])}")
                return real(*a, **k)
            return call

        self.on = False
        for mod, name in ((builtins, "open"), (os, "open"), (os, "scandir"), (os, "listdir"), (os, "stat"),
                          (os, "lstat")):
            monkeypatch.setattr(mod, name, counted(name, getattr(mod, name)))


def test_the_app_shows_owed_from_the_index_first_then_the_whole_letterbox(tmp_path, settled, monkeypatch):
    root = tmp_path / "gen"
    now = _generated(root)
    _indexed(root)
    files = _Files(monkeypatch)
    shown: list = []
    first = scanning.ScanningMixin.on_owed_shown

    def on_owed_shown(app, message):  # what the preview put on the screen, as it did
        first(app, message)
        assert app.model is None and app.preview is message.model
        shown.append(_rows(app.preview, app.letter_list.rows))
        shown.append(app.letter_list.current.key)

    monkeypatch.setattr(scanning.ScanningMixin, "on_owed_shown", on_owed_shown)

    async def run():
        app = make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())
        async with app.run_test(size=SIZE) as pilot:
            files.on = True
            await scanned(pilot, app)
            assert len(shown) == 2, "the owed view from the index came first"
            assert shown[1] == most_urgent_key(app.model)
            assert app.preview is None and app.letter_list.current.key == shown[1]  # the cursor stays
            shown.append(_rows(app.model, app.letter_list.rows))
            for view in "23451":  # every view, and back
                await pilot.press(view)
                await pilot.pause()
            files.on = False
            await pilot.press("Q")

    asyncio.run(run())
    assert shown[0] == shown[2]
    assert files.seen == []  # the UI thread read no file: the index, the scan, bodies are read in workers


def test_switching_views_rebuilds_no_rows(tmp_path, monkeypatch):
    root = tmp_path / "gen"
    now = _generated(root)
    from letterbox_tui.app import owed_rows as owed_mod
    from letterbox_tui.app import model as model_mod

    calls: list[str] = []
    for vid, builder in list(model_mod.BUILDERS.items()):
        def counted(self, _b=builder, _v=vid):
            calls.append(_v)
            return _b(self)
        monkeypatch.setitem(model_mod.BUILDERS, vid, counted)
    arranged = owed_mod._arranged
    monkeypatch.setattr(owed_mod, "_arranged", lambda *a: calls.append("arranged") or arranged(*a))

    async def run():
        app = make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())
        async with app.run_test(size=SIZE) as pilot:
            await scanned(pilot, app)
            before = list(calls)
            assert sorted(before) == sorted([*model_mod.BUILDERS, "arranged"])  # each view built once
            for view in "2345121":
                await pilot.press(view)
                await pilot.pause()
            assert calls == before  # switching rebuilt nothing
            await pilot.press("1", "o", "o")  # another order is arranged once, then kept
            await pilot.pause()
            assert calls == before + ["arranged"]
            await pilot.press("Q")

    asyncio.run(run())


def test_a_start_the_index_could_not_serve_leaves_it_refreshed_for_the_next(tmp_path, settled, monkeypatch):
    root = tmp_path / "gen"
    now = _generated(root)
    started: list[str] = []
    monkeypatch.setattr(scanning, "keep_index_fresh", lambda where: started.append(where))

    async def run():
        app = make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())
        async with app.run_test(size=SIZE) as pilot:
            await scanned(pilot, app)
            await until(pilot, lambda: started)
            await pilot.press("Q")
        return app

    app = asyncio.run(run())
    assert started == [app.root]  # no index yet: one query left behind to build it
    _indexed(root)
    started.clear()
    app2 = make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())

    async def again():
        async with app2.run_test(size=SIZE) as pilot:
            await scanned(pilot, app2)
            await pilot.pause(0.1)
            await pilot.press("Q")

    asyncio.run(again())
    assert started == []  # served by the index: nothing to refresh


def test_the_keeper_is_a_query_in_a_process_of_its_own(tmp_path, monkeypatch):
    import subprocess

    calls = []

    class Child:
        def __init__(self, argv, **kw):
            calls.append((argv, kw))

        def wait(self):
            return 0

    monkeypatch.setattr(subprocess, "Popen", Child)
    scanning.keep_index_fresh(str(tmp_path))
    (argv, kw), = calls
    assert argv[1:] == ["-m", "letterbox_tui", "--root", str(tmp_path), "query", "id=-"]
    assert kw["start_new_session"] and kw["stdout"] == subprocess.DEVNULL


@pytest.mark.parametrize("from_index", [True, False])
def test_the_most_urgent_row_is_on_the_screen_when_the_list_opens(tmp_path, settled, monkeypatch, from_index):
    from tests.conftest import Box

    root = tmp_path / "gen"
    now = _generated(root)
    # the most overdue task, owed by the last seat: far below the first screen
    Box(root).seat("zz").letter("2020-01-01T000000-zz-request-oldest-aaaa0001", frm="zz", to="zz", type="request",
                                requires_ack="true", deadline="2020-01-02T00:00:00Z", sent="2020-01-01T00:00:00Z")
    if from_index:
        _indexed(root)
    held = hold_scans(monkeypatch)  # the whole letterbox waits while the preview is looked at
    seen: list = []

    def _on_screen(app) -> tuple:
        lst = app.letter_list
        top, height = lst.scroll_offset.y, lst.scrollable_content_region.height
        return lst.cursor, top <= lst.cursor < top + height

    async def run():
        app = make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())
        async with app.run_test(size=SIZE) as pilot:
            if from_index:
                await until(pilot, lambda: app.preview is not None)
                await pilot.pause()
                seen.append(_on_screen(app))
            held.set()
            await scanned(pilot, app)
            assert app.letter_list.cursor > app.letter_list.scrollable_content_region.height  # below the first screen
            seen.append(_on_screen(app))
            await pilot.press("Q")

    asyncio.run(run())
    assert len(seen) == (2 if from_index else 1)
    assert all(on for _, on in seen), seen


def _preview_threads(monkeypatch) -> tuple[list, list]:
    """The threads the owed preview's rows are read in (``index_owed._owed_rows``) and its
    model built in (``AppModel.from_preview``), as they happen."""
    import threading

    from letterbox_tui.core.speed import index_owed

    read_in, real_rows = [], index_owed._owed_rows
    monkeypatch.setattr(index_owed, "_owed_rows", lambda *a: (read_in.append(threading.current_thread()), real_rows(*a))[1])
    built_in, real_build = [], AppModel.from_preview.__func__
    monkeypatch.setattr(AppModel, "from_preview", classmethod(
        lambda cls, *a: (built_in.append(threading.current_thread()), real_build(cls, *a))[1]))
    return read_in, built_in


def test_the_command_line_starts_owed_before_textual_and_the_app_takes_it(tmp_path, settled, monkeypatch):
    import os

    monkeypatch.setattr(early, "_pending", {})  # what another test's app left, if any
    root = tmp_path / "gen"
    _generated(root)
    _indexed(root)
    assert early.take(os.path.realpath(root), load_settings(root)) is None  # nothing begun
    early.start(str(root), view="disputes")  # another opening view: nothing begun
    assert early._pending == {}
    import threading

    read_in, built_in = _preview_threads(monkeypatch)
    early.start(str(root))
    # the owed letters' rows were read and built in the caller, before it imports Textual
    # (SQLite gives up the interpreter at every row: in a thread beside the imports each row
    # waited its turn; built there, the two took turns and the first frame came first)
    assert read_in == [threading.current_thread()] and built_in == [threading.current_thread()]
    future = early._pending[os.path.realpath(root)][0]
    assert future.done() and future.result() is not None  # made before Textual would be imported
    shown: list = []
    first = scanning.ScanningMixin.on_owed_shown
    monkeypatch.setattr(scanning.ScanningMixin, "on_owed_shown",
                        lambda app, message: (shown.append((message.model, app.preview is message.model)),
                                              first(app, message)))
    painted: list = []

    async def run():
        app = make_app(root, poll_interval=None, user_settings=UserSettings())  # the wall clock, as run_app
        assert app._preview_future is future and early._pending == {}  # taken, not begun again
        display = app._display

        def counted(screen, renderable):  # the first frame the app draws
            if renderable is not None and not painted:
                painted.append((app.preview, len(app.letter_list.rows)))
            display(screen, renderable)

        app._display = counted
        async with app.run_test(size=SIZE) as pilot:
            await scanned(pilot, app)
            await pilot.press("Q")

    asyncio.run(run())
    # made before the app mounted, it is in the app's first frame (the scan worker's message,
    # which starts after that frame, then only says so)
    assert painted[0][0] is future.result() and painted[0][1] > 0
    assert len(shown) == 1 and shown[0] == (future.result(), True) and shown[0][0].partial


def test_a_bigger_letterbox_s_owed_rows_are_read_in_the_preview_s_thread(tmp_path, settled, monkeypatch):
    import os
    import threading

    monkeypatch.setattr(early, "_pending", {})
    monkeypatch.setattr(early, "READ_HERE_LETTERS", 10)  # "bigger": more letters than this
    root = tmp_path / "gen"
    _generated(root)
    _indexed(root)
    read_in, built_in = _preview_threads(monkeypatch)
    early.start(str(root))
    made = early._pending[os.path.realpath(root)][0].result(timeout=60)
    assert made is not None and made.partial
    assert len(read_in) == 1 and read_in[0] is not threading.current_thread()  # the app is drawn meanwhile
    assert built_in == read_in  # (and built there)


def test_a_preview_made_after_the_app_mounts_is_shown_when_made_not_when_the_worker_takes_it(
        tmp_path, settled, monkeypatch):
    import os
    import threading
    from concurrent.futures import Future

    monkeypatch.setattr(early, "_pending", {})
    root = tmp_path / "gen"
    now = _generated(root)
    _indexed(root)
    settings = load_settings(root)
    future: Future = Future()
    monkeypatch.setattr(early, "take", lambda where, s: future)  # as the command line's, still being made
    held, take = threading.Event(), scanning.ScanningMixin._take_preview
    monkeypatch.setattr(scanning.ScanningMixin, "_take_preview", lambda app: (held.wait(10), take(app))[1])

    async def run():
        app = make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.preview is None and app.letter_list.rows == ()
            made = early.owed_preview_model(os.path.realpath(root), settings, now)
            future.set_result(made)  # (in this thread: the callback posts to the app)
            await until(pilot, lambda: app.preview is made)  # the scan worker still waits to take it
            assert list(app.letter_list.rows) == owed_rows(made, BY_SEAT, set())
            assert app.letter_list.current.key == most_urgent_key(made)
            held.set()
            await scanned(pilot, app)
            assert app.preview is None and app.model is not None
            await pilot.press("Q")

    asyncio.run(run())


def test_keys_while_owed_is_from_the_index_wait_for_the_whole_letterbox(tmp_path, settled, monkeypatch):
    root = tmp_path / "gen"
    now = _generated(root)
    _indexed(root)
    held = hold_scans(monkeypatch)

    async def run():
        app = make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.preview is not None)
            await pilot.press("o")  # the other order: from the same stored answers
            await pilot.pause()
            overdue = _rows(app.preview, app.letter_list.rows)
            await pilot.press("c")  # writing needs the whole letterbox: kept until it is read
            await pilot.pause()
            assert len(app.screen_stack) == 1
            await pilot.press("2")  # another view: pending until the whole letterbox is in
            await pilot.pause()
            assert app.letter_list.rows == [] and "Computing" in app.letter_list.empty_text.plain
            held.set()
            await scanned(pilot, app)
            assert app.mailbox_id == "view:disputes"
            assert list(app.letter_list.rows) == list(app.model.rows("view:disputes"))
            await until(pilot, lambda: isinstance(app.screen, WriteScreen))  # the compose asked for
            await pilot.press("escape")  # unchanged: closes without asking
            await until(pilot, lambda: len(app.screen_stack) == 1)
            await pilot.press("1")
            await pilot.pause()
            assert _rows(app.model, app.letter_list.rows) == overdue  # the order kept, the same rows
            await pilot.press("Q")

    asyncio.run(run())

"""The app's start, honestly (#26 item 3) and on the one entry (#22 item 3): the first frame
comes before the answers and says the letterbox is being read; the owed rows follow when
``store.open_answers`` returns; a letter another process writes while the app is open
appears after the file event; and the app asks the store for nothing but ``open_answers``."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from letterbox_tui.app import scanning
from letterbox_tui.app.model import BUILDERS
from tests.app.helpers import SIZE, app_for, hold_scans, letters, list_text, scanned, screen_text, until
from tests.app.test_owed import BUDGET, DOCS, NOTES, PLAN
from tests.app.test_views import static_text

APP = Path(scanning.__file__).resolve().parent


async def test_the_first_frame_says_the_letterbox_is_being_read_then_owed_fills(letterbox, monkeypatch):
    held = hold_scans(monkeypatch)
    app = app_for(letterbox)
    frames: list[tuple] = []
    display = app._display

    def counted(screen, renderable):  # what each frame the app draws shows, until the answers
        display(screen, renderable)
        if renderable is not None and app.model is None and len(frames) < 5:
            frames.append((screen_text(app), app.scanning))

    app._display = counted
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: frames)
        first, reading = frames[0]
        top = first.splitlines()[0]
        assert "letterbox-tui" in top and os.path.basename(letterbox.root) in top  # the banner line
        assert "⟳ reading the letterbox" in top
        assert "Reading the letterbox…" in first and reading
        assert "owes" not in first
        await pilot.pause()
        assert app.model is None and "Reading the letterbox…" in screen_text(app)  # still reading: held
        held.set()
        await scanned(pilot, app)
        shown = screen_text(app)
        assert "Reading the letterbox" not in shown and "builder owes" in shown
        assert {r.letter.id for r in letters(app).rows if r.letter is not None} == {PLAN, DOCS, NOTES, BUDGET}
        # nothing not yet looked at is built: no other view, and the selected letter's
        # Thread and Chain tabs (the first thread asked about maps every letter's thread)
        assert [vid for vid in BUILDERS if app.model.built(vid)] == ["view:owed"]
        pane = app.letter_pane
        assert pane.letter is not None and pane.tabs.active == "tab-body"
        assert app.model._threads == {} and pane.thread_view.lines == []
        assert static_text(app, "#letter-chain").strip() == ""
        app.action_show_tab("thread")
        await until(pilot, lambda: any(ln.letter is pane.letter for ln in pane.thread_view.lines))
        assert len(app.model._threads) == 1
        app.action_show_tab("chain")
        await until(pilot, lambda: static_text(app, "#letter-chain").strip() != "")


async def test_a_letter_written_by_another_process_appears_after_the_file_event(letterbox, monkeypatch):
    from letterbox_tui.app.app import LetterboxApp

    changed: list[int] = []
    real = LetterboxApp.on_files_changed
    monkeypatch.setattr(LetterboxApp, "on_files_changed",
                        lambda app, message: (changed.append(message.count), real(app, message))[1])
    app = app_for(letterbox, poll_interval=3600)  # the poll never runs: only the watcher can tell
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: app.watching)
        scans = app.scan_count
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(APP.parents[1]), os.environ.get("PYTHONPATH", "")]))
        sent = subprocess.run(
            [sys.executable, "-m", "letterbox_tui", "--root", str(letterbox.root), "send", "--as", "planner",
             "--to", "builder", "--type", "request", "--slug", "from-elsewhere", "--ack",
             "--deadline", "2026-11-30T12:00:00Z", "--subject", "Written elsewhere"],
            input="Please look.\n", capture_output=True, text=True, timeout=60, env=env)
        assert sent.returncode == 0, sent.stderr
        new_id = sent.stdout.strip()
        await until(pilot, lambda: any(r.letter is not None and r.letter.id == new_id for r in letters(app).rows),
                    timeout=30)
        assert changed and app.scan_count > scans  # read again after the file event, not a poll
        assert any("Written elsewhere" in row for row in list_text(app))


def _imports(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """Every import in ``path`` as (module, names), relative ones made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(APP.parents[0]).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([module] if module else []))
            out.append((module, tuple(a.name for a in node.names)))
    return out


def test_the_app_reads_answers_only_through_open_answers():
    gone = ("letterbox_tui.core.speed", "letterbox_tui.core.collector", "letterbox_tui.core.taking",
            "letterbox_tui.app.early", "letterbox_tui.cli")
    files = sorted(APP.rglob("*.py"))
    assert len(files) > 20 and (APP / "scanning.py") in files
    bad, store = [], []
    for path in files:
        for module, names in _imports(path):
            if module.startswith(gone) or (module == "letterbox_tui.app" and "early" in names) or module == "gc":
                bad.append(f"{path.name}: {module} {names}")
            if module.startswith("letterbox_tui.store"):
                store.append((path.name, module, names))
    assert bad == []
    assert store == [("scanning.py", "letterbox_tui.store", ("open_answers",))]
    assert not (APP / "early.py").exists() and not (APP / "outside.py").exists()


async def test_a_view_opened_for_the_first_time_is_built_in_a_worker_and_says_so(letterbox, monkeypatch):
    import threading

    from letterbox_tui.app import model as model_mod

    release, build = threading.Event(), model_mod.BUILDERS["view:disputes"]
    monkeypatch.setitem(model_mod.BUILDERS, "view:disputes", lambda m: (release.wait(10), build(m))[1])
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert not app.model.built("view:disputes")
        await pilot.press("2")
        await pilot.pause()
        assert "Building this view…" in screen_text(app) and app.views_building == {"view:disputes"}
        assert app.list_title.render().plain.strip() == "Open disputes"  # no count of rows not built
        assert "0 rows" not in app.status_line.render().plain
        await pilot.press("j", "1")  # the app keeps answering meanwhile
        await pilot.pause()
        assert app.mailbox_id == "view:owed" and letters(app).rows
        await pilot.press("2")
        release.set()
        await scanned(pilot, app)
        assert "Plan and budget disagree" in list_text(app)[0] and app.model.counts["view:disputes"] == 1


async def test_a_damaged_store_is_one_notification_and_the_answers_are_the_letters(letterbox):
    from letterbox_tui.store import open_answers
    from letterbox_tui.store.db import store_path
    from tests.app.letterboxes import NOW

    open_answers(letterbox.root, NOW), open_answers(letterbox.root, NOW)  # the store, made and used
    path = store_path(os.path.realpath(letterbox.root))
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        said = [str(n.message) for n in app._notifications if n.title == "Store"]
        assert len(said) == 1 and "store" in said[0], said
        assert {r.letter.id for r in letters(app).rows if r.letter is not None} == {PLAN, DOCS, NOTES, BUDGET}


async def test_an_unchanged_letterbox_opens_on_the_stored_answers(letterbox):
    from letterbox_tui.store import open_answers
    from letterbox_tui.store.stored import StoredAnswers
    from tests.app.letterboxes import NOW

    open_answers(letterbox.root, NOW)  # the store, made
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert isinstance(app.model.res, StoredAnswers)
        assert not [n for n in app._notifications if n.title == "Store"]
        assert {r.letter.id for r in letters(app).rows if r.letter is not None} == {PLAN, DOCS, NOTES, BUDGET}



async def test_the_read_starts_at_the_first_frame_and_the_letter_tabs_follow_the_list(letterbox, monkeypatch):
    """Neither the first frame nor the read needs the letter's tabs: the letterbox is read
    from right after the first frame (the UI thread mounting widgets meanwhile only slowed
    the worker), and the tabs are mounted once what it found is in the list (after the
    refresh that draws it, as Textual schedules one), showing the selected letter."""
    app = app_for(letterbox)
    started: list[bool] = []
    begin = app.start_scan
    monkeypatch.setattr(app, "start_scan", lambda: started.append(app.letter_pane.ready) or begin())
    frames: list[tuple[bool, bool]] = []  # (the list has rows, the pane has its tabs), each frame
    display = app._display

    def counted(screen, renderable):
        display(screen, renderable)
        if renderable is not None:
            frames.append((bool(app.letter_list.rows), bool(app.letter_pane.children)))

    app._display = counted
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert frames[0] == (False, False) and started == [False]  # read with no tabs up
        pane = app.letter_pane
        assert pane.ready and pane.tabs.active == "tab-body"
        shown = app.letter_list.current.letter
        assert (shown.subject or shown.id) in pane.head.render().plain
        await pilot.press("right_square_bracket")
        assert pane.tabs.active == "tab-thread"


async def test_keys_before_the_letter_tabs_are_mounted_do_nothing_and_fail_nothing(letterbox, monkeypatch):
    """While the letterbox is read, and once its list is drawn before the tabs are
    mounted: ``]``, ``[``, ``M``, Enter and ``?`` on the list have nothing to turn or read,
    and fail nothing; what the pane was asked to show meanwhile is shown once they are up."""
    from letterbox_tui.app.widgets.letter_pane import LetterPane

    held = hold_scans(monkeypatch)
    build = LetterPane.build

    async def not_yet(self):
        return None

    monkeypatch.setattr(LetterPane, "build", not_yet)
    app = app_for(letterbox)

    async def keys() -> None:
        app.action_tab(1)
        app.action_show_tab("thread")
        for key in ("right_square_bracket", "left_square_bracket", "M", "enter", "question_mark"):
            await pilot.press(key)
            await pilot.pause()
        await pilot.press("escape")
        assert app.is_running and not app.letter_pane.ready and not app.letter_pane.children
        assert app.focused is app.letter_list

    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await keys()  # reading
        assert app.model is None and not app.scan_count
        held.set()
        await until(pilot, lambda: app.scan_count and letters(app).rows and app.bars_mounted)
        await keys()  # the list drawn, the tabs not yet
        await build(app.letter_pane)  # (what the app does once the list is drawn)
        assert app.letter_pane.ready
        shown = app.letter_list.current.letter
        assert (shown.subject or shown.id) in app.letter_pane.head.render().plain
        await pilot.press("enter")  # now Enter reads
        assert app.letter_pane.tabs.active == "tab-body" and app.focused is app.letter_pane.query_one("#body-scroll")

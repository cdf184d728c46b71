"""Driving the app in tests: build it at the fixed clock and wait for its scan."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from letterbox_tui.app import make_app
from letterbox_tui.app.widgets.letter_list import LetterList

from tests.app.letterboxes import NOW

SIZE = (160, 48)


def home_root(name: str) -> Path:
    """Where a snapshot's letterbox lies: ``~/NAME/shared`` in the test's own home (the
    conftest gives each test one), so its screens show the same path in every test and
    every run, and no two tests (or two runs at once) share the letterbox."""
    return Path(os.path.expanduser("~")) / name / "shared"


def app_for(box, **kw):
    kw.setdefault("now", NOW)
    kw.setdefault("poll_interval", None)
    return make_app(box.root, **kw)


def hold_scans(monkeypatch, timeout: float = 10.0):
    """Make the app's reads of the letterbox (``store.open_answers``) wait until the returned event is set (or ``timeout``), so a test can act while the
    first read is still running."""
    import threading

    from letterbox_tui import store

    release, answers = threading.Event(), store.open_answers

    def held(*a, **kw):
        release.wait(timeout)
        return answers(*a, **kw)

    monkeypatch.setattr(store, "open_answers", held)
    return release


async def scanned(pilot, app, count: int = 1, timeout: float = 10.0) -> None:
    """Wait until the app has finished ``count`` scans and processed the result, no view
    is being built, and the letter's tabs, mounted once the first answers are shown, are up."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause()
        if app.scan_count >= count and not app.scanning and not app.views_building and app.letter_pane.ready:
            await pilot.pause()
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"scan did not finish (scans: {app.scan_count}, error: {app.scan_error})")


async def view_built(pilot, app, timeout: float = 10.0) -> None:
    """Wait until the view just opened is built and shown (a built-in view opened for the
    first time is built in a worker)."""
    await until(pilot, lambda: not app.views_building and not app._showing_pending, timeout)
    await pilot.pause()


async def until(pilot, predicate, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause()
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


async def body_searched(pilot, app, needle: str):
    """``F`` on the view, ``needle`` searched; the search screen once its read has ended."""
    from letterbox_tui.app.screens.body_search import BodySearchScreen

    await pilot.press("F")
    await until(pilot, lambda: isinstance(app.screen, BodySearchScreen))
    screen = app.screen
    assert screen.query_one("#bs-input").has_focus
    await pilot.press(*needle, "enter")
    await until(pilot, lambda: not screen.running and "matching" in screen.query_one("#bs-status").render().plain)
    return screen


#: the pane's worker groups that read a file for what is shown (body, hash, offending line)
READING_GROUPS = ("body", "provenance", "finding")


async def reads_done(pilot, app, timeout: float = 10.0) -> None:
    """Wait until no worker reading a file for the letter pane is pending or running, and
    what they posted has been handled (under load a snapshot could otherwise be taken
    before the offending line of a problem arrived)."""
    from textual.worker import WorkerState

    busy = (WorkerState.PENDING, WorkerState.RUNNING)
    await until(pilot, lambda: not any(w.group in READING_GROUPS and w.state in busy for w in app.workers),
                timeout)
    await pilot.pause()
    await pilot.pause()


def user_config(text: str):
    """Write the user's own config.toml (in the test's XDG config home) and return its path."""
    from letterbox_tui.core.settings import user_config_path

    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def letters(app) -> LetterList:
    return app.query_one("#letters", LetterList)


def list_text(app) -> list[str]:
    """The list's rows as plain text, as the list renders them."""
    lst = letters(app)
    out = []
    for row in lst.rows:
        content = row.heading if row.heading is not None else lst.describe(row, 130)
        out.append(content.plain)
    return out


def screen_text(app) -> str:
    """Every character currently on screen (the compositor's lines)."""
    lines = app.screen._compositor.render_update(full=True)
    from rich.console import Console

    console = Console(width=SIZE[0], height=SIZE[1], record=True, force_terminal=False, color_system=None, file=open("/dev/null", "w"))
    console.print(lines)
    return console.export_text()


async def body_of(pilot, app) -> str:
    """The shown letter's body, once its worker has read it."""
    from letterbox_tui.app.widgets.letter_pane import LetterPane

    pane = app.query_one("#letter-pane", LetterPane)
    await until(pilot, lambda: pane.body_key is not None and pane.body_key == pane.shown_key)
    await pilot.pause()
    return pane.body_text


def thread_text(app) -> str:
    return app.query_one("#letter-thread").text


async def sent_with(pilot, app, key: str, fill=None):
    """``key`` opens a writing form; ``fill(screen)`` (if given) fills it; once Send is on,
    ctrl+s sends it. Returns the form, once it has closed (its ``written`` id)."""
    from letterbox_tui.app.screens.write import WriteScreen

    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, WriteScreen))
    screen = app.screen
    if fill is not None:
        fill(screen)
    await until(pilot, lambda: not screen.query_one("#w-send").disabled)
    await pilot.press("ctrl+s")
    await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
    return screen

"""Render SVG screenshots of the app's main views from the demo letterbox.

    python -m letterbox_tui.app.screenshots [--out screenshots/]

Deterministic: the demo is written with its own clock and seed into a fixed folder, the
app runs headless at 160x48 (80x24 for the shots so named) with the same fixed clock, and
the user's own settings and themes are not read.

The demo as written holds an unsupported entry, which keeps every open answer unknown: the
``owed-as-written`` shots show that; the others show the demo after the step its summary
suggests (the archive removed), where every case settles.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from datetime import timedelta
from pathlib import Path

SIZE = (160, 48)

#: file name -> (view, theme, what to do before the shot)
Shot = tuple[str, str, str, str]

SHOTS: tuple[Shot, ...] = (
    ("owed.svg", "owed", "letterbox-dark", ""),
    ("disputes.svg", "disputes", "letterbox-dark", ""),
    ("truth.svg", "truth", "letterbox-dark", ""),
    ("chain-fork.svg", "truth", "letterbox-dark", "fork-chain"),
    ("thread.svg", "all", "letterbox-dark", "thread"),
    ("provenance.svg", "owed", "letterbox-dark", "provenance"),
    ("problems.svg", "problems", "letterbox-dark", ""),
    ("query.svg", "all", "letterbox-dark", "query"),
    ("dispute-screen.svg", "truth", "letterbox-dark", "dispute"),
    ("owed-light.svg", "owed", "letterbox-light", ""),
    ("owed-high-contrast.svg", "owed", "letterbox-high-contrast", ""),
    ("owed-80x24.svg", "owed", "letterbox-dark", "80x24"),
    ("reading-80x24.svg", "owed", "letterbox-dark", "80x24 read"),
    ("owed-by-urgency.svg", "owed", "letterbox-dark", "by urgency"),
    # the demo as written: its archive folder makes the scope incomplete (the banner)
    ("owed-as-written.svg", "owed", "letterbox-dark", "as written"),
    ("owed-as-written-80x24.svg", "owed", "letterbox-dark", "80x24 as written"),
    # the forms (compose, reply, chase), the help, the command palette and the git banner,
    # at both sizes
    ("compose.svg", "owed", "letterbox-dark", "compose"),
    ("compose-80x24.svg", "owed", "letterbox-dark", "80x24 compose"),
    ("reply.svg", "owed", "letterbox-dark", "reply"),
    ("reply-80x24.svg", "owed", "letterbox-dark", "80x24 reply"),
    ("chase.svg", "owed", "letterbox-dark", "chase"),
    ("chase-80x24.svg", "owed", "letterbox-dark", "80x24 chase"),
    ("help.svg", "owed", "letterbox-dark", "help"),
    ("help-80x24.svg", "owed", "letterbox-dark", "80x24 help"),
    ("palette.svg", "owed", "letterbox-dark", "palette"),
    ("palette-80x24.svg", "owed", "letterbox-dark", "80x24 palette"),
    ("git-banner.svg", "owed", "letterbox-dark", "git"),
    ("git-banner-80x24.svg", "owed", "letterbox-dark", "80x24 git"),
)


def size_of(step: str) -> tuple[int, int]:
    """The terminal a shot is taken in: 80x24 for the steps so named, else ``SIZE``."""
    return (80, 24) if step.startswith("80x24") else SIZE


def _action(step: str) -> str:
    return step.removeprefix("80x24").strip()


def demo_root() -> Path:
    return Path(tempfile.gettempdir()) / "letterbox-tui-screenshots" / "demo-letterbox"


def write_demo_letterbox() -> Path:
    """The demo with its archive removed (the shots of the demo as written use
    ``as_written``)."""
    from letterbox_tui.core.demo import DEMO_NOW, remove_archive, write_demo

    root = demo_root()
    if root.parent.exists():
        shutil.rmtree(root.parent)
    root.parent.mkdir(parents=True)
    write_demo(root, now=DEMO_NOW)
    shutil.copytree(root, as_written(root))
    remove_archive(root)
    return root


def as_written(demo: Path) -> Path:
    """Where ``write_demo_letterbox`` keeps the demo as written, beside ``demo``."""
    return demo.parent / "as-written" / demo.name


def shot_root(step: str, demo: Path, in_git: Path | None) -> Path:
    """The letterbox the shot ``step`` is taken on."""
    action = _action(step)
    if action == "git":
        assert in_git is not None
        return in_git
    return as_written(demo) if action == "as written" else demo


def write_git_demo(demo: Path) -> Path:
    """The demo as a copy kept in git whose upstream was never fetched (the banner says
    so), committed at a fixed time by a fixed author (the same commit every run)."""
    import subprocess

    from letterbox_tui.core.demo import DEMO_NOW

    root = demo.parent / "git" / demo.name
    if root.parent.exists():
        shutil.rmtree(root.parent)
    shutil.copytree(demo, root)
    when = DEMO_NOW.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid", "GIT_AUTHOR_DATE": when,
           "GIT_COMMITTER_NAME": "demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid", "GIT_COMMITTER_DATE": when}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "the demo letterbox"],
                 ["remote", "add", "origin", str(root.parent / "origin.git")],
                 ["config", "branch.main.remote", "origin"], ["config", "branch.main.merge", "refs/heads/main"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


async def _wait_scanned(app, pilot) -> None:
    for _ in range(500):
        await pilot.pause()
        if app.scan_count and not app.scanning and not app.views_building:
            await pilot.pause()
            return
        await asyncio.sleep(0.02)
    raise RuntimeError(f"scan did not finish: {app.scan_error}")


async def _until(pilot, predicate, what: str) -> None:
    for _ in range(500):
        await pilot.pause()
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise RuntimeError(f"not reached: {what}")


async def prepare(app, pilot, step: str) -> None:
    """Bring the app to what the shot ``step`` shows (the snapshot tests call it too)."""
    from textual.command import CommandPalette
    from textual.widgets import Input

    lst = app.query_one("#letters")
    step = _action(step)
    if step in ("compose", "reply"):
        from .screens.write import WriteScreen

        await pilot.press("c" if step == "compose" else "r")
        await _until(pilot, lambda: isinstance(app.screen, WriteScreen), step)
    elif step == "chase":
        from .screens.chase import ChaseScreen

        await pilot.press("C")
        await _until(pilot, lambda: isinstance(app.screen, ChaseScreen), step)
    elif step == "help":
        from .screens.help import HelpScreen

        await pilot.press("question_mark")
        await _until(pilot, lambda: isinstance(app.screen, HelpScreen), step)
    elif step == "palette":
        # searched for "view": with no search the providers' lists arrive in either order
        await pilot.press("colon")
        await _until(pilot, lambda: isinstance(app.screen, CommandPalette), step)
        app.screen.query_one(Input).cursor_blink = False  # (a shot is the same every run)
        await pilot.press(*"view")
        await _until(pilot, lambda: app.screen.query_one("CommandList").option_count >= 5, step)
        seen = -1
        while seen != app.screen.query_one("CommandList").option_count:  # every command listed
            seen = app.screen.query_one("CommandList").option_count
            await pilot.pause(0.1)
    elif step == "git":
        await _until(pilot, lambda: app.banner.display, "the git banner")
    elif step == "as written":
        await _until(pilot, lambda: app.banner.display, "the incomplete scope's banner")
    elif step == "fork-chain":
        forks = [i for i, row in enumerate(lst.rows) if row.note.startswith("? fork")]
        if not forks:
            raise RuntimeError("the demo letterbox shows no unsettled fork in Current truth")
        lst.cursor = forks[0]
        app.action_show_tab("chain")
    elif step == "thread":
        res = app.model.res

        def replies_in_thread(row) -> int:
            members = res.thread(row.letter.thread_id)
            ids = {m.id for m in members}
            return sum(1 for m in members if m.re in ids) * 100 + len(members)

        best = max((r for r in lst.rows if r.letter is not None), key=replies_in_thread)
        lst.cursor = lst.index_of(best.key)
        lst.scroll_to_cursor(center=True)
        app.action_show_tab("thread")
    elif step == "provenance":
        app.action_show_tab("provenance")
    elif step == "query":
        await pilot.press("backslash")
        app.query_one("#query", Input).value = "type=request answered=no"
        await pilot.press("enter")
        await pilot.press("backslash")
        app.query_one("#query", Input).value = "late=maybe"
        await pilot.press("enter")
    elif step == "read":
        await pilot.press("enter")
    elif step == "by urgency":
        await pilot.press("o")
    elif step == "dispute":
        forks = [i for i, row in enumerate(lst.rows) if row.note.startswith("? fork")][:2]
        if len(forks) < 2:
            raise RuntimeError("the demo letterbox shows no two-branch fork to dispute")
        for i in forks:
            lst.cursor = i
            app.action_mark()
        app.clear_notifications()
        await app.action_dispute()
    await pilot.pause()
    await pilot.pause(0.2)


async def render_all(out: Path, shots: tuple[Shot, ...] = SHOTS) -> list[Path]:
    from letterbox_tui.app import make_app
    from letterbox_tui.app.themes import shipped_themes_dir
    from letterbox_tui.core.demo import DEMO_NOW
    from letterbox_tui.core.settings import UserSettings

    root = write_demo_letterbox()
    in_git = write_git_demo(root) if any(_action(s[3]) == "git" for s in shots) else None
    out.mkdir(parents=True, exist_ok=True)
    written = []
    now = DEMO_NOW + timedelta(hours=3)
    for name, view, theme, step in shots:
        app = make_app(shot_root(step, root, in_git), view=view, theme=theme, now=now, poll_interval=None,
                       theme_dirs=[shipped_themes_dir()], user_settings=UserSettings())
        async with app.run_test(size=size_of(step)) as pilot:
            await _wait_scanned(app, pilot)
            await prepare(app, pilot, step)
            pane = app.letter_pane
            for _ in range(200):  # the body is read in a worker
                if pane.letter is None or pane.body_key == pane.shown_key:
                    break
                await asyncio.sleep(0.02)
            await pilot.pause()
            app.save_screenshot(filename=name, path=str(out))
        written.append(out / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m letterbox_tui.app.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="screenshots", help="folder for the SVG files (default: screenshots/)")
    args = parser.parse_args(argv)
    os.environ.setdefault("LETTERBOX_TUI_NO_CACHE", "1")
    os.environ["TZ"] = "UTC"  # times are shown in local time: the same shots in every zone
    time.tzset()
    # never the user's own keymap, theme or state (new-letter marks, drafts)
    home = Path(tempfile.mkdtemp(prefix="letterbox-tui-shots-"))
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    os.environ["XDG_STATE_HOME"] = str(home / "state")
    for path in asyncio.run(render_all(Path(args.out))):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

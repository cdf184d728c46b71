"""Render SVG screenshots of the app's main views from the demo letterbox.

    python -m letterbox_tui.app.screenshots [--out screenshots/]

Deterministic: the demo is written with its own clock and seed into a fixed folder, the
app runs headless at 160x48 (80x24 for the shots so named) with the same fixed clock, and
the user's own settings and themes are not read.
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
)


def demo_root() -> Path:
    return Path(tempfile.gettempdir()) / "letterbox-tui-screenshots" / "demo-letterbox"


def write_demo_letterbox() -> Path:
    from letterbox_tui.core.demo import DEMO_NOW, write_demo

    root = demo_root()
    if root.parent.exists():
        shutil.rmtree(root.parent)
    root.parent.mkdir(parents=True)
    write_demo(root, now=DEMO_NOW)
    return root


async def _wait_scanned(app, pilot) -> None:
    for _ in range(500):
        await pilot.pause()
        if app.scan_count and not app.scanning and not app.views_building:
            await pilot.pause()
            return
        await asyncio.sleep(0.02)
    raise RuntimeError(f"scan did not finish: {app.scan_error}")


async def _prepare(app, pilot, step: str) -> None:
    from textual.widgets import Input

    lst = app.query_one("#letters")
    if step == "fork-chain":
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
    elif step == "80x24 read":
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
        app.action_dispute()
    await pilot.pause()
    await pilot.pause(0.2)


async def render_all(out: Path, shots: tuple[Shot, ...] = SHOTS) -> list[Path]:
    from letterbox_tui.app import make_app
    from letterbox_tui.app.themes import shipped_themes_dir
    from letterbox_tui.core.demo import DEMO_NOW
    from letterbox_tui.core.settings import UserSettings

    root = write_demo_letterbox()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    now = DEMO_NOW + timedelta(hours=3)
    for name, view, theme, step in shots:
        app = make_app(root, view=view, theme=theme, now=now, poll_interval=None,
                       theme_dirs=[shipped_themes_dir()], user_settings=UserSettings())
        async with app.run_test(size=(80, 24) if step.startswith("80x24") else SIZE) as pilot:
            await _wait_scanned(app, pilot)
            await _prepare(app, pilot, step)
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

"""Main-thread CPU per keystroke in the app's writing forms (a developer's tool, not a test).

Drives the app headless with Pilot on a letterbox (the demo by default, written to a
temporary directory at the demo's own clock), opens each form, puts the focus in a text
field and types into it one key at a time. For each key it takes the main thread's CPU
time (``time.thread_time``: the UI thread only; draft saves and the pointer index run in
workers) from posting the key until the app is idle again, so the change handler, the
checks, the layout and the repaint are all counted. An idle wait of the same length is
measured too and reported (the floor of the measure: timers that run anyway).

    PYTHONPATH=. python scripts/bench_forms.py                 # the demo
    PYTHONPATH=. python scripts/bench_forms.py --root /work/bench/b10k --keys 40

Reports the median and p99 in milliseconds per form, and the load average beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

#: each form, typed into its body (or its one field); ``form:field`` types into that field
FORMS = ("compose", "compose:subject", "reply", "supersede", "review", "progress")


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _settle(_pilot) -> None:
    """Until the app is idle again (the key handled and painted). Not ``pilot.pause``:
    that sends a callback through every widget of the screen, which on this form costs
    more main-thread CPU than the keystroke being measured."""
    from textual._wait import wait_for_idle

    await wait_for_idle(0.06, 2.0)


async def _bench(root: Path, forms: tuple[str, ...], keys: int, now, profile=None) -> dict[str, tuple[list[float], list[float]]]:
    from textual.widgets import Input, TextArea

    from letterbox_tui.app import make_app
    from letterbox_tui.core.settings import UserSettings

    app = make_app(root, now=now, poll_interval=None, user_settings=UserSettings())
    out: dict[str, tuple[list[float], list[float]]] = {}
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(2000):
            await pilot.pause()
            if app.scan_count and not app.scanning and not app.views_building:
                break
            await asyncio.sleep(0.02)
        for spec in forms:
            kind, _, name = spec.partition(":")
            getattr(app, f"action_{kind}")()
            for _ in range(200):
                await pilot.pause()
                if len(app.screen_stack) > 1 and app.screen.is_mounted:
                    break
            screen = app.screen
            if len(app.screen_stack) == 1:
                print(f"{kind}: the form did not open here (skipped)", file=sys.stderr)
                continue
            field = (screen.query(f"#w-{name or 'body'}") or screen.query(Input)).first()
            if isinstance(field, TextArea):
                field.move_cursor(field.document.end)
            if profile is not None:
                profile.enable()
            typed, idle = await _type(app, field, keys)
            if profile is not None:
                profile.disable()
            out[spec] = (typed, idle)
            screen.dismiss(None) if not hasattr(screen, "_leave") else screen._leave(None, discard=True)
            await _settle(pilot)
    return out


async def _type(app, field, keys: int) -> tuple[list[float], list[float]]:
    """Type ``keys`` characters into ``field``: main-thread CPU per key, and per idle wait."""
    from textual import events

    field.focus()
    await _settle(None)
    typed, idle = [], []
    text = "the quick brown fox jumps over the lazy dog "
    for i in range(keys):
        ch = text[i % len(text)]
        start = time.thread_time()
        app.post_message(events.Key("space" if ch == " " else ch, ch))
        await _settle(None)
        typed.append((time.thread_time() - start) * 1000)
        start = time.thread_time()
        await _settle(None)
        idle.append((time.thread_time() - start) * 1000)
    return typed, idle


async def _bare(keys: int) -> dict[str, tuple[list[float], list[float]]]:
    """The same keys typed into Textual's own TextArea and Input in an app of nothing else."""
    from textual.app import App
    from textual.widgets import Input, TextArea

    class Bare(App):
        def compose(self):
            yield Input(id="bare-input", compact=True)
            yield TextArea(id="bare-area", compact=True, soft_wrap=True)

    app = Bare()
    out = {}
    async with app.run_test(size=(160, 48)):
        for name in ("bare-area", "bare-input"):
            out[f"({name})"] = await _type(app, app.query_one(f"#{name}"), keys)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", help="a letterbox (read-only use; default: the demo in a temporary directory)")
    ap.add_argument("--keys", type=int, default=60, help="keys typed per form")
    ap.add_argument("--forms", default=",".join(FORMS), help="comma-separated: " + ", ".join(FORMS))
    ap.add_argument("--bare", action="store_true",
                    help="also type into a bare Textual TextArea and Input (the floor on this machine)")
    ap.add_argument("--profile", help="write a cProfile of the typing (only) to this file")
    args = ap.parse_args(argv)
    from letterbox_tui.core.demo import DEMO_NOW, write_demo

    with tempfile.TemporaryDirectory() as tmp:
        # the drafts a form keeps (and any derived files) go to private directories, never the user's
        os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "state")
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        if args.root:
            root, now = Path(args.root), None
        else:
            root, now = Path(tmp) / "demo", DEMO_NOW
            write_demo(root, now=DEMO_NOW)
        import cProfile

        profile = cProfile.Profile() if args.profile else None
        results = asyncio.run(_bench(root, tuple(args.forms.split(",")), args.keys, now, profile))
        if args.bare:
            results.update(asyncio.run(_bare(args.keys)))
        if profile is not None:
            profile.dump_stats(args.profile)
    print(f"letterbox: {args.root or 'demo'}; {args.keys} keys a form; load {os.getloadavg()[0]:.1f}")
    print(f"{'form':<16} {'median ms':>10} {'p99 ms':>8} {'idle median':>12}")
    for spec, (typed, idle) in results.items():
        print(f"{spec:<16} {statistics.median(typed):>10.2f} {_p(typed, 0.99):>8.2f} {statistics.median(idle):>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

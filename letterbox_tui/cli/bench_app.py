"""The app's measures for ``letterbox-tui bench``: start-up, view switching and scrolling.

Each run is a fresh process (``python -m letterbox_tui.cli.bench_app --child``), so what a
user waits for is counted: the interpreter, importing Textual and the app, the scan. The
app runs headless (``App.run_test``) at 160x48 on the bench letterbox, and the child
reports, in seconds:

- ``first_paint``: the first frame the app drew (compose and mount done);
- ``owed_view``: the first frame showing Owed & late's rows (the app's opening view; asked
  of each frame as it is composed: with the preview made before the app mounts, the
  first frame is that one);
- ``loaded``: the whole letterbox loaded and every built-in view computed;
- ``owed_view_cpu``, ``loaded_cpu``: the process's CPU seconds (every thread) at those two
  moments, from its start: steadier than wall time on a shared machine;
- ``switch``: from a view key (``1``..``5``) to the frame showing that view, per view,
  each view visited ``SWITCH_ROUNDS`` times (the first visit to a view may build rows);
- ``scroll``: from a movement key (``j``, ``k``, ``pagedown``, ``pageup``, ``G``, ``g``) in
  All letters (100,000 rows at 100k) to the frame after it;
- ``loading``: ``j`` in Owed & late while the rest of the letterbox is still loading (the
  scan worker competes with the UI thread for the interpreter), up to 20 keys.

Each of the first three is given from the process start (``*_from_start``) and from the
moment the app object was made (as the in-process measure before this module counted
it). Switching and scrolling are each given as the wall time to the frame and as the UI
thread's own CPU time (``time.thread_time``; the scan worker is another thread), with the
median and the worst over every key. A run's figures are each the median over the runs.

Run alone: ``python -m letterbox_tui.cli.bench_app --dir DIR [--repeat N]``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SIZE = (160, 48)
#: each view key is pressed this many times, in turn
SWITCH_ROUNDS = 3
VIEW_KEYS = (("2", "view:disputes"), ("3", "view:truth"), ("4", "view:all"), ("5", "view:problems"),
             ("1", "view:owed"))
SCROLL_KEYS = ("j",) * 10 + ("pagedown",) * 10 + ("k",) * 5 + ("pageup",) * 5 + ("G", "g")
#: how long a child may take before it is given up (seconds)
CHILD_LIMIT = 600.0


def measure_app(root: Path | str, repeat: int = 3) -> dict:
    """``repeat`` child runs on ``root``; every run kept, each figure the median."""
    runs = []
    for _ in range(repeat):
        got = _run_child(Path(root))
        if not got.get("measured"):
            return got
        runs.append(got)
    keys = ("first_paint", "owed_view", "loaded", "first_paint_from_start", "owed_view_from_start",
            "loaded_from_start", "switch_median", "switch_max", "switch_cpu_median", "switch_cpu_max",
            "scroll_median", "scroll_max", "scroll_cpu_median", "scroll_cpu_max", "imported_from_start",
            "owed_view_cpu", "loaded_cpu", "loading_median", "loading_max")
    out: dict = {"measured": True, "runs": runs, "complete": all(r["complete"] for r in runs),
                 "load_average": _load_average()}
    for k in keys:
        out[k] = statistics.median(r[k] for r in runs)
    out["fast_start"] = [r.get("fast_start") for r in runs]
    return out


def _load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _run_child(root: Path) -> dict:
    env = dict(os.environ, LETTERBOX_TUI_BENCH_T0=repr(time.time()))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "letterbox_tui.cli.bench_app", "--child", str(root)],
            capture_output=True, text=True, timeout=CHILD_LIMIT, env=env,
        )
    except subprocess.TimeoutExpired:
        return {"measured": False, "reason": f"the app did not finish within {CHILD_LIMIT:.0f} s"}
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"measured": False, "reason": f"the app run failed (exit {proc.returncode}): {tail[:200]}"}
    return json.loads(lines[-1])


# --- the child: one app run, timed ---------------------------------------------------

def _child(root: str) -> int:
    t0 = float(os.environ.get("LETTERBOX_TUI_BENCH_T0") or time.time())
    import asyncio

    from letterbox_tui.app import early

    early.start(root)  # as ``letterbox-tui`` does (cli.app_launch), before Textual is imported
    import letterbox_tui.app.app  # noqa: F401 - Textual and the app, imported as a start does
    from letterbox_tui.app import make_app

    imported = time.time()
    result = asyncio.run(_drive(make_app, root))
    result["imported_from_start"] = imported - t0
    made = result.pop("made")
    for k in ("first_paint", "owed_view", "loaded"):
        stamp = result.pop(k + "_at")
        result[k + "_from_start"] = stamp - t0
        result[k] = stamp - made
    print(json.dumps(result))
    return 0


async def _drive(make_app, root: str) -> dict:
    import asyncio

    made = time.time()
    app = make_app(root, poll_interval=None)
    frames: list[float] = []
    display = app._display

    cpus: list[float] = []
    #: per frame: whether it showed Owed & late's rows (asked as it is composed)
    with_owed: list[bool] = []

    def shown():  # the preview from the index (``app.scanning``), else the scan's model
        return getattr(app, "shown_model", app.model)

    def owed_shown() -> bool:
        return (shown() is not None and app.mailbox_id == "view:owed"
                and not getattr(app, "_showing_pending", False) and len(app.letter_list.rows) > 0)

    def counted(screen, renderable):  # every frame the screen composes (headless: not written out)
        display(screen, renderable)
        if renderable is not None:
            frames.append(time.time())
            cpus.append(time.process_time())  # the process's CPU so far (every thread, its start too)
            with_owed.append(owed_shown())

    app._display = counted
    out: dict = {"measured": True, "made": made, "size": list(SIZE)}
    async with app.run_test(size=SIZE) as pilot:
        limit = time.time() + CHILD_LIMIT - 30
        while not frames and time.time() < limit:
            await asyncio.sleep(0.002)
        out["first_paint_at"] = frames[0] if frames else time.time()
        while not any(with_owed) and time.time() < limit:  # the first frame that shows them
            await asyncio.sleep(0.002)
        at = with_owed.index(True) if any(with_owed) else -1
        out["owed_view_at"] = frames[at]
        out["owed_view_cpu"] = cpus[at]
        out["owed_rows"] = len(app.letter_list.rows)
        out["fast_start"] = bool(getattr(shown(), "partial", False))
        # moving in the opening view while the rest of the letterbox loads (the scan worker
        # holds the interpreter for long stretches): keys until it is loaded, at most 20
        early, early_cpu = [], []
        while app.scan_count < 1 and len(early) < 20:
            wall, cpu = await _timed(pilot, "j")
            early.append(wall)
            early_cpu.append(cpu)
            await asyncio.sleep(0.05)
        out["loading_keys"] = len(early)

        def loaded() -> bool:
            return app.scan_count >= 1 and not app.scanning and not app.views_pending

        while not loaded() and time.time() < limit:
            await asyncio.sleep(0.005)
        out["loaded_at"] = time.time()
        out["loaded_cpu"] = time.process_time()
        out["complete"] = loaded()
        await pilot.pause()
        await pilot.pause(0.3)  # the body worker of the selected row settles

        profile = _profiler()
        switch, switch_cpu = [], []
        for _ in range(SWITCH_ROUNDS):
            for key, vid in VIEW_KEYS:
                wall, cpu = await _timed(pilot, key)
                assert app.mailbox_id == vid, (app.mailbox_id, vid)
                switch.append(wall)
                switch_cpu.append(cpu)
                await pilot.pause(0.05)
        await pilot.press("4")  # All letters: the longest list
        await pilot.pause(0.1)
        out["all_rows"] = len(app.letter_list.rows)
        scroll, scroll_cpu = [], []
        for key in SCROLL_KEYS:
            wall, cpu = await _timed(pilot, key)
            scroll.append(wall)
            scroll_cpu.append(cpu)
            await pilot.pause(0.02)
        if profile is not None:
            profile.disable()
            profile.dump_stats(os.environ["LETTERBOX_TUI_BENCH_PROFILE"])
        for name, values in (("switch", switch), ("switch_cpu", switch_cpu), ("scroll", scroll),
                             ("scroll_cpu", scroll_cpu), ("loading", early or [0.0]),
                             ("loading_cpu", early_cpu or [0.0])):
            out[f"{name}_median"] = statistics.median(values)
            out[f"{name}_max"] = max(values)
        out["loading_each"] = [round(x, 4) for x in early]
        out["switch_each"] = [round(x, 4) for x in switch]
        out["scroll_each"] = [round(x, 4) for x in scroll]
        await pilot.press("Q")
    return out


def _profiler():
    """With ``LETTERBOX_TUI_BENCH_PROFILE=FILE``: the UI thread profiled while switching and
    scrolling (``cProfile`` sees only the thread it runs on), the stats written to FILE."""
    if not os.environ.get("LETTERBOX_TUI_BENCH_PROFILE"):
        return None
    import cProfile

    profile = cProfile.Profile()
    profile.enable()
    return profile


async def _timed(pilot, key: str) -> tuple[float, float]:
    """One key, up to the frame after it: wall seconds and the UI thread's CPU seconds.

    Not ``pilot.press``: it sleeps at least 40 ms waiting for the process to look idle.
    Here the key is posted as the driver posts a terminal's, the screen and its widgets
    process what it set off (twice: a handler may post more), then the screen composes
    the frame (what its refresh timer does at most 60 times a second)."""
    from textual import events

    app = pilot.app
    w, c = time.perf_counter(), time.thread_time()
    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    app.post_message(event)  # what the driver does, from the terminal's thread
    await pilot._wait_for_screen()
    await pilot._wait_for_screen()
    app.screen._on_timer_update()
    return time.perf_counter() - w, time.thread_time() - c


# --- printing ---------------------------------------------------------------------

def print_lines(a: dict, raw_s: float | None = None) -> None:
    """The app's lines of the bench report (``raw_s``: the raw read, for ratios)."""
    if not a.get("measured"):
        print(f"app: not measured ({a['reason']})")
        return

    def ratio(x: float) -> str:
        return f"{x / raw_s:>8.2f}" if raw_s else f"{'':>8}"

    n = len(a["runs"])
    print(f"app (a fresh process each run, headless {SIZE[0]}x{SIZE[1]}; median of {n}; "
          f"fast start from the index: {a['fast_start']}):")
    for label, key in (("first paint", "first_paint"), ("owed view filled in", "owed_view"),
                       ("every view loaded", "loaded")):
        cpu = f", process CPU {a[key + '_cpu']:.3f} s" if key + "_cpu" in a else ""
        print(f"{'  app: ' + label:<34}{a[key]:>9.3f}{ratio(a[key])}   "
              f"from process start {a[key + '_from_start']:.3f} s ({a['imported_from_start']:.3f} s importing{cpu})")
    print(f"{'  app: switch view (wall)':<34}{a['switch_median']:>9.4f}   worst {a['switch_max']:.4f}"
          f"   UI thread CPU median {a['switch_cpu_median']:.4f}, worst {a['switch_cpu_max']:.4f}")
    print(f"{'  app: scroll a key (wall)':<34}{a['scroll_median']:>9.4f}   worst {a['scroll_max']:.4f}"
          f"   UI thread CPU median {a['scroll_cpu_median']:.4f}, worst {a['scroll_cpu_max']:.4f}")
    print(f"{'  app: a key while loading (wall)':<34}{a['loading_median']:>9.4f}   worst {a['loading_max']:.4f}"
          f"   ({sum(r['loading_keys'] for r in a['runs'])} keys in Owed & late before the rest was loaded)")
    for r in a["runs"]:
        print(f"    run: paint {r['first_paint']:.3f}  owed {r['owed_view']:.3f} (from start {r['owed_view_from_start']:.3f},"
              f" CPU {r['owed_view_cpu']:.3f}, {r['owed_rows']} rows)  loaded {r['loaded']:.3f}  switch worst {r['switch_max']:.4f}"
              f"  scroll worst {r['scroll_max']:.4f}")


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m letterbox_tui.cli.bench_app")
    p.add_argument("--child", metavar="ROOT")
    p.add_argument("--dir", help="a letterbox (e.g. a bench letterbox); it is only read")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.child:
        return _child(args.child)
    if not args.dir:
        p.error("--dir is required")
    report = measure_app(args.dir, args.repeat)
    report["load_average_after"] = _load_average()
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"load average {report.get('load_average')} -> {report['load_average_after']}")
        print_lines(report)
    return 0 if report.get("measured") else 1


if __name__ == "__main__":
    sys.exit(main())

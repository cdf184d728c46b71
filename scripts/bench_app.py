"""The app's start-up as whole processes: first frame, Owed & late filled, memory.

A developer's tool beside ``scripts/bench.py`` (whose children, yardstick and environment it
uses). Each run is a fresh process running the app headless (``run_test``) on the warm
store; its stamps are taken from the moment the process was started, and each is divided by
a raw read of every letter file taken just before it. Beside them, the same first frame of
a bare Textual app (one ``Static``), so what Textual itself costs is seen. Memory is the
child's ``VmRSS`` when Owed & late is filled and once every worker has finished (from
``/proc/self/status``), and its peak (``ru_maxrss``).

    python scripts/bench_app.py --letterbox /work/bench/b100k --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.bench import (  # noqa: E402
    APP_SIZE, Children, _last_json, byte_compile, letter_files, load1, package_dir, raw_read, say)


def vm(field: str) -> float | None:
    """One ``Vm*`` line of ``/proc/self/status``, in MB (None where there is none)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _counting(app, out: dict, on_frame=None) -> None:
    """Stamp ``out["first_frame"]`` at the first frame Textual composes (``App._display``)."""
    display = app._display

    def counted(screen, renderable):
        display(screen, renderable)
        if renderable is not None:
            out.setdefault("first_frame", time.time())
            if on_frame is not None:
                on_frame()

    app._display = counted


async def _app(root: str, timeout: float) -> dict:
    from letterbox_tui.app import make_app

    app = make_app(root, poll_interval=None)
    out: dict = {}

    def owed_frame() -> None:
        if "owed_filled" in out or getattr(app, "mailbox_id", "") != "view:owed":
            return
        rows = len(getattr(app.query_one("#letters"), "rows", ()))
        if rows:
            out["owed_filled"], out["owed_rows"], out["rss_owed_mb"] = time.time(), rows, vm("VmRSS")

    _counting(app, out, owed_frame)
    async with app.run_test(size=APP_SIZE) as pilot:
        limit = time.monotonic() + timeout
        while time.monotonic() < limit and not (
                "owed_filled" in out and app.scan_count and not app.scanning and not app.views_building
                and not [w for w in app.workers if w.is_running]):
            await asyncio.sleep(0.005)
        await pilot.pause()
        out["settled"] = time.time()
        out["rss_settled_mb"] = vm("VmRSS")
        out["hwm_mb"] = vm("VmHWM")
        app.exit()
    return out


async def _bare(timeout: float) -> dict:
    from textual.app import App
    from textual.widgets import Static

    class Bare(App):
        def compose(self):
            yield Static("bare")

    app = Bare()
    out: dict = {}
    _counting(app, out)
    async with app.run_test(size=APP_SIZE) as pilot:
        limit = time.monotonic() + timeout
        while "first_frame" not in out and time.monotonic() < limit:
            await asyncio.sleep(0.002)
        await pilot.pause()
        app.exit()
    return out


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/bench_app.py", description=__doc__.splitlines()[0])
    p.add_argument("--letterbox", metavar="DIR", required=True, help="an existing letterbox, only read")
    p.add_argument("--repeat", type=int, default=3, metavar="R")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S")
    p.add_argument("--child", choices=("app", "bare"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child == "app":
        print(json.dumps(asyncio.run(_app(args.letterbox, args.timeout))), flush=True)
        return 0
    if args.child == "bare":
        print(json.dumps(asyncio.run(_bare(args.timeout))), flush=True)
        return 0
    root = Path(args.letterbox).absolute()
    state = Path(tempfile.mkdtemp(prefix="letterbox-bench-app-"))
    try:
        children = Children(root, state, args.timeout)
        pkg = package_dir(children)
        if not (pkg and byte_compile(pkg, children)):
            print("bench_app: the package is NOT byte-compiled: start-ups include compiling", flush=True)
        files = letter_files(root)
        raw_read(files)  # the page cache warm
        warm = children.run(children.command("owed", "--json"))  # the store written
        print(f"{say(root)}: {len(files)} letter files; store written in {warm['seconds']:.2f} s", flush=True)
        runs = []
        me = [sys.executable, str(Path(__file__).resolve()), "--letterbox", str(root), "--timeout", str(args.timeout)]
        for _ in range(args.repeat):
            for kind in ("bare", "app"):
                load = load1()
                raw = raw_read(files)[0]
                started = time.time()
                got = children.run(me + ["--child", kind])
                seen = _last_json(got.pop("stdout").read_bytes())
                run = {"kind": kind, "raw": raw, "load": load, "cpu": got["cpu"], "peak_mb": got["peak_mb"],
                       "exit": got["exit"], **{k: v for k, v in seen.items()}}
                for key in ("first_frame", "owed_filled", "settled"):
                    if key in seen:
                        run[key] = seen[key] - started
                        run[key + "_ratio"] = run[key] / raw
                if got.get("error"):
                    run["error"] = got["error"]
                runs.append(run)
                print(json.dumps(run), flush=True)
        for kind in ("bare", "app"):
            rs = [r for r in runs if r["kind"] == kind]
            fields = ("raw", "first_frame", "first_frame_ratio", "owed_filled", "owed_filled_ratio", "settled",
                      "settled_ratio", "cpu", "rss_owed_mb", "rss_settled_mb", "hwm_mb", "peak_mb")
            summary = {f: round(m, 3) for f in fields if (m := median(r.get(f) for r in rs)) is not None}
            print(f"median {kind}: {json.dumps(summary)}", flush=True)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

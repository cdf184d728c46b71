"""How fast the command line answers, as ratios against reading the same files raw.

A developer's tool, not a product command. It measures whole processes
(``python -m letterbox_tui ...``, interpreter start included) on a bench letterbox it
generates (``scripts/benchgen.py``), so it keeps measuring whatever the package's insides
become. Each figure is the wall-clock time of one process divided by the time a plain loop
takes to read every byte of every letter file, taken just before it, with the page cache
warm; the median of ``--repeat`` runs; with the child's peak resident memory (its own
``ru_maxrss``, from ``wait4``), its CPU time and the load average at that moment.

    python scripts/bench.py                      # 100,000 letters in a temporary directory
    python scripts/bench.py --letters 10000 --repeat 1 --no-app
    python scripts/bench.py --dir ~/bench/b100k  # generated once, then reused
    python scripts/bench.py --dir ~/bench/b100k --remove
    python scripts/bench.py --letterbox ~/letters     # an existing letterbox, only read

The children run with ``XDG_CACHE_HOME`` and ``XDG_CONFIG_HOME`` in a temporary directory
this script makes and removes, so the derived store they write is the bench's own, and
"cold" means that store deleted first. ``--dir`` is generated when missing or empty, reused
when it holds exactly the bench letterbox of ``--letters`` and ``--seed``, regenerated when
it holds exactly another one, and refused otherwise: only files whose bytes are exactly what
the generator writes are ever deleted (``benchgen.remove``).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from letterbox_tui.core.text import clean  # noqa: E402 - the one sanitizer, from this checkout

from scripts import benchgen  # noqa: E402

#: the accountability question (SPEC 6)
QUERY = ("state=open", "answered=no", "type=request", "until=2026-10-04T00:00:00Z")
#: questions the store has not been asked yet: header terms, then derived answers
OTHER_QUERIES = (
    ("from=planner,ops", "type=info,status", "since=2026-08-01T00:00:00Z"),
    ("to=builder", "current=yes", "accepted=yes", "late=no", "at=2026-12-01T00:00:00Z"),
)
OTHER_NAMES = ("header terms", "derived answers")
#: the targets of issue 22 at 100,000 letters (ratio to the raw read); cold is the pure-Python one
TARGETS = {"cold": 4.0, "again": 0.35, "other": 0.30, "view": 0.35, "one": 0.25}
TARGETS_AT = 100_000
#: peak resident memory target of any command at 100,000 letters (MB)
PEAK_MB = 150
#: exit codes of an answer: 0, 1 (check found a problem), 3 (the scope is incomplete)
ANSWERED = (0, 1, 3)
APP_SIZE = (160, 48)
#: a letterbox written moments ago looks racy to a stat proof (ctime within this): wait it out
SETTLE_S = 3.5


class BenchError(Exception):
    """A one-line refusal: printed, exit 2."""


def say(text: object) -> str:
    """Text for the terminal: every path, id and child's message goes through the sanitizer."""
    return clean(text, single_line=True, tab=" ")


# --- the yardstick ---------------------------------------------------------------------

def letter_files(root: Path) -> list[str]:
    """Every letter file (``<seat>/inbox|processed/*.md``), sorted."""
    out = []
    for seat in sorted(os.listdir(root)):
        for folder in ("inbox", "processed"):
            d = os.path.join(root, seat, folder)
            if os.path.isdir(d) and not os.path.islink(d):
                out.extend(os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".md"))
    return out


def raw_read(files: list[str]) -> tuple[float, int]:
    """Seconds to open and read every byte of every file, and the bytes read."""
    t = time.perf_counter()
    total = 0
    for path in files:
        with open(path, "rb") as fh:
            total += len(fh.read())
    return time.perf_counter() - t, total


def load1() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


# --- running one child -----------------------------------------------------------------

#: the spawner's program: for each job (one JSON line on stdin) it runs the command and
#: answers one JSON line: its wait status, wall and CPU seconds and ``ru_maxrss`` (KiB)
_SPAWNER = r"""
import json, os, subprocess, sys, threading, time
for line in sys.stdin:
    job = json.loads(line)
    with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(job["argv"], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=job["env"], cwd=job["cwd"])
        timer = threading.Timer(job["timeout"], proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - t
    print(json.dumps({"status": status, "seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime,
                      "maxrss": usage.ru_maxrss}), flush=True)
"""


class Spawner:
    """Starts the measured processes from a small process of its own, begun before the bench
    holds anything large. On Linux a child's peak resident size (``ru_maxrss``) begins at
    what the process that spawned it held, so a child spawned by the bench itself (its file
    list, the pages of its raw reads) reported at least the bench's own size, whatever it
    used."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _SPAWNER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def run(self, argv: list[str], env: dict, cwd: Path, out: Path, err: Path, timeout: float) -> dict:
        job = {"argv": argv, "env": env, "cwd": str(cwd), "out": str(out), "err": str(err), "timeout": timeout}
        self.proc.stdin.write(json.dumps(job) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        answer = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not answer:
            raise BenchError("the spawner of the measured processes ended")
        return json.loads(answer)


@functools.cache
def spawner() -> Spawner:
    """The one spawner: started by ``main`` before anything else (else by ``Children``)."""
    return Spawner()


class Children:
    """Runs the measured processes in an environment of the bench's own."""

    def __init__(self, root: Path, state: Path, timeout: float) -> None:
        self.spawner = spawner()
        self.root = root
        self.state = state
        self.cache = state / "cache"
        self.timeout = timeout
        env = {k: v for k, v in os.environ.items()
               if k not in ("LETTERBOX_TUI_NO_CACHE", "LETTERBOX_TUI_DEBUG", "LETTERBOX_DIR", "PYTHONSTARTUP")}
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
        env["XDG_CACHE_HOME"] = str(self.cache)
        env["XDG_CONFIG_HOME"] = str(state / "config")
        env["XDG_STATE_HOME"] = str(state / "state")
        self.env = env
        self.passed = sorted(k for k in env if k.startswith("LETTERBOX_TUI_"))

    def drop_store(self) -> None:
        """Delete the derived store (everything letterbox-tui keeps under the bench's cache)."""
        shutil.rmtree(self.cache / "letterbox-tui", ignore_errors=True)

    def run(self, argv: list[str]) -> dict:
        """One process: wall seconds, CPU seconds and peak MB (its own rusage), exit code."""
        out_path, err_path = self.state / "stdout", self.state / "stderr"
        done = self.spawner.run(argv, self.env, self.state, out_path, err_path, self.timeout)
        returncode = os.waitstatus_to_exitcode(done["status"])
        got = {"seconds": done["seconds"], "cpu": done["cpu"], "peak_mb": done["maxrss"] / 1024,
               "exit": returncode, "output_bytes": out_path.stat().st_size}
        if returncode not in ANSWERED:
            lines = err_path.read_bytes().decode("utf-8", "replace").strip().splitlines()
            got["error"] = lines[-1][:300] if lines else f"exit {returncode}, nothing on stderr"
            if returncode < 0:
                got["error"] = f"killed (signal {-returncode}; over {self.timeout:.0f} s?)"
        got["stdout"] = out_path
        return got

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "letterbox_tui", "--root", str(self.root), *args]


# --- the measures ----------------------------------------------------------------------

class Bench:
    def __init__(self, root: Path, children: Children, repeat: int, emit) -> None:
        self.root = root
        self.children = children
        self.repeat = repeat
        self.emit = emit
        self.files = letter_files(root)
        self.measures: list[dict] = []

    def yardstick(self) -> float:
        return raw_read(self.files)[0]

    def record(self, key: str, label: str, kind: str, runs: list[dict]) -> dict:
        ratios = [r["ratio"] for r in runs]
        m = {
            "key": key, "label": label, "kind": kind, "runs": runs,
            "ratio": statistics.median(ratios), "seconds": statistics.median(r["seconds"] for r in runs),
            "raw_read": statistics.median(r["raw_read"] for r in runs),
            "cpu": statistics.median(r["cpu"] for r in runs), "peak_mb": max(r["peak_mb"] for r in runs),
            "exit": sorted({r["exit"] for r in runs}), "load": [r["load"] for r in runs],
        }
        errors = [r["error"] for r in runs if r.get("error")]
        if errors:
            m["error"] = errors[0]
        if kind in TARGETS:
            m["target"] = TARGETS[kind]
        self.measures.append(m)
        self.emit(m)
        return m

    def timed(self, argv: list[str], raw: float | None = None) -> dict:
        load = load1()
        if raw is None:
            raw = self.yardstick()
        got = self.children.run(argv)
        got.pop("stdout")
        return {**got, "raw_read": raw, "ratio": got["seconds"] / raw, "load": load}

    def one(self, key: str, label: str, kind: str, argv: list[str]) -> dict:
        return self.record(key, label, kind, [self.timed(argv) for _ in range(self.repeat)])

    def cold_and_again(self) -> None:
        """Each round: a raw read, the query with no store, and the same query again at
        once (against the same raw read: nothing runs between the two processes)."""
        argv = self.children.command("query", *QUERY, "--json")
        cold, again = [], []
        for _ in range(self.repeat):
            self.children.drop_store()
            raw = self.yardstick()
            cold.append(self.timed(argv, raw))
            again.append(self.timed(argv, raw))
        self.record("cold", "cold: query, no store (store written)", "cold", cold)
        self.record("again", "the same query again at once", "again", again)

    def run(self, letter_id: str, app: bool, app_timeout: float) -> None:
        c = self.children.command
        self.cold_and_again()
        for i, terms in enumerate(OTHER_QUERIES, 1):
            self.one(f"other{i}", f"another query ({OTHER_NAMES[i - 1]})", "other", c("query", *terms, "--json"))
        for name in ("owed", "disputes", "digest", "check"):
            self.one(name, f"{name}, unchanged letterbox", "view", c(name, "--json"))
        for name in ("show", "current", "answered", "thread"):
            self.one(name, f"{name} ID", "one", c(name, letter_id, "--json"))
        self.one("exists", "exists id=ID", "one", c("exists", f"id={letter_id}", "--json"))
        if app:
            self.app(app_timeout)

    def app(self, timeout: float) -> None:
        """The app in a fresh process each run, headless (``run_test``) on the warm store:
        from the process start to its first frame, and to the first frame showing Owed &
        late's rows."""
        argv = [sys.executable, str(Path(__file__).resolve()), "--app-child", str(self.root),
                "--app-timeout", str(timeout)]
        first, owed = [], []
        for _ in range(self.repeat):
            load = load1()
            raw = self.yardstick()
            started = time.time()
            got = self.children.run(argv)
            stdout = got.pop("stdout")
            seen = _last_json(stdout.read_bytes())
            base = {"raw_read": raw, "load": load, "cpu": got["cpu"], "peak_mb": got["peak_mb"], "exit": got["exit"]}
            for into, key in ((first, "first_frame"), (owed, "owed_filled")):
                at = seen.get(key)
                secs = (at - started) if at is not None else got["seconds"]
                run = {**base, "seconds": secs, "ratio": secs / raw}
                if at is None:
                    run["error"] = got.get("error") or seen.get("why") or f"no {key.replace('_', ' ')} seen"
                if key == "owed_filled" and "owed_rows" in seen:
                    run["owed_rows"] = seen["owed_rows"]
                into.append(run)
        self.record("app_first_frame", "app: first frame", "app", first)
        self.record("app_owed_filled", "app: Owed & late filled", "app", owed)


def _last_json(data: bytes) -> dict:
    for line in reversed(data.decode("utf-8", "replace").splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    return {}


# --- the app's child -------------------------------------------------------------------

def app_child(root: str, timeout: float) -> int:
    """One headless app run; prints one JSON line of ``time.time()`` stamps."""
    print(json.dumps(asyncio.run(_drive(root, timeout))), flush=True)
    return 0


async def _drive(root: str, timeout: float) -> dict:
    from letterbox_tui.app import make_app

    app = make_app(root, poll_interval=None)
    out: dict = {}

    def owed_filled() -> int:
        if getattr(app, "mailbox_id", "view:owed") != "view:owed":
            return 0
        try:
            return len(getattr(app.query_one("#letters"), "rows", ()))
        except Exception:  # noqa: BLE001 - not mounted yet, or the app is laid out otherwise
            return 0

    display = getattr(app, "_display", None)  # Textual's one call per composed frame

    def counted(screen, renderable):
        display(screen, renderable)
        if renderable is not None:
            now = time.time()
            out.setdefault("first_frame", now)
            if "owed_filled" not in out and (rows := owed_filled()):
                out["owed_filled"], out["owed_rows"] = now, rows

    if display is not None:
        app._display = counted
    else:
        out["why"] = "this Textual has no App._display to count frames by"
    async with app.run_test(size=APP_SIZE) as pilot:
        out.setdefault("first_frame", time.time())
        limit = time.monotonic() + timeout
        while "owed_filled" not in out and time.monotonic() < limit:
            await asyncio.sleep(0.002)
            if display is None and (rows := owed_filled()):
                out["owed_filled"], out["owed_rows"] = time.time(), rows
        if "owed_filled" not in out:
            out["why"] = f"Owed & late showed no rows within {timeout:.0f} s"
        await pilot.pause()
        app.exit()
    return out


# --- preparing ---------------------------------------------------------------------------

def prepare(root: Path, letters: int, seed: int) -> str:
    """Make ``root`` the bench letterbox of ``letters`` and ``seed``: what was done."""
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise BenchError(f"{say(root)} is not a directory")
    if root.exists() and any(root.iterdir()):
        try:
            found = benchgen.examine(root)
        except benchgen.NotOurs as exc:
            raise BenchError(
                f"{say(root)} is not empty and not a bench letterbox ({say(exc)}): nothing was deleted; "
                "give an empty or missing --dir") from None
        if found.complete and (found.letters, found.seed) == (letters, seed):
            return "reused"
        left = benchgen.remove(root)
        if left:
            raise BenchError(f"{say(root)}: the old bench letterbox was removed but not "
                             f"{len(left)} entries that appeared meanwhile (such as {say(left[0])})")
    t = time.perf_counter()
    try:
        benchgen.generate(root, letters, seed)
    except OSError as exc:
        raise BenchError(f"cannot write {say(root)}: {say(exc.strerror or exc)}") from None
    took = time.perf_counter() - t
    time.sleep(SETTLE_S)  # a stat proof trusts no folder changed within its racy window
    return f"generated in {took:.1f} s, then {SETTLE_S} s for its folders to settle"


def pick_letter(files: list[str]) -> str:
    """One answered request (in a ``processed/`` folder, with replies and a thread): the
    middle one of them in name order, else the middle letter."""
    picked = [p for p in files if os.sep + "processed" + os.sep in p
              and "-request-" in (name := os.path.basename(p)) and "--" not in name]  # not a reply
    chosen = (picked or files)[len(picked or files) // 2]
    return os.path.basename(chosen)[: -len(".md")]


def package_dir(children: Children) -> str:
    got = subprocess.run([sys.executable, "-c", "import letterbox_tui; print(letterbox_tui.__file__)"],
                         env=children.env, cwd=children.state, capture_output=True, text=True)
    return os.path.dirname(got.stdout.strip()) if got.returncode == 0 else ""


def byte_compile(pkg: str, children: Children) -> bool:
    """Compile the measured package's modules as ``pip install`` does (an editable install
    under ``PYTHONDONTWRITEBYTECODE`` has none, and every child would compile them first)."""
    env = {k: v for k, v in children.env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    got = subprocess.run([sys.executable, "-m", "compileall", "-q", pkg], env=env, cwd=children.state,
                         capture_output=True)
    return got.returncode == 0


# --- printing ----------------------------------------------------------------------------

HEAD = f"{'measure':<48}{'wall s':>8}{'x raw':>7}{'target':>8}{'cpu s':>8}{'peak MB':>9}{'exit':>6}{'load':>6}"


def line(m: dict, judged: bool = True) -> str:
    """One measure's row (``judged``: say whether it met its target)."""
    target = f"<={m['target']:.2f}" if "target" in m else ""
    verdict = ""
    if "target" in m and judged:
        verdict = "  met" if m["ratio"] <= m["target"] and "error" not in m else "  MISSED"
    if judged and m["peak_mb"] > PEAK_MB:
        verdict += f"  (peak over {PEAK_MB} MB)"
    exits = ",".join(str(x) for x in m["exit"])
    loads = [x for x in m["load"] if x is not None]
    text = (f"{say(m['label'])[:47]:<48}{m['seconds']:>8.3f}{m['ratio']:>7.2f}{target:>8}{m['cpu']:>8.3f}"
            f"{m['peak_mb']:>9.1f}{exits:>6}{max(loads) if loads else '':>6}{verdict}")
    if "error" in m:
        text += f"\n    FAILED: {say(m['error'])}"
    if len(m["runs"]) > 1:
        text += "\n    runs: " + "  ".join(f"{r['seconds']:.3f}/{r['raw_read']:.3f}={r['ratio']:.2f}x" for r in m["runs"])
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/bench.py", description=__doc__.splitlines()[0])
    p.add_argument("--letters", type=int, default=100_000, metavar="N", help="letter files (default 100000)")
    p.add_argument("--dir", metavar="DIR", help="the bench letterbox (default: a temporary directory, removed after)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3, metavar="R", help="runs of each measure, median shown (default 3)")
    p.add_argument("--no-app", action="store_true", help="skip the app's first frame")
    p.add_argument("--json", action="store_true", help="the report as JSON on stdout (the lines go to stderr)")
    p.add_argument("--remove", action="store_true", help="delete the bench letterbox at --dir, and nothing else")
    p.add_argument("--letterbox", metavar="DIR",
                   help="measure this existing letterbox as it is instead (nothing is generated, written or deleted)")
    p.add_argument("--timeout", type=float, default=1800.0, metavar="S", help="give a child up after S seconds")
    p.add_argument("--app-child", metavar="ROOT", help=argparse.SUPPRESS)
    p.add_argument("--app-timeout", type=float, default=120.0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.app_child:
        return app_child(args.app_child, args.app_timeout)
    spawner()  # first, while the bench is small
    try:
        return bench(args)
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130


def bench(args: argparse.Namespace) -> int:
    if args.remove:
        if not args.dir:
            raise BenchError("--remove needs --dir")
        try:
            left = benchgen.remove(args.dir)
        except benchgen.NotOurs as exc:
            raise BenchError(f"{say(args.dir)} is not a bench letterbox ({say(exc)}): nothing was deleted") from None
        if left:
            raise BenchError(f"{say(args.dir)}: kept {len(left)} entries that appeared meanwhile "
                             f"(such as {say(left[0])})")
        print(f"bench: removed the bench letterbox {say(args.dir)}")
        return 0
    if args.letterbox and args.dir:
        raise BenchError("give --dir (a bench letterbox) or --letterbox (any letterbox, only read), not both")
    if not 1 <= args.letters <= benchgen.MAX_LETTERS:
        raise BenchError(f"--letters must be from 1 to {benchgen.MAX_LETTERS}")
    if not 1 <= args.repeat <= 20:
        raise BenchError("--repeat must be from 1 to 20")
    out = sys.stderr if args.json else sys.stdout
    state = Path(tempfile.mkdtemp(prefix="letterbox-bench-"))
    root = Path(args.letterbox or args.dir or state / "letterbox").absolute()
    try:
        if args.letterbox:
            if not root.is_dir():
                raise BenchError(f"{say(root)} is not a directory")
            made = "measured as found"
        else:
            made = prepare(root, args.letters, args.seed)
        report = measure(root, state, args, made, out)
    finally:
        if not (args.dir or args.letterbox) and root.exists():
            try:
                benchgen.remove(root)  # generated just now
            except benchgen.NotOurs as exc:
                print(f"bench: kept {say(root)}: {say(exc)}", file=sys.stderr)
        shutil.rmtree(state, ignore_errors=True)  # the bench's own directory: cache, config, outputs
    if args.json:
        sys.stdout.write(json.dumps(report, indent=1, ensure_ascii=True, default=str) + "\n")
    return 0 if all("error" not in m for m in report["measures"]) else 1


def measure(root: Path, state: Path, args: argparse.Namespace, made: str, out) -> dict:
    def show(text: str) -> None:
        print(text, file=out, flush=True)

    children = Children(root, state, args.timeout)
    pkg = package_dir(children)
    compiled = byte_compile(pkg, children) if pkg else False
    b = Bench(root, children, args.repeat, lambda m: show(line(m, judged)))
    judged = len(b.files) >= TARGETS_AT
    raw_read(b.files)  # the page cache warm
    raw, size = raw_read(b.files)
    letter_id = pick_letter(b.files)
    try:
        loads = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        loads = None
    report: dict = {
        "dir": str(root), "prepared": made, "letters": len(b.files), "bytes": size, "seed": args.seed,
        "repeat": args.repeat, "package": pkg, "byte_compiled": compiled, "environment": children.passed,
        "python": platform.python_version(), "cpus": os.cpu_count(), "load_average_start": loads,
        "raw_read": raw, "query": " ".join(QUERY), "id": letter_id, "measures": b.measures,
    }
    show(f"bench letterbox: {say(root)} ({len(b.files)} letter files, {size / 1e6:.1f} MB; {made})")
    show(f"package: {say(pkg) or '?'}" + ("" if compiled else " (NOT byte-compiled: start-ups include compiling)")
         + (f"; environment {' '.join(children.passed)}" if children.passed else ""))
    show(f"python {platform.python_version()}, {os.cpu_count()} cpus, load average {loads}; page cache warm; "
         f"median of {args.repeat}")
    show(f"each process's wall time / a raw read of every letter file just before it ({raw:.3f} s now);")
    show(f"query: {' '.join(QUERY)}; ID: {say(letter_id)}")
    for name, terms in zip(OTHER_NAMES, OTHER_QUERIES):
        show(f"another query ({name}): {' '.join(terms)}")
    show(f"targets: issue 22's at {TARGETS_AT:,} letters (cold: pure Python); peak memory <= {PEAK_MB} MB there"
         + ("" if judged else "; not judged at this size"))
    show("")
    show(HEAD)
    b.run(letter_id, app=not args.no_app, app_timeout=args.app_timeout)
    try:
        report["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        report["load_average_end"] = None
    report["peak_mb"] = max(m["peak_mb"] for m in b.measures)
    show(f"peak memory of any command {report['peak_mb']:.1f} MB; load average at the end {report['load_average_end']}")
    return report


if __name__ == "__main__":
    raise SystemExit(main())

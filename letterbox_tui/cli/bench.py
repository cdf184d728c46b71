"""``letterbox-tui bench``: how fast reading is, as ratios against reading the same files raw.

Generates (or reuses) a bench letterbox of N letters (``letterbox_tui.core.speed.benchgen``), warms the
page cache, then measures in one run:

- raw read: a plain Python loop that opens and reads every letter file fully (the yardstick);
- cold scan+resolve: the scan with an empty derived cache (and the cache written), then the
  resolver;
- warm scan+resolve: the same on the unchanged letterbox, the cache loaded;
- the accountability query as a subprocess (``letterbox-tui query ... --json``), process
  start included, with an empty cache and again with the warm one (the two measures with
  targets): each ``--repeat`` times, each run divided by a raw read made just before it,
  and the run with the median ratio shown (the machine is shared: one run can be off by a
  third either way, and every run is listed);
- unless ``--no-app``: the app's first paint, owed view filled in, view switching and
  scrolling, each run in a fresh process (``bench_app``).

Each measure's line is printed as soon as it is measured (with ``--json``, on stderr; the
JSON report comes at the end). From ``HEAVY_AT`` letters on (a million takes hours
otherwise) the measures that start from an empty cache (the cold query, the same query
again at once) run once whatever ``--repeat`` says, and the app is measured once.

Each figure is given in wall-clock seconds and as a ratio to the raw read (the targets are
wall-clock ratios), and also as CPU seconds, which stay meaningful on a machine busy with
other work. The in-process runs also time their stages (cache load, scan, save, resolve,
then the query command's evaluation, rows and JSON), to show where the time goes.

It refuses to write into a directory that is not its own bench letterbox, and it never
measures the user's letterbox unless ``--dir`` points there (which it then refuses, since
that is not a bench letterbox).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from argparse import Namespace
from datetime import datetime, timezone
from pathlib import Path

from letterbox_tui.core.speed import benchgen
from letterbox_tui.core.errors import LetterboxError

from . import bench_index

QUERY = ("state=open", "answered=no", "type=request", "until=2026-10-04T00:00:00Z")
#: targets the project set itself at 100,000 letters (ratio to the raw read)
TARGETS = {"query_cold": 2.0, "query_warm": 0.5}
SEED = 1
#: from this many letters, the measures from an empty cache (and the app) run once
HEAVY_AT = 500_000


def cmd_bench(args: Namespace) -> int:
    n = int(args.letters)
    if n < 1:
        raise LetterboxError("bench: --letters must be at least 1")
    repeat = int(getattr(args, "repeat", 3))
    if not 1 <= repeat <= 20:
        raise LetterboxError("bench: --repeat must be from 1 to 20")
    root = Path(args.dir) if args.dir else default_dir(n)
    made = prepare(root, n)
    compiled = byte_compile()
    out = sys.stderr if args.json else sys.stdout  # with --json the lines are progress only
    report = measure(root, n, app=not args.no_app, repeat=repeat,
                     emit=_Printer(out, {"generated": made, "byte_compiled": compiled}))
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    return 0


def default_dir(n: int) -> Path:
    from letterbox_tui.core.speed.files import cache_dir

    return Path(cache_dir()) / "bench" / f"letters-{n}"


def prepare(root: Path, n: int) -> bool:
    """Make ``root`` a bench letterbox of ``n`` letters; True when it had to be generated."""
    if benchgen.is_current(root, n, SEED):
        return False
    if root.exists():
        if not root.is_dir():
            raise LetterboxError(f"bench: {root} is not a directory")
        m = benchgen.marker(root)
        if m is not None and benchgen.manifest(root, m) is not None:
            _remove_bench(root)  # our own letterbox, of another size or generator version
        elif any(root.iterdir()):
            older = (root / benchgen.MARKER).is_file() and not (root / benchgen.MANIFEST).is_file()
            raise LetterboxError(
                f"bench: {root} is not an empty directory or a bench letterbox it made; bench writes "
                "letters, so it only uses a directory it made (or an empty one), and deletes nothing else"
                + (" (a bench letterbox of an older version lists no files of its own: delete it by hand)"
                   if older else "")
            )
    print(f"bench: generating {n} letters in {root} ...", file=sys.stderr, flush=True)
    try:
        benchgen.generate(root, n, SEED)
    except OSError as exc:
        raise LetterboxError(f"bench: cannot write {root}: {exc.strerror or exc}") from None
    # Files written moments ago are not cached yet (see core.scan.RACY_NS): let the
    # newest age past that window, so the warm runs measure a warm cache.
    from letterbox_tui.core.scan import RACY_NS

    time.sleep(RACY_NS / 1e9)
    return True


def _remove_bench(root: Path) -> None:
    """Delete the bench letterbox this command made (its marker and manifest say which
    files): nothing it did not write, and then refuse when anything else is left."""
    try:
        left = benchgen.remove(root)
    except ValueError as exc:
        raise LetterboxError(f"bench: {exc}") from None
    if left:
        raise LetterboxError(
            f"bench: {root} holds {len(left)} entr{'ies' if len(left) != 1 else 'y'} bench did not make "
            f"(such as {left[0]!r}); they were kept, and bench writes only into an empty directory"
        )


# --- measuring ------------------------------------------------------------------------

def byte_compile() -> dict:
    """Compile the package's modules into its own ``__pycache__`` first, as ``pip install``
    does: an editable install under ``PYTHONDONTWRITEBYTECODE`` never writes them, and every
    command measured would then compile some 45 modules before its work (a fifth of a point
    lookup). What was done, for the report; a package that cannot be written is said so."""
    import compileall

    import letterbox_tui

    pkg = os.path.dirname(os.path.abspath(letterbox_tui.__file__))
    try:
        ok = compileall.compile_dir(pkg, quiet=2, workers=1)
    except OSError as exc:
        return {"dir": pkg, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {"dir": pkg, "ok": bool(ok)}

def raw_read(root: Path) -> tuple[int, int]:
    """Open and read every letter file fully: the yardstick every figure is divided by."""
    files = total = 0
    for seat in sorted(os.listdir(root)):
        for folder in ("inbox", "processed"):
            d = os.path.join(root, seat, folder)
            if not os.path.isdir(d):
                continue
            for name in os.listdir(d):
                if name.endswith(".md") and not name.startswith("."):
                    with open(os.path.join(d, name), "rb") as fh:
                        total += len(fh.read())
                    files += 1
    return files, total


class _Clock:
    """Wall time and this process's CPU time (CPU time says how much work was done, even
    on a machine busy with other work; the targets are wall-clock ratios)."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def lap(self) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        out = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return out


def _drop_cache(root: Path, utc: bool) -> None:
    """No header cache and no memoised answer: the next run starts from nothing."""
    from letterbox_tui.core.speed.cache import cache_path
    from letterbox_tui.core.speed.memo import forget

    forget(str(root))
    try:
        os.unlink(cache_path(root, utc))
    except FileNotFoundError:
        pass
    from letterbox_tui.core.speed.index import Index, drop

    drop(Index(str(root), utc).path)  # and the derived index


def _scan_only(root: Path, utc: bool) -> dict:
    """The scanner with no cache at all (what every run cost before the cache)."""
    from letterbox_tui.core.collector import paused_gc
    from letterbox_tui.core.scan import scan
    from letterbox_tui.core.speed.accel import reader

    clock = _Clock()
    with paused_gc():  # the same footing as the cached scans
        snapshot = scan(root, id_time_is_utc=utc, reader=reader())
    wall, cpu = clock.lap()
    return {"seconds": wall, "cpu": cpu, "letters": len(snapshot.letters)}


def _scan_resolve(root: Path, utc: bool) -> dict:
    """Cache load, scan, cache save and resolve, in this process, each timed."""
    from letterbox_tui.core.collector import paused_gc
    from letterbox_tui.core.resolve import resolve
    from letterbox_tui.core.scan import scan
    from letterbox_tui.core.speed.accel import reader
    from letterbox_tui.core.speed.after import BACKGROUND_ROWS
    from letterbox_tui.core.speed.cache import HeaderCache

    clock = _Clock()
    stages: dict[str, float] = {}
    cpu_total = 0.0
    with paused_gc():  # as the command line's scan_cached does
        cache = HeaderCache(root, utc)
        stages["cache_load"], c = clock.lap()
        cpu_total += c
        snapshot = scan(root, id_time_is_utc=utc, cache=cache, reader=reader())
        if len(snapshot.letters) >= BACKGROUND_ROWS:
            gc.freeze()  # as the command line does after a big scan
        stages["scan"], c = clock.lap()
        cpu_total += c
    cache.save()
    stages["cache_save"], c = clock.lap()
    cpu_total += c
    res = resolve(snapshot, datetime.now(timezone.utc))
    stages["resolve"], c = clock.lap()
    cpu_total += c
    out = {
        "seconds": sum(stages.values()), "cpu": cpu_total, **stages,
        "hits": cache.hits, "misses": cache.misses, "reused": cache.reused, "letters": len(snapshot.letters),
    }
    out["after_resolve"] = _query_stages(res)
    gc.unfreeze()
    return out


def _query_stages(res) -> dict:
    """What the query command does after resolving: evaluate, build rows, write JSON (with
    the cyclic collector paused, as the reading commands run)."""
    try:
        from letterbox_tui.cli import output
        from letterbox_tui.core.collector import paused_gc
        from letterbox_tui.core.query import parse_query, run_query
        from letterbox_tui.core.rows import row

        with paused_gc():
            clock = _Clock()
            result = run_query(parse_query(list(QUERY)), res)
            query_s, _ = clock.lap()
            matches = [row(x, res) for x in result.matches]
            unknown = [row(x, res, why) for x, why in result.unknown]
            rows_s, _ = clock.lap()
            obj = {"matches": matches, "unknown": unknown, "scope": res.snapshot.scope.to_json()}
            text = output.dumps_json(obj, indent=None)
            json_s, _ = clock.lap()
        return {"query": query_s, "rows": rows_s, "json": json_s, "json_bytes": len(text.encode())}
    except Exception as exc:  # noqa: BLE001 - another layer's interface changed: say so
        return {"error": f"{type(exc).__name__}: {exc}"}


def query_command() -> list[str]:
    """The installed ``letterbox-tui`` script beside this interpreter, else ``python -m``."""
    script = Path(sys.executable).with_name("letterbox-tui")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "letterbox_tui"]


def _query(root: Path, terms: tuple[str, ...] = QUERY) -> dict:
    cmd = [*query_command(), "--root", str(root), "query", *terms, "--json"]
    env = {k: v for k, v in os.environ.items() if k != "LETTERBOX_TUI_NO_CACHE"}
    before = _children_cpu()
    t = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seconds = time.perf_counter() - t
    out: dict = {"seconds": seconds, "cpu": _children_cpu() - before, "exit": proc.returncode}
    if proc.returncode in (0, 3):
        try:
            data = json.loads(proc.stdout)
            out["matches"] = len(data["matches"])
            out["unknown"] = len(data["unknown"])
        except (ValueError, KeyError, TypeError):
            out["error"] = "query printed no JSON"
    else:
        out["error"] = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["failed"]
    return out


def _children_cpu() -> float:
    try:
        import resource

        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime
    except (ImportError, OSError):
        return 0.0


def _wait_for_cache(root: Path, utc: bool, n: int, limit: float = 300.0) -> float | None:
    """Wait for the detached writes of a query: the header cache, then (for a letterbox big
    enough that it is written detached) its answer memo, which a letterbox written in the
    last seconds never gets (racy timestamps): that wait is bounded."""
    from letterbox_tui.core.speed.after import BACKGROUND_ROWS
    from letterbox_tui.core.speed.cache import cache_path
    from letterbox_tui.core.speed.files import cache_dir
    from letterbox_tui.core.speed.memo import root_prefix

    where = cache_path(root, utc)  # written by os.replace: present means complete
    prefix = root_prefix(str(root))
    t = time.perf_counter()
    while not os.path.exists(where):
        if time.perf_counter() - t > limit:
            return None
        time.sleep(0.05)
    waited = time.perf_counter() - t
    while n >= BACKGROUND_ROWS and time.perf_counter() - t < waited + 20:
        try:
            if any(x.startswith(prefix) and x.endswith(".answer") for x in os.listdir(cache_dir())):
                return time.perf_counter() - t
        except OSError:
            pass
        time.sleep(0.05)
    return waited


def _app(root: Path, repeat: int = 3) -> dict:
    """The app's measures (``bench_app``: start-up, view switching, scrolling)."""
    from .bench_app import measure_app

    return measure_app(root, repeat)


def _timed_raw_read(root: Path) -> float:
    clock = _Clock()
    raw_read(root)
    return clock.lap()[0]


def _paired(root: Path, runs: int, measure_once) -> dict:
    """``measure_once()`` ``runs`` times, each right after a raw read it is divided by;
    the run with the median ratio (of an even count, the lower middle one), with every
    run's ratio listed."""
    done = []
    for _ in range(runs):
        raw = _timed_raw_read(root)
        d = measure_once()
        d["raw_read"] = raw
        d["ratio"] = d["seconds"] / raw if raw > 0 else None
        done.append(d)
    ranked = sorted(done, key=lambda d: d["ratio"] if d["ratio"] is not None else float("inf"))
    chosen = dict(ranked[(len(ranked) - 1) // 2])
    chosen["runs"] = [{"seconds": d["seconds"], "raw_read": d["raw_read"], "ratio": d["ratio"]} for d in done]
    return chosen


def _finish(report: dict, key: str) -> None:
    """A measure's ratios (and target) against the raw read, once it is measured."""
    d = report[key]
    raw_s, raw_cpu = report["raw_read"], report["raw_read_cpu"]
    if "runs" not in d:  # else divided by its own raw read (``_paired``)
        d["ratio"] = d["seconds"] / raw_s if raw_s > 0 else None
    d["cpu_ratio"] = d["cpu"] / raw_cpu if raw_cpu > 0 else None
    if key in TARGETS:
        d["target"] = TARGETS[key]
        d["met"] = d["ratio"] is not None and d["ratio"] <= TARGETS[key]


def measure(root: Path, n: int, *, app: bool = True, repeat: int = 3, emit=None) -> dict:
    """Every measure, in a report; ``emit(report, key)`` is called as each is made (``None``
    first, ``"end"`` last)."""
    from letterbox_tui.core.settings import load_settings

    if emit is None:
        emit = lambda report, key: None  # noqa: E731
    heavy = 1 if n >= HEAVY_AT else repeat

    utc = load_settings(root).id_time_is_utc
    raw_read(root)  # warm the page cache
    clock = _Clock()
    files, total = raw_read(root)
    raw_s, raw_cpu = clock.lap()
    report: dict = {
        "letters": n, "dir": str(root), "files": files, "bytes": total,
        "raw_read": raw_s, "raw_read_cpu": raw_cpu, "python": sys.version.split()[0], "cpus": os.cpu_count(),
        "load_average": _load_average(), "repeat": repeat, "heavy_repeat": heavy,
    }
    emit(report, None)

    def done(key: str, d: dict) -> None:
        report[key] = d
        _finish(report, key)
        emit(report, key)

    done("scan_only_no_cache", _scan_only(root, utc))
    _drop_cache(root, utc)
    done("scan_resolve_cold", _scan_resolve(root, utc))
    done("scan_resolve_warm", _scan_resolve(root, utc))

    def cold() -> dict:
        _drop_cache(root, utc)
        out = _query(root)
        # The command line writes a large cache from a detached process, after
        # answering: wait for it (the next run starts from nothing again; the warm
        # runs below must be warm).
        out["cache_written_after"] = _wait_for_cache(root, utc, n)
        out["index_written_after"] = bench_index.wait_settled(root, utc)
        out["index_build"] = bench_index.build_figures(root, utc)
        return out

    done("query_cold", _paired(root, heavy, cold))
    done("query_warm", _paired(root, repeat, lambda: _query(root)))
    # The same question in another order is another memo key: this is the warm header
    # cache without a memoised answer (what a changed letterbox costs).
    done("query_warm_not_memoised", _query(root, tuple(reversed(QUERY))))

    def index_done(key: str, d: dict) -> None:
        report[key] = d
        bench_index.judge(report)
        emit(report, key)

    bench_index.measure(root, n, repeat, utc, QUERY, command=query_command(), paired=_paired,
                        drop_cache=_drop_cache, heavy=heavy, done=index_done)
    report["app"] = _app(root, heavy) if app else {"measured": False, "reason": "--no-app"}
    if report["app"].get("measured"):
        for key in ("first_paint", "owed_view"):
            report["app"][key + "_ratio"] = report["app"][key] / raw_s if raw_s > 0 else None
    emit(report, "app")
    bench_index.judge(report)
    report["load_average_after"] = _load_average()
    report["query"] = " ".join(QUERY)
    emit(report, "end")
    return report


def _load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


class _Printer:
    """Prints each measure's lines as it is made (``measure``'s ``emit``), flushed: a long
    run (a million letters) shows where it is; ``extra`` goes into the report first."""

    def __init__(self, out, extra: dict) -> None:
        self.out = out
        self.extra = extra

    def __call__(self, r: dict, key: str | None) -> None:
        if key is None:
            r.update(self.extra)
        stdout = sys.stdout
        sys.stdout = self.out
        try:
            print_part(r, key)
        finally:
            sys.stdout = stdout
        self.out.flush()


def print_report(r: dict) -> None:
    """The whole report at once (what ``_Printer`` prints a part at a time)."""
    for key in (None, "scan_only_no_cache", "scan_resolve_cold", "scan_resolve_warm", "query_cold", "query_warm",
                "query_warm_not_memoised", *bench_index.KEYS, "app", "end"):
        if key is None or key in ("app", "end") or key in r:
            print_part(r, key)


def _line(label: str, d: dict) -> None:
    extra = ""
    if "target" in d:
        extra = f"   target <= {d['target']:.1f}x: {'met' if d['met'] else 'MISSED'}"
    if d.get("error"):
        extra += f"   ({d['error']})"
    cpu_ratio = d.get("cpu_ratio") or 0.0
    print(f"{label:<34}{d['seconds']:>9.3f}{d['ratio'] or 0.0:>8.2f}{d.get('cpu', 0.0):>9.3f}{cpu_ratio:>8.2f}{extra}")
    if len(d.get("runs", ())) > 1:
        each = "  ".join(f"{x['seconds']:.3f}/{x['raw_read']:.3f}={x['ratio']:.2f}x" for x in d["runs"])
        print(f"{'':<4}(median of {len(d['runs'])} runs, each against a raw read just before it: {each})")


def _stages(d: dict) -> None:
    print(f"{'':<4}cache load {d['cache_load']:.3f}  scan {d['scan']:.3f}  save {d['cache_save']:.3f}"
          f"  resolve {d['resolve']:.3f}  ({d['hits']} hits, {d['misses']} misses, {d['reused']} reused by hash)")
    after = d.get("after_resolve") or {}
    if "error" in after:
        print(f"{'':<4}query stages not measured: {after['error']}")
    elif after:
        print(f"{'':<4}then the query command's own work: evaluate {after['query']:.3f}  rows {after['rows']:.3f}"
              f"  JSON {after['json']:.3f} ({after['json_bytes'] / 1e6:.1f} MB)")


def print_part(r: dict, key: str | None) -> None:
    """The lines of one measure (``None``: the heading; ``"end"``: the verdicts)."""
    if key is None:
        print(f"bench letterbox: {r['dir']} ({r['files']} letter files, {r['bytes'] / 1e6:.1f} MB)"
              + ("  [generated now]" if r.get("generated") else ""))
        print(f"python {r['python']}, {r['cpus']} cpus, load average {r.get('load_average')}; page cache warm")
        bc = r.get("byte_compiled")
        if bc:
            print(f"byte-compiled the package first (compileall into {bc['dir']}/**/__pycache__, as pip does at install)"
                  + ("" if bc.get("ok") else f": FAILED for some module ({bc.get('error', 'see compileall')})"))
        if r.get("heavy_repeat", 1) < r.get("repeat", 1):
            print(f"{r['letters']} letters: the measures from an empty cache and the app run once (not --repeat "
                  f"{r['repeat']})")
        print("targets are wall-clock ratios; CPU columns count this work's own CPU time\n")
        print(f"{'measure':<34}{'wall s':>9}{'x raw':>8}{'cpu s':>9}{'x raw':>8}")
        print(f"{'raw read (open+read every file)':<34}{r['raw_read']:>9.3f}{1.0:>8.2f}{r['raw_read_cpu']:>9.3f}{1.0:>8.2f}")
    elif key == "scan_only_no_cache":
        _line("scan only, no cache", r[key])
    elif key in ("scan_resolve_cold", "scan_resolve_warm"):
        _line(f"scan+resolve, {'empty' if key.endswith('cold') else 'warm'} cache", r[key])
        _stages(r[key])
    elif key == "query_cold":
        d = r[key]
        _line("query subprocess, empty cache", d)
        if d.get("cache_written_after") is not None:
            print(f"{'':<4}(its cache write, detached, finished {d['cache_written_after']:.3f} s after it answered)")
        bench_index.print_build(d.get("index_build"))
    elif key == "query_warm":
        _line("query subprocess, warm, memoised", r[key])
        q = r[key]
        if "matches" in q:
            print(f"{'':<4}letterbox-tui query {' '.join(QUERY)} --json: {q['matches']} matches, {q['unknown']} unknown")
    elif key == "query_warm_not_memoised":
        _line("query subprocess, warm, not memo.", r[key])
        print(f"{'':<4}(the same terms in another order: the header cache is warm, the answer is derived)")
    elif key == "app":
        from .bench_app import print_lines

        print_lines(r["app"], r["raw_read"])
    elif key == "end":
        bench_index.print_verdicts(r)
        print(f"load average at the end {r.get('load_average_after')}")
    else:
        bench_index.print_one(r, key, _line)

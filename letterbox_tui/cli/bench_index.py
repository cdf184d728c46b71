"""The derived index's measures for ``letterbox-tui bench`` (issue 15's targets).

Each is a command run as a subprocess, process start included, ``--repeat`` times, each
run divided by a raw read made just before it (``bench._paired``), the median shown and
every run listed; peak memory is each process's own maximum resident set (``wait4``):

- the same query again at once, while the first run's cache and index are still being
  written (it must be no slower than the cold run);
- a different query on an unchanged letterbox, the index settled (no memo holds it);
- ``answered ID``, ``current ID``, ``show ID`` and ``exists …`` on an unchanged letterbox;
- a different query asked after the cold run while the detached builder writes the index
  (its answer memo written first): it must not wait for the build, and
  be no slower than the cold run;
- the index's build: how long after the cold answer it is written, and what the builder
  itself says it cost (``index.built``: wall and CPU seconds, its peak memory).

Below 1,000 letters (a smoke run) each is run once.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

#: issue 15's targets (ratios to the raw read), "again" against the cold run itself
TARGETS = {"query_cold": 1.5, "query_warm": 0.2, "query_different": 0.25, "answered": 0.2, "current": 0.2,
           "show": 0.2, "exists": 0.2}
#: peak memory of a query, MB, by letterbox size (issue 15)
MEMORY_MB = {100_000: 150, 1_000_000: 1500}
#: the measures made here, in order
KEYS = ("query_again_at_once", "query_different_during_build", "query_different", "answered", "current", "show",
        "exists")


#: the command to run (``bench.query_command()``), set by ``measure``
_COMMAND: list[str] = []


#: runs the command as its own child and reports its wall time, peak memory and CPU: a
#: child forked from the bench (hundreds of MB by now) would report the bench's memory as
#: its own peak (``ru_maxrss`` counts the forked pages), so the command is forked from this
#: small process instead, and its time taken here (this process's own start not counted)
_LAUNCH = r"""
import os, sys, time
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
seconds = time.perf_counter() - t
os.write(2, ("\nLBXBENCH %d %r %r %d\n" % (ru.ru_maxrss, seconds, ru.ru_utime + ru.ru_stime,
                                            os.waitstatus_to_exitcode(status))).encode())
"""


def _popen_wait4(root: Path, argv: list[str]) -> dict:
    """One command as a subprocess: wall seconds, CPU and its own peak memory (MB), its
    exit code and JSON output."""
    import subprocess
    import sys

    cmd = [*_COMMAND, "--root", str(root), *argv]
    if not os.path.isabs(cmd[0]):
        cmd[0] = os.path.abspath(cmd[0])
    env = {k: v for k, v in os.environ.items() if k != "LETTERBOX_TUI_NO_CACHE"}
    proc = subprocess.run([sys.executable, "-S", "-c", _LAUNCH, *cmd], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env)
    tail = proc.stderr.rsplit(b"\nLBXBENCH ", 1)
    if len(tail) != 2:
        return {"seconds": 0.0, "exit": proc.returncode, "error": "the launcher reported nothing"}
    rss, seconds, cpu, code = tail[1].split()
    d: dict = {"seconds": float(seconds), "exit": int(code), "cpu": float(cpu), "peak_mb": int(rss) / 1024}
    if d["exit"] not in (0, 3):
        d["error"] = (tail[0].decode("utf-8", "replace").strip().splitlines() or [f"exit {code}"])[-1]
        return d
    try:
        d["json"] = json.loads(proc.stdout)
    except ValueError:
        d["error"] = "printed no JSON"
    return d


def wait_settled(root: Path, utc: bool, limit: float = 900.0) -> float | None:
    """Seconds until nobody writes the index and it is there; None on time-out."""
    from letterbox_tui.core.speed.index import Index
    from letterbox_tui.core.speed.index_lock import WriterLock

    t = time.perf_counter()
    while time.perf_counter() - t < limit:
        ix = Index(str(root), utc)
        try:
            if not WriterLock(ix.path).held_elsewhere() and ix.open() and ix.why_not() is None:
                return time.perf_counter() - t
        except Exception:  # noqa: BLE001 - not there yet
            pass
        finally:
            ix.close()
        time.sleep(0.05)
    return None


def build_figures(root: Path, utc: bool) -> dict | None:
    """What the last full build of the index said it cost (``index.built``)."""
    from letterbox_tui.core.speed.index import Index, built

    return built(Index(str(root), utc).path)


def _building_index(root: Path, utc: bool, limit: float = 120.0) -> bool:
    """Wait until the detached builder writes the index itself (it says ``index``: the
    answer memo is written); False when it is done first."""
    from letterbox_tui.core.speed.index import Index
    from letterbox_tui.core.speed.index_lock import WriterLock

    lock = WriterLock(Index(str(root), utc).path)
    t = time.perf_counter()
    while lock.held_elsewhere() and time.perf_counter() - t < limit:
        if lock.holder() == "index":
            return True
        time.sleep(0.01)
    return False


def measure(root: Path, n: int, repeat: int, utc: bool, query: tuple[str, ...], *, command: list[str],
            paired, drop_cache, heavy: int | None = None, done=None) -> dict:
    """Every measure above; ``command`` runs ``letterbox-tui``, ``paired(root, runs, once)``
    and ``drop_cache(root, utc)`` are ``bench``'s; ``heavy``: how many runs of the measures
    from an empty cache; ``done(key, d)`` is told each measure as it is made."""
    _COMMAND[:] = command
    _paired, _drop_cache = paired, drop_cache
    out: dict = {}

    def finished(key: str, d: dict) -> None:
        out[key] = d
        if done is not None:
            done(key, d)

    q = ["query", *query, "--json"]
    if n < 1000:  # a smoke run: each measure once
        repeat = 1
    heavy = min(repeat, heavy or repeat)
    counter = iter(range(1, 1000))

    def other_terms() -> list[str]:  # another day each time: no memo holds the answer
        day = next(counter)
        return [t if not t.startswith("until=") else f"until=2026-09-{day:02d}T00:00:00Z" for t in query]

    during: list[dict] = []

    def again() -> dict:
        _drop_cache(root, utc)
        first = _popen_wait4(root, q)
        d = _popen_wait4(root, q)
        # once the builder writes the index proper (its answer memo written first)
        building = _building_index(root, utc)
        other = _strip(_popen_wait4(root, ["query", *other_terms(), "--json"]))
        other.update(building=building, cold_seconds=first["seconds"], cold_cpu=first.get("cpu"))
        during.append(other)
        d["cold_seconds"] = first["seconds"]
        d["cold_cpu"] = first.get("cpu")
        d["cold_peak_mb"] = first.get("peak_mb")
        d["settled_after"] = wait_settled(root, utc)
        d["index_build"] = build_figures(root, utc)
        d.pop("json", None)
        return d

    finished("query_again_at_once", _paired(root, heavy, again))
    ranked = sorted(during, key=lambda d: d["seconds"] / d["cold_seconds"] if d.get("cold_seconds") else 0)
    chosen = dict(ranked[(len(ranked) - 1) // 2])
    chosen["each"] = [{"seconds": d["seconds"], "cold_seconds": d["cold_seconds"], "building": d["building"]}
                      for d in during]
    finished("query_different_during_build", chosen)
    wait_settled(root, utc)

    def different() -> dict:
        d = _popen_wait4(root, ["query", *other_terms(), "--json"])
        if "json" in d:
            d["matches"] = len(d["json"]["matches"])
        d.pop("json", None)
        return d

    finished("query_different", _paired(root, repeat, different))
    probe = _popen_wait4(root, q).get("json") or {}
    letter = (probe.get("matches") or probe.get("unknown") or [{}])[0].get("id", "")
    replied = _popen_wait4(root, ["query", "type=request", "state=closed", "--json"]).get("json") or {}
    answered_id = (replied.get("matches") or [{}])[0].get("id", letter)
    for name, argv in (("answered", ["answered", answered_id, "--json"]), ("current", ["current", letter, "--json"]),
                       ("show", ["show", letter, "--json"])):
        finished(name, _paired(root, repeat, lambda argv=argv: _strip(_popen_wait4(root, argv))))
    days = iter(range(1, 1000))
    out["probe_ids"] = {"letter": letter, "answered": answered_id}
    finished("exists", _paired(root, repeat, lambda: _strip(_popen_wait4(
        root, ["exists", "type=request", "from=planner", f"until=2026-08-{next(days):02d}T00:00:00Z", "--json"]))))
    return out


def _strip(d: dict) -> dict:
    d.pop("json", None)
    return d


def judge(report: dict) -> None:
    """Targets met or missed (the median run's ratio), and the peak memory against its bound.
    CPU ratios (the command's own CPU against the raw read's) say what the work costs on a
    machine busy with other work, where wall ratios swing by a factor of two."""
    raw_cpu = report.get("raw_read_cpu") or 0
    for key in KEYS:
        d = report.get(key)
        if isinstance(d, dict) and d.get("cpu") is not None and raw_cpu > 0:
            d["cpu_ratio"] = d["cpu"] / raw_cpu
    during = report.get("query_different_during_build")
    if during and during.get("cold_seconds"):
        raw_s = report.get("raw_read") or 0
        during["ratio"] = during["seconds"] / raw_s if raw_s > 0 else None
        during["vs_cold"] = during["seconds"] / during["cold_seconds"]
    for key, target in TARGETS.items():
        d = report.get(key)
        if isinstance(d, dict) and d.get("ratio") is not None:
            d["index_target"] = target
            d["index_met"] = d["ratio"] <= target
    again = report.get("query_again_at_once")
    if again and again.get("cold_seconds"):
        again["vs_cold"] = again["seconds"] / again["cold_seconds"]
    bound = next((mb for size, mb in sorted(MEMORY_MB.items()) if report.get("letters", 0) <= size), None)
    peaks = [d.get("peak_mb") for d in (report.get(k) for k in ("query_different", "exists", "answered"))
             if isinstance(d, dict) and d.get("peak_mb")]
    report["index_peak_mb"] = max(peaks) if peaks else None
    report["cold_peak_mb"] = (again or {}).get("cold_peak_mb")
    report["memory_bound_mb"] = bound


def print_build(b: dict | None) -> None:
    """The index build's own figures (``index.built``), one line."""
    if not b:
        print(f"{'':<4}(index build: no figures kept)")
        return
    start = b.get("start_mb") or 0
    peak = b.get("peak_mb") or 0
    print(f"{'':<4}index build (detached, after the answer): {b['seconds']:.1f} s wall, {b['cpu']:.1f} s CPU, "
          f"{b['letters']} letters; peak {peak:.0f} MB ({start:.0f} MB at its start, shared with the command it "
          f"was forked from: it added {peak - start:.0f} MB)")


def print_one(r: dict, key: str, line) -> None:
    """One measure's lines (``line`` prints one measure as bench does)."""
    d = r.get(key)
    if not d:
        return
    if key == "query_again_at_once":
        line("same query again at once", d)
        if d.get("vs_cold") is not None:
            print(f"{'':<4}(right after the cold run, {d['cold_seconds']:.3f} s; "
                  f"{d['vs_cold']:.2f}x of it: target <= 1.0x {'met' if d['vs_cold'] <= 1.0 else 'MISSED'}; "
                  f"index settled {d.get('settled_after') or 0:.1f} s after)")
        print_build(d.get("index_build"))
        return
    if key == "query_different_during_build":
        line("a different query during the build", d)
        runs = "  ".join(f"{x['seconds']:.3f}/{x['cold_seconds']:.3f}" + ("" if x["building"] else " (build done)")
                         for x in d.get("each", ()))
        verdict = "met" if d.get("vs_cold", 9) <= 1.0 else "MISSED"
        print(f"{'':<4}(asked while the detached builder wrote the index after the cold run, its memo "
              f"written; {d.get('vs_cold', 0):.2f}x of that run: "
              f"target <= 1.0x {verdict}; each run/cold: {runs})")
        return
    labels = {"query_different": "a different query (index)", "answered": "answered ID (index)",
              "current": "current ID (index)", "show": "show ID (index)", "exists": "exists ... (index)"}
    line(labels[key], d)
    if "index_target" in d:
        print(f"{'':<4}target <= {d['index_target']:.2f}x: {'met' if d['index_met'] else 'MISSED'}"
              + (f"; peak {d['peak_mb']:.0f} MB" if d.get("peak_mb") else ""))


def print_verdicts(r: dict) -> None:
    """Issue 15's verdicts on the subprocess measures and the peak memory."""
    for key in ("query_cold", "query_warm"):
        d = r.get(key)
        if isinstance(d, dict) and "index_target" in d:
            print(f"{key}: issue 15's target <= {d['index_target']:.2f}x: {'met' if d['index_met'] else 'MISSED'}")
    if r.get("index_peak_mb") is not None:
        bound = r.get("memory_bound_mb")
        verdict = "" if bound is None else f" (target <= {bound} MB: {'met' if r['index_peak_mb'] <= bound else 'MISSED'})"
        print(f"peak memory: an index query {r['index_peak_mb']:.0f} MB{verdict}; "
              f"a cold query {r.get('cold_peak_mb') or 0:.0f} MB")

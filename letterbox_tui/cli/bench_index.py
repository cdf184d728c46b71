"""The derived index's measures for ``letterbox-tui bench`` (issue 15's targets).

Each is a command run as a subprocess, process start included, ``--repeat`` times, each
run divided by a raw read made just before it (``bench._paired``), the median shown and
every run listed; peak memory is each process's own maximum resident set (``wait4``):

- the same query again at once, while the first run's cache and index are still being
  written (it must be no slower than the cold run);
- a different query on an unchanged letterbox, the index settled (no memo holds it);
- ``answered ID``, ``current ID``, ``show ID`` and ``exists …`` on an unchanged letterbox;
- the index's build: how long after the cold answer it is written.

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


def measure(root: Path, n: int, repeat: int, utc: bool, query: tuple[str, ...], *, command: list[str],
            paired, drop_cache) -> dict:
    """Every measure above; ``command`` runs ``letterbox-tui``, ``paired(root, runs, once)``
    and ``drop_cache(root, utc)`` are ``bench``'s."""
    _COMMAND[:] = command
    _paired, _drop_cache = paired, drop_cache
    out: dict = {}
    q = ["query", *query, "--json"]
    if n < 1000:  # a smoke run: each measure once
        repeat = 1

    def again() -> dict:
        _drop_cache(root, utc)
        first = _popen_wait4(root, q)
        d = _popen_wait4(root, q)
        d["cold_seconds"] = first["seconds"]
        d["cold_peak_mb"] = first.get("peak_mb")
        d["settled_after"] = wait_settled(root, utc)
        d.pop("json", None)
        return d

    out["query_again_at_once"] = _paired(root, repeat, again)
    wait_settled(root, utc)
    counter = iter(range(1, 1000))

    def different() -> dict:  # another day each time: no memo holds the answer
        day = next(counter)
        terms = [t if not t.startswith("until=") else f"until=2026-09-{day:02d}T00:00:00Z" for t in query]
        d = _popen_wait4(root, ["query", *terms, "--json"])
        if "json" in d:
            d["matches"] = len(d["json"]["matches"])
        d.pop("json", None)
        return d

    out["query_different"] = _paired(root, repeat, different)
    probe = _popen_wait4(root, q).get("json") or {}
    letter = (probe.get("matches") or probe.get("unknown") or [{}])[0].get("id", "")
    replied = _popen_wait4(root, ["query", "type=request", "state=closed", "--json"]).get("json") or {}
    answered_id = (replied.get("matches") or [{}])[0].get("id", letter)
    for name, argv in (("answered", ["answered", answered_id, "--json"]), ("current", ["current", letter, "--json"]),
                       ("show", ["show", letter, "--json"])):
        out[name] = _paired(root, repeat, lambda argv=argv: _strip(_popen_wait4(root, argv)))
    days = iter(range(1, 1000))
    out["exists"] = _paired(root, repeat, lambda: _strip(_popen_wait4(
        root, ["exists", "type=request", "from=planner", f"until=2026-08-{next(days):02d}T00:00:00Z", "--json"])))
    out["probe_ids"] = {"letter": letter, "answered": answered_id}
    return out


def _strip(d: dict) -> dict:
    d.pop("json", None)
    return d


def judge(report: dict) -> None:
    """Targets met or missed (the median run's ratio), and the peak memory against its bound.
    CPU ratios (the command's own CPU against the raw read's) say what the work costs on a
    machine busy with other work, where wall ratios swing by a factor of two."""
    raw_cpu = report.get("raw_read_cpu") or 0
    for key in ("query_again_at_once", "query_different", "answered", "current", "show", "exists"):
        d = report.get(key)
        if isinstance(d, dict) and d.get("cpu") is not None and raw_cpu > 0:
            d["cpu_ratio"] = d["cpu"] / raw_cpu
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


def print_lines(r: dict, line) -> None:
    """The report's lines for these measures (``line`` prints one measure as bench does)."""
    if "query_again_at_once" not in r:
        return
    a = r["query_again_at_once"]
    line("same query again at once", a)
    if a.get("vs_cold") is not None:
        print(f"{'':<4}(right after the cold run, {a['cold_seconds']:.3f} s; "
              f"{a['vs_cold']:.2f}x of it: target <= 1.0x {'met' if a['vs_cold'] <= 1.0 else 'MISSED'}; "
              f"index settled {a.get('settled_after') or 0:.1f} s after)")
    for key, label in (("query_different", "a different query (index)"), ("answered", "answered ID (index)"),
                       ("current", "current ID (index)"), ("show", "show ID (index)"), ("exists", "exists ... (index)")):
        d = r.get(key)
        if d:
            line(label, d)
            if "index_target" in d:
                print(f"{'':<4}target <= {d['index_target']:.2f}x: {'met' if d['index_met'] else 'MISSED'}"
                      + (f"; peak {d['peak_mb']:.0f} MB" if d.get("peak_mb") else ""))
    for key in ("query_cold", "query_warm"):
        d = r.get(key)
        if isinstance(d, dict) and "index_target" in d:
            print(f"{key}: issue 15's target <= {d['index_target']:.2f}x: {'met' if d['index_met'] else 'MISSED'}")
    if r.get("index_peak_mb") is not None:
        bound = r.get("memory_bound_mb")
        verdict = "" if bound is None else f" (target <= {bound} MB: {'met' if r['index_peak_mb'] <= bound else 'MISSED'})"
        print(f"peak memory: an index query {r['index_peak_mb']:.0f} MB{verdict}; "
              f"a cold query {r.get('cold_peak_mb') or 0:.0f} MB")

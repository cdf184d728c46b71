"""How fast the MCP server answers, through the SDK's own client over stdio.

A developer's tool, not a product command. It copies the letterbox into a temporary
directory (the original is only read), starts ``letterbox-tui mcp`` on the copy with a
derived store of its own (``XDG_CACHE_HOME`` in the temporary directory), and measures:

- the first call of each tool (the first of all opens the answers);
- ``--calls`` calls of each tool on the unchanged letterbox: median and p99, in ms;
- one new letter written into the copy: how long until ``query`` reflects it, and what the
  call that first reflects it costs;
- the server's resident memory (``VmRSS`` and ``VmHWM`` from ``/proc/PID/status``);
- with ``notmuch`` installed (``--notmuch``): ``notmuch new`` and ``notmuch search
  --format=json '*'`` (every thread) on another copy of the same letters, each front
  matter made a mail header (``as_mail``), in the same run.

Every time is also given as a ratio to a raw read of every letter file, taken just before.

    python scripts/bench_mcp.py --letterbox /work/bench/b10k
    python scripts/bench_mcp.py --letterbox /work/bench/b100k --calls 50 --notmuch
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.bench import letter_files, load1, pick_letter, raw_read, say  # noqa: E402

#: the accountability question (SPEC 6), as in scripts/bench.py
QUERY = ["state=open", "answered=no", "type=request", "until=2026-10-04T00:00:00Z"]
AT = "2026-12-01T00:00:00Z"
#: the targets of issue 25 at 100,000 letters
TARGET_MEDIAN_MS, TARGET_P99_MS, TARGET_AFTER_WRITE_S, TARGET_AFTER_COST_MS, TARGET_RSS_MB = 20, 100, 1.0, 50, 200


#: the size of a part asked of the long answers (``limit``), as an agent would page them
PART = 100


def tool_calls(letter_id: str, seat: str) -> list[tuple[str, str, dict]]:
    """(label, tool, arguments) of each measured call: every tool, then the long answers
    asked a part at a time."""
    calls = [
        ("query", {"terms": QUERY}),
        ("exists", {"terms": ["type=ruling"]}),
        ("show", {"id": letter_id}),
        ("current", {"id": letter_id}),
        ("answered", {"id": letter_id}),
        ("thread", {"id": letter_id}),
        ("owed", {"at": AT}),
        ("disputes", {}),
        ("digest", {"at": AT}),
        ("check", {}),
        ("leases", {}),
        ("inbox", {"seat": seat, "at": AT}),
    ]
    parts = [("query", {"terms": QUERY, "limit": PART}), ("owed", {"at": AT, "limit": PART})]
    return [(name, name, arguments) for name, arguments in calls] + [
        (f"{name} limit={PART}", name, arguments) for name, arguments in parts]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def children_of(pid: int) -> list[int]:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(int(x) for x in fh.read().split())
        except OSError:
            pass
    return out


def memory(pid: int) -> dict[str, float]:
    got = {}
    with open(f"/proc/{pid}/status") as fh:
        for text in fh:
            key, _, value = text.partition(":")
            if key in ("VmRSS", "VmHWM"):
                got[key] = int(value.split()[0]) / 1024
    return got


def copy_letterbox(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True)


def new_letter(root: Path, seat: str, tag: str = "0000beef") -> str:
    letter_id = time.strftime("%Y-%m-%dT%H%M%S", time.gmtime()) + f"-planner-request-bench-mcp-{tag}"
    text = (f"---\nid: {letter_id}\nfrom: planner\nto: {seat}\ntype: request\nrequires_ack: true\n"
            f"sent: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\nsubject: bench\n---\nbody\n")
    path = root / seat / "inbox" / f"{letter_id}.md"
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text)
    os.rename(tmp, path)
    return letter_id


async def drive(root: Path, env: dict[str, str], calls: int, budget: float, out: dict) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    files = letter_files(root)
    letter_id = pick_letter(files)
    seat = next(p.name for p in sorted(root.iterdir()) if (p / "inbox").is_dir())
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "letterbox_tui", "--root", str(root), "mcp"])
    before = set(children_of(os.getpid()))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            server = [p for p in children_of(os.getpid()) if p not in before]
            pid = server[0] if server else None

            async def timed(name: str, arguments: dict):
                t = time.perf_counter()
                result = await session.call_tool(name, arguments)
                elapsed = time.perf_counter() - t
                if result.is_error:
                    raise SystemExit(f"bench_mcp: {name} failed: {say(result.content[0].text)}")
                return elapsed, result

            first = {}
            for label, name, arguments in tool_calls(letter_id, seat):
                first[label] = (await timed(name, arguments))[0] * 1000
            out["first_ms"] = first
            if pid:
                out["rss_after_first_mb"] = memory(pid)
            steady = {}
            for label, name, arguments in tool_calls(letter_id, seat):
                times, reused, began = [], 0, time.perf_counter()
                for _ in range(calls):
                    if len(times) >= 5 and time.perf_counter() - began > budget:
                        break  # a tool this slow: fewer calls, and said so (calls below)
                    elapsed, result = await timed(name, arguments)
                    times.append(elapsed * 1000)
                    reused += bool((result.meta or {}).get("letterbox-tui", {}).get("reused"))
                # the SDK client checks every result against the tool's outputSchema (jsonschema):
                # the same check once more, to tell its share of a call
                t = time.perf_counter()
                await session.validate_tool_result(name, result)
                steady[label] = {"median": statistics.median(times), "p99": pct(times, 99), "max": max(times),
                                "client_validation": (time.perf_counter() - t) * 1000, "reused": reused,
                                "bytes": len(result.content[-1].text),
                                "calls": len(times)}
            out["steady_ms"] = steady
            # one new letter: how long until a query naming it finds it (a small result, so
            # that the time is the server's freshness, not the size of what it sends), and
            # what the seat's requests cost just after
            written = new_letter(root, seat)
            t0 = time.perf_counter()
            while True:
                _, result = await timed("query", {"terms": [f"id={written}"]})
                if result.structured_content["matches"]:
                    break
                if time.perf_counter() - t0 > 120:
                    raise SystemExit("bench_mcp: the new letter never showed")
            reflected = time.perf_counter() - t0
            cost, result = await timed("query", {"terms": ["type=request", f"to={seat}"]})
            if not any(r["id"] == written for r in result.structured_content["matches"]):
                raise SystemExit("bench_mcp: the seat's requests lack the new letter")
            out["after_write"] = {"reflected_s": reflected, "that_call_ms": cost * 1000,
                                  "that_call_rows": len(result.structured_content["matches"])}
            # the same question a part at a time, once more letters came (a second new one)
            written = new_letter(root, seat, "0001beef")
            t0 = time.perf_counter()
            while not (await timed("query", {"terms": [f"id={written}"]}))[1].structured_content["matches"]:
                if time.perf_counter() - t0 > 120:
                    raise SystemExit("bench_mcp: the second new letter never showed")
            part_cost, _ = await timed("query", {"terms": ["type=request", f"to={seat}"], "limit": PART})
            out["after_write"]["part_call_ms"] = part_cost * 1000
            again = [(await timed("query", {"terms": QUERY}))[0] * 1000 for _ in range(min(calls, 10))]
            out["after_write"]["query_again_median_ms"] = statistics.median(again)
            if pid:
                out["rss_end_mb"] = memory(pid)


def as_mail(src: Path, dst: Path) -> None:
    """The same letters as notmuch reads mail: each front matter block, without its fences,
    is the message's header (notmuch ignores a file that starts with ``---`` as non-mail)."""
    for path in letter_files(src):
        with open(path, "rb") as fh:
            data = fh.read()
        if data.startswith(b"---\n"):
            head, sep, body = data[4:].partition(b"\n---\n")
            data = head + b"\n\n" + body if sep else data
        out = dst / os.path.relpath(path, src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)


def notmuch(src: Path, tmp: Path, out: dict) -> None:
    if shutil.which("notmuch") is None:
        out["notmuch"] = "not installed"
        return
    mail = tmp / "notmuch-mail"
    as_mail(src, mail)
    config = tmp / "notmuch-config"
    config.write_text(f"[database]\npath={mail}\n[user]\nname=bench\nprimary_email=bench@example.org\n"
                      "[new]\ntags=unread;\nignore=\n[search]\nexclude_tags=\n[maildir]\nsynchronize_flags=false\n")
    env = {**os.environ, "NOTMUCH_CONFIG": str(config)}
    t = time.perf_counter()
    done = subprocess.run(["notmuch", "new", "--quiet"], env=env, capture_output=True, text=True)
    new_s = time.perf_counter() - t
    searches = []
    count = 0
    for _ in range(3):
        t = time.perf_counter()
        got = subprocess.run(["notmuch", "search", "--format=json", "*"],
                             env=env, capture_output=True, text=True)
        searches.append(time.perf_counter() - t)
        count = len(json.loads(got.stdout or "[]"))
    said = done.stderr.strip().splitlines()
    out["notmuch"] = {"new_s": new_s, "new_rc": done.returncode, "search_s": statistics.median(searches),
                      "threads": count, "note": say(said[-1]) if said else ""}


def main(argv: list[str] | None = None) -> int:
    import anyio

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--letterbox", required=True, type=Path, help="a letterbox, only read (it is copied)")
    ap.add_argument("--calls", type=int, default=50, help="calls of each tool on the unchanged letterbox")
    ap.add_argument("--budget", type=float, default=120.0,
                    help="seconds of calls per tool, after which it stops at its fifth call or later")
    ap.add_argument("--notmuch", action="store_true", help="also time notmuch new and search on a copy")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = ap.parse_args(argv)
    if not args.letterbox.is_dir():
        print(f"bench_mcp: {say(args.letterbox)}: not a directory", file=sys.stderr)
        return 2
    out: dict = {"letterbox": str(args.letterbox), "calls": args.calls}
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp_name:
        tmp = Path(tmp_name)
        root = tmp / "box"
        copy_letterbox(args.letterbox, root)
        files = letter_files(root)
        raw_read(files)  # warm
        out["raw_read_s"], _ = raw_read(files)
        out["letters"] = len(files)
        out["load1"] = load1()
        env = {k: v for k, v in os.environ.items() if not k.startswith("LETTERBOX")}
        env.update(XDG_CACHE_HOME=str(tmp / "cache"), XDG_CONFIG_HOME=str(tmp / "config"),
                   PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""))
        anyio.run(drive, root, env, args.calls, args.budget, out)
        if args.notmuch:
            notmuch(args.letterbox, tmp, out)
        out["load1_end"] = load1()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        report(out)
    return 0


def report(out: dict) -> None:
    raw_ms = out["raw_read_s"] * 1000
    print(f"{say(out['letterbox'])}: {out['letters']} letters, raw read {raw_ms:.0f} ms, "
          f"load {out['load1']}..{out['load1_end']}")
    print(f"{'tool':<16} {'first ms':>9} {'median ms':>10} {'p99 ms':>8} {'median/raw':>11} "
          f"{'validate ms':>12} {'reused':>7} {'KB':>7}")  # reused: of the calls made
    for name, first in out["first_ms"].items():
        s = out["steady_ms"][name]
        print(f"{name:<16} {first:9.1f} {s['median']:10.1f} {s['p99']:8.1f} {s['median'] / raw_ms:11.4f} "
              f"{s['client_validation']:12.1f} {s['reused']:4d}/{s['calls']:<2d} {s['bytes'] / 1024:7.0f}"
              f"{'' if s['median'] <= TARGET_MEDIAN_MS and s['p99'] <= TARGET_P99_MS else '  (over target)'}")
    a = out["after_write"]
    print(f"after one new letter: found by id {a['reflected_s']:.2f} s after the write "
          f"({a['reflected_s'] * 1000 / raw_ms:.2f}x raw); the seat's requests then ({a['that_call_rows']} rows) "
          f"{a['that_call_ms']:.0f} ms ({a['that_call_ms'] / raw_ms:.2f}x raw), again {a['query_again_median_ms']:.1f} ms")
    if "part_call_ms" in a:
        print(f"after a second new letter: the seat's requests, a part of {PART} rows, {a['part_call_ms']:.0f} ms "
              f"({a['part_call_ms'] / raw_ms:.3f}x raw)")
    for key in ("rss_after_first_mb", "rss_end_mb"):
        if key in out:
            print(f"server {key[:-3]}: VmRSS {out[key]['VmRSS']:.0f} MB, VmHWM {out[key]['VmHWM']:.0f} MB")
    nm = out.get("notmuch")
    if isinstance(nm, dict):
        print(f"notmuch new {nm['new_s']:.2f} s ({nm['new_s'] * 1000 / raw_ms:.1f}x raw, rc {nm['new_rc']}), "
              f"search --format=json {nm['search_s'] * 1000:.0f} ms ({nm['search_s'] * 1000 / raw_ms:.2f}x raw, "
              f"{nm['threads']} threads) {nm['note']}")
    elif nm:
        print(f"notmuch: {nm}")


if __name__ == "__main__":
    sys.exit(main())

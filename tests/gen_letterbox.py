"""Write a realistic protocol letterbox of N letters (deterministic by seed).

    python tests/gen_letterbox.py DIR --letters 100000 [--seed 1]

A thin command over ``letterbox_tui.core.speed.benchgen`` (what ``letterbox-tui bench`` uses): tasks
with deadlines, acks with sidecars, answered tasks moved to processed/, info and status
letters, threads and supersession chains across eight seats.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from letterbox_tui.core.speed import benchgen  # noqa: E402


def generate(root, letters: int, seed: int = 1) -> Path:
    """Write the letterbox (what the tests use)."""
    return benchgen.generate(root, letters, seed)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir", help="where to write it (missing or empty)")
    p.add_argument("--letters", type=int, default=100_000, metavar="N")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    t = time.perf_counter()
    try:
        benchgen.generate(args.dir, args.letters, args.seed)
    except FileExistsError as exc:
        print(f"gen_letterbox: {exc}", file=sys.stderr)
        return 2
    print(f"{args.letters} letters in {args.dir} ({time.perf_counter() - t:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

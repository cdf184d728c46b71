"""Write a realistic protocol letterbox of N letters (deterministic by seed).

    python tests/gen_letterbox.py DIR --letters 100000 [--seed 1]

The bench's generator (``scripts/benchgen.py``), as the tests call it: tasks with
deadlines, acks with sidecars, answered tasks moved to processed/, info and status letters,
threads and supersession chains across eight seats.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts.benchgen import generate, main  # noqa: E402, F401 - generate: what the tests use

if __name__ == "__main__":
    raise SystemExit(main())

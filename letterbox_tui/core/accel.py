"""The optional C accelerator (``_scanio``, built from ``_scanio.c`` when a compiler is
present at install time), or None: then the pure-Python code beside each use runs, with
the same results. ``LETTERBOX_TUI_PURE=1`` switches it off (the tests run both ways)."""

from __future__ import annotations

import os
from types import ModuleType


def scanio() -> ModuleType | None:
    if os.environ.get("LETTERBOX_TUI_PURE"):
        return None
    try:
        from . import _scanio
    except ImportError:
        return None
    return _scanio


def threads() -> int:
    """How many threads the accelerator's system calls run on (this machine's CPUs, 1-4)."""
    return max(1, min(4, os.cpu_count() or 1))

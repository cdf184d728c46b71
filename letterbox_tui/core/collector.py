"""The one way to pause the cyclic garbage collector around work that makes many
containers and no reference cycles (a scan, the resolver's indexes, a reading command):
the collector's passes over hundreds of thousands of letters would cost more than the
work. Reference counting still frees everything as usual."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector, then leave it as it was."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()

"""The one place either face (the command line, the app) gets its snapshot from: with the
derived header cache or without it, through the C reader or the pure one.

``LETTERBOX_TUI_NO_CACHE=1`` (no derived file is read or written) and
``LETTERBOX_TUI_PURE=1`` (the pure-Python reader) are read here and in the rest of the
speed wing, never by the core, which takes its cache and reader as parameters."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable
from datetime import datetime

from letterbox_tui.core import scan as scan_mod
from letterbox_tui.core.collector import paused_gc
from letterbox_tui.core.model import Snapshot

from . import accel, after
from .cache import HeaderCache
from .files import cache_wanted


def scan_letterbox(
    root: str | os.PathLike[str],
    participants: Iterable[str] | None = None,
    *,
    id_time_is_utc: bool,
    now: datetime | None = None,
    background: bool = False,
    freeze: bool = False,
    use_cache: bool | None = None,
    pure: bool | None = None,
) -> Snapshot:
    """Scan ``root`` the fastest way allowed here. ``use_cache`` defaults to
    ``LETTERBOX_TUI_NO_CACHE`` unset, ``pure`` to ``LETTERBOX_TUI_PURE`` set; the other
    arguments are ``scan_cached``'s (unused without the cache)."""
    reader = accel.reader(pure)
    if not (cache_wanted() if use_cache is None else use_cache):
        return scan_mod.scan(root, participants, id_time_is_utc=id_time_is_utc, now=now, reader=reader)
    return scan_cached(
        root, participants, id_time_is_utc=id_time_is_utc, now=now, background=background, freeze=freeze,
        reader=reader,
    )


def scan_cached(
    root, participants=None, *, id_time_is_utc: bool, now=None, background: bool = False, freeze: bool = False,
    reader=None,
) -> Snapshot:
    """``scan`` with the derived cache: load it, scan, save what changed (best effort).

    A cache that cannot be written (read-only home, full disk) costs speed, never answers.
    With ``background`` (the command line), the save is left for ``after.run_after_answer``:
    the answer never waits for the cache, and a large save is written by a detached
    process once the answer is out. ``reader``: default ``accel.reader()``.

    The cyclic garbage collector is paused while the cache loads and the scan runs: they
    make hundreds of thousands of tuples and letters and no cycles, and the collector's
    passes over them cost a quarter of the scan or more. With ``freeze`` (a short-lived
    command), what exists afterwards is moved out of the collector's sight for good
    (``gc.freeze``), so resolving and querying do not keep re-walking the letters.
    """
    reader = accel.reader() if reader is None else reader
    with paused_gc():
        cache = HeaderCache(root, id_time_is_utc)
        snapshot = scan_mod.scan(
            root, participants, id_time_is_utc=id_time_is_utc, cache=cache, now=now, reader=reader
        )
        if freeze and len(snapshot.letters) >= after.BACKGROUND_ROWS:
            gc.freeze()  # only for big letterboxes: a test run calling this stays collectable
    keep = [s for s in snapshot.seats if participants is not None and s not in set(participants)]
    if background:
        if cache.needs_save(keep):
            after.after_answer(lambda: cache.save(keep_seats=keep), big=cache.pending() >= after.BACKGROUND_ROWS)
        return snapshot
    try:
        cache.save(keep_seats=keep)
    except OSError:
        pass
    return snapshot


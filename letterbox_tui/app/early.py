"""Owed & late from the derived index, started before Textual is imported.

``letterbox-tui`` with no command calls ``start`` before it imports the app: it reads the
owed letters' rows from the index and builds them (``owed_preview_model``) while its stat
proof runs in a thread (without the interpreter lock); for a letterbox of more than
``READ_HERE_LETTERS`` letters, both are done in another thread while the app's modules
load.
``LetterboxApp`` takes the result for its root (``take``) instead of starting its own.
Only the command line does this, with the wall clock: an app made with a fixed clock (the
tests, the screenshots) starts its own (``ScanningMixin.prefetch_owed``).

This module imports neither Textual nor the app's other modules.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from datetime import datetime, timezone

#: a letterbox with fewer readable letters is scanned whole at once (quick enough); from
#: here on the index is built (``after.INDEX_DETACHED_ROWS``) and the preview pays: at 10,000
#: letters the owed view was filled 0.50 s after the app was made, now 0.19 s (load 4)
PREVIEW_MIN_LETTERS = 2_000
#: up to this many letters, ``start`` reads the owed rows itself before Textual loads
#: (~0.08 s at 100,000); a bigger letterbox's are read in the preview's thread, the app
#: drawn meanwhile
READ_HERE_LETTERS = 250_000
#: a preview of this many owed letters is frozen out of the collector's sight once made
FREEZE_ROWS = 2_000
#: real root -> (the future model, the settings it was read with)
_pending: dict[str, tuple[Future, object]] = {}


def owed_preview_model(root: str, settings, at: datetime, begun=None):
    """The app's model of Owed & late alone from the derived index (``AppModel.from_preview``),
    or None when the index cannot vouch for the letterbox (``core.speed.index_owed``).
    ``begun``: its rows already read (``index_owed.begin_preview``, as ``start`` does)."""
    from letterbox_tui.core.collector import paused_gc
    from letterbox_tui.core.speed.index_owed import begin_preview

    def model(preview):  # while the proof runs
        from .model import AppModel  # (Textual: imported by the app meanwhile, or here)

        return AppModel.from_preview(root, settings, preview, at)

    with paused_gc():  # tens of thousands of small objects and no cycles (as the scan pauses it)
        if begun is None:
            begun = begin_preview(root, id_time_is_utc=settings.id_time_is_utc, now=at,
                                  min_letters=PREVIEW_MIN_LETTERS)
        made = None if begun is None else begun.finish(model)
        if made is not None and len(made.snapshot.letters) >= FREEZE_ROWS:
            # out of the collector's sight (as the scan's letters, ``app.scanning``): its first
            # pass after this walked them all, holding the interpreter ~60 ms while the app
            # drew its first frames, and again while it drew these rows
            gc.freeze()
        return made


def start(root: str | None, participants: Iterable[str] | None = None, view: str | None = None,
          letter: str | None = None) -> None:
    """Start reading Owed & late for the app about to open on ``root`` (best effort: a
    letterbox that cannot be opened is left for the app to refuse). The owed letters' rows
    are read and built here, before Textual is imported (SQLite gives up the interpreter
    lock at every row: beside the imports each row waited its turn, ~0.6 s for 0.06 s of
    work at 100k), with the stat proof started in a thread; above ``READ_HERE_LETTERS``
    letters both are left to another thread while the app's modules load."""
    if participants or letter or (view or "owed") != "owed":
        return
    from letterbox_tui.core.errors import LetterboxError
    from letterbox_tui.core.root import resolve_root
    from letterbox_tui.core.settings import load_settings
    from letterbox_tui.core.speed.files import cache_wanted

    if not cache_wanted():
        return
    try:
        resolved = os.path.realpath(resolve_root(root))
        settings = load_settings(resolved)
    except (LetterboxError, OSError):
        return
    at = datetime.now(timezone.utc)
    future: Future = Future()
    _pending.clear()  # one app a process: what an app that never opened left is dropped
    try:
        from letterbox_tui.core.speed.index_owed import begin_preview

        begun = begin_preview(resolved, id_time_is_utc=settings.id_time_is_utc, now=at,
                              min_letters=PREVIEW_MIN_LETTERS, read_upto=READ_HERE_LETTERS)
    except Exception as exc:  # noqa: BLE001 - a head start only: the app scans anyway
        future.set_exception(exc)
        begun = None
    else:
        if begun is None:
            future.set_result(None)

    def run() -> None:
        try:
            future.set_result(owed_preview_model(resolved, settings, at, begun))
        except Exception as exc:  # noqa: BLE001 - a head start only: the app scans anyway
            future.set_exception(exc)

    _pending[resolved] = (future, settings)
    if begun is not None and begun.rows_read:
        # built here too, the proof still running beside (up to ``READ_HERE_LETTERS``:
        # ~0.1 s at 100k): built in a thread beside Textual's import, the two took turns
        # with the interpreter, cost ~35 ms more CPU between them, and the app's first
        # frame often came before the rows (then a second frame showed them)
        run()
    elif begun is not None:  # a bigger letterbox: the app is drawn meanwhile
        threading.Thread(target=run, name="owed-preview", daemon=True).start()


def take(root: str, settings) -> Future | None:
    """The future model ``start`` began for ``root`` with these settings, once."""
    got = _pending.pop(root, None)
    if got is None or got[1] != settings:
        return None
    return got[0]

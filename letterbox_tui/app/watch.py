"""Noticing that letters arrived, moved or changed.

``watch_letterbox`` runs in a thread worker and uses ``watchfiles`` (inotify on Linux,
FSEvents on macOS, as posting does): it blocks in the kernel instead of waking to stat
every folder, and hands over a burst of changes (a writer's temporary file, its rename,
its sidecar) as one batch after ``debounce`` ms of quiet. The app coalesces batches once
more with a short timer before it rescans. Where no native watcher is available (or its
watch limit is reached) it returns False and the app keeps the mtime poll of
``folder_fingerprint`` as the fallback.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from textual.message import Message


@dataclass
class FilesChanged(Message):
    """A batch of file events under the letterbox (``count`` paths)."""

    count: int


def watch_letterbox(root: str, stop: threading.Event, changed: Callable[[int], None],
                    cancelled: Callable[[], bool] = lambda: False, ready: Callable[[], None] = lambda: None) -> bool:
    """Call ``changed(n)`` for each batch of changes under ``root`` until ``stop`` is set,
    and ``ready()`` once the watch is set up (within ``rust_timeout`` of it: watchfiles walks
    the whole tree first, holding the interpreter, for a while on a large letterbox). Returns False
    at once when no native watcher can be had (the caller polls instead)."""
    try:
        import watchfiles
    except ImportError:
        return False
    try:
        first = True
        for batch in watchfiles.watch(root, stop_event=stop, debounce=200, step=50, rust_timeout=500,
                                      yield_on_timeout=True, raise_interrupt=False, force_polling=False,
                                      ignore_permission_denied=True):
            if first:
                first = False
                ready()
            if cancelled() or stop.is_set():
                break
            if batch:
                changed(len(batch))
    except (OSError, RuntimeError):  # no inotify, its watch limit reached, root gone
        return False
    return True


def git_fingerprint(root: str) -> tuple:
    """For a letterbox in git, the stat marks of what a fetch or a commit made outside the
    app moves (``FETCH_HEAD``, ``HEAD``, ``packed-refs`` and the remote-tracking refs with
    their logs); () outside git. The file watcher skips ``.git``, so the poll compares
    these to notice a ``git fetch`` run in another terminal."""
    from letterbox_tui.core.sync import find_repo

    repo = find_repo(root)
    if repo is None:
        return ()
    g, c = repo.git_dir, repo.common_dir
    paths = [os.path.join(g, "FETCH_HEAD"), os.path.join(g, "HEAD"), os.path.join(c, "packed-refs")]
    for base in (os.path.join(c, "refs", "remotes"), os.path.join(c, "logs", "refs", "remotes")):
        for top, dirs, files in os.walk(base):
            dirs.sort()
            paths.extend(os.path.join(top, f) for f in sorted(files))
    out: list = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((p, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append((p, None))
    return tuple(out)


def folder_fingerprint(root: str) -> tuple:
    """Directory mtimes of the root, each seat, its inbox/ and processed/, and the
    settings file: a new, moved or removed letter (or sidecar) changes one of them."""
    out: list = []
    try:
        st = os.stat(root)
        out.append(("", st.st_mtime_ns))
        with os.scandir(root) as it:
            names = sorted(e.name for e in it if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
        for name in names:
            for sub in ("", "/inbox", "/processed"):
                try:
                    out.append((name + sub, os.stat(os.path.join(root, name + sub), follow_symlinks=False).st_mtime_ns))
                except OSError:
                    out.append((name + sub, None))
        try:
            out.append(("toml", os.stat(os.path.join(root, "letterbox-tui.toml")).st_mtime_ns))
        except OSError:
            pass
    except OSError:
        out.append(("error", None))
    return tuple(out)

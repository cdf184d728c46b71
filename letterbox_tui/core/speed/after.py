"""Work a command leaves until its answer is out (the header cache's save, the answer
memo): the answer never waits for it, and a large piece of it is done by a detached
process once the answer is out. Failures cost speed, never answers."""

from __future__ import annotations

import os

#: below this many rows a save is quick enough to do in line
BACKGROUND_ROWS = 20_000
#: the derived index's build costs ~50 µs a letter (the save ~9 µs): from this many
#: letters up it is left to the detached process, so a command ends with its answer
#: (a cold query at 10,000 letters ended 0.7 s after start, 0.5 s of it the build)
INDEX_DETACHED_ROWS = 2_000

_after: list = []
_after_big = False


def after_answer(work, *, big: bool, first: bool = False) -> None:
    """Leave ``work()`` for ``run_after_answer``; ``big``: worth a detached process;
    ``first``: before the work already left (what a waiting command needs soonest)."""
    global _after_big
    if first:
        _after.insert(0, work)
    else:
        _after.append(work)
    _after_big = _after_big or big


def run_after_answer(*, ending: bool = False) -> list:
    """Run the work left by ``after_answer``: in one detached process when any of it is
    big (the caller exits at once, and whoever reads its output gets it all without
    waiting), else here. ``ending``: this process ends right after (see ``detached``).
    Returns the work (and so the cache and answer it holds), for a caller that ends at
    once to keep rather than free object by object."""
    global _after_big
    work, big = list(_after), _after_big
    _after.clear()
    _after_big = False
    if not work:
        return work

    def every() -> None:
        for w in work:
            try:
                w()
            except OSError:
                pass

    if not (big and detached(every, ending=ending)):
        every()
    return work


def detached(work, *, ending: bool = False) -> bool:
    """Run ``work()`` in a detached grandchild process; False when that is not safe here.

    Only a single-threaded process forks (a fork with other threads alive may deadlock).
    The child forks again and exits at once, so nothing is left to reap; the grandchild
    closes the standard streams first, so whoever waits on our output is not kept waiting.
    With ``ending`` (this process ends right after: the console script) the child does
    the work itself and is not waited for: once we end, init adopts and reaps it.
    A failure in ``work`` is no error (a cache that cannot be written costs speed only).
    """
    import threading

    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid:
        if not ending:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
        return True
    try:  # the child
        if ending or os.fork() == 0:  # the grandchild (or, when ending, the child) works
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            try:
                work()
            except BaseException:  # noqa: BLE001 - a cache that cannot be written is no error
                pass
    except BaseException:  # noqa: BLE001
        pass
    finally:
        os._exit(0)

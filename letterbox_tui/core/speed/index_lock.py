"""The derived index's writer lock: an ``flock`` on ``<index>.lock`` (one writer at a
time, across processes).

The holder says in the lock file what it is doing (``announce``), so that a command that
finds it held knows whether waiting is worth it (``holder``): ``build KEY`` while a command
that will build the index afterwards answers its question (``KEY``: its answer memo's key,
``-`` when it has none), then ``index`` while the detached builder writes the index (that
question's memo is written by then), ``refresh`` while a command brings it up to date. What
it says is only a hint about speed: a command that goes without waiting answers from the
letters, which is always right."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time

from letterbox_tui.core import flags as fsflags

_ANNOUNCE_MAX = 200


class WriterLock:
    """An ``flock`` on ``<index>.lock``: one writer at a time. The descriptor is inherited
    by a forked child, which keeps the lock until it is done (a detached builder)."""

    def __init__(self, path: str) -> None:
        self.path = path + ".lock"
        self.fd: int | None = None

    def acquire(self, wait: float, poll=None) -> bool:
        """Take the lock, waiting up to ``wait`` seconds; ``poll()`` is asked between tries
        and a true result gives up the wait (what was waited for arrived another way)."""
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        fd = os.open(self.path, fsflags.LOCK | os.O_CREAT, 0o600)
        end = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.fd = fd
                self.announce("")  # what an earlier holder said is not ours
                return True
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    return False
            if time.monotonic() >= end or (poll is not None and poll()):
                os.close(fd)
                return False
            time.sleep(0.02)

    def held_elsewhere(self) -> bool:
        """True when another process holds the lock right now."""
        try:
            fd = os.open(self.path, fsflags.LOCK)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)
        return False

    def announce(self, what: str) -> None:
        """Say what the holder does now (see the module's words); never fails."""
        if self.fd is None:
            return
        data = what.encode("utf-8", "replace")[:_ANNOUNCE_MAX]
        with contextlib.suppress(OSError):
            os.pwrite(self.fd, data + b"\n", 0)
            os.ftruncate(self.fd, len(data) + 1)

    def holder(self) -> str | None:
        """What the holder said it does ("" when nothing), None when the file is unreadable."""
        try:
            fd = os.open(self.path, fsflags.READ)
        except OSError:
            return None
        try:
            return os.read(fd, _ANNOUNCE_MAX + 1).decode("utf-8", "replace").split("\n", 1)[0]
        except OSError:
            return None
        finally:
            os.close(fd)

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

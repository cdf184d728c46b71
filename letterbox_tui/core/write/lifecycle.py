"""The protocol's lifecycle lock (SPEC 4): one writer at a time closes, accepts or moves a
letter.

Before a reply is published or a letter moved, the writer takes
``<seat>/inbox/<name>.lifecycle.lock``: ``mkdir`` of that directory, then a ``pid`` file in
it holding the writer's process id. A lock whose pid is not alive, or that has had no pid
for 2 seconds, is stale and is removed; otherwise the writer retries every 10 ms for about
5 seconds and then refuses (``LetterboxError``: exit 2, nothing written). The caller checks,
under the lock, that the letter is still where it was. The lock is released on every path:
errors, ``KeyboardInterrupt`` (SIGINT) and SIGTERM (turned into ``Terminated`` while the
lock is held, in the main thread).

The lock is the protocol's, shared with its own ``letterbox reply``; this module never
removes a lock that is not stale, and never a directory holding anything but ``pid``. Our
writers break a stale lock one at a time (a hidden ``.<lock>.break`` guard), so two of them
racing over a dead writer's lock cannot both end up holding it. ``leftovers`` lists, for
``check``, the stale locks and guards an inbox holds, judged by the same rule.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .. import flags as fsflags
from ..errors import LetterboxError, Terminated

SUFFIX = ".lifecycle.lock"
#: how long a lock may have no pid before it is stale (the protocol's 2 s)
NO_PID_STALE = 2.0
#: how long a writer waits for a held lock by default (the protocol's ~5 s)
TIMEOUT = 5.0
#: the retry interval (the protocol's 10 ms)
INTERVAL = 0.01
#: the environment variable that sets the default timeout (seconds), for scripts and tests
TIMEOUT_ENV = "LETTERBOX_TUI_LOCK_TIMEOUT"
_PID_MAX = 16  # bytes read from a pid file: a pid, never a stream


def lock_name(letter_name: str) -> str:
    """The lock directory's name for the letter file ``letter_name`` (``<id>.md``)."""
    return letter_name + SUFFIX


def default_timeout() -> float:
    """``$LETTERBOX_TUI_LOCK_TIMEOUT`` seconds when it is a number from 0 to 600, else 5."""
    raw = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return TIMEOUT
    return value if 0 <= value <= 600 else TIMEOUT


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    except OSError:
        return True
    return True


def _read_pid(dfd: int) -> tuple[str, float] | None:
    """The pid file's text and modification time, or None when there is no pid file.
    Never follows a symlink, never blocks on a FIFO."""
    try:
        fd = os.open("pid", fsflags.READ, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except PermissionError:
        return ("unreadable", time.time())  # another user's: never judged stale, never removed
    except OSError:
        return ("", 0.0)  # there, but not a pid file (a symlink): not a live writer's
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ("", st.st_mtime)
        data = os.read(fd, _PID_MAX)
    except OSError:
        return ("", 0.0)
    finally:
        os.close(fd)
    return (data.decode("ascii", "replace").strip(), st.st_mtime)


def _pid_of(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) <= 10 else None


GUARD_SUFFIX = SUFFIX + ".break"


def guard_name(lock: str) -> str:
    """The hidden guard our writers hold while breaking the stale lock ``lock``."""
    return f".{lock}.break"


@dataclass(slots=True, frozen=True)
class Leftover:
    """A lock nobody holds any more, found in an inbox: a stale lifecycle lock (``kind``
    "lock": its writer's ``pid`` is not running, or it has had no pid for 2 seconds) or a
    lock-breaking guard a killed writer left (``kind`` "guard")."""

    kind: str
    name: str  # the entry's name in the inbox
    letter_name: str  # the letter file it is about (``<id>.md``)
    age: float  # seconds since the entry (or its pid file) last changed
    pid: int | None


def leftovers(inbox_fd: int, now: float | None = None) -> list[Leftover]:
    """Every stale lifecycle lock and every guard at least 2 seconds old in the open inbox
    ``inbox_fd``, by name. Reads only (a lock is judged as a writer judges it before
    breaking it, ``_break_guarded``); never raises."""
    when = time.time() if now is None else now
    try:
        names = sorted(n for n in os.listdir(inbox_fd) if SUFFIX in n)
    except OSError:
        return []
    out = []
    for name in names:
        try:
            st = os.stat(name, dir_fd=inbox_fd, follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        age = max(0.0, when - st.st_mtime)
        if name.startswith(".") and name.endswith(GUARD_SUFFIX):
            if age >= NO_PID_STALE:
                out.append(Leftover("guard", name, name[1:-len(GUARD_SUFFIX)], age, None))
            continue
        if not name.endswith(SUFFIX) or name.startswith("."):
            continue
        stale = _stale_lock(inbox_fd, name, when)
        if stale is not None:
            out.append(Leftover("lock", name, name[:-len(SUFFIX)], stale[0], stale[1]))
    return out


def _stale_lock(inbox_fd: int, name: str, now: float) -> tuple[float, int | None] | None:
    """(age, pid) of the lock ``name`` when it is stale, else None."""
    try:
        dfd = os.open(name, fsflags.DIR, dir_fd=inbox_fd)
    except OSError:
        return None
    try:
        held = _read_pid(dfd)
        if held is None:
            age = now - os.fstat(dfd).st_mtime
            return (max(0.0, age), None) if age >= NO_PID_STALE else None
        text, mtime = held
        pid = _pid_of(text)
        age = max(0.0, now - mtime)
        if pid is not None:
            return None if _alive(pid) else (age, pid)
        if text == "unreadable":
            return None  # another user's: never judged stale
        return (age, None) if age >= NO_PID_STALE else None
    except OSError:
        return None
    finally:
        os.close(dfd)


def _break_if_stale(inbox_fd: int, name: str) -> bool:
    """Remove the lock ``name`` when it is stale; True when it is gone (so try again).

    Breaking is itself done under a short guard, ``.<name>.break`` (``mkdir``): two of our
    writers never break one lock at once, so neither can remove the fresh lock the other
    has just taken in its place. A guard left by a killed writer (empty, 2 s old) is cleared.
    The guard is made and removed with SIGINT and SIGTERM deferred, so that no signal
    arriving between the two leaves it behind (the protocol's compat query reports a
    letterbox holding one incomplete).
    """
    guard = guard_name(name)
    with _signals_deferred():
        try:
            os.mkdir(guard, 0o700, dir_fd=inbox_fd)
        except FileExistsError:
            _clear_stale_guard(inbox_fd, guard)
            return False  # another writer is breaking it: wait and look again
        except OSError:
            return False
        try:
            return _break_guarded(inbox_fd, name)
        finally:
            try:
                os.rmdir(guard, dir_fd=inbox_fd)
            except OSError:
                pass


def _clear_stale_guard(inbox_fd: int, guard: str) -> None:
    try:
        st = os.stat(guard, dir_fd=inbox_fd, follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode) and time.time() - st.st_mtime >= NO_PID_STALE:
        try:
            os.rmdir(guard, dir_fd=inbox_fd)  # only ever empty
        except OSError:
            pass


def _break_guarded(inbox_fd: int, name: str) -> bool:
    try:
        dfd = os.open(name, fsflags.DIR, dir_fd=inbox_fd)
    except FileNotFoundError:
        return True  # released meanwhile
    except OSError:
        return False  # not a directory we may open: never ours to remove
    try:
        first = _read_pid(dfd)
        if first is None:
            st = os.fstat(dfd)
            if time.time() - st.st_mtime < NO_PID_STALE:
                return False
        else:
            text, mtime = first
            pid = _pid_of(text)
            if pid is not None:
                if _alive(pid):
                    return False
            elif time.time() - mtime < NO_PID_STALE:
                return False  # being written: give it the same 2 s as no pid at all
            # Re-read just before removing: a writer that took the lock over meanwhile
            # wrote its own pid, which is never removed.
            if _read_pid(dfd) != first:
                return False
            try:
                os.unlink("pid", dir_fd=dfd)
            except FileNotFoundError:
                pass
            except OSError:
                return False
    finally:
        os.close(dfd)
    try:
        os.rmdir(name, dir_fd=inbox_fd)  # fails when anything (a new pid) is in it
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _write_pid(inbox_fd: int, name: str) -> None:
    dfd = os.open(name, fsflags.DIR, dir_fd=inbox_fd)
    try:
        fd = os.open("pid", fsflags.CREATE, 0o644,
                     dir_fd=dfd)
        try:
            os.write(fd, f"{os.getpid()}\n".encode())
        except BaseException:
            try:  # ours (created exclusively): no pid left half-written
                os.unlink("pid", dir_fd=dfd)
            except OSError:
                pass
            raise
        finally:
            os.close(fd)
    finally:
        os.close(dfd)


def _release(inbox_fd: int, name: str) -> None:
    """Remove our own lock: its pid file (only when it still holds our pid), then the
    directory (only when empty)."""
    try:
        dfd = os.open(name, fsflags.DIR, dir_fd=inbox_fd)
    except OSError:
        return
    try:
        held = _read_pid(dfd)
        if held is not None and _pid_of(held[0]) == os.getpid():
            try:
                os.unlink("pid", dir_fd=dfd)
            except OSError:
                pass
    finally:
        os.close(dfd)
    try:
        os.rmdir(name, dir_fd=inbox_fd)
    except OSError:
        pass


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While the lock is held, SIGTERM raises ``Terminated`` (so ``finally`` releases it)
    instead of ending the process at once. Only the main thread can set a handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: object) -> None:
        raise Terminated(signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait from the lock's ``mkdir`` until the writer has noted it held
    and written its pid: a signal raising between those steps would leave the lock behind.
    Python runs signal handlers in the main thread between bytecodes, whichever thread the
    signal reached, so the handlers themselves are swapped for one that only notes the
    signal (blocking it would not do: another thread could take it). At the end the
    writer's own handlers are put back and the first signal noted is handed to its handler,
    inside the ``try`` whose ``finally`` releases the lock."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum: int, _frame: object) -> None:
        noted.append(signum)

    previous: dict[int, object] = {}
    try:
        for signum in _DEFERRED:
            previous[signum] = signal.signal(signum, note)
    except (ValueError, OSError):  # pragma: no cover - no handler can be set here
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if noted:
            handler = previous[noted[0]]
            if callable(handler):
                handler(noted[0], None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), noted[0])


@contextmanager
def lifecycle_lock(
    inbox: Path, letter_name: str, *, timeout: float | None = None, shown: str = ""
) -> Iterator[None]:
    """Hold ``inbox/<letter_name>.lifecycle.lock`` for the ``with`` block.

    ``timeout`` seconds of waiting for a held lock (default ``default_timeout()``, about
    5 s) before ``LetterboxError("timed out waiting for lifecycle lock: ...")``. ``inbox``
    is opened without following symlinks. ``shown`` names the letter in messages.
    """
    wait = default_timeout() if timeout is None else max(0.0, float(timeout))
    name = lock_name(letter_name)
    what = shown or letter_name
    from .fs import open_dir  # the one way a writer opens a folder

    inbox_fd = open_dir(inbox.parent.parent, inbox.parent.name, inbox.name)
    try:
        with _sigterm_raises():
            held = False
            try:
                deadline = time.monotonic() + wait
                while True:
                    with _signals_deferred():  # taken and noted held as one step
                        try:
                            os.mkdir(name, 0o755, dir_fd=inbox_fd)
                            held = True
                        except FileExistsError:
                            pass
                        except OSError as exc:
                            raise LetterboxError(
                                f"cannot take the lifecycle lock for {what}: {exc.strerror or exc}") from None
                        if held:
                            try:
                                _write_pid(inbox_fd, name)
                            except OSError as exc:
                                raise LetterboxError(
                                    f"cannot take the lifecycle lock for {what}: {exc.strerror or exc}") from None
                    if held:
                        # a guard a killed breaker left (2 s old) goes with the lock it broke
                        _clear_stale_guard(inbox_fd, guard_name(name))
                        break
                    if _break_if_stale(inbox_fd, name):
                        continue
                    if time.monotonic() >= deadline:
                        raise LetterboxError(
                            f"timed out waiting for lifecycle lock: {what} (another writer holds "
                            f"{inbox.parent.name}/inbox/{name}); nothing written")
                    time.sleep(INTERVAL)
                yield
            finally:
                if held:
                    _release(inbox_fd, name)
    finally:
        os.close(inbox_fd)

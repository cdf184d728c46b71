"""A long answer written in two halves at once: the second made by a forked helper while
this process makes and writes the first (issue 15: a cold ``query --json`` at 100,000
letters spends a quarter of its time making rows and JSON on one core, the other idle).

The answer is given as pieces, each a function that makes one part of its text; written
in order, they are the answer. The helper makes the pieces of the second half into an
unlinked temporary file (the page cache, not this process's memory); once this process
has written the first half, it waits for the helper and copies the file to its output.
Should the helper fail in any way (a signal, an error, a file it could not write), this
process makes the second half itself: the output is the same either way, and nothing of
the second half is written before the helper is known to have finished it whole.

Only a process that ends right after its answer (the console script, ``core.speed.ending``)
and has no other thread forks; anywhere else the pieces are simply written in order.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Sequence

#: fewer pieces than this are written in order (the fork costs more than it saves)
MIN_PIECES = 16


def write_pieces(pieces: Sequence[Callable[[], str]], *, fork: bool) -> None:
    """Write ``"".join(p() for p in pieces)`` and a line's end to standard output; with
    ``fork``, the second half made by a helper process when that is safe here."""
    out = sys.stdout
    helper = _start(pieces, len(pieces) // 2) if fork and len(pieces) >= MIN_PIECES else None
    half = len(pieces) // 2 if helper is not None else len(pieces)
    for piece in pieces[:half]:
        out.write(piece())
    if helper is not None and not helper.copy_to(out):
        for piece in pieces[half:]:
            out.write(piece())
    out.write("\n")


class _Helper:
    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd

    def copy_to(self, out) -> bool:
        """Wait for the helper; True once what it made is written to ``out`` (False: it
        failed, nothing of it was written)."""
        try:
            _, status = os.waitpid(self.pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                return False
            size = os.fstat(self.fd).st_size
            if size < 8:
                return False
            os.lseek(self.fd, size - 8, os.SEEK_SET)
            told = int.from_bytes(os.read(self.fd, 8), "little")
            if told != size - 8:  # not the whole of it
                return False
            out.flush()
            raw = out.buffer
            os.lseek(self.fd, 0, os.SEEK_SET)
            left = told
            while left > 0:
                chunk = os.read(self.fd, min(left, 1 << 20))
                if not chunk:
                    return False  # cannot happen (the size was checked): then the rest is made here
                raw.write(chunk)
                left -= len(chunk)
            return True
        except ChildProcessError:
            return False
        finally:
            os.close(self.fd)


def _start(pieces: Sequence[Callable[[], str]], half: int) -> _Helper | None:
    """Fork the helper making ``pieces[half:]``; None when that is not safe or fails."""
    import threading

    if not hasattr(os, "fork") or threading.active_count() != 1:
        return None
    out = sys.stdout
    encoding, errors = out.encoding or "utf-8", out.errors or "strict"
    try:
        fd, name = tempfile.mkstemp(prefix="letterbox-tui-half-")
        os.unlink(name)
    except OSError:
        return None
    try:
        out.flush()
        sys.stderr.flush()
        pid = os.fork()
    except OSError:
        os.close(fd)
        return None
    if pid:
        return _Helper(pid, fd)
    code = 1
    try:  # the helper: its text, then its length, then it ends at once
        written = 0
        with os.fdopen(fd, "wb", buffering=1 << 20) as f:
            for piece in pieces[half:]:
                data = piece().encode(encoding, errors)
                f.write(data)
                written += len(data)
            f.write(written.to_bytes(8, "little"))
        code = 0
    except BaseException:  # noqa: BLE001 - the parent makes the second half itself
        code = 1
    finally:
        os._exit(code)

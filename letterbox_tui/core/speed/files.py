"""Where the derived files live and how they are read and written (the header cache and
the answer memo share this): the user's cache directory, never inside the letterbox;
whole-file atomic writes; reads that never follow a symlink nor block on a FIFO; and an
unpickler that refuses every global, so a crafted file can never run code."""

from __future__ import annotations

import os

from .. import flags as fsflags
import pickle
import stat
import tempfile
import time

try:  # BLAKE2 without loading OpenSSL (hashlib's import costs ~10 ms of start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - every CPython build has _blake2
    from hashlib import blake2b

__all__ = ["NoGlobals", "blake2b", "cache_dir", "inside", "read_file", "write_atomic"]

_READ_FLAGS = fsflags.READ
#: a temporary this old was left by a writer that died mid-write (killed, power lost)
STALE_TEMP_NS = 15 * 60 * 1_000_000_000


def cache_dir() -> str:
    """The user's cache directory for letterbox-tui (honours ``XDG_CACHE_HOME``)."""
    from platformdirs import user_cache_dir

    return user_cache_dir("letterbox-tui")


def inside(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or inside it (real paths): a derived file there would
    write into the letterbox."""
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


class NoGlobals(pickle.Unpickler):
    """An unpickler of plain data only: every global is refused."""

    def find_class(self, module: str, name: str):  # noqa: D102
        raise pickle.UnpicklingError(f"global {module}.{name} refused in a cache file")


def read_file(path: str) -> bytes | None:
    """A regular file's bytes (never through a symlink, never blocking on a FIFO), or None."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        data = os.read(fd, st.st_size + 1)  # one read, no joining copies (loops only if short)
        if len(data) < st.st_size:
            chunks = [data]
            while chunk := os.read(fd, 1 << 24):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def read_head(path: str, n: int) -> bytes:
    """At most the first ``n`` bytes of a file (b"" when it cannot be read)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return b""
    try:
        return os.read(fd, n)
    except OSError:
        return b""
    finally:
        os.close(fd)


def write_atomic(path: str, parts: list[bytes]) -> None:
    """Write to a temporary file beside ``path``, then ``os.replace``: readers see old or new."""
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".headers", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _sweep_temporaries(directory)


def _sweep_temporaries(directory: str) -> None:
    """Remove temporaries abandoned by writers that died (a live writer's is recent)."""
    now = time.time_ns()
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name.startswith(".tmp-") and e.name.endswith(".headers"):
                    try:
                        if now - e.stat(follow_symlinks=False).st_mtime_ns > STALE_TEMP_NS:
                            os.unlink(e.path)
                    except OSError:
                        pass
    except OSError:
        pass


def cache_wanted() -> bool:
    """False when ``LETTERBOX_TUI_NO_CACHE`` switches every derived file off (read here, in
    the speed wing: the core takes a cache as a parameter and reads no variable)."""
    return not os.environ.get("LETTERBOX_TUI_NO_CACHE")

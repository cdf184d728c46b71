"""Where the derived files live and how they are read and written (the header cache and
the answer memo share this): the user's cache directory, never inside the letterbox;
whole-file atomic writes; reads that never follow a symlink nor block on a FIFO; and an
unpickler that refuses every global, so a crafted file can never run code.

Every derived file is framed: ``magic`` (8 bytes), a little-endian head (format version,
payload length, CRC-32 of the payload), then the payload. A file is trusted only when its
magic, version and length are what its reader expects, its size is within ``MAX_SIZE``
(checked before anything is read: a huge or sparse file is never read whole) and the
checksum matches; anything else is "no cache": the answer comes from the letters, and
one notice line says so (``notice``; the command line prints them on stderr). A derived
file is a convenience, never a source of truth.
"""

from __future__ import annotations

import os

from .. import flags as fsflags
import pickle
import stat
import struct
import sys
import time
import zlib

try:  # BLAKE2 without loading OpenSSL (hashlib's import costs ~10 ms of start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - every CPython build has _blake2
    from hashlib import blake2b

__all__ = [
    "NoGlobals", "Pieces", "blake2b", "cache_dir", "inside", "notice", "read_framed", "read_framed_head", "read_head",
    "take_notices",
    "write_atomic", "write_framed",
]

_READ_FLAGS = fsflags.READ
#: a temporary this old was left by a writer that died mid-write (killed, power lost)
STALE_TEMP_NS = 15 * 60 * 1_000_000_000
#: no derived file larger than this is read (the header cache of 100,000 letters is ~60 MB)
MAX_SIZE = 1 << 30
FRAME = struct.Struct("<IQI")  # version, payload length, CRC-32 of the payload
_MAGIC_SIZE = 8

# What was ignored and why, one line each, for the face to show (``take_notices``).
_notices: list[str] = []


def notice(line: str) -> None:
    """Say once that a derived file was not used (a face shows it: ``take_notices``)."""
    if line not in _notices:
        _notices.append(line)


def take_notices() -> list[str]:
    """The notices so far, then none."""
    out = list(_notices)
    _notices.clear()
    return out


def _frame_head(magic: bytes, version: int, parts: list[bytes]) -> bytes:
    crc = 0
    length = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
        length += len(part)
    return magic + FRAME.pack(version, length, crc)


def write_framed(path: str, magic: bytes, version: int, parts: list[bytes]) -> None:
    """Write ``parts`` as one framed derived file (atomically: readers see old or new)."""
    assert len(magic) == _MAGIC_SIZE
    write_atomic(path, [_frame_head(magic, version, parts), *parts])


def read_framed(path: str, magic: bytes, version: int, what: str, *, limit: int | None = None,
                mapped: bool = False) -> memoryview | None:
    """The payload of the framed file at ``path``, checked whole; None when there is no
    such file (quietly) or when it cannot be trusted (then a notice naming ``what`` says
    why). Never reads more than the file's size, and nothing when that is over the limit."""
    got = read_framed_unchecked(path, magic, version, what, limit=limit, mapped=mapped)
    if got is None:
        return None
    payload, crc = got
    if zlib.crc32(payload) != crc:
        notice(f"{what} ignored (checksum mismatch: damaged); answered from the letters")
        return None
    return payload


def read_framed_unchecked(path: str, magic: bytes, version: int, what: str, *,
                          limit: int | None = None, mapped: bool = False) -> tuple[memoryview, int] | None:
    """``read_framed`` but for the checksum: (payload, the CRC-32 it must have), for a
    reader that starts work on the payload first and checks it meanwhile (the memo's proof,
    ``core.speed.memo``); nothing it did may count before ``zlib.crc32(payload) == crc``.
    ``mapped``: the file mapped, not read (nothing copied; our files are replaced whole,
    never written in place)."""
    limit = MAX_SIZE if limit is None else limit
    head_size = _MAGIC_SIZE + FRAME.size
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        notice(f"{what} ignored ({exc.strerror or exc}); answered from the letters")
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            notice(f"{what} ignored (not a regular file); answered from the letters")
            return None
        if st.st_size > limit + head_size:
            notice(f"{what} ignored (larger than {limit} bytes); answered from the letters")
            return None
        if mapped and st.st_size:
            import mmap

            view = memoryview(mmap.mmap(fd, st.st_size, prot=mmap.PROT_READ))
            got = st.st_size
        else:
            import mmap

            # (anonymous pages, zeroed by the kernel as the read fills them: a
            # ``bytearray`` of 62 MB is zeroed first, holding the interpreter lock ~30 ms)
            view = memoryview(mmap.mmap(-1, st.st_size)) if st.st_size else memoryview(bytearray(0))
            got = 0
        while got < st.st_size:
            n = os.readv(fd, [view[got:]])
            if n == 0:
                break
            got += n
    except OSError as exc:
        os.close(fd)
        notice(f"{what} ignored ({exc.strerror or exc}); answered from the letters")
        return None
    os.close(fd)
    problem = _check_frame(view[:got], magic, version)
    if problem:
        notice(f"{what} ignored ({problem}); answered from the letters")
        return None
    return view[head_size:got], FRAME.unpack_from(view, _MAGIC_SIZE)[2]


def _check_frame(data: memoryview, magic: bytes, version: int) -> str:
    """What is wrong with a framed file's head (its checksum is the caller's), or ""."""
    head_size = _MAGIC_SIZE + FRAME.size
    if len(data) < head_size or bytes(data[:_MAGIC_SIZE]) != magic:
        return "not a file of this kind"
    got_version, length, crc = FRAME.unpack_from(data, _MAGIC_SIZE)
    if got_version != version:
        return f"format {got_version}, not {version}"
    if length != len(data) - head_size:
        return "truncated or grown"
    return ""


def read_framed_head(path: str, magic: bytes, version: int, n: int, what: str | None = None) -> bytes | None:
    """The first ``n`` payload bytes of a framed file, unchecked (the checksum is checked
    when the whole file is read), or None when there is none or it is not a file of this
    kind (then, given ``what``, a notice says so)."""
    head_size = _MAGIC_SIZE + FRAME.size
    data = read_head(path, head_size + n)
    if not data:
        return None
    if len(data) != head_size + n or data[:_MAGIC_SIZE] != magic:
        problem = "not a file of this kind"
    elif FRAME.unpack_from(data, _MAGIC_SIZE)[0] != version:
        problem = f"format {FRAME.unpack_from(data, _MAGIC_SIZE)[0]}, not {version}"
    else:
        return data[head_size:]
    if what is not None:
        notice(f"{what} ignored ({problem}); answered from the letters")
    return None


def cache_dir() -> str:
    """The user's cache directory for letterbox-tui (honours ``XDG_CACHE_HOME``):
    platformdirs' ``user_cache_dir``, worked out here as it does on Linux (importing it is
    a sixtieth of a question's start-up; a test checks the two agree)."""
    if sys.platform == "linux" and "ANDROID_DATA" not in os.environ:
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not base.strip():
            base = os.path.expanduser("~/.cache")
        return os.path.join(base, "letterbox-tui")
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


class Pieces:
    """A payload read by an unpickler a frame at a time (~64 KB with protocol 4 and up)
    through a method of its own, so it can be given to ``pickle.Unpickler`` instead of
    ``io.BytesIO``: from a ``BytesIO`` the C unpickler loads 100,000 cache rows in one call
    that holds the interpreter lock ~0.2 s (a key pressed in the app meanwhile waits that
    long); between two of these reads another thread may run. No slower (the copies are a
    frame each)."""

    __slots__ = ("_view", "_at", "reads")

    def __init__(self, data) -> None:
        self._view = memoryview(data).cast("B")
        self._at = 0
        #: how many reads the unpickler made
        self.reads = 0

    def read(self, n: int = -1) -> bytes:
        self.reads += 1
        at, view = self._at, self._view
        end = len(view) if n is None or n < 0 else min(len(view), at + n)
        self._at = end
        return view[at:end].tobytes()

    def readinto(self, buffer) -> int:
        self.reads += 1
        at, view = self._at, self._view
        n = min(len(buffer), len(view) - at)
        buffer[:n] = view[at:at + n]
        self._at = at + n
        return n

    def readline(self) -> bytes:  # (only the text protocols read lines)
        self.reads += 1
        at, view = self._at, self._view
        i = view[at:].tobytes().find(b"\n")
        end = len(view) if i < 0 else at + i + 1
        self._at = end
        return view[at:end].tobytes()


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
    import tempfile  # (here: a reading command that writes nothing never loads it)

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

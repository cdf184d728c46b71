"""The answer memo: a reading command's output, replayed while the letterbox is unchanged.

A repeated ``query --json`` on an unchanged letterbox gets the same answer. Re-deriving it
means loading 100,000 cached headers, resolving, evaluating and serialising; replaying it
needs only a ``stat`` of every letter file. What is kept, in the user's cache directory
beside the header cache (never in the letterbox):

- a *state* file per letterbox root, setting and scope: what the scan that made the answer
  saw of the file system (every directory it opened with its inode, mtime, ctime and mode;
  every letter file's name, size, mtime, inode and ctime), named by a token (its hash);
- an *answer* file per command, arguments and output form: the exact output, the exit code,
  the state token it was computed from, and the clock window it holds for.

A memo is replayed only when all of this holds, else the command runs as usual:

- every directory and every letter file stats exactly as recorded. ``ctime`` is in the
  key, which no tool can set back: a same-size edit with the mtime restored, a ``chmod``,
  a rename onto a letter, all change it. A directory whose entries change changes its own
  times, so an unchanged directory has the same entries (names, inodes, kinds): the file
  listings need not be read again. The directories are stat-ed again after the files: a
  change during the check is a miss.
- the scan it came from was atomic, met no unsupported entry (a permission can change
  without any time changing), and every time it saw was older than ``RACY_NS`` before the
  scan began (a coarse file-system clock could give a later change the same time);
- the clock is inside the answer's window: ``late`` flips when the clock passes a deadline,
  so an answer holds from just after the last deadline before its clock to the first
  deadline at or after it (all deadlines of the scope, without asking which matter). A
  query with ``at=`` fixes its clock and holds at any time;
- the answer was made by this build of the package (its version and the size and mtime of
  its source files are in the key).

The scope's ``scanned_at`` is the one thing that differs between runs; it is spliced in.
The ``stat`` pass runs on several threads in the C accelerator when it is built; without
it, at 20,000 files and more it is split between this process and a forked child (when
single-threaded), halving its wall time.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import time
import zlib
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from .. import flags as fsflags
from .accel import STAT_RECORD, pack_stats, stat_packed, threads
from .accel import stat_module as scanio
from .after import BACKGROUND_ROWS, after_answer
from .memo_state import _HEAD_LEN, _flat_state, state_blob, state_of  # noqa: F401 - (state_blob: the index's)
from .files import (NoGlobals, blake2b, cache_dir, cache_wanted, inside, notice, read_framed, read_framed_head,
                    read_framed_unchecked, write_framed)

#: ``core.scan.RACY_NS`` (the same number; not imported from there: a replay or a
#: question on an unchanged letterbox never loads the scan's modules; a test checks it)
RACY_NS = 3_000_000_000
MAGIC_STATE = b"LBXSTAT1"
MAGIC_ANSWER = b"LBXANSW1"
VERSION = 3  # 2: framed, checksummed; 3: flat (names, records, output used as read)
TOKEN = 16  # bytes of the state token
#: from this many letter files, the check is split with a forked child (pure Python only)
FORK_FILES = 20_000
#: answer files kept per letterbox state (oldest dropped first)
MAX_ANSWERS = 16
_DIR_FLAGS = fsflags.DIR
_NO_END = 1 << 62  # an open end of a clock window, as nanoseconds
def enabled() -> bool:
    """False when ``LETTERBOX_TUI_NO_CACHE`` switches the derived files off."""
    return cache_wanted()


# --- names and keys -----------------------------------------------------------------

def root_prefix(root: str) -> str:
    """Every memo file of a letterbox root starts with this (its real path, hashed)."""
    return blake2b(os.fsencode(os.path.realpath(root)), digest_size=12).hexdigest() + "."


def _scope_key(id_time_is_utc: bool, participants: list[str] | None) -> str:
    scope = "\0".join(participants) if participants is not None else "\1all"
    raw = "\0".join(("utc" if id_time_is_utc else "asis", scope))
    return blake2b(raw.encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()


_BUILD: str | None = None


def build_id() -> str:
    """The package's version and the size and mtime of its source files and the built
    accelerator: an answer made by other code is never replayed (an upgrade, an edit or a
    rebuild invalidates every memo)."""
    global _BUILD
    if _BUILD is None:
        from letterbox_tui import __version__

        # this file is letterbox_tui/core/speed/memo.py; every source file of the core
        # (its subpackages too) and the command line counts
        base = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        parts = [__version__]
        for sub in ("core", "cli"):
            for d, dirs, names in os.walk(os.path.join(base, sub), onerror=lambda e: parts.append(f"{sub}:?")):
                dirs[:] = sorted(x for x in dirs if x != "__pycache__")
                for name in sorted(names):
                    if name.endswith((".py", ".c", ".h", ".so")):  # the accelerator too
                        path = os.path.join(d, name)
                        try:
                            st = os.stat(path)
                        except OSError:
                            parts.append(f"{path}:?")
                            continue
                        parts.append(f"{os.path.relpath(path, base)}:{st.st_size}:{st.st_mtime_ns}")
        _BUILD = blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()
    return _BUILD


def answer_key(command: str, argv: list[str], form: str) -> str:
    """The key of one command's answer: the command, its arguments as given, the output
    form (``json`` or ``json-indent``) and the build."""
    raw = "\0".join([command, form, build_id(), *argv])
    return blake2b(raw.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


class Memo:
    """Where the memo files of one letterbox root, setting and scope live."""

    def __init__(self, root: str, id_time_is_utc: bool, participants: list[str] | None) -> None:
        self.root = os.path.realpath(root)
        self.participants = sorted(set(participants)) if participants is not None else None
        self.dir = cache_dir()
        self.prefix = root_prefix(self.root) + _scope_key(id_time_is_utc, self.participants)
        # a cache directory inside the letterbox would write into it: then no memo at all
        self.disabled = not enabled() or inside(self.dir, self.root)

    def state_path(self) -> str:
        return os.path.join(self.dir, f"{self.prefix}.state")

    def answer_path(self, token: bytes, key: str) -> str:
        return os.path.join(self.dir, f"{self.prefix}-{token.hex()[:16]}-{key}.answer")

    # --- replaying ----------------------------------------------------------------
    def replay(self, key: str, clock_ns: int | None = None) -> tuple[memoryview, int, int, int] | None:
        """(output, exit code, where ``scanned_at``'s JSON string starts, its length), or
        None when the memo cannot vouch for the answer (the output: a view of the answer
        file read whole). ``clock_ns``: the answer's clock
        (default now); the file-system checks always use the real time."""
        if self.disabled:
            return None
        now_ns = time.time_ns()
        clock_ns = now_ns if clock_ns is None else clock_ns
        # the state's token first: without an answer for it, the state is never unpickled
        token = read_framed_head(self.state_path(), MAGIC_STATE, VERSION, TOKEN, f"answer memo state {self.state_path()}")
        if token is None:
            return None
        path = self.answer_path(token, key)
        if not os.path.lexists(path):
            return None
        state = _load_state(self.state_path(), checked=False)
        if state is None or state[0] != token:
            return None
        token, dirs, folders, check = state
        # the files are stat-ed on the accelerator's threads while the state's checksum is
        # checked and the answer read (nothing counts unless both are right)
        proof = Proof(self.root, dirs, folders, now_ns)
        try:
            if not check():
                return None
            answer = _load_answer(path, key, token) if proof.verdict is None else None
            if answer is None:
                return None
            lo, hi, code, out, at, size = answer
            if not lo < clock_ns <= hi or not proof.holds():
                return None
            return out, code, at, size
        finally:
            proof.stop()

    # --- recording ----------------------------------------------------------------
    def record(self, key: str, snapshot, output: bytes, code: int, window: tuple[int, int]) -> bool:
        """Keep ``output`` as the answer for ``key`` on the state ``snapshot`` saw; False
        when that state cannot be vouched for (then nothing is kept)."""
        if self.disabled:
            return False
        state = recordable(snapshot)
        if state is None:
            return False
        # the scope comes last in every memoised output, and scanned_at last in the scope
        at = output.rfind(b'"scanned_at"')
        if at < 0:
            return False
        start = output.find(b'"', output.index(b":", at))
        end = output.find(b'"', start + 1) + 1
        if start < 0 or end <= start or output[end:].strip(b" \n}"):
            return False
        parts = _flat_state(*state)
        digest = blake2b(digest_size=TOKEN)
        for part in parts:
            digest.update(part)
        token = digest.digest()
        path = self.state_path()
        if read_framed_head(path, MAGIC_STATE, VERSION, TOKEN) != token:
            write_framed(path, MAGIC_STATE, VERSION, [token, *parts])
        head = pickle.dumps({"key": key, "token": token, "lo": window[0], "hi": window[1], "code": code,
                             "at": start, "size": end - start}, protocol=5)
        write_framed(self.answer_path(token, key), MAGIC_ANSWER, VERSION, [_HEAD_LEN.pack(len(head)), head, output])
        self._sweep(keep=token)
        return True

    def _sweep(self, keep: bytes | None) -> None:
        """Drop answers of other states (they can never be replayed); keep at most
        ``MAX_ANSWERS`` of the current one, newest first."""
        mine = f"{self.prefix}-"
        live: list[tuple[int, str]] = []
        try:
            with os.scandir(self.dir) as it:
                for e in it:
                    name = e.name
                    if not (name.startswith(mine) and name.endswith(".answer")):
                        continue
                    if keep is not None and name[len(mine):].startswith(keep.hex()[:16] + "-"):
                        try:
                            live.append((e.stat(follow_symlinks=False).st_mtime_ns, e.path))
                        except OSError:
                            pass
                        continue
                    try:
                        os.unlink(e.path)
                    except OSError:
                        pass
        except OSError:
            return
        live.sort(reverse=True)
        for _, path in live[MAX_ANSWERS:]:
            try:
                os.unlink(path)
            except OSError:
                pass


def forget(root: str) -> None:
    """Remove every memo file of ``root`` (``check --verify`` starts afresh: what it
    re-reads, no memo may vouch for)."""
    prefix = root_prefix(root)
    try:
        with os.scandir(cache_dir()) as it:
            for e in it:
                if e.name.startswith(prefix) and e.name.endswith((".state", ".answer")):
                    try:
                        os.unlink(e.path)
                    except OSError:
                        pass
    except OSError:
        pass


def window(letters, at: datetime, fixed: bool) -> tuple[int, int]:
    """The clock interval (lo, hi] in which every ``late`` answer is what it is at ``at``:
    no deadline lies in it (``late`` is ``deadline < clock``). A fixed clock holds always."""
    if fixed:
        return -_NO_END, _NO_END
    clock = _ns(at)
    lo, hi = -_NO_END, _NO_END
    for d in [x.deadline_at for x in letters if x.deadline_at is not None]:
        n = _ns(d)
        if n < clock:
            if n > lo:
                lo = n
        elif n < hi:
            hi = n
    return lo, hi


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def _ns(when: datetime) -> int:
    """Nanoseconds since the epoch, exactly (an aware datetime has microseconds)."""
    return (when - _EPOCH) // _MICROSECOND * 1000


# --- what may be recorded ------------------------------------------------------------

def recordable(snapshot) -> tuple | None:
    """The state a snapshot was read from, as stored; None when it cannot be vouched for."""
    seen = snapshot.seen
    scope = snapshot.scope
    if seen is None or not scope.atomic or snapshot.unsupported or not scope.scanned_at:
        return None
    try:
        began = _ns(datetime.fromisoformat(scope.scanned_at.replace("Z", "+00:00")))
    except ValueError:
        return None
    limit = began - RACY_NS
    dirs = []
    for rel, ino, mtime, ctime, mode in seen.dirs:
        if ino < 0 or mtime >= limit or ctime >= limit:
            return None
        dirs.append((rel, ino, mtime, ctime, mode))
    folders = []
    count = 0
    for rel, files in seen.files.items():
        if files and max(max(f[2], f[4]) for f in files) >= limit:
            return None
        names = [f[0] for f in files]
        if any("\0" in n for n in names):  # never in a file name; the separator below
            return None
        try:
            stats = pack_stats([(f[1], f[2], f[3], f[4]) for f in files])
        except struct.error:  # a time or inode beyond 64 bits: vouch for nothing
            return None
        try:  # as file-system bytes: the proof hands them to the accelerator as they are
            joined = os.fsencode("\0".join(names))
        except UnicodeError:
            return None
        folders.append((rel, joined, len(names), stats))
        count += len(files)
    if count != len(snapshot.letters) + len(snapshot.unreadable):
        return None  # not every item is accounted for: vouch for nothing
    return tuple(dirs), tuple(folders)


# --- reading memo files --------------------------------------------------------------

def _load_state(path: str, *, checked: bool = True):
    """(token, dirs, folders) of the state file at ``path``, each folder's names and
    records views of the file mapped whole (nothing copied); None when there is none or it
    cannot be used (a notice says why). ``checked=False``: its checksum is not checked yet,
    and a fourth item, ``check()``, checks it (True when right; else a notice says so)."""
    what = f"answer memo state {path}"
    got = read_framed_unchecked(path, MAGIC_STATE, VERSION, what, mapped=True)
    if got is None:
        return None
    payload, crc = got

    def check() -> bool:
        if zlib.crc32(payload) == crc:
            return True
        notice(f"{what} ignored (checksum mismatch: damaged); answered from the letters")
        return False

    if checked and not check():
        return None
    token = bytes(payload[:TOKEN])
    state = state_of(payload[TOKEN:]) if len(token) == TOKEN else None
    if state is None:
        if checked or check():  # (a damaged file is said to be damaged)
            notice(f"{what} ignored (of the wrong shape); answered from the letters")
        return None
    return (token, *state) if checked else (token, *state, check)


def _load_answer(path: str, key: str, token: bytes):
    """(lo, hi, code, output, at, size) of the answer file at ``path``, the output a view
    of the file read whole; None when there is none or it is not for ``key`` and ``token``."""
    payload = read_framed(path, MAGIC_ANSWER, VERSION, f"answer memo {path}", mapped=True)
    if payload is None:
        return None
    got = None
    try:
        (size,) = _HEAD_LEN.unpack_from(payload, 0)
        entry = NoGlobals(io.BytesIO(payload[_HEAD_LEN.size : _HEAD_LEN.size + size])).load()
        out = payload[_HEAD_LEN.size + size :]
        if type(entry) is dict and entry.get("key") == key and entry.get("token") == token:
            got = (entry["lo"], entry["hi"], entry["code"], out, entry["at"], entry["size"])
            if not all(type(v) is int for v in got[:3] + got[4:]):
                got = None
            elif not (0 <= got[4] and got[4] + got[5] <= len(out)):
                got = None
    except Exception:  # noqa: BLE001
        got = None
    if got is None:
        notice(f"answer memo {path} ignored (of the wrong shape); answered from the letters")
    return got


# --- the check ---------------------------------------------------------------------

def unchanged(root: str, dirs, folders, now_ns: int) -> bool:
    """True when every directory and letter file stats as recorded (and stayed so)."""
    return Proof(root, dirs, folders, now_ns).holds()


def _names(joined) -> list[str]:
    """A folder's names joined (``recordable``; maybe NUL-ended: ``_flat_state``), split."""
    raw = joined if type(joined) is str else os.fsdecode(bytes(joined))
    return (raw[:-1] if raw.endswith("\0") else raw).split("\0")


class Proof:
    """``unchanged``, begun: the directories are checked at once; with the accelerator
    the files are stat-ed on threads of its own while the caller goes on (the answer is
    made meanwhile, and shown only if the proof holds); ``holds()`` waits for them, then
    checks the directories again. Without the accelerator ``holds()`` does all the work."""

    def __init__(self, root: str, dirs, folders, now_ns: int) -> None:
        self.dirs = dirs
        self.fds: dict[str, int] = {}
        self.verdict: bool | None = None
        self.handle = None
        self.work: list | None = None
        limit = now_ns - RACY_NS
        fds = self.fds
        try:
            for rel, ino, mtime, ctime, mode in dirs:
                if rel:
                    parent, _, name = rel.rpartition("/")
                    fd = os.open(name, _DIR_FLAGS, dir_fd=fds[parent])
                else:
                    fd = os.open(root, _DIR_FLAGS)
                fds[rel] = fd
                st = os.fstat(fd)
                if (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_mode) != (ino, mtime, ctime, mode):
                    self._end(False)
                    return
                if mtime >= limit or ctime >= limit:
                    self._end(False)
                    return
            fast = scanio()
            if fast is not None and hasattr(fast, "check_start"):  # a folder's names as one bytes object
                self.handle = fast.check_start(  # (names were kept as str before: encoded then)
                    [(fds[rel], os.fsencode(joined) if type(joined) is str else joined, n, stats)
                     for rel, joined, n, stats in folders], threads())
            else:
                self.work = [(fds[rel], _names(joined) if n else [], bytes(stats)) for rel, joined, n, stats in folders]
        except (OSError, KeyError, UnicodeError, ValueError, TypeError):
            self._end(False)

    def holds(self) -> bool:
        """True when every directory and letter file stats as recorded, and every
        directory still did after the files (an entry added, removed or renamed meanwhile
        is a change). Waits for the threads; the answer is kept after the first call."""
        if self.verdict is not None:
            return self.verdict
        ok = False
        try:
            if self.handle is not None:
                ok = bool(scanio().check_finish(self.handle))
            else:
                work = self.work or []
                ok = _files_unchanged(work, sum(len(names) for _, names, _ in work))
            if ok:
                fds = self.fds
                for rel, ino, mtime, ctime, mode in self.dirs:
                    st = os.fstat(fds[rel])
                    if (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_mode) != (ino, mtime, ctime, mode):
                        ok = False
                        break
        except (OSError, KeyError, ValueError):
            ok = False
        self._end(ok)
        return ok

    def stop(self) -> None:
        """Drop the proof unfinished (its threads stop early; nothing is vouched for)."""
        if getattr(self, "verdict", False) is None:
            self._end(False)

    __del__ = stop

    def _end(self, verdict: bool) -> None:
        self.verdict = verdict
        self.handle = None  # (its threads are waited for when it is dropped)
        self.work = None
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def _files_unchanged(work, total: int) -> bool:
    if scanio() is not None:  # already on every core, without the GIL
        return _check(work)
    if total >= FORK_FILES:
        split = _split(work, total)
        if split is not None:
            return _forked(*split)
    return _check(work)


def _split(work, total: int):
    """The work cut in two halves by file count (a folder may be cut in the middle)."""
    half = total // 2
    first, second, seen = [], [], 0
    for fd, names, stats in work:
        n = len(names)
        if seen + n <= half:
            first.append((fd, names, stats))
        elif seen >= half:
            second.append((fd, names, stats))
        else:
            cut = half - seen
            step = STAT_RECORD.size
            first.append((fd, names[:cut], stats[: cut * step]))
            second.append((fd, names[cut:], stats[cut * step :]))
        seen += n
    return first, second


def _check(work) -> bool:
    """Every file of every folder stats as recorded: size, mtime, inode, ctime, compared
    as packed records (one comparison per folder, no per-file tuple)."""
    return all(stat_packed(fd, names) == stats for fd, names, stats in work)


def _forked(first, second) -> bool:
    """Check ``second`` in a forked child while this process checks ``first``. Only a
    single-threaded process forks (a fork with other threads alive may deadlock)."""
    import threading

    if not hasattr(os, "fork") or threading.active_count() != 1:
        return _check(first) and _check(second)
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return _check(first) and _check(second)
    if pid == 0:  # the child: one byte, then gone without running any exit handler
        try:
            os.close(r)
            os.write(w, b"1" if _check(second) else b"0")
        finally:
            os._exit(0)
    os.close(w)
    try:
        mine = _check(first)
        theirs = os.read(r, 1) == b"1"  # empty when the child died: not vouched for
    finally:
        os.close(r)
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
    return mine and theirs


def record_after_answer(memo: Memo, key: str, snapshot, text: str | Callable[[], str], encoding: tuple[str, str], code: int,
                        at: datetime, fixed: bool) -> None:
    """Record once the answer is out (``after.run_after_answer``): for a large letterbox in
    a detached process, where the window, the encoding and the writing all happen. A memo
    that cannot be written costs speed, never answers. ``text``: the output, or what
    makes it again (then it is made only there)."""
    def work() -> None:
        try:
            data = (text if isinstance(text, str) else text()).encode(*encoding)
        except UnicodeError:
            return
        memo.record(key, snapshot, data, code, window(snapshot.letters, at, fixed))

    # first: a second run of the same question may be waiting for it (``cli.indexed``)
    after_answer(work, big=len(snapshot.letters) >= BACKGROUND_ROWS, first=True)

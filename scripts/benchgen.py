"""The bench letterbox: a realistic protocol letterbox of N letters, the same for a seed,
and its removal, which deletes nothing this generator did not write.

What it writes is what the protocol's tools leave behind after months of work between
eight seats: tasks (``request``, ``delegate``, a few ``blocker``) with deadlines, some
accepted (an ``ack`` letter in the sender's inbox and a ``.md.ack`` sidecar beside the
task), some answered (a ``result`` or ``nack`` in the sender's inbox, the task moved to
the recipient's ``processed/``), some still open; ``info`` and ``status`` letters, many
filed to ``processed/``; replies the sender filed; threads several letters deep; and
supersession chains. Bodies are Markdown of varied length. ``N`` counts ``*.md`` letter
files exactly; sidecars and ``status.md`` notes are extra.

The marker ``.letterbox-bench`` (written first, so an interrupted run can be removed too)
only names the letter count and the seed. It proves nothing: anyone who can write into a
letterbox can write one. ``remove`` regenerates what this generator writes for that count
and seed (every folder, and every file's size and BLAKE2b-256 digest) and deletes only when
every entry under the root is one of those, a real folder or a regular file whose bytes
are exactly the expected ones; otherwise it deletes nothing at all. Folders are removed
with ``rmdir``, which never removes a folder holding anything.

    python scripts/benchgen.py DIR --letters 100000 [--seed 1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import stat
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

MARKER = ".letterbox-bench"
#: what the marker's ``generator`` says; another value is not this generator's letterbox
GENERATOR = "letterbox-tui scripts/benchgen.py"
GENERATOR_VERSION = 2
#: a marker naming more letters than this is not believed (regenerating them would take hours)
MAX_LETTERS = 5_000_000
_MARKER_MAX = 4096
SEATS = ("planner", "builder", "reviewer", "tester", "ops", "docs", "research", "ledger")
START = datetime(2026, 5, 1, tzinfo=timezone.utc)
#: the accountability question's cut-off falls inside the generated period
SPAN_DAYS = 240
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_OPEN_DIR = _OPEN_FILE | os.O_DIRECTORY

_WORDS = (
    "auth review renewal plan cache index scan report budget release migration schema "
    "deploy rollback incident audit ledger invoice backlog triage parser header thread "
    "deadline query owner seat letter chain ruling dispute summary draft spec fixture "
    "benchmark latency memory disk network retry timeout quota metric alert dashboard "
    "onboarding handover contract vendor pricing roadmap milestone sprint retro design "
    "prototype feedback survey interview hiring policy compliance security backup"
).split()
_PROSE = (
    "The previous run left the index in a state we could not explain. ",
    "This letter records what we saw and what we want done next. ",
    "Please keep the scope narrow and report anything that surprises you before changing course. ",
    "We agreed in the last review that the owner of each step writes down the outcome, not just the status. ",
    "Open questions are listed with the letter they depend on. ",
    "- [ ] check the numbers against last week's run\n",
    "- [x] confirm the owner of the follow-up\n",
    "```\n$ make check\nok: 412 passed\n```\n",
)


class NotOurs(ValueError):
    """The directory holds something this generator did not write: nothing is deleted."""


# --- where the letterbox goes: a directory, or the list of what would be written --------

class _Disk:
    """Writes into ``root``, never over an existing file."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mkdir(self, rel: str) -> None:
        (self.root / rel).mkdir()

    def write(self, rel: str, data: bytes) -> None:
        with open(self.root / rel, "xb") as fh:
            fh.write(data)

    def exists(self, rel: str) -> bool:
        return (self.root / rel).exists()

    def unlink(self, rel: str) -> None:
        (self.root / rel).unlink()

    def move(self, rel: str, to: str) -> None:
        os.replace(self.root / rel, self.root / to)


class _Plan:
    """What ``_Disk`` would leave: each folder, and each file's size and digest."""

    def __init__(self) -> None:
        self.dirs: set[str] = set()
        self.files: dict[str, tuple[int, bytes]] = {}

    def mkdir(self, rel: str) -> None:
        self.dirs.add(rel)

    def write(self, rel: str, data: bytes) -> None:
        self.files[rel] = (len(data), _digest(data))

    def exists(self, rel: str) -> bool:
        return rel in self.files

    def unlink(self, rel: str) -> None:
        del self.files[rel]

    def move(self, rel: str, to: str) -> None:
        self.files[to] = self.files.pop(rel)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=32).digest()


@dataclass
class _State:
    rng: random.Random
    out: _Disk | _Plan
    limit: int
    written: int = 0
    clock: datetime = START
    step: float = 1.0
    #: recent letters a new one may reply to or supersede: (id, from, to, thread)
    recent: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: latest letter of each chain by sender, for supersession: (id, from, to, type, slug, thread)
    chainable: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)


def _marker_bytes(letters: int, seed: int) -> bytes:
    return (json.dumps({"generator": GENERATOR, "letters": letters, "seed": seed, "version": GENERATOR_VERSION},
                       sort_keys=True) + "\n").encode()


def _build(out: _Disk | _Plan, letters: int, seed: int) -> None:
    out.write(MARKER, _marker_bytes(letters, seed))
    rng = random.Random(seed)
    st = _State(rng, out, letters, step=SPAN_DAYS * 86400 / max(letters, 1))
    out.mkdir("locks")
    for seat in SEATS:
        out.mkdir(seat)
        for folder in ("inbox", "processed"):
            out.mkdir(f"{seat}/{folder}")
        out.write(f"{seat}/status.md", f"# {seat}\n\nWorking through the backlog.\n".encode())
    while st.written < letters:
        _event(st)


def generate(root: str | os.PathLike[str], letters: int, seed: int = 1) -> Path:
    """Write the bench letterbox of exactly ``letters`` letter files at ``root`` (created
    if absent). ``root`` must be missing or empty (``FileExistsError``): generation never
    overwrites."""
    if not 1 <= letters <= MAX_LETTERS:
        raise ValueError(f"letters must be from 1 to {MAX_LETTERS}")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty")
    _build(_Disk(root), letters, seed)
    return root


def expected(letters: int, seed: int = 1) -> _Plan:
    """Every folder and every file (size, digest) ``generate`` writes for this count and seed."""
    plan = _Plan()
    _build(plan, letters, seed)
    return plan


# --- recognising and removing a bench letterbox ----------------------------------------

@dataclass
class Found:
    """A directory holding only what ``generate`` writes for ``letters`` and ``seed``."""

    letters: int
    seed: int
    #: every file of it: relative path -> (device, inode) as it was checked
    files: dict[str, tuple[int, int]]
    #: every folder of it: relative path -> (device, inode), parents before children
    dirs: dict[str, tuple[int, int]]
    #: False when some expected file or folder is missing (an interrupted generation)
    complete: bool


def _read_fd(fd: int, limit: int) -> bytes | None:
    chunks, n = [], 0
    while n <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - n))):
        chunks.append(chunk)
        n += len(chunk)
    return b"".join(chunks) if n <= limit else None


def _read_at(dir_fd: int, name: str, limit: int) -> tuple[bytes, os.stat_result] | None:
    """A regular file's bytes (at most ``limit``), never through a symlink, and its stat."""
    try:
        fd = os.open(name, _OPEN_FILE, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        data = _read_fd(fd, limit)
        return (data, st) if data is not None else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _marker_hint(root_fd: int) -> tuple[int, int]:
    """(letters, seed) the marker names, when it is exactly what ``generate`` writes."""
    got = _read_at(root_fd, MARKER, _MARKER_MAX)
    if got is None:
        raise NotOurs(f"no {MARKER} marker that this generator wrote")
    try:
        data = json.loads(got[0])
        letters, seed = data["letters"], data["seed"]
        ok = (type(letters) is int and type(seed) is int and 1 <= letters <= MAX_LETTERS
              and got[0] == _marker_bytes(letters, seed))
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise NotOurs(f"its {MARKER} marker is not one this generator writes")
    return letters, seed


def _listing(root_fd: int) -> tuple[dict[str, os.stat_result], dict[str, os.stat_result]]:
    """Every folder and every other entry under the directory ``root_fd`` (relative paths,
    never following a symlink), each with its ``lstat``."""
    dirs: dict[str, os.stat_result] = {}
    others: dict[str, os.stat_result] = {}
    todo: list[tuple[str, int]] = [("", os.dup(root_fd))]
    try:
        while todo:
            rel, fd = todo.pop()
            try:
                with os.scandir(fd) as it:
                    entries = [(e.name, e.stat(follow_symlinks=False)) for e in it]
                for name, st in entries:
                    sub = rel + name
                    if stat.S_ISDIR(st.st_mode):
                        dirs[sub] = st
                        todo.append((sub + "/", os.open(name, _OPEN_DIR, dir_fd=fd)))
                    else:
                        others[sub] = st
            finally:
                os.close(fd)
    finally:
        for _, fd in todo:
            os.close(fd)
    return dirs, others


def examine(root: str | os.PathLike[str]) -> Found:
    """What ``root`` holds when it is a bench letterbox (complete or not); ``NotOurs`` (and
    why) when any entry under it is not what this generator writes for the count and seed
    its marker names: a path it never writes, a symlink or other special file, a file whose
    bytes differ from the expected ones by a single byte."""
    try:
        root_fd = os.open(root, _OPEN_DIR)
    except OSError as exc:
        raise NotOurs(f"cannot open it as a directory ({exc.strerror or exc})") from None
    try:
        letters, seed = _marker_hint(root_fd)
        dirs, others = _listing(root_fd)
        plan = expected(letters, seed)
        for rel in sorted(dirs):
            if rel not in plan.dirs:
                raise NotOurs(f"it holds a folder this generator never writes: {rel}")
        for rel, st in others.items():
            if rel not in plan.files or not stat.S_ISREG(st.st_mode):
                raise NotOurs(f"it holds an entry this generator never writes: {rel}")
            if st.st_size != plan.files[rel][0]:
                raise NotOurs(f"a file differs from what this generator writes: {rel}")
        files: dict[str, tuple[int, int]] = {}
        for rel in sorted(others, key=lambda r: (r == MARKER, r)):  # the marker last: removed last
            size, digest = plan.files[rel]
            parent, _, name = rel.rpartition("/")
            fd = os.open(parent, _OPEN_DIR, dir_fd=root_fd) if parent else os.dup(root_fd)
            try:
                got = _read_at(fd, name, size)
            finally:
                os.close(fd)
            if got is None or _digest(got[0]) != digest:
                raise NotOurs(f"a file differs from what this generator writes: {rel}")
            files[rel] = (got[1].st_dev, got[1].st_ino)
        complete = len(files) == len(plan.files) and len(dirs) == len(plan.dirs)
        ordered = sorted(dirs, key=lambda d: (d.count("/"), d))
        return Found(letters, seed, files, {d: (dirs[d].st_dev, dirs[d].st_ino) for d in ordered}, complete)
    except OSError as exc:
        raise NotOurs(f"it could not be read whole ({exc.strerror or exc})") from None
    finally:
        os.close(root_fd)


def is_current(root: str | os.PathLike[str], letters: int, seed: int = 1) -> bool:
    """True when ``root`` holds exactly, and only, the bench letterbox of ``letters`` and ``seed``."""
    try:
        found = examine(root)
    except NotOurs:
        return False
    return found.complete and (found.letters, found.seed) == (letters, seed)


def remove(root: str | os.PathLike[str]) -> list[str]:
    """Delete the bench letterbox at ``root``, ``root`` included, when ``examine`` finds it
    is one (else ``NotOurs``, and nothing is deleted). Each file is unlinked through its
    checked folder's descriptor, and only while it is still the file that was checked;
    folders go by ``rmdir``. Returns what is left (something that appeared meanwhile:
    kept), empty when all of it is gone."""
    found = examine(root)
    left: list[str] = []
    fds = {"": os.open(root, _OPEN_DIR)}
    try:
        for rel in found.dirs:  # parents first: each opened through its checked parent
            parent, _, name = rel.rpartition("/")
            if parent in fds:
                try:
                    fd = os.open(name, _OPEN_DIR, dir_fd=fds[parent])
                except OSError:
                    left.append(rel)
                    continue
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) != found.dirs[rel]:  # replaced since it was checked
                    os.close(fd)
                    left.append(rel)
                    continue
                fds[rel] = fd
        for rel, ident in found.files.items():
            parent, _, name = rel.rpartition("/")
            fd = fds.get(parent)
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False) if fd is not None else None
                if st is None or (st.st_dev, st.st_ino) != ident or not stat.S_ISREG(st.st_mode):
                    left.append(rel)
                    continue
                os.unlink(name, dir_fd=fd)
            except OSError:
                left.append(rel)
        for rel in reversed(list(found.dirs)):  # children first; a folder holding anything stays
            parent, _, name = rel.rpartition("/")
            try:
                if parent not in fds:
                    raise FileNotFoundError(rel)
                os.rmdir(name, dir_fd=fds[parent])
            except OSError:
                left.append(rel)
    finally:
        for fd in fds.values():
            os.close(fd)
    try:
        os.rmdir(root)
    except OSError:
        if not left:
            left.append(".")
    return sorted(set(left))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchgen.py", description=__doc__.splitlines()[0])
    p.add_argument("dir", help="where to write it (missing or empty)")
    p.add_argument("--letters", type=int, default=100_000, metavar="N")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    t = time.perf_counter()
    try:
        generate(args.dir, args.letters, args.seed)
    except (FileExistsError, ValueError) as exc:
        print(f"benchgen: {exc}", file=sys.stderr)
        return 2
    print(f"{args.letters} letters in {args.dir} ({time.perf_counter() - t:.1f} s)")
    return 0


# --- events ----------------------------------------------------------------------------

def _event(st: _State) -> None:
    r = st.rng.random()
    if r < 0.62:
        _task(st)
    elif r < 0.90:
        _notice(st)
    elif r < 0.96:
        _supersede(st)
    else:
        _decision(st)


def _task(st: _State) -> None:
    rng = st.rng
    sender, recipient = _pair(rng)
    kind = rng.choices(("request", "delegate", "blocker"), (70, 24, 6))[0]
    re_, thread = _maybe_thread(st, sender, recipient)
    sent = _tick(st)
    deadline = ""
    if rng.random() < 0.8:
        due = sent + timedelta(hours=rng.choice((4, 12, 24, 48, 72, 120, 168, 336)))
        deadline = _ts(due)
    slug = _slug(rng)
    letter_id = _new_id(rng, sent, sender, kind, slug)
    if not _write(st, recipient, "inbox", letter_id, sender, recipient, kind, re=re_, thread=thread,
                  priority=rng.choice(("now", "next", "next", "whenever")), requires_ack="true",
                  deadline=deadline, sent=sent):
        return
    st.recent.append((letter_id, sender, recipient, thread or letter_id))
    st.chainable.append((letter_id, sender, recipient, kind, slug, thread or letter_id))
    outcome = rng.random()
    reply_thread = thread or letter_id
    if outcome < 0.35:  # accepted, then answered
        _reply(st, letter_id, recipient, sender, "ack", reply_thread, sent)
        _reply(st, letter_id, recipient, sender, rng.choice(("result", "result", "result", "nack")), reply_thread, sent,
               close=True)
    elif outcome < 0.60:  # answered at once
        _reply(st, letter_id, recipient, sender, rng.choice(("result", "result", "nack")), reply_thread, sent, close=True)
    elif outcome < 0.78:  # accepted, work in progress
        _reply(st, letter_id, recipient, sender, "ack", reply_thread, sent)
    # else: still open


def _reply(st, parent, frm, to, kind, thread, after, *, close=False) -> None:
    rng = st.rng
    sent = _ts_after(st, after)
    reply_id = f"{parent}--{frm}--{kind}"
    folder = "processed" if rng.random() < 0.5 else "inbox"  # the sender files replies
    if not _write(st, to, folder, reply_id, frm, to, kind, re=parent, thread=thread, priority="next",
                  requires_ack="false", sent=sent):
        return
    task_rel = f"{frm}/inbox/{parent}.md"
    if kind == "ack":
        st.out.write(task_rel + ".ack", b"")
    elif close:
        if st.out.exists(task_rel + ".ack"):
            st.out.unlink(task_rel + ".ack")
        st.out.move(task_rel, f"{frm}/processed/{parent}.md")


def _notice(st: _State) -> None:
    rng = st.rng
    sender, recipient = _pair(rng)
    kind = rng.choice(("info", "info", "status"))
    re_, thread = _maybe_thread(st, sender, recipient)
    sent = _tick(st)
    letter_id = _new_id(rng, sent, sender, kind, _slug(rng))
    folder = "processed" if rng.random() < 0.55 else "inbox"
    _write(st, recipient, folder, letter_id, sender, recipient, kind, re=re_, thread=thread,
           priority=rng.choice(("next", "whenever")), requires_ack="false", sent=sent)


def _supersede(st: _State) -> None:
    rng = st.rng
    if not st.chainable:
        return _task(st)
    sent = _tick(st)
    i = len(st.chainable) - 1 - min(int(rng.expovariate(1 / 40)), len(st.chainable) - 1)
    old_id, sender, recipient, kind, slug, thread = st.chainable[i]
    letter_id = _new_id(rng, sent, sender, kind, slug)
    task = kind in ("request", "delegate", "blocker")
    if _write(st, recipient, "inbox", letter_id, sender, recipient, kind, thread=thread, priority="next",
              requires_ack="true" if task else "false", sent=sent, supersedes=old_id,
              deadline=_ts(sent + timedelta(days=rng.choice((2, 5, 10)))) if task else ""):
        st.chainable[i] = (letter_id, sender, recipient, kind, slug, thread)


def _decision(st: _State) -> None:
    rng = st.rng
    sender, recipient = _pair(rng)
    sent = _tick(st)
    slug = _slug(rng)
    letter_id = _new_id(rng, sent, sender, "decision", slug)
    re_, thread = _maybe_thread(st, sender, recipient)
    if _write(st, recipient, "processed" if rng.random() < 0.5 else "inbox", letter_id, sender, recipient,
              "decision", re=re_, thread=thread, priority="next", requires_ack="false", sent=sent,
              subject=" ".join(rng.sample(_WORDS, 4))):
        st.chainable.append((letter_id, sender, recipient, "decision", slug, thread or letter_id))


# --- helpers ---------------------------------------------------------------------------

def _pair(rng: random.Random) -> tuple[str, str]:
    sender = rng.choice(SEATS)
    recipient = sender if rng.random() < 0.08 else rng.choice([s for s in SEATS if s != sender])
    return sender, recipient


def _maybe_thread(st: _State, sender: str, recipient: str) -> tuple[str, str]:
    if st.recent and st.rng.random() < 0.3:
        parent, _, _, thread = st.recent[-1 - min(int(st.rng.expovariate(1 / 30)), len(st.recent) - 1)]
        return parent, thread
    return "", ""


def _tick(st: _State) -> datetime:
    st.clock += timedelta(seconds=st.rng.expovariate(1 / st.step))
    if len(st.recent) > 4000:
        del st.recent[:2000]
    if len(st.chainable) > 4000:
        del st.chainable[:2000]
    return st.clock


def _ts_after(st: _State, after: datetime) -> datetime:
    return after + timedelta(seconds=int(st.rng.expovariate(1 / 36000)) + 60)


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _slug(rng: random.Random) -> str:
    return "-".join(rng.sample(_WORDS, rng.choice((1, 2, 2, 3))))


def _new_id(rng: random.Random, sent: datetime, sender: str, kind: str, slug: str) -> str:
    return f"{sent.strftime('%Y-%m-%dT%H%M%S')}-{sender}-{kind}-{slug}-{rng.getrandbits(32):08x}"


def _body(rng: random.Random) -> str:
    size = min(int(rng.lognormvariate(6.9, 0.8)), 24_000)  # median ~1 KiB
    parts = [f"GOAL: {' '.join(rng.sample(_WORDS, 5))}.\nDONE-WHEN: {' '.join(rng.sample(_WORDS, 4))}.\n\n"]
    n = len(parts[0])
    while n < size:
        chunk = rng.choice(_PROSE) + ("\n\n" if rng.random() < 0.2 else "")
        parts.append(chunk)
        n += len(chunk)
    return "".join(parts)


def _write(st: _State, seat: str, folder: str, letter_id: str, frm: str, to: str, kind: str, *,
           re: str = "", thread: str = "", priority: str = "next", requires_ack: str = "false",
           deadline: str = "", sent: datetime, supersedes: str = "", subject: str = "") -> bool:
    """Write one letter; False (nothing written) once the letterbox holds its N letters."""
    if st.written >= st.limit:
        return False
    fields = [
        ("id", letter_id), ("from", frm), ("to", to), ("type", kind), ("re", re), ("thread", thread),
        ("priority", priority), ("requires_ack", requires_ack), ("deadline", deadline), ("sent", _ts(sent)),
    ]
    if supersedes:
        fields.append(("supersedes", supersedes))
    if subject:
        fields.append(("subject", subject))
    header = "".join(f"{k}: {v}\n" if v else f"{k}:\n" for k, v in fields)
    text = "---\n" + header + "---\n" + _body(st.rng)
    st.out.write(f"{seat}/{folder}/{letter_id}.md", text.encode())
    st.written += 1
    return True


if __name__ == "__main__":
    raise SystemExit(main())

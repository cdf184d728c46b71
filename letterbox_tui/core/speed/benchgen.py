"""Generate a realistic protocol letterbox of N letters, deterministic by seed (for ``bench``).

What it writes is what the protocol's tools leave behind after months of work between
eight seats: tasks (``request``, ``delegate``, a few ``blocker``) with deadlines, some
accepted (an ``ack`` letter in the sender's inbox and a ``.md.ack`` sidecar beside the
task), some answered (a ``result`` or ``nack`` in the sender's inbox, the task moved to
the recipient's ``processed/``), some still open; ``info`` and ``status`` letters, many
filed to ``processed/``; replies the sender filed; threads several letters deep; and
supersession chains. Bodies are Markdown of varied length (median about 1 KiB).

Files are written directly (no temporary-then-rename dance: nobody reads the letterbox
while it is generated), so 100,000 letters take seconds. ``N`` counts ``*.md`` letter
files exactly; sidecars and ``status.md`` notes are extra. A marker file
``.letterbox-bench`` at the root (hidden, so never mail) records what was generated, with
the hash of a manifest (``.letterbox-bench-manifest``) of every folder and file it wrote:
a later run can reuse the letterbox, and ``remove`` deletes exactly those files and
nothing else. Only a marker whose content is exactly what ``generate`` writes counts
(any other JSON is not a bench letterbox), so ``bench`` refuses a letterbox it did not make.
"""

from __future__ import annotations

import json
import os
import random
import stat
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from letterbox_tui.core.flags import READ

MARKER = ".letterbox-bench"
MANIFEST = ".letterbox-bench-manifest"
GENERATOR_VERSION = 1
MARKER_FORMAT = 2  # 2: exact content, with the manifest's hash
_MARKER_MAX = 4096
_MANIFEST_MAX = 512 << 20
SEATS = ("planner", "builder", "reviewer", "tester", "ops", "docs", "research", "ledger")
START = datetime(2026, 5, 1, tzinfo=timezone.utc)
#: the accountability question's cut-off falls inside the generated period
SPAN_DAYS = 240

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


@dataclass
class _State:
    rng: random.Random
    root: Path
    limit: int
    written: int = 0
    clock: datetime = START
    step: float = 1.0
    #: recent letters a new one may reply to or supersede: (id, from, to, thread)
    recent: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: latest letter of each chain by sender, for supersession: (id, from, to, type, slug, thread)
    chainable: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)
    made_dirs: set[str] = field(default_factory=set)


def generate(root: str | os.PathLike[str], letters: int, seed: int = 1) -> Path:
    """Write a letterbox of exactly ``letters`` letter files at ``root`` (created if absent).

    ``root`` must be missing or empty: generation never overwrites.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty")
    rng = random.Random(seed)
    st = _State(rng, root, letters, step=SPAN_DAYS * 86400 / max(letters, 1))
    (root / "locks").mkdir()
    for seat in SEATS:
        for folder in ("inbox", "processed"):
            (root / seat / folder).mkdir(parents=True)
        (root / seat / "status.md").write_text(f"# {seat}\n\nWorking through the backlog.\n")
    while st.written < letters:
        _event(st)
    dirs, files = _walk(root)
    manifest = "".join(f"d {d}\n" for d in dirs) + "".join(f"f {f}\n" for f in files)
    (root / MANIFEST).write_bytes(manifest.encode())
    (root / MARKER).write_text(_marker_text(letters, seed, _hash(manifest.encode()), len(files)))
    return root


def _marker_text(letters: int, seed: int, manifest: str, files: int) -> str:
    return json.dumps({
        "generator": "letterbox-tui bench", "format": MARKER_FORMAT, "letters": letters, "seed": seed,
        "version": GENERATOR_VERSION, "manifest": manifest, "files": files,
    }, sort_keys=True) + "\n"


def _hash(data: bytes) -> str:
    from _blake2 import blake2b

    return blake2b(data, digest_size=16).hexdigest()


def _walk(root: Path) -> tuple[list[str], list[str]]:
    """Every folder and file under ``root`` (relative, sorted): what generate wrote."""
    dirs, files = [], []
    for top, subdirs, names in os.walk(root):
        rel = os.path.relpath(top, root)
        prefix = "" if rel == "." else rel + "/"
        dirs.extend(prefix + d for d in subdirs)
        files.extend(prefix + n for n in names)
    return sorted(dirs), sorted(files)


def _read_bounded(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes, never through a symlink, None when over ``limit``."""
    try:
        fd = os.open(path, READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) and st.st_size <= limit):
            return None
        chunks, n = [], 0
        while n <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - n))):
            chunks.append(chunk)
            n += len(chunk)
        return b"".join(chunks) if n <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def marker(root: str | os.PathLike[str]) -> dict | None:
    """What ``generate`` recorded at ``root``, or None when it is not a bench letterbox:
    the marker must be exactly what ``generate`` writes (any other content, or any other
    JSON object, is not ours)."""
    raw = _read_bounded(Path(root) / MARKER, _MARKER_MAX)
    try:
        data = json.loads(raw) if raw is not None else None
        ours = isinstance(data, dict) and raw.decode() == _marker_text(
            data["letters"], data["seed"], data["manifest"], data["files"]
        ) and data["format"] == MARKER_FORMAT
    except (ValueError, KeyError, TypeError):
        return None
    return data if ours else None


def manifest(root: str | os.PathLike[str], m: dict) -> tuple[list[str], list[str]] | None:
    """(folders, files) ``generate`` wrote at ``root``, from its manifest, or None when the
    manifest is missing, damaged or not the one its marker names."""
    raw = _read_bounded(Path(root) / MANIFEST, _MANIFEST_MAX)
    if raw is None or _hash(raw) != m.get("manifest"):
        return None
    dirs, files = [], []
    for line in raw.decode("ascii", "replace").splitlines():
        kind, _, rel = line.partition(" ")
        parts = rel.split("/")
        if kind not in ("d", "f") or not rel or any(p in ("", ".", "..") for p in parts) or "\0" in rel:
            return None
        (dirs if kind == "d" else files).append(rel)
    return (dirs, files) if len(files) == m.get("files") else None


def remove(root: str | os.PathLike[str]) -> list[str]:
    """Delete what ``generate`` wrote at ``root`` (its manifest's files and folders, then
    the manifest and the marker), and nothing else: a file that is no longer a regular
    file, or lies under a folder that became a symlink, is left, and so is anything the
    manifest does not name. Returns what is left in ``root`` (empty: all gone). Raises
    ``ValueError`` when ``root`` is not a bench letterbox."""
    root = Path(root)
    m = marker(root)
    listed = manifest(root, m) if m is not None else None
    if listed is None:
        raise ValueError(f"{root} is not a bench letterbox (no marker and manifest of its own)")
    dirs, files = listed
    real_dirs: dict[str, bool] = {"": True}

    def real_dir(rel: str) -> bool:  # every folder on the way is a folder, not a symlink
        if rel not in real_dirs:
            parent = rel.rpartition("/")[0]
            p = root / rel
            real_dirs[rel] = real_dir(parent) and p.is_dir() and not p.is_symlink()
        return real_dirs[rel]

    for rel in files:
        p = root / rel
        if real_dir(rel.rpartition("/")[0]) and p.is_file() and not p.is_symlink():
            try:
                p.unlink()
            except OSError:
                pass
    for rel in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
        if real_dir(rel):
            try:
                (root / rel).rmdir()  # only when empty: what is not ours stays
            except OSError:
                pass
    for name in (MANIFEST, MARKER):
        try:
            (root / name).unlink()
        except OSError:
            pass
    return sorted(os.listdir(root))


def is_current(root: str | os.PathLike[str], letters: int, seed: int = 1) -> bool:
    """True when ``root`` is the bench letterbox of ``letters`` letters and this seed."""
    m = marker(root)
    return bool(m) and m.get("letters") == letters and m.get("seed") == seed and m.get("version") == GENERATOR_VERSION


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
        (st.root / (task_rel + ".ack")).write_bytes(b"")
    elif close:
        sidecar = st.root / (task_rel + ".ack")
        if sidecar.exists():
            sidecar.unlink()
        os.replace(st.root / task_rel, st.root / frm / "processed" / f"{parent}.md")


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
    with open(st.root / seat / folder / f"{letter_id}.md", "xb") as fh:
        fh.write(text.encode())
    st.written += 1
    return True

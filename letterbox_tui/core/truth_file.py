"""The current-truth file (SPEC 7 ``digest --write`` / ``--check``): the digest kept as a
small Markdown file with YAML front matter, for a seat to load before anything else.

One writer (this module), pointers never copies: every body line cites a letter's id and
path, never its body. The front matter's ``source`` is a hash over exactly what the digest
depends on: each cited letter's path and header hash, the answers the digest shows for it,
and the scope's completeness. An unchanged ``source`` means the file is current, so writing
it again costs nothing and leaves its bytes and mtime alone; a different one means stale.

The file is the user's, outside the letterbox (reading never writes into a letterbox), and
anything at PATH that is not a letterbox-tui digest is never overwritten.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import frontmatter

from letterbox_tui import __version__

from . import flags as fsflags
from .digest import digest
from .errors import LetterboxError
from .model import Letter, Scope
from .owed import format_time
from .resolve import Resolution
from .text import clean
from .replace import replace_in
from .views.attention import UNKNOWN, counts_text

GENERATOR = "letterbox-tui"
#: ``--max-lines`` default: the body stays small enough to load every time.
DEFAULT_MAX_LINES = 200
#: A digest file larger than this is not one of ours (200 lines are a few KiB).
_READ_MAX = 16 << 20
#: Markdown that would turn a cited subject into markup: shown escaped.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#|~])")
#: A cited id in a body line: the first code span.
_CITED = re.compile(r"^- (?:LATE )?`([^`]+)`")

# (key, heading) in the order the body shows them; lines are kept in this order when
# --max-lines leaves some out, so what is in force and disputed comes first.
_SECTIONS = (
    ("decisions", "Decisions in force"),
    ("disputes", "Open disputes"),
    ("attention", "Most urgent"),
    ("owed", "Owed and late"),
    ("uncertain", "Uncertain"),
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One body line: the letter it cites and what the digest says of it."""

    section: str
    id: str
    path: str
    line: str
    #: the answers this line shows (part of ``source``)
    shown: str


def _md(text: str) -> str:
    return _MARKDOWN.sub(r"\\\1", clean(text, single_line=True))


def _code(text: str) -> str:
    # ids and paths are never backticked in the grammar; a file name still might be
    return "`" + clean(text, single_line=True).replace("`", "'") + "`"


def header_hash(letter: Letter) -> str:
    """A hash of the letter's header as read: every field, in order."""
    h = hashlib.sha256()
    for key, value in letter.fields:
        h.update(key.encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
        h.update(value.encode("utf-8", "surrogatepass"))
        h.update(b"\x1e")
    return h.hexdigest()


def entries(data: dict[str, Any]) -> list[Entry]:
    """The body lines of a digest (``core.digest.digest``'s data), in the body's order."""
    out: list[Entry] = []
    for d in data["decisions"]:
        line = f"- {_code(d['id'])} {_md(d['subject'])} ({_md(d['from'])} → {_md(d['to'])}, sent {_md(d['sent'] or '?')}) · {_code(d['path'])}"
        out.append(Entry("decisions", d["id"], d["path"], line, "current=yes"))
    for d in data["disputes"]:
        names = ", ".join(_code(x["id"]) for x in d["disputed"])
        line = f"- {_code(d['id'])} {_md(d['subject'])}: disputes {names} · {_code(d['path'])}"
        shown = "open;" + ",".join(x["id"] for x in d["disputed"])
        out.append(Entry("disputes", d["id"], d["path"], line, shown))
    for u in data["attention"]["urgent"]:
        names = codes_named(u["attention"])
        line = f"- {_code(u['id'])} {_md(u['subject'])}: {_md(u['seat'])} owes {_md(u['from'])}; {names} · {_code(u['path'])}"
        out.append(Entry("attention", u["id"], u["path"], line, f"urgent;{names}"))
    for g in data["owed"]:
        for i in g["items"]:
            mark = "LATE " if i["late"] == "yes" else ""
            due = f", due {_md(i['deadline'])}" if i["deadline"] else ""
            late = "" if i["late"] in ("yes", "no") else f", late {i['late']}"
            answered = "" if i["answered"] == "no" else f", answered {i['answered']}"
            names = codes_named(i["attention"])
            line = (f"- {mark}{_code(i['id'])} {_md(i['subject'])}: {_md(g['seat'])} owes "
                    f"{_md(i['from'])}{due}{late}{answered}{'; ' + names if names else ''} · {_code(i['path'])}")
            # the codes, never their details: a detail says how long ago, which changes by the minute
            out.append(Entry("owed", i["id"], i["path"], line,
                             f"owed-by={g['seat']};late={i['late']};answered={i['answered']};attention={names}"))
    merged: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for u in data["uncertain"]:
        merged.setdefault((u["id"], u["path"]), []).append(u)
    for (letter_id, path), items in merged.items():
        names = ", ".join(u["answer"] for u in items)
        codes = sorted({r["code"] for u in items for r in u["reasons"]})
        line = f"- {_code(letter_id)} {_md(items[0]['subject'])}: {names} unknown ({', '.join(codes)}) · {_code(path)}"
        out.append(Entry("uncertain", letter_id, path, line, f"unknown={names};{','.join(codes)}"))
    return out


def codes_named(attention: list[dict[str, Any]]) -> str:
    """``late, never-acked, accepted-silent unknown``: an item's codes, those whose record
    cannot be read marked unknown."""
    return ", ".join(c["code"] + (" unknown" if c["detail"].startswith(UNKNOWN) else "") for c in attention)


def scope_summary(scope: Scope) -> dict[str, Any]:
    return {
        "complete": scope.complete,
        "letters": scope.letters,
        "unreadable": len(scope.unreadable),
        "unsupported": len(scope.unsupported),
        "partial": scope.partial,
    }


def source_hash(items: list[Entry], letters: dict[tuple[str, str], Letter], scope: Scope) -> str:
    """``source``: the cited letters (path, header hash), what the digest shows of each, and
    whether the scope is complete. ``letters`` maps (id, path) to the letter cited."""
    h = hashlib.sha256()
    s = scope_summary(scope)
    # the letters count is left out: a letter the digest does not cite changes nothing
    h.update(f"complete={s['complete']};unreadable={s['unreadable']};unsupported={s['unsupported']};"
             f"partial={s['partial']}\n".encode())
    for e in sorted(items, key=lambda e: (e.section, e.id, e.path)):
        letter = letters.get((e.id, e.path))
        hh = header_hash(letter) if letter is not None else "-"
        h.update(f"{e.section}\x1f{e.id}\x1f{e.path}\x1f{hh}\x1f{e.shown}\n".encode("utf-8", "surrogatepass"))
    return "sha256:" + h.hexdigest()


def render(data: dict[str, Any], scope: Scope, *, source: str, items: list[Entry], version: str,
           generated_at: datetime, max_lines: int = DEFAULT_MAX_LINES) -> str:
    """The file's text: front matter, then each section's lines, at most ``max_lines`` of
    them in all; what is left out is said, with the command that lists everything."""
    seat = data["seat"]
    meta = {
        "generator": GENERATOR,
        "version": version,
        "generated_at": format_time(generated_at),
        "at": data["at"],
        "root": scope.root,
        "seat": seat,
        "scope": scope_summary(scope),
        "source": source,
        "cited": len(items),
    }
    who = f" for {seat}" if seat else ""
    see = "letterbox-tui digest" + (f" --seat {seat}" if seat else "")
    lines = [
        f"# Current truth{_md(who)}",
        "",
        f"Derived by letterbox-tui from letter headers at {data['at']}; every line cites a letter's "
        f"id and path. Bodies are not copied: read one with `letterbox-tui show ID`.",
    ]
    if not scope.complete:
        why = "; ".join(scope.why_incomplete()) or "incomplete"
        lines += ["", f"**The scope is incomplete** ({_md(why)}): an absence here is not proof of absence."]
    budget = max(0, max_lines)
    counts = {"owed": sum(len(g["items"]) for g in data["owed"])}
    for key, heading in _SECTIONS:
        mine = [e for e in items if e.section == key]
        title = f"{heading} ({len(mine)}"
        if key == "owed":
            title += f", {len(data['late'])} late"
        lines += ["", f"## {title})", ""]
        if key == "attention":
            lines += [f"Owed items by attention code: {counts_text(data['attention']['counts']) or 'none'}.", ""]
        shown = mine[:budget]
        budget -= len(shown)
        lines += [e.line for e in shown] or (["- none"] if not mine else [])
        if len(shown) < len(mine):
            lines.append(f"- … {len(mine) - len(shown)} more left out (--max-lines {max_lines}); `{_md(see)}` lists all")
    post = frontmatter.Post("\n".join(lines) + "\n", **meta)
    return frontmatter.dumps(post, sort_keys=False) + "\n"


# --- the file on disk -------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Existing:
    source: str
    cited: dict[str, str]  # id -> the line the file shows for it
    left_out: bool


def open_folder(path: Path) -> int:
    """The folder ``path`` lives in, opened once and never through a symlink: the check
    and the write both happen in the folder this descriptor holds, so a folder moved or
    swapped after the check never receives the file or its temporary."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        return os.open(directory, fsflags.DIR)
    except (FileNotFoundError, NotADirectoryError):
        raise LetterboxError(f"{path}: the directory {directory} does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LetterboxError(f"{path}: the directory {directory} is a symlink; not followed") from None
        raise LetterboxError(f"{path}: {exc.strerror or exc}") from None


def _letterbox_folders(root: Path) -> set[tuple[int, int]]:
    """(device, inode) of the letterbox's root, its seats and their folders: the same
    folders reached by another path (a bind mount, a second mount) have the same pair."""
    try:
        st = os.stat(root)
    except OSError as exc:
        raise LetterboxError(f"{root}: {exc.strerror or exc}") from None
    found = {(st.st_dev, st.st_ino)}
    level = [os.fspath(root)]
    for _ in range(2):
        below = []
        for folder in level:
            try:
                with os.scandir(folder) as it:
                    for entry in it:
                        if entry.is_dir(follow_symlinks=False):
                            est = entry.stat(follow_symlinks=False)
                            found.add((est.st_dev, est.st_ino))
                            below.append(entry.path)
            except OSError:
                continue
        level = below
    return found


#: a folder chain deeper than this is not walked further (and counts as inside)
_MAX_DEPTH = 4096


def _inside(dfd: int, folders: set[tuple[int, int]]) -> bool:
    """Does the folder ``dfd`` holds, or any folder above it, belong to the letterbox?
    Walked by ``..`` from the descriptor, so no path is taken twice."""
    fd = os.dup(dfd)
    try:
        st = os.fstat(fd)
        for _ in range(_MAX_DEPTH):
            if (st.st_dev, st.st_ino) in folders:
                return True
            up = os.open("..", fsflags.DIR, dir_fd=fd)
            os.close(fd)
            fd = up
            above = os.fstat(fd)
            if (above.st_dev, above.st_ino) == (st.st_dev, st.st_ino):
                return False  # the top of the file system
            st = above
        return True
    finally:
        os.close(fd)


def refuse_inside(path: Path, root: Path, dfd: int | None = None) -> None:
    """PATH may not lie inside the letterbox, by any path to it: reading never writes
    there. Decided by the device and inode of every folder from PATH's up to the top
    (``dfd``: PATH's folder, already opened; otherwise it is opened here, and a folder
    that does not exist yet is left for the write to report)."""
    own = dfd is None
    if own:
        try:
            dfd = open_folder(path)
        except LetterboxError:
            if os.path.isdir(path.parent if str(path.parent) else "."):
                raise
            return
    try:
        inside = _inside(dfd, _letterbox_folders(root))
    except OSError as exc:
        raise LetterboxError(f"{path}: cannot tell whether it is inside the letterbox ({exc.strerror or exc})") from None
    finally:
        if own:
            os.close(dfd)
    if inside:
        raise LetterboxError(f"{path}: inside the letterbox {root}; the digest file must live outside it")


def read_existing(path: Path, dfd: int | None = None) -> Existing | None:
    """The digest already at ``path`` (``dfd``: its folder, already opened), None when
    nothing is there. Anything that is not a regular letterbox-tui digest file is refused
    (never overwritten): a symlink, a FIFO, a directory, an unreadable or oversized file, a
    file of the user's own."""
    where = path if dfd is None else path.name
    try:
        st = os.stat(where, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LetterboxError(f"{path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise LetterboxError(f"{path}: a symlink; not followed, not overwritten")
    if stat.S_ISDIR(st.st_mode):
        raise LetterboxError(f"{path}: a directory, not a digest file")
    if not stat.S_ISREG(st.st_mode):
        raise LetterboxError(f"{path}: not a regular file (a FIFO, socket or device); not touched")
    if st.st_size > _READ_MAX:
        raise LetterboxError(f"{path}: {st.st_size} bytes, too large to be a letterbox-tui digest; not overwritten")
    try:
        fd = os.open(where, fsflags.READ, dir_fd=dfd)
    except OSError as exc:
        raise LetterboxError(f"{path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LetterboxError(f"{path}: not a regular file; not touched")
        chunks, size = [], 0
        while size <= _READ_MAX:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > _READ_MAX:
        raise LetterboxError(f"{path}: grew past {_READ_MAX} bytes; not a letterbox-tui digest")
    not_ours = LetterboxError(f"{path}: not a letterbox-tui digest (no front matter with generator: {GENERATOR}); not overwritten")
    try:
        post = frontmatter.loads(b"".join(chunks).decode("utf-8"))
    except Exception:  # any YAML or decoding failure: the file is not ours
        raise not_ours from None
    meta = post.metadata
    source = meta.get("source")
    if meta.get("generator") != GENERATOR or not isinstance(source, str):
        raise not_ours
    cited: dict[str, str] = {}
    left_out = False
    for line in post.content.splitlines():
        m = _CITED.match(line)
        if m:
            cited.setdefault(m.group(1), line)
        elif line.startswith("- … "):
            left_out = True
    return Existing(source, cited, left_out)


def write_atomically(path: Path, text: str, dfd: int | None = None) -> None:
    """Replace ``path`` with ``text`` through its folder's descriptor (``dfd``, or opened
    here): ``core.replace``, a hidden temporary beside it, fsync, rename, fsync of the
    folder. A crash before the rename leaves the old file as it was, and no temporary."""
    own = dfd is None
    if own:
        dfd = open_folder(path)

    def still_a_file() -> None:
        # the target may have changed since it was read: still never replace a symlink,
        # a directory or anything but a regular file
        try:
            st = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(st.st_mode):
            raise LetterboxError(f"{path}: changed into something that is not a regular file; not replaced")

    try:
        replace_in(dfd, path.name, text.encode("utf-8"), mode=0o644, before_replace=still_a_file)
    except OSError as exc:
        raise LetterboxError(f"{path}: cannot write it ({exc.strerror or exc})") from None
    finally:
        if own:
            os.close(dfd)


@dataclass(frozen=True, slots=True)
class Staleness:
    """How a digest file differs from what the letters say now."""

    current: bool
    added: int
    changed: int
    gone: int
    left_out: bool

    def describe(self) -> str:
        if self.current:
            return "current"
        parts = []
        if self.added:
            parts.append(f"{self.added} letter{'s' if self.added != 1 else ''} added")
        if self.changed:
            parts.append(f"{self.changed} answer{'s' if self.changed != 1 else ''} changed")
        if self.gone:
            parts.append(f"{self.gone} letter{'s' if self.gone != 1 else ''} no longer cited")
        text = ", ".join(parts) or "what it depends on changed (scope or a cited header)"
        if self.left_out:
            text += " (counted over the lines the file shows)"
        return "stale: " + text


def staleness(old: Existing, source: str, items: list[Entry]) -> Staleness:
    """Compare the file's cited lines with the lines the letters give now."""
    if old.source == source:
        return Staleness(True, 0, 0, 0, old.left_out)
    now: dict[str, str] = {}
    for e in items:
        now.setdefault(e.id, e.line)
    added = sum(1 for i in now if i not in old.cited)
    changed = sum(1 for i, line in now.items() if i in old.cited and old.cited[i] != line)
    gone = sum(1 for i in old.cited if i not in now)
    return Staleness(False, added, changed, gone, old.left_out)


# --- what the command calls -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Outcome:
    path: str
    status: str  # "written" | "unchanged" | "current" | "stale"
    source: str
    cited: int
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "status": self.status, "source": self.source,
                "cited": self.cited, "detail": self.detail}


def _derive(res: Resolution, seat: str | None) -> tuple[dict[str, Any], list[Entry], str]:
    data = digest(res, seat)
    items = entries(data)
    letters = {(x.id, x.path): x for x in res.snapshot.letters}
    return data, items, source_hash(items, letters, res.snapshot.scope)


def write_digest(path: Path, root: Path, res: Resolution, seat: str | None, *, generated_at: datetime,
                 max_lines: int = DEFAULT_MAX_LINES) -> Outcome:
    """``digest --write PATH``: the file rewritten only when its ``source`` changed."""
    if max_lines < 0:
        raise LetterboxError(f"--max-lines {max_lines}: expected 0 or more")
    dfd = open_folder(path)
    try:
        refuse_inside(path, root, dfd)
        old = read_existing(path, dfd)
        data, items, source = _derive(res, seat)
        if old is not None and old.source == source:
            return Outcome(str(path), "unchanged", source, len(items), "unchanged: its letters and answers are as they were")
        text = render(data, res.snapshot.scope, source=source, items=items, version=__version__,
                      generated_at=generated_at, max_lines=max_lines)
        write_atomically(path, text, dfd)
    finally:
        os.close(dfd)
    detail = "written" if old is None else "rewritten: " + staleness(old, source, items).describe().removeprefix("stale: ")
    return Outcome(str(path), "written", source, len(items), detail)


def check_digest(path: Path, root: Path, res: Resolution, seat: str | None) -> Outcome:
    """``digest --check PATH``: is the file current? (Nothing is written.)"""
    old = read_existing(path)
    if old is None:
        raise LetterboxError(f"{path}: no such file; write it with letterbox-tui digest --write {path}")
    _, items, source = _derive(res, seat)
    how = staleness(old, source, items)
    return Outcome(str(path), "current" if how.current else "stale", source, len(items), how.describe())

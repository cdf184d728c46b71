"""Reading a letter's file for a face: its body, sha256 and whether it changed since the
scan (``show``, the app's letter pane), and a seat's status note. Read through
``core.files``: no symlink is followed, a FIFO never blocks; errors are values.

The body starts where ``header.body_offset`` says (the header parser's own rule), for both
faces: there is no second way of splitting a body off.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..files import NOT_REGULAR, TOO_LARGE_TO_HASH, read_file
from ..grammar import lines as file_lines
from ..header import MAX_HEADER, body_offset
from ..model import Letter

#: ``show`` reads at most this much of a body; the app's pane a quarter of it.
BODY_MAX = 1 << 20


@dataclass(slots=True)
class LetterFile:
    body: str | None = None  # decoded leniently (invalid UTF-8 becomes U+FFFD)
    body_truncated: bool = False
    sha256: str | None = None
    sha256_bytes: int | None = None  # what the hash covers: the size, or a prefix of the file
    size: int | None = None
    changed: bool | None = None  # the file changed since the scan
    error: str | None = None


def read_letter(root: str, letter: Letter, limit: int = BODY_MAX, *, hashing: bool = True,
                hash_limit: int | None = None, prefix: bool = False) -> LetterFile:
    """The letter's body (at most ``limit`` bytes) and, with ``hashing``, its sha256 (unless
    the file is over ``hash_limit`` bytes; with ``prefix``, then the sha256 of its first
    ``hash_limit`` bytes, ``sha256_bytes`` saying so)."""
    out = LetterFile()
    # keep the header (at most 32 KiB) and the body's first bytes
    f = read_file(root, letter.path, keep=limit + MAX_HEADER + 8 * 1024, hashing=hashing, hash_limit=hash_limit,
                  prefix=prefix)
    if f.error is not None and f.error != TOO_LARGE_TO_HASH:
        out.error = "no longer a regular file" if f.error == NOT_REGULAR else f.error
        return out
    if f.error == TOO_LARGE_TO_HASH:
        out.error = "too large to hash here"
    out.sha256 = f.sha256
    out.sha256_bytes = f.hashed if f.sha256 is not None else None
    out.size = f.size
    out.changed = f.stat_key != (letter.size, letter.mtime_ns, letter.inode)
    start = body_offset(f.data)
    if start is None:
        out.error = "the header no longer closes"
        return out
    body = f.data[start:]
    if len(body) > limit:  # (a file cut at ``keep`` always is: the header is under MAX_HEADER)
        body = body[:limit]
        out.body_truncated = True
    out.body = body.decode("utf-8", errors="replace")
    return out


def read_body(root: str, rel: str, limit: int) -> tuple[str, bool, str]:
    """At most ``limit`` bytes of a letter's body (the app's pane: no hash): (body,
    truncated, error), the body starting where ``header.body_offset`` says."""
    f = read_file(root, rel, keep=limit + MAX_HEADER + 8 * 1024, hashing=False)
    if f.error is not None:
        return "", False, f.error.removeprefix("cannot read: ")
    start = body_offset(f.data)
    if start is None:
        return "", False, "the header no longer closes"
    body = f.data[start:]
    truncated = len(body) > limit
    return body[:limit].decode("utf-8", errors="replace"), truncated, ""


def read_text(root: str, rel: str, limit: int) -> tuple[str, bool, str]:
    """At most ``limit`` bytes of any file under the root (a status note), decoded with
    replacement: (text, truncated, error)."""
    f = read_file(root, rel, keep=limit, hashing=False)
    if f.error is not None:
        return "", False, f.error.removeprefix("cannot read: ")
    return f.data.decode("utf-8", errors="replace"), f.truncated, ""


def status_line(root: str, rel: str | None, limit: int = 4096) -> str | None:
    """A seat's status note as one line: its first non-blank line that is not a header
    delimiter (headings skipped when there is anything else), at most 120 characters."""
    if not rel:
        return None
    text, _, err = read_text(root, rel, limit)
    if err:
        return f"status unreadable: {err}"
    lines = [ln.strip() for ln in file_lines(text) if ln.strip() and ln.strip() != "---"]
    fields = dict(ln.split(":", 1) for ln in lines if ":" in ln)
    fields = {k.strip().lower(): v.strip() for k, v in fields.items()}
    if "state" in fields:  # the protocol's status note: state, since, notes
        line = fields["state"] or "(no state)"
        if fields.get("since"):
            line += f" since {fields['since']}"
        if fields.get("notes"):
            line += f" · {fields['notes']}"
        return line[:160]
    lines = [ln for ln in lines if not ln.startswith("#")] or lines
    return lines[0][:120] if lines else None


def sha256_of(root: str, rel: str, limit: int = 64 * 1024 * 1024) -> str:
    """The file's sha256, or a parenthesised reason it has none."""
    f = read_file(root, rel, keep=0, hash_limit=limit)
    if f.sha256 is not None:
        return f.sha256
    if f.error == TOO_LARGE_TO_HASH:
        return "(file too large to hash here)"
    return f"({f.error})"

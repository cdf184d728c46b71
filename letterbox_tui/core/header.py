"""The protocol's flat header grammar (SPEC 3), in one place.

``parse_header(data)`` takes the first bytes of a file and returns ``HeaderResult``: either
the ordered fields, or an error with whatever was legible around it. It never raises,
whatever the bytes (a property test holds it to that).

The fast path handles a well-formed header with a few C-level scans; only a broken header
takes the line-by-line slow path that works out what is legible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .grammar import KEY, KEY_RE

MAX_LINE = 4096  # bytes, counting the line ending
MAX_HEADER = 32768  # bytes, counting both delimiters

# Line endings are the protocol reader's: a line is what is left once its trailing CRs
# and LF are stripped, so CRLF (and CR...CRLF) end a line; a CR anywhere else is a
# control character.
_OPEN = re.compile(rb"---\r*\n")
# A closing delimiter: a line that is exactly '---' (then its ending, or the end of data).
_CLOSE = re.compile(rb"\n---\r*(?:\n|$)")
# The same, ended by a line ending: only this settles a partial read (a '---' at the very
# end of a read may be the start of a longer line such as '---x').
_CLOSE_ENDED = re.compile(rb"\n---\r*\n")
_CR_ENDINGS = re.compile(rb"\r+\n")
# Control characters not allowed in a header line (TAB included); CR is checked apart.
_CONTROL = re.compile(r"[\x00-\x08\x09\x0b-\x0c\x0e-\x1f\x7f]")
# The same as bytes, for bytes.translate: several times faster than a regex search.
_CONTROL_BYTES = bytes([b for b in range(32) if b not in (10, 13)] + [127])
_LONG_LINE = re.compile(rb"[^\n]{%d,}" % MAX_LINE)  # with its '\n', over 4096 bytes
# A whole well-formed header body: every line 'key:...' or blank (whitespace as str.isspace
# sees it). The two branches start with disjoint characters, so matching is linear.
_ALL_LINES_OK = re.compile(r"(?:" + KEY + r":[^\n]*\n|[^\S\n]*\n)*")
_FIELD_LINE = re.compile(r"^(" + KEY + r"):(.*)$", re.MULTILINE)


@dataclass(slots=True)
class HeaderResult:
    fields: tuple[tuple[str, str], ...] | None  # None when the header is unreadable
    error: str = ""
    legible: dict[str, str] = field(default_factory=dict)
    illegible: str = ""
    complete: bool = True  # False when more bytes are needed to find the closing delimiter


def needs_more(data: bytes, at_eof: bool) -> bool:
    """True when ``data`` holds no closing delimiter yet and more of the file may help.

    A '---' at the very end of ``data`` settles nothing unless the file ends there: the
    line may go on ('---x'), so more is needed to judge it.
    """
    if at_eof or len(data) >= MAX_HEADER + 8:
        return False
    return _CLOSE_ENDED.search(data, 3) is None


def body_offset(data: bytes) -> int | None:
    """Where the body starts in a letter file's first bytes: just past the closing '---'
    line, found exactly as ``parse_header`` finds it. None when there is no header or it
    does not close within ``data``."""
    opening = _OPEN.match(data)
    if opening is None:
        return None
    m = _CLOSE.search(data, opening.end() - 1)
    return None if m is None else m.end()


def parse_header(data: bytes) -> HeaderResult:
    """Parse the header at the start of ``data`` (the first bytes of a letter file)."""
    opening = _OPEN.match(data)
    if opening is not None:
        start = opening.end()
    else:
        if data.startswith(b"\xef\xbb\xbf"):
            why = "byte-order mark before the opening '---'"
        elif not data:
            why = "empty file"
        else:
            why = "first line is not '---'"
        return _broken(data[:MAX_HEADER], 0, why, no_open=True)
    m = _CLOSE.search(data, start - 1)
    if m is None:
        if len(data) > MAX_HEADER:
            return _broken(
                data[:MAX_HEADER], start, "header over 32768 bytes (no closing '---' within it)", cut=True
            )
        return _broken(data, start, "no closing '---'")
    body_start = m.start() + 1  # the '\n' before the closing line belongs to the last field line
    end = m.end()
    if end > MAX_HEADER:
        return _broken(data[:end], start, "header over 32768 bytes")
    raw = data[start:body_start]
    # Fast path: no control bytes, no CR except in CRLF, no long line, valid UTF-8.
    if len(raw.translate(None, _CONTROL_BYTES)) == len(raw) and (
        len(raw) < MAX_LINE or _LONG_LINE.search(raw) is None
    ):
        if b"\r" in raw:
            raw = _CR_ENDINGS.sub(b"\n", raw)
            if b"\r" in raw:
                return _broken(data[:end], start, "carriage return inside a line")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return _broken(data[:end], start, "header is not UTF-8")
        # C1 (U+0080..U+009F) is allowed by the grammar (only code points below 32 and
        # 127 are refused, and those were checked on the bytes).
        pairs = _FIELD_LINE.findall(text)
        # One match per line at most: as many matches as lines means every line is a field
        # line; fewer means blank lines (fine) or a bad line (the full check tells which).
        if len(pairs) == text.count("\n") or _ALL_LINES_OK.fullmatch(text) is not None:
            if len(dict(pairs)) == len(pairs):
                return HeaderResult(tuple([(k, v.strip()) for k, v in pairs]))
        # Something is wrong: judge line by line to name it.
        fields: list[tuple[str, str]] = []
        seen: set[str] = set()
        for line in text.split("\n"):
            if not line or line.isspace():
                continue
            key, sep, value = line.partition(":")
            if not sep or KEY_RE.fullmatch(key) is None:
                return _broken(data[:end], start, f"line is not 'key: value': {line[:60]!r}")
            if key in seen:
                return _broken(data[:end], start, f"key {key!r} repeats")
            seen.add(key)
            fields.append((key, value.strip()))
        return HeaderResult(tuple(fields))
    return _broken(data[:end], start, None)


def _broken(data: bytes, start: int, why: str | None, *, no_open: bool = False, cut: bool = False) -> HeaderResult:
    """Slow path: find the first error and separate legible lines from the rest.

    ``data`` ends at the closing delimiter when there is one. Lines are judged one by one;
    a line is legible when it is valid UTF-8, has no control character, is within the
    length limit and parses as ``key: value`` with a valid key. With ``cut`` the data was
    cut at the size limit, so its last line is incomplete and never legible, and a line
    over the line limit before it is the first error a reader meets, so it is named.
    """
    first_error = why
    first_long: str | None = None
    legible_values: dict[str, list[str]] = {}
    legible_lines: dict[str, list[str]] = {}
    illegible: list[str] = []
    if no_open:
        illegible.append(data.decode("utf-8", "replace"))
        return HeaderResult(None, first_error or "unreadable", {}, "\n".join(illegible))
    body = data[start:]
    # Drop the closing delimiter line, if present, so it is not judged as a field.
    m = _CLOSE.search(b"\n" + body)
    if m is not None:
        body = body[: max(m.start(), 0)]
    raw_lines = body.split(b"\n")
    last = len(raw_lines) - 1
    for n, raw_line in enumerate(raw_lines):
        line_error = None
        if cut and n == last:
            line_error = "header over 32768 bytes"
        if len(raw_line) + 1 > MAX_LINE:
            line_error = f"line over {MAX_LINE} bytes"
            first_long = first_long or line_error
        raw_line = raw_line.rstrip(b"\r")
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError:
            line = raw_line.decode("utf-8", "replace")
            line_error = line_error or "header is not UTF-8"
        if line_error is None and ("\r" in line or _CONTROL.search(line)):
            line_error = "control character in a header line"
        if line_error is None and (not line or line.isspace()):
            continue
        if line_error is None:
            key, sep, value = line.partition(":")
            if not sep or KEY_RE.fullmatch(key) is None:
                line_error = f"line is not 'key: value': {line[:60]!r}"
            else:
                legible_values.setdefault(key, []).append(value.strip())
                legible_lines.setdefault(key, []).append(line)
                continue
        illegible.append(line)
        first_error = first_error or line_error
    legible: dict[str, str] = {}
    for key, values in legible_values.items():
        if len(values) > 1:
            first_error = first_error or f"key {key!r} repeats"
            if any(v != values[0] for v in values):
                illegible.extend(legible_lines[key])
                continue
        legible[key] = values[0]
    if cut and first_long:
        first_error = first_long
    return HeaderResult(None, first_error or "unreadable header", legible, "\n".join(illegible))


@dataclass(slots=True, frozen=True)
class BadLine:
    """The first header line a reader cannot take: its number (1 is the opening line),
    the byte offset where it starts, its bytes (without the line ending) and why."""

    number: int
    offset: int
    raw: bytes
    why: str


def first_bad_line(data: bytes) -> BadLine | None:
    """Where ``parse_header`` would fail in ``data`` (a file's first bytes), for showing a
    reader the offending line; None when the header reads, or when what fails is not one
    line (no closing '---', a header over the size limit)."""
    if parse_header(data).fields is not None:
        return None
    opening = _OPEN.match(data)
    if opening is None:
        end = data.find(b"\n")
        return BadLine(1, 0, data[: end if end >= 0 else MAX_LINE], parse_header(data).error)
    pos = opening.end()
    number = 1
    seen: set[str] = set()
    limit = min(len(data), MAX_HEADER + 8)
    while pos < limit:
        number += 1
        end = data.find(b"\n", pos)
        raw = data[pos: end if end >= 0 else len(data)]
        line_start = pos
        pos = (end + 1) if end >= 0 else len(data)
        if raw.rstrip(b"\r") == b"---":
            return None
        why = ""
        if len(raw) + 1 > MAX_LINE:
            why = f"line over {MAX_LINE} bytes"
        stripped = raw.rstrip(b"\r")
        try:
            line = stripped.decode("utf-8")
        except UnicodeDecodeError:
            line = ""
            why = why or "header is not UTF-8"
        if not why and ("\r" in line or _CONTROL.search(line)):
            why = "control character in a header line"
        if not why and line and not line.isspace():
            key, sep, _ = line.partition(":")
            if not sep or KEY_RE.fullmatch(key) is None:
                why = "line is not 'key: value'"
            elif key in seen:
                why = f"key {key!r} repeats"
            seen.add(key)
        if why:
            return BadLine(number, line_start, raw[:MAX_LINE], why)
        if end < 0:
            break
    return None

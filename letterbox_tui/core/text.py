"""The one sanitizer: every string that came from a letter or a file name passes here
before a face shows it.

Letter text is hostile. It may hold terminal control sequences (C0, C1: OSC, CSI), DEL,
bidi overrides and isolates that reorder what a reader sees, zero-width and other invisible
characters that hide text, lone surrogates (a file name that is not UTF-8 decodes to them),
Unicode tag characters and the interlinear annotation characters U+FFF9-U+FFFB. Each is
replaced by a visible placeholder: the Control Pictures glyph for C0 (ESC -> U+241B) and
DEL (U+2421), ``<U+XXXX>`` for everything else. ``\\n`` and ``\\t`` are kept unless the
text must stay on one line (``single_line``: ``\\n`` -> U+2424, ``\\t`` -> a space); a CRLF
pair is one newline.

No face-specific types here (core never imports Textual or Rich): the command line prints
``clean()``'s string through Rich ``Text``; the app wraps ``marked()``'s string and spans in
``textual.content.Content`` (``app/sanitize.py``), never in markup. Markup such as
``[@click=app.quit]`` is plain text to both: nothing here needs to escape it.
"""

from __future__ import annotations

import re
from datetime import timedelta

#: C0 except \t and \n.
C0 = "\x00-\x08\x0b-\x1f"
#: DEL and the C1 controls (U+009B is CSI, U+009D OSC).
DEL_C1 = "\x7f-\x9f"
#: Bidi marks, embeddings, overrides and isolates.
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: Characters that draw nothing and so hide text: soft hyphen, joiners, zero-width space,
#: invisible operators, Hangul fillers, the BOM, line and paragraph separators.
INVISIBLE = "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200d\u2060-\u2064\u2028\u2029\u3164\ufeff\uffa0"
#: Lone surrogates (never valid text; ``surrogateescape`` makes them from non-UTF-8 names).
SURROGATES = "\ud800-\udfff"
#: Interlinear annotation anchor, separator, terminator.
ANNOTATION = "\ufff9-\ufffb"
#: Unicode tag characters (invisible ASCII look-alikes).
TAGS = "\U000e0000-\U000e007f"

_CLASS = f"{C0}{DEL_C1}{BIDI}{INVISIBLE}{SURROGATES}{ANNOTATION}{TAGS}"
#: The patterns, compiled on first use (``--json`` output of ASCII text never needs them;
#: compiling them is a millisecond of every command's start):
#: ``UNSAFE`` every character a face must never hand to a terminal as it is;
#: ``UNSAFE_OR_BREAK`` the same plus newline and tab (text that must stay on one line);
#: ``JSON_UNSAFE`` what JSON output escapes beyond what ``json.dumps`` escapes itself (C0):
#: a terminal reading the JSON must not see these raw either, and a lone surrogate cannot
#: be encoded as UTF-8 at all. Inside JSON strings only, so the document stays equivalent.
_SOURCES = {
    "UNSAFE": f"[{_CLASS}]",
    "UNSAFE_OR_BREAK": f"[{_CLASS}\n\t]",
    "JSON_UNSAFE": f"[{DEL_C1}{BIDI}{INVISIBLE}{SURROGATES}{ANNOTATION}{TAGS}]",
}


def __getattr__(name: str) -> re.Pattern[str]:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    pattern = globals()[name] = re.compile(source)
    return pattern


NEWLINE_MARK = "\u2424"  # ␤


def _p(name: str) -> re.Pattern[str]:
    found = globals().get(name)
    return found if found is not None else __getattr__(name)


def placeholder(ch: str) -> str:
    """The visible stand-in for one unsafe character."""
    cp = ord(ch)
    if cp < 0x20:
        return chr(0x2400 + cp)  # Control Pictures: ␀ ␁ … ␛ …
    if cp == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{cp:04X}>"


def _as_str(text: object) -> str:
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    return s.replace("\r\n", "\n") if "\r" in s else s


def clean(text: object, *, single_line: bool = False, tab: str | None = None) -> str:
    """``text`` safe for a terminal: every unsafe character replaced by its placeholder.

    ``single_line``: newlines become U+2424 and tabs a space (list rows, table cells,
    titles, file names). ``tab``: what a tab becomes otherwise (default: kept).
    """
    s = _as_str(text)
    if s.isascii() and s.isprintable():  # (most ids, seats and times: nothing to replace)
        return s
    if single_line:
        out = _p("UNSAFE_OR_BREAK").sub(_single, s)
    else:
        unsafe = _p("UNSAFE")
        out = unsafe.sub(_multi, s) if unsafe.search(s) else s
        if tab is not None and "\t" in out:
            out = out.replace("\t", tab)
    return out


def _single(m: re.Match[str]) -> str:
    ch = m.group()
    if ch == "\n":
        return NEWLINE_MARK
    if ch == "\t":
        return " "
    return placeholder(ch)


def _multi(m: re.Match[str]) -> str:
    return placeholder(m.group())


def marked(text: object, *, single_line: bool = False) -> tuple[str, list[tuple[int, int]]]:
    """``clean(text)`` and the (start, end) offsets of each placeholder in it, so a face
    can make placeholders stand out (a tab turned into a space is not marked)."""
    s = _as_str(text)
    pattern = _p("UNSAFE_OR_BREAK" if single_line else "UNSAFE")
    pieces: list[str] = []
    marks: list[tuple[int, int]] = []
    pos = offset = 0
    for m in pattern.finditer(s):
        ch = m.group()
        before = s[pos:m.start()]
        pieces.append(before)
        offset += len(before)
        if ch == "\t":
            rep, mark = " ", False
        elif ch == "\n":
            rep, mark = NEWLINE_MARK, True
        else:
            rep, mark = placeholder(ch), True
        pieces.append(rep)
        if mark:
            marks.append((offset, offset + len(rep)))
        offset += len(rep)
        pos = m.end()
    if not pieces:
        return s, marks
    pieces.append(s[pos:])
    return "".join(pieces), marks


def is_safe(text: str, *, single_line: bool = False) -> bool:
    """True when ``text`` holds nothing ``clean`` would replace."""
    return _p("UNSAFE_OR_BREAK" if single_line else "UNSAFE").search(text) is None


def json_escape(text: str) -> str:
    """Escape ``JSON_UNSAFE`` characters in already-encoded JSON text as ``\\uXXXX``."""
    if text.isascii() and "\x7f" not in text:  # DEL is the one ASCII character escaped here
        return text  # (isascii is a flag check; the regex pass over 14 MB cost ~0.12 s)
    return _p("JSON_UNSAFE").sub(_json_escape, text)


def _json_escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c > 0xFFFF:  # a surrogate pair, as JSON spells a character beyond the BMP
        c -= 0x10000
        return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"
    return f"\\u{c:04x}"


def span(delta: timedelta) -> str:
    """A short human duration, whichever way it points: 3d 4h, 5h 10m, 12m."""
    secs = int(abs(delta).total_seconds())
    d, rem = divmod(secs, 86400)
    h, rem = divmod(rem, 3600)
    m = rem // 60
    if d:
        return f"{d}d {h}h" if h else f"{d}d"
    if h:
        return f"{h}h {m}m" if m else f"{h}h"
    return f"{m}m"

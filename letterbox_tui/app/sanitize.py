"""The one sanitizer: every string that comes from a letter passes through here.

Letter text is hostile. It may hold terminal control sequences (C0, C1, OSC, CSI), bidi
overrides that reorder what a reader sees, zero-width characters that hide text, and
Textual markup such as ``[@click=app.quit]``. ``clean()`` returns a ``Content`` built
from plain text (markup is never parsed) with each dangerous character replaced by a
visible placeholder styled so a reader sees that something was there.

``clean_str()`` is the same replacement as a plain string, for widgets that take text
to render themselves without markup (``Markdown``, ``Input`` values).
"""

from __future__ import annotations

import re

from textual.content import Content, Span

#: Style applied to placeholders (a theme variable, so every theme shows them).
PLACEHOLDER_STYLE = "reverse $warning"

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_INVISIBLE = "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u3164\ufeff\uffa0\u2028\u2029"

# C0 except \n and \t, DEL, C1, bidi controls, zero-width / invisible characters, lone
# surrogates (from lenient decoding), Unicode "tag" characters and the specials block's
# interlinear annotations.
_DANGER = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"
    + _BIDI
    + _INVISIBLE
    + "\ud800-\udfff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_DANGER_OR_SPACE = re.compile(_DANGER.pattern[:-1] + "\n\t]")


def placeholder(ch: str) -> str:
    """The visible stand-in for one dangerous character."""
    cp = ord(ch)
    if cp < 0x20:
        return chr(0x2400 + cp)  # control pictures: ␀ ␁ … ␛ …
    if cp == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{cp:04X}>"


def clean_str(text: object, *, single_line: bool = False) -> str:
    """``text`` with every dangerous character replaced by its placeholder.

    ``single_line`` also turns newlines into ``␤`` and tabs into a space, for list rows
    and titles. A CRLF pair is read as one newline.
    """
    s = "" if text is None else str(text)
    s = s.replace("\r\n", "\n")
    out = _DANGER.sub(lambda m: placeholder(m.group()), s)
    if single_line:
        out = out.replace("\n", "\u2424").replace("\t", " ")
    return out


def clean(text: object, *, single_line: bool = False, style: str = "") -> Content:
    """A ``Content`` of ``text`` as plain text, placeholders made visible.

    Never parses markup: ``[bold]`` stays the seven characters ``[bold]``.
    """
    s = "" if text is None else str(text)
    s = s.replace("\r\n", "\n")
    pieces: list[str] = []
    spans: list[Span] = []
    pos = 0
    offset = 0
    pattern = _DANGER_OR_SPACE if single_line else _DANGER
    for m in pattern.finditer(s):
        ch = m.group()
        if single_line and ch in "\n\t":
            rep = "\u2424" if ch == "\n" else " "
            marked = ch == "\n"
        else:
            rep = placeholder(ch)
            marked = True
        before = s[pos:m.start()]
        pieces.append(before)
        offset += len(before)
        pieces.append(rep)
        if marked:
            spans.append(Span(offset, offset + len(rep), PLACEHOLDER_STYLE))
        offset += len(rep)
        pos = m.end()
    pieces.append(s[pos:])
    content = Content("".join(pieces), spans=spans)
    if style:
        content = content.stylize_before(style)
    return content


def cleans(*parts: str | Content | tuple[str, str]) -> Content:
    """Assemble a line from trusted pieces: a ``Content`` is kept, a ``(text, style)``
    pair and a bare ``str`` are treated as letter text and cleaned (single line)."""
    out = Content("")
    for part in parts:
        if isinstance(part, Content):
            out += part
        elif isinstance(part, tuple):
            out += clean(part[0], single_line=True, style=part[1])
        else:
            out += clean(part, single_line=True)
    return out

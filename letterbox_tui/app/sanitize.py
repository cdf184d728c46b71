"""The app's face of the one sanitizer (``letterbox_tui.core.text``): letter text as
``textual.content.Content``, never markup.

``clean()`` returns a ``Content`` built from plain text (markup is never parsed, so
``[@click=app.quit]`` stays those characters) with each placeholder styled so a reader
sees that something was there. ``clean_str()`` is the core's string, for widgets that take
text to render themselves without markup (``Markdown``, ``Input`` values).
"""

from __future__ import annotations

import os

from textual.content import Content, Span

from letterbox_tui.core.text import clean as clean_str
from letterbox_tui.core.text import marked, placeholder

__all__ = ["PLACEHOLDER_STYLE", "clean", "clean_str", "cleans", "home_path", "placeholder"]

#: Style applied to placeholders (a theme variable, so every theme shows them).
PLACEHOLDER_STYLE = "reverse $warning"


def clean(text: object, *, single_line: bool = False, style: str = "") -> Content:
    """A ``Content`` of ``text`` as plain text, placeholders made visible."""
    plain, marks = marked(text, single_line=single_line)
    content = Content(plain, spans=[Span(a, b, PLACEHOLDER_STYLE) for a, b in marks])
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


def home_path(path: str) -> str:
    """``path`` with the user's home shown as ``~`` (still to be cleaned for display)."""
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path

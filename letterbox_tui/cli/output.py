"""Human output for the reading commands: sanitized text, Rich tables, the scope line.

Letter text is hostile. Everything from a letter goes through ``clean()`` (control
characters, DEL, C1 and bidi controls become visible placeholders) and reaches Rich only as
``rich.text.Text``, never as a markup string: ``[bold]`` and ``[@click=app.quit]`` print as
written. Rich is imported lazily so ``--json`` runs never load it.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any

from letterbox_tui.core.model import Scope

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

# Zero-width and other invisible characters (they hide text from a reader), line and
# paragraph separators, and Unicode tag characters: shown as placeholders like controls.
_INVISIBLE = "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200d\u2060-\u2064\u2028\u2029\u3164\ufeff\uffa0\U000e0000-\U000e007f"
# C0 except \n and \t, DEL, C1, the bidi/direction controls, and the invisible characters.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069" + _INVISIBLE + "]")


def _placeholder(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c < 0x20:
        return chr(0x2400 + c)  # the Control Pictures block: ESC -> U+241B
    if c == 0x7F:
        return "\u2421"
    return f"<U+{c:04X}>"


def clean(text: str) -> str:
    """Text safe for a terminal: no control character survives (tabs become spaces)."""
    text = text.replace("\r\n", "\n").replace("\t", "    ")
    return _UNSAFE.sub(_placeholder, text)


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069" + _INVISIBLE + "]")


def _json_escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c > 0xFFFF:  # a surrogate pair, as JSON spells a character beyond the BMP
        c -= 0x10000
        return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"
    return f"\\u{c:04x}"


def dumps_json(obj: Any, *, indent: int | None = 2) -> str:
    """JSON for a terminal or a pipe. JSON escapes C0 itself; C1 and bidi controls are
    escaped here too (they can only occur inside strings, so the JSON stays equivalent)."""
    # check_circular: what is printed is a tree of fresh dicts and lists (the check's
    # bookkeeping per container is ~5% of encoding 10,000+ rows)
    text = json.dumps(
        obj, ensure_ascii=False, indent=indent, separators=None if indent else (",", ":"), check_circular=False
    )
    if text.isascii() and "\x7f" not in text:  # DEL is the one ASCII character escaped here
        return text  # (isascii is a flag check; the regex pass over 14 MB cost ~0.12 s)
    return _JSON_UNSAFE.sub(_json_escape, text)


def emit_json(obj: Any) -> None:
    """Indented on a terminal; compact on a pipe (Python's indenting encoder is three
    times slower, which shows at 100,000 rows)."""
    sys.stdout.write(dumps_json(obj, indent=2 if sys.stdout.isatty() else None))
    sys.stdout.write("\n")


def console() -> Console:
    """A console that never interprets markup, emoji codes or highlights letter text."""
    from rich.console import Console

    # A pipe or a file gets the whole of every value: wide, never folded mid-id.
    width = None if sys.stdout.isatty() else 400
    return Console(markup=False, emoji=False, highlight=False, width=width, soft_wrap=False)


def text(value: object, style: str = "") -> Text:
    """Letter data as Rich ``Text``: sanitized, never parsed as markup."""
    from rich.text import Text

    return Text(clean("" if value is None else str(value)), style=style)


def table(*columns: str) -> Table:
    from rich import box
    from rich.table import Table

    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


_ANSWER_STYLE = {"yes": "green", "no": "", "unknown": "bold yellow", "open": "cyan", "closed": "dim"}


def answer_text(value: str) -> Text:
    return text(value, _ANSWER_STYLE.get(value, ""))


def late_text(value: str) -> Text:
    return text(value, "bold red" if value == "yes" else _ANSWER_STYLE.get(value, ""))


def rows_table(rows: list[dict[str, Any]]) -> Table:
    """The letter table: id, from -> to, type, state, answered, current, late, deadline."""
    cols = ["id", "from → to", "type", "state", "answered", "current", "late", "deadline"]
    t = table(*cols)
    t.columns[0].min_width = min(128, max((len(r["id"]) for r in rows), default=2))
    for r in rows:
        cells = [
            text(r["id"]),
            text(f"{r['from']} → {r['to']}"),
            text(r["type"]),
            answer_text(r["state"]),
            answer_text(r["answered"]),
            answer_text(r["current"]),
            late_text(r["late"]),
            text(r["deadline"]),
        ]
        t.add_row(*cells)
    return t


def reasons_line(reasons: list[dict[str, Any]]) -> str:
    """``code (about, about): detail`` for each distinct reason, on one line."""
    merged: dict[tuple[str, str], list[str]] = {}
    for r in reasons:
        abouts = merged.setdefault((r["code"], r.get("detail") or ""), [])
        if r["about"] not in abouts:
            abouts.append(r["about"])
    parts = []
    for (code, detail), abouts in merged.items():
        parts.append(f"{code} ({', '.join(abouts)})" + (f": {detail}" if detail else ""))
    return "; ".join(parts)


def scope_line(scope: Scope, counts: str = "") -> str:
    """One line: the counts, then ``complete`` or ``incomplete`` and why."""
    head = f"{counts}; " if counts else ""
    where = f"{scope.letters} letters in {scope.files} files"
    if scope.complete:
        return f"{head}scope complete ({where})"
    why = ", ".join(scope.why_incomplete())
    return f"{head}scope incomplete ({where}; {why}): not proof of global absence"


def print_scope(con: Console, scope: Scope, counts: str = "") -> None:
    con.print(text(scope_line(scope, counts), "" if scope.complete else "bold yellow"))

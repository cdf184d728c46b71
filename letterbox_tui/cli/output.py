"""Human output for the reading commands: sanitized text, Rich tables, the scope line.

Letter text is hostile. Everything from a letter or a file name goes through ``clean()``
(the one sanitizer, ``core.text``: control characters, DEL, C1, bidi controls, invisible
characters, lone surrogates, annotation characters become visible placeholders; a line
stays one line) and reaches Rich only as
``rich.text.Text``, never as a markup string: ``[bold]`` and ``[@click=app.quit]`` print as
written. Rich is imported lazily so ``--json`` runs never load it.
"""

from __future__ import annotations

import errno
import functools
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from letterbox_tui.core import text as _text
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.grammar import parse_time
from letterbox_tui.core.times import stamp
from letterbox_tui.core.model import Scope

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text


def clean(text: object, *, single_line: bool = False) -> str:
    """Text safe for a terminal (``core.text.clean``); tabs become four spaces."""
    return _text.clean(text, single_line=single_line, tab="    ")


class Rows:
    """A list of a JSON document made only when it is written: ``[make(x) for x in items]``.
    ``emit_json`` on a pipe writes it ``PIECE_ROWS`` items at a time (``json_pieces``), so a
    list of 100,000 rows is never held whole, as objects or as text; encoded indented (a
    terminal) or by ``dumps_json`` it is made whole, as the list it stands for."""

    __slots__ = ("items", "make")

    def __init__(self, items, make) -> None:
        self.items = items
        self.make = make

    def made(self) -> list:
        make = self.make
        return [make(x) for x in self.items]


def _made(value: object) -> list:
    """The list a ``Rows`` stands for (``json.dumps``'s ``default``)."""
    if type(value) is Rows:
        return value.made()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps_json(obj: Any, *, indent: int | None = 2) -> str:
    """JSON for a terminal or a pipe (a ``Rows`` in ``obj`` made whole). JSON escapes C0
    itself; C1 and bidi controls are escaped here too, and lone surrogates (they can only
    occur inside strings, so the JSON stays equivalent; ``core.text.JSON_UNSAFE``)."""
    # check_circular: what is printed is a tree of fresh dicts and lists (the check's
    # bookkeeping per container is ~5% of encoding 10,000+ rows)
    text = json.dumps(
        obj, ensure_ascii=False, indent=indent, separators=None if indent else (",", ":"), check_circular=False,
        default=_made,
    )
    return _text.json_escape(text)


#: how many items of a ``Rows`` one piece of ``json_pieces`` encodes (encoding 500 rows at
#: once took 5 to 9 MB at its peak; 100, one or two)
PIECE_ROWS = 100


def json_pieces(doc: Any) -> list[Callable[[], str]]:
    """The compact JSON of ``doc`` (what ``dumps_json(doc, indent=None)`` gives) as pieces:
    each a function making the next part of the text when called, a ``Rows``'s items
    ``PIECE_ROWS`` at a time; the containers holding a ``Rows`` are written around them,
    every other value encoded at once."""
    pieces: list[Callable[[], str]] = []
    text: list[str] = []  # encoded, not yet a piece

    def flush() -> None:
        if text:
            pieces.append(functools.partial(str, "".join(text)))
            text.clear()

    def rows(value: Rows) -> None:
        items, size = value.items, PIECE_ROWS
        text.append("[")
        flush()
        pieces.extend(functools.partial(_rows_piece, value, at, size) for at in range(0, len(items), size))
        text.append("]")

    def walk(value: Any) -> None:
        if type(value) is Rows:
            rows(value)
        elif type(value) is dict and _streamed(value):
            text.append("{")
            for n, (key, item) in enumerate(value.items()):
                # the key as the encoder writes it (a key that is not a string too)
                text.append(("," if n else "") + dumps_json({key: None}, indent=None)[1:-6] + ":")
                walk(item)
            text.append("}")
        elif type(value) is list and _streamed(value):
            text.append("[")
            for n, item in enumerate(value):
                if n:
                    text.append(",")
                walk(item)
            text.append("]")
        else:
            text.append(dumps_json(value, indent=None))

    walk(doc)
    flush()
    return pieces


def _rows_piece(value: Rows, at: int, size: int) -> str:
    """Items ``at`` to ``at + size`` of ``value`` as they stand in its list's text."""
    make = value.make
    made = dumps_json([make(x) for x in value.items[at:at + size]], indent=None)
    return ("," if at else "") + made[1:-1]


def _streamed(value: Any) -> bool:
    """Does the container ``value`` hold a ``Rows``, at any depth?"""
    inner = value.values() if type(value) is dict else value
    return any(type(v) is Rows or (type(v) in (dict, list) and _streamed(v)) for v in inner)


def stdout():
    """Standard output, or exit 2 when the command was started without one (``>&-``): a
    reading command has nothing to give but what it prints."""
    if sys.stdout is None:
        raise LetterboxError("stdout is closed: nothing can be printed")
    return sys.stdout


def json_indent() -> int | None:
    """Indented on a terminal; compact on a pipe (Python's indenting encoder is three
    times slower, which shows at 100,000 rows)."""
    return 2 if stdout().isatty() else None


def emit_json(obj: Any) -> None:
    """The document ``obj`` and a line's end: indented on a terminal; on a pipe written a
    piece at a time (``json_pieces``: a ``Rows`` in it is never made whole)."""
    out = stdout()
    indent = json_indent()
    if indent is not None:
        out.write(dumps_json(obj, indent=indent))
    else:
        for piece in json_pieces(obj):
            out.write(piece())
    out.write("\n")


def write_line(text: str) -> None:
    """One line of already-encoded output (JSON a view encoded itself)."""
    out = stdout()
    out.write(text)
    out.write("\n")


def console() -> Console:
    """A console that never interprets markup, emoji codes or highlights letter text."""
    # A pipe or a file gets the whole of every value: wide, never folded mid-id.
    width = None if stdout().isatty() else 400
    return _console_class()(markup=False, emoji=False, highlight=False, width=width, soft_wrap=False)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class ReadersConsole(Console):
        def on_broken_pipe(self) -> None:
            """The reader went away (``| head`` had its lines): the command line's own
            handler ends quietly with 0. Rich's exits 1, which SPEC 7 gives to "check found
            a problem" and "owed --fail-late found a late item"."""
            raise BrokenPipeError(errno.EPIPE, "the reader went away")

    return ReadersConsole


def text(value: object, style: str = "", *, single_line: bool = True) -> Text:
    """Letter data as Rich ``Text``: sanitized, never parsed as markup, and on one line
    (a newline in a file name or a value shows as U+2424) unless ``single_line=False``
    (a body)."""
    from rich.text import Text

    return Text(clean(value, single_line=single_line), style=style)


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


ROW_COLUMNS = ("id", "from → to", "type", "state", "answered", "current", "late", "deadline")
#: Above this many rows the letter table is written as plain aligned columns: Rich's table
#: measures and renders every cell as a renderable (about 0.4 ms a row: 20,000 rows took
#: 8 s against 0.3 s for the same answer as --json). Every row is still printed.
PLAIN_ROWS = 500


def when(value: str, zone) -> str:
    """A time from a letter or a document for the text: in the display zone with its
    offset (``core.times.stamp``), or as written when it is not one with an offset."""
    parsed = parse_time(value) if value else None
    return value if parsed is None else stamp(parsed, zone)


def print_rows(con: Console, rows: list[dict[str, Any]], zone=None) -> None:
    """The letter table, every row: a Rich table, or plain columns past ``PLAIN_ROWS``.
    Deadlines are shown in ``zone`` (``core.times``; None: local time)."""
    if len(rows) <= PLAIN_ROWS:
        con.print(rows_table(rows, zone))
        return
    from rich.cells import cell_len

    cells = [
        [clean(v, single_line=True) for v in (r["id"], f"{r['from']} → {r['to']}", r["type"], r["state"],
                                              r["answered"], r["current"], r["late"], when(r["deadline"], zone))]
        for r in rows
    ]
    widths = [len(c) for c in ROW_COLUMNS]
    for line in cells:
        for i, value in enumerate(line):
            n = len(value) if value.isascii() else cell_len(value)
            if n > widths[i]:
                widths[i] = n

    def pad(value: str, width: int) -> str:
        n = len(value) if value.isascii() else cell_len(value)
        return value + " " * (width - n)

    out = ["  ".join(pad(c, w) for c, w in zip(ROW_COLUMNS, widths)).rstrip(),
           "  ".join("─" * w for w in widths)]
    out.extend("  ".join(pad(c, w) for c, w in zip(line, widths)).rstrip() for line in cells)
    con.file.write("\n".join(out) + "\n")


def print_lines(con: Console, lines: list[str]) -> None:
    """Many unstyled lines of letter text, each sanitized onto one line, written at once
    (a ``print`` a line costs Rich ~0.1 ms: 20,000 reason lines took seconds)."""
    if lines:
        con.file.write("\n".join(clean(line, single_line=True) for line in lines) + "\n")


def rows_table(rows: list[dict[str, Any]], zone=None) -> Table:
    """The letter table: id, from -> to, type, state, answered, current, late, deadline."""
    t = table(*ROW_COLUMNS)
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
            text(when(r["deadline"], zone)),
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
    where = (f"{scope.letters} letter{'s' if scope.letters != 1 else ''} in "
             f"{scope.files} file{'s' if scope.files != 1 else ''}")
    if scope.complete:
        return f"{head}scope complete ({where})"
    why = ", ".join(scope.why_incomplete())
    return f"{head}scope incomplete ({where}; {why}): not proof of global absence"


def print_scope(con: Console, scope: Scope, counts: str = "") -> None:
    con.print(text(scope_line(scope, counts), "" if scope.complete else "bold yellow"))
    from letterbox_tui.core.sync import behind_line

    if stale := behind_line(scope.sync):  # a letterbox in git, not known current
        con.print(text(stale, "bold yellow"))

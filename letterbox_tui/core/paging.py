"""A long answer in parts: ``query`` and ``owed`` with ``--limit N --offset K`` (the MCP
tools' ``limit`` and ``offset``).

The rows of a document are cut in the document's own order (``query``: the matches, then
the unknown rows; ``owed``: seat by seat, each seat's items in order) to the part asked
for, and the document then carries a ``page`` saying which part it is, how many rows
there are in all and where the rest begins. A cut document is never taken for a whole
one: ``page`` is there whenever a limit or an offset was given. What does not depend on
the cut (the scope, ``owed --fail-late``'s exit) is the whole answer's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import LetterboxError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page:
    """Rows ``offset`` to ``offset + limit`` (no limit: every row from ``offset`` on)."""

    offset: int = 0
    limit: int | None = None

    def cut(self, *lists: Sequence[T]) -> list[list[T]]:
        """Each of ``lists``' part of the page, the lists taken as one sequence in order."""
        end = None if self.limit is None else self.offset + self.limit
        out, before = [], 0
        for items in lists:
            lo = max(self.offset - before, 0)
            hi = len(items) if end is None else min(max(end - before, 0), len(items))
            out.append(list(items[lo:hi]) if lo < hi else [])
            before += len(items)
        return out

    def to_json(self, total: int) -> dict[str, Any]:
        """The document's ``page``: what it shows of ``total`` rows, and the offset of the
        rows after it (None when there are none)."""
        end = total if self.limit is None else min(total, self.offset + self.limit)
        shown = max(end - self.offset, 0)
        return {"offset": self.offset, "limit": self.limit, "total": total, "shown": shown,
                "next": end if shown and end < total else None}


def part_said(page: dict[str, Any], option: str = "--") -> str:
    """What a document's ``page`` shows, in words: ``rows 11-20 of 95 shown, --offset 20 for
    the rest`` (``option``: how the offset is named to the reader)."""
    first, shown, total = page["offset"] + 1, page["shown"], page["total"]
    if not shown:
        return f"none of {total} rows shown from {option}offset {page['offset']}"
    more = f", {option}offset {page['next']} for the rest" if page["next"] is not None else ""
    return f"rows {first}-{first + shown - 1} of {total} shown{more}"


def page_of(limit: Any = None, offset: Any = None, *, option: str = "--") -> Page | None:
    """The page asked for (None: neither given, the whole answer); ``LetterboxError`` when
    ``limit`` is not a whole number of at least 1 or ``offset`` not one of at least 0.
    ``option``: how the caller names them in the message (``--`` on the command line)."""
    if limit is None and offset is None:
        return None
    for name, value, least in (("limit", limit, 1), ("offset", offset, 0)):
        if value is not None and (type(value) is not int or value < least):
            raise LetterboxError(f"{option}{name}: a whole number of at least {least}, not {value!r}")
    return Page(offset or 0, limit)


def owed_part(view, page: Page):
    """The owed view ``view`` (``core.views.owed.OwedView``) cut to ``page`` (its items seat
    by seat, a seat left with none left out), and the ``page`` of its document."""
    from dataclasses import replace

    parts = page.cut(*(g.items for g in view.groups))
    cut = tuple(replace(g, items=tuple(items)) for g, items in zip(view.groups, parts) if items)
    return replace(view, groups=cut), page.to_json(sum(len(g.items) for g in view.groups))

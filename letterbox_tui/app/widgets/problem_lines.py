"""For the Problems view: the line of an unreadable file that a reader cannot take.

Run in a worker (it reads files). ``core.header.first_bad_line`` finds the line exactly as
the header grammar judges it; here it is shown sanitized, with its line number and the
byte offset where it starts, and a TAB (refused in a header) drawn as ``␉``.
"""

from __future__ import annotations

from textual.content import Content

from letterbox_tui.core.files import read_file
from letterbox_tui.core.header import MAX_HEADER, first_bad_line

from letterbox_tui.core.check import Finding

from ..model import AppModel
from ..sanitize import PLACEHOLDER_STYLE, clean


def offending_lines(model: AppModel, item: Finding) -> list[Content]:
    unreadable = {u.path for u in model.snapshot.unreadable}
    out: list[Content] = []
    for rel in item.paths:
        if rel not in unreadable:
            continue
        f = read_file(model.root, rel, keep=MAX_HEADER + 8, hashing=False)
        if f.error is not None:
            out.append(Content.styled(f"  {rel}: ", "$text-muted") + clean(f.error, single_line=True))
            continue
        bad = first_bad_line(f.data)
        if bad is None:
            continue
        out.append(bad_line_content(rel, bad))
    return out


def bad_line_content(rel: str, bad) -> Content:
    text = bad.raw.decode("utf-8", errors="replace")
    pieces = text.split("\t")
    shown = Content("")
    for i, piece in enumerate(pieces):
        if i:
            shown += Content.styled("␉", PLACEHOLDER_STYLE)
        shown += clean(piece, single_line=True)
    return Content.assemble(
        Content.styled("  offending line ", "bold $error"),
        Content.styled(f"{bad.number} at byte {bad.offset}", "bold"),
        Content.styled(f" ({bad.why}):\n    ", "$text-muted"),
        shown,
    )

"""A list shown threaded (``T``): the rows of the view grouped by thread, each thread in
its reply-tree order (``core.views.thread``, the same tree the Thread tab and ``letterbox-tui
thread`` show), replies indented; a thread of several letters gets a heading that folds
(``z``). Threads are ordered as their newest row was in the view."""

from __future__ import annotations

from textual.content import Content

from letterbox_tui.core.model import Letter

from .sanitize import clean
from .widgets.letter_list import ListRow

#: threading more rows than this is refused (each thread's tree is built on the UI thread)
MAX_THREADED = 20_000


def threaded_rows(model, rows, folded) -> list[ListRow]:
    letters = [r for r in rows if r.heading is None and isinstance(r.letter, Letter)]
    by_thread: dict[str, list[ListRow]] = {}
    for r in letters:
        by_thread.setdefault(r.letter.thread_id, []).append(r)
    out: list[ListRow] = []
    for tid, members in by_thread.items():
        if len(members) == 1:
            out.append(members[0])
            continue
        view = model.thread(tid)
        pos = {id(n.letter): (i, n.depth) for i, n in enumerate(view.nodes)}
        members = sorted(members, key=lambda r: pos.get(id(r.letter), (len(pos), 0))[0])
        closed = tid in folded
        first = members[0].letter
        heading = Content.assemble(
            (" ▸ " if closed else " ▾ ", "$text-muted"), ("thread ", "$text-muted"),
            clean(first.subject or first.id, single_line=True, style="bold"),
            (f"  ({len(members)} letters)", "$text-muted"))
        out.append(ListRow(f"thread:{tid}", heading=heading, extra={"fold": tid, "thread": True}))
        if closed:
            continue
        base = min(pos.get(id(r.letter), (0, 0))[1] for r in members)
        for r in members:
            depth = pos.get(id(r.letter), (0, base))[1] - base
            out.append(ListRow(r.key, r.letter, note=r.note, note_style=r.note_style, depth=min(depth, 8),
                               item=r.item, extra=r.extra))
    return out

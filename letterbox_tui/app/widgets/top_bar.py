"""The top bar: the letterbox's path, its letter count and scope, how long since the last
review, and what the reading worker is doing. What does not fit the width goes, least needed first (who
reviewed, then the letter count): at 80 columns its end was cut off."""

from __future__ import annotations

from textual.content import Content

from ..model import span
from ..sanitize import clean, cleans
from ..sanitize import home_path as _home


def topbar_text(app) -> Content:
    """Path, letters, scope, the last review, the scan's progress; what does not fit goes
    (who reviewed, then the letter count): at 80 columns the end was cut off."""
    lead: list[Content] = [Content.styled(" letterbox-tui ", "bold reverse $primary"), Content(" "),
                           clean(_home(app.root), single_line=True, style="bold")]
    m = app.model
    count: list[Content] = []
    scope_part: list[Content] = []
    review: list[Content] = []
    if m is not None:
        scope = m.snapshot.scope
        count = [Content.styled(f"  {scope.letters} letters", "$text-muted")]
        scope_part = [Content.styled("  complete" if scope.complete else "  incomplete", "$success" if scope.complete else "bold $error"),
                      Content("  ·  ")]
        review = [review_text(m, by=True)]
    tail: list[Content] = []
    if app.scanning:
        tail.append(Content.styled(f"  ⟳ {app.scan_stage}", "bold $warning"))
    elif app.views_building:
        tail.append(Content.styled("  ⟳ building a view", "$warning"))
    if app.scan_error:
        tail.append(cleans(Content.styled("  scan failed: ", "bold $error"), (app.scan_error, "$error")))
    brief = [review_text(m, by=False)] if m is not None else []
    width = app.size.width
    text = Content("")
    for shown in (lead + count + scope_part + review + tail, lead + count + scope_part + brief + tail,
                  lead + scope_part + brief + tail):
        text = Content("").join(shown)
        if text.cell_length <= width:
            return text
    # still too long: the path keeps its end (the letterbox's own folder name)
    rest = Content("").join(scope_part + brief + tail)
    path = _home(app.root)
    room = max(8, width - lead[0].cell_length - 1 - rest.cell_length)
    if len(path) > room:
        path = "…" + path[-(room - 1):]
    return Content("").join([lead[0], lead[1], clean(path, single_line=True, style="bold"), rest])


def review_text(m, by: bool = True) -> Content:
    r = m.last_review
    if r is None or r.sent_at is None:
        # an incomplete scope may hold one unseen: a seat outside a partial scope, or
        # an unreadable file (as ``review --check`` says)
        words = "no review recorded yet" if m.snapshot.scope.complete else "no review in the letters read"
        return Content.styled(words, "bold $warning")
    ago = m.at - r.sent_at
    days = ago.days
    if days >= 1:
        words = f"no review for {days} day{'s' if days != 1 else ''}"
        style = "bold $warning" if days >= 2 else ""
    else:  # "last review 0m ago" read oddly right after recording one
        words = f"last review {span(ago)} ago" if ago.total_seconds() >= 60 else "last review just now"
        style = "$success"
    if not by:
        return Content.styled(words, style)
    return cleans(Content.styled(words, style), Content.styled(" (by ", "$text-muted"), (r.sender, "$text-muted"), Content.styled(")", "$text-muted"))

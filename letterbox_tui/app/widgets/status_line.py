"""The status line under the list: the view, its sort, its filter and search, the row
count, in Owed & late the count of each attention code, letters new since the user last
looked, marks and the body mode. What does not fit the width goes, least needed first (the
body mode, the codes' words for their symbols, the sort's last words, then the sort), never the filter or
the search (at 80 columns the row count and the filter were cut off)."""

from __future__ import annotations

from textual.content import Content

from ..owed_rows import ORDER_WORDS, badge_of, code_counts, code_label, counts_text
from ..sanitize import clean

#: how each view is ordered (Open disputes is core's order: by id, so oldest first)
SORTS = {
    "view:owed": "by owing seat, most urgent first",
    "view:disputes": "oldest dispute first",
    "view:truth": "in force, then in doubt; newest first",
    "view:problems": "problems, then warnings",
}


def quoted(text: str, room: int) -> Content:
    """A search's text as the status line says it: quoted (its spaces and dots read as
    more of the line), one line, cut with an ellipsis past ``room`` cells."""
    said = clean(text, single_line=True, style="bold $accent")
    if said.cell_length > room:
        said = said.truncate(max(1, room), ellipsis=True)
    return Content('"') + said + Content('"')


def status_text(app) -> Content:
    mailbox = app.mailbox_id
    querying = app.query_text is not None  # a query lists every letter, whatever the view was
    sort = SORTS.get(mailbox, "newest first") if not querying else "newest first, unknown last"
    keys = []
    if mailbox == "view:owed" and not querying:
        sort = ORDER_WORDS[app.owed_order]
        keys = [Content("; z folds, o reorders")] if app.size.width >= 120 else []
    sep = Content.styled(" · ", "$text-muted")
    label = Content("Query") if querying else app._mailbox_label(mailbox)
    head = [Content(" "), label.stylize_before("bold")]
    if mailbox == "view:truth" and not querying:  # first, so 80 columns still show it
        head.append(app.truth_status_text())
    sort_part = [sep, Content(sort)]
    parts = [sep]
    owed = mailbox == "view:owed" and not querying and app.model is not None and app.model.owed is not None
    word = None  # a filter by code said by its badge's word alone, when the line is short of room
    if owed and app.owed_code is not None:
        parts += [Content.styled("only ", "$text-muted"), code_label(app.owed_code)]
        word = len(parts) - 1
    elif app.query_text:
        parts += [Content.styled("filter ", "$text-muted"), clean(app.query_text, single_line=True, style="bold $accent")]
    else:
        parts.append(Content.styled("no filter", "$text-muted"))
    room = max(16, app.size.width // 4)  # (a search's text, cut past it)
    searched = []  # each search's text as said in ``parts``, and the text
    if app.search_text:
        parts += [sep, Content.styled("search ", "$text-muted"), quoted(app.search_text, room)]
        searched.append((parts[-1], app.search_text))
    walk = getattr(app, "body_matches", None)
    if walk is not None:
        parts += [sep, Content.styled("body search ", "$text-muted"), quoted(walk.needle, room)]
        searched.append((parts[-1], walk.needle))
        parts.append(Content.styled(f" match {walk.at + 1} of {walk.total}", "bold"))
    if app.threaded and mailbox != "view:owed":
        parts += [sep, Content.styled("threaded", "bold")]
    n = getattr(app, "shown_rows", 0)
    noun = getattr(app, "shown_noun", "row")
    if not getattr(app, "_showing_pending", False):  # (a view being built has no rows yet)
        parts += [sep, Content.styled(f"{n} {noun}{'s' if n != 1 else ''}", "$text-muted")]
    if app.fresh_count:
        parts += [sep, Content.styled(f"◆ {app.fresh_count} new", "bold $success")]
    marked = len(app.letter_list.marked)
    if marked:
        parts += [sep, Content.styled(f"{marked} marked (d disputes them)", "bold $accent")]
    model = getattr(app, "model", None)
    if model is not None:  # the zone every time on screen is in (core.times)
        from letterbox_tui.core.times import zone_label

        parts += [sep, Content.styled(zone_label(model.at, model.zone), "$text-muted")]
    body = [sep, Content.styled("body " + ("Markdown" if app.letter_pane.markdown else "as written"), "$text-muted")]
    counts, symbols = [], []
    if owed:
        tally = code_counts(app.model)
        code = app.owed_code
        counts = [sep, counts_text(tally, active=code)] if any(n["known"] or n["unknown"] for n in tally.values()) else []
        symbols = [sep, counts_text(tally, narrow=True, active=code)] if counts else []
    short = parts
    if word is not None:
        short = list(parts)
        short[word] = Content.styled(badge_of(app.owed_code).word, badge_of(app.owed_code).style)
    elif not app.query_text and searched:  # (the searches' texts before the words "no filter")
        short = parts[2:]
    width = app.size.width
    text = Content("")
    brief = [sep, Content(sort.split(",")[0])]  # the sort's first words: "by owing seat"
    for shown in (head + sort_part + keys + parts + counts + body, head + sort_part + keys + parts + counts,
                  head + sort_part + parts + counts, head + sort_part + short + counts,
                  head + sort_part + short + symbols, head + brief + short + counts,
                  head + brief + short + symbols, head + short + counts, head + short + symbols):
        text = Content("").join(shown)
        if text.cell_length <= width:
            break
    if text.cell_length > width and searched:  # still too long: the searches' texts give way
        was, said = searched[-1]
        at = next(i for i, part in enumerate(short) if part is was)
        short = list(short)
        short[at] = quoted(said, max(4, was.cell_length - 2 - (text.cell_length - width)))
        text = Content("").join(head + short + symbols)
    return text

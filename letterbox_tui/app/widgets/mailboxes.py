"""The mailboxes sidebar: built-in views with live counts, each seat's folders and status,
saved queries. ``j``/``k`` move as everywhere else; Enter (or a click) opens a mailbox.

Prompts are ``Content`` built from the model (never markup). Letters that arrived since
the user last looked are counted beside each mailbox (``new``).
"""

from __future__ import annotations

import re
import textwrap

from textual.binding import Binding
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from ..sanitize import clean

_SINCE = re.compile(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d):\d\d(?:\.\d+)?Z")


def _local(m: re.Match, zone) -> str:
    """A status note's UTC time, in the display zone (the status line names it)."""
    from datetime import datetime, timezone

    from letterbox_tui.core.times import local

    try:
        when = datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}").replace(tzinfo=timezone.utc)
    except ValueError:  # (a note is hostile text: month 13 stays as written)
        return m.group(0)
    return f"{local(when, zone):%Y-%m-%d %H:%M}"


class MailboxList(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="mailboxes.down"),
        Binding("k", "cursor_up", "Up", show=False, id="mailboxes.up"),
        Binding("g", "first", "First", show=False, id="mailboxes.first"),
        Binding("G", "last", "Last", show=False, id="mailboxes.last"),
    ]

    def show_mailboxes(self, model, current: str, new: dict[str, int] | None = None, width: int = 30) -> None:
        """Fill from ``model.mailboxes()``; ``new`` counts unseen letters per mailbox id."""
        new = new or {}
        options: list[Option | None] = []
        seats_started = False
        queries_started = False
        for mb in model.mailboxes():
            fresh = new.get(mb.id, 0)
            fresh_c = Content.styled(f" +{fresh} new", "bold $success") if fresh else Content("")
            if mb.id.startswith("view:"):
                label = Content.styled(mb.label, "bold" if mb.id == "view:owed" else "")
                prompt = _fit(label.pad_right(max(1, 14 - len(mb.label))), _view_counts(mb, model.warning_count), fresh, width)
            elif mb.id.startswith("sync:"):  # a letterbox in git: what is not pushed yet
                count = Content.styled(_n(mb.count), "bold $warning" if mb.count else "$text-muted")
                prompt = Content(mb.label).pad_right(max(1, 14 - len(mb.label))) + count
            elif mb.id.count(":") == 1 and mb.id.startswith("seat:"):
                if not seats_started:
                    options.append(None)
                    seats_started = True
                head = Content.styled(mb.label, "bold $accent") + fresh_c
                if mb.status is not None:
                    # the protocol's fields a line each: state, since, notes
                    parts = [mb.status]
                    cut = mb.status.plain.find(" · ")
                    if cut >= 0:
                        parts = [mb.status[:cut], mb.status[cut + 3:]]
                    since = parts[0].plain.find(" since ")
                    if since >= 0:
                        parts[0:1] = [parts[0][:since], parts[0][since + 1:]]
                    for part in parts:  # wrapped at its words here, so each line keeps the indent
                        text = _SINCE.sub(lambda m: _local(m, model.zone), part.plain) if part.plain.startswith("since ") else part.plain
                        for piece in textwrap.wrap(text, max(8, width - 1), break_long_words=True) or [""]:
                            head = head + Content("\n ") + Content.styled(piece, "italic $text-muted")
                options.append(Option(head, id=mb.id, disabled=True))
                continue
            elif mb.id.startswith("seat:"):
                prompt = _fit(Content(f"  {mb.label:<11}"), Content.styled("…" if mb.count is None else _n(mb.count), "$text-muted"),
                              fresh, width)
            else:
                if not queries_started:
                    options.append(None)
                    options.append(Option(Content.styled("Saved queries", "bold $accent"), id="heading:queries", disabled=True))
                    queries_started = True
                prompt = Content("  ") + clean(mb.label, single_line=True).truncate(max(8, width - 4), ellipsis=True)
            options.append(Option(prompt, id=mb.id))
        self.set_options(options)
        self.highlight_mailbox(current)

    def highlight_mailbox(self, mailbox_id: str) -> None:
        try:
            self.highlighted = self.get_option_index(mailbox_id)
        except OptionDoesNotExist:  # a saved query removed from the settings
            pass


def _view_counts(mb, warnings: int) -> list[Content]:
    """A built-in view's count, then the same said narrower (``_n``'s ``narrow``); Owed &
    late's with its late items and those whose lateness is unknown ("0 late" alone read as
    none late when an unsupported entry made most of them unknown), then without the
    unknown ones."""
    out = []
    for narrow in (False, True):
        counts = [Content.styled(_n(mb.count, narrow), "$text-muted")]
        if mb.count is None:
            pass
        elif mb.id == "view:owed" and (mb.late or mb.late_unknown):
            late = [(" · ", "$text-muted"), (f"{_n(mb.late, narrow)} late", "bold $late")] if mb.late else []
            unsure = [(" · ", "$text-muted"), (f"{_n(mb.late_unknown, narrow)} late?", "$unknown")] if mb.late_unknown else []
            counts = [Content.assemble((_n(mb.count, narrow), ""), *late, *unsure),
                      Content.assemble((_n(mb.count, narrow), ""), *late)]
        elif mb.id == "view:problems":
            count = Content.styled(_n(mb.count, narrow), "bold $error" if mb.count else "$text-muted")
            if warnings:
                count += Content.styled(f" · {_n(warnings, narrow)} warn", "$warning")
            counts = [count]
        out += [count for count in counts if count not in out]
    return out


def _fit(label: Content, counts: Content | list[Content], fresh: int, width: int) -> Content:
    """One line of the sidebar within ``width`` (``label`` padded to the counts' column):
    the new letters said shorter, then the count said narrower (``counts``, widest
    first), then the count nearer the label, then no new letters (the count before them);
    never a number cut."""
    counts = [counts] if isinstance(counts, Content) else counts
    new = [Content.styled(f" +{_n(fresh)} new", "bold $success"), Content.styled(f" +{_n(fresh, True)}", "bold $success")] if fresh else [Content("")]
    labels = [label, label.rstrip().pad_right(1)]
    tries = [(lab, count, fresh_c) for lab in labels for count in counts for fresh_c in new]
    for lab, count, fresh_c in tries + [(labels[-1], counts[-1], Content(""))]:
        line = lab + count + fresh_c
        if line.cell_length <= width:
            return line
    room = max(1, width - labels[-1].cell_length - new[-1].cell_length)
    return labels[-1] + counts[-1].truncate(room, ellipsis=True) + new[-1]


def _n(count: int | None, narrow: bool = False) -> str:
    """A count for the mailboxes pane: none for a view not built yet, 16.5k when large;
    ``narrow``: whole thousands from 1,000 (16k)."""
    if count is None:
        return ""
    if count >= 100_000 or (narrow and count >= 1000):
        return f"{count // 1000}k"
    if count >= 10_000:
        return f"{count / 1000:.1f}k"
    return str(count)

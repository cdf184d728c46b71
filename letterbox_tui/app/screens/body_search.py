"""``F``: search the bodies of the letters in the current view, explicitly.

The query language stays headers-only (SPEC 6); reading bodies is a separate, visible
action: a thread worker reads each letter of the view through ``core.files`` (bounded, no
symlink followed), a progress bar counts them, Esc cancels, and every matching letter is
listed with its first matching line (sanitized). Enter on a result reads that letter and
starts a walk of every match (``BodyMatches``): ``n``/``N`` go to the next/previous one,
across the matching letters, as less does; the pane highlights them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from letterbox_tui.core.views.letterfile import read_body

from ..model import BODY_LIMIT
from ..widgets import footer
from ..widgets.footer import ContextFooter
from ..sanitize import clean, clean_str, cleans
from ..widgets.letter_list import ListRow
from ..widgets.letter_pane import PLAIN_LIMIT, match_spans

MAX_RESULTS = 1000


def shown_body(body: str) -> str:
    """The body as the letter pane shows it as written (sanitized, the first part only)."""
    return clean_str(body)[:PLAIN_LIMIT]


@dataclass
class BodyMatches:
    """Every match of a body search, in the order of its results: ``at`` is the current
    one (a flat index over the letters' matches)."""

    needle: str
    letters: list
    counts: list[int] = field(default_factory=list)
    at: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts)

    def first_of(self, letter) -> int:
        i = next(i for i, x in enumerate(self.letters) if x is letter)
        return sum(self.counts[:i])

    def current(self) -> tuple[object, int]:
        """The letter of the current match and which of its matches it is."""
        k = self.at
        for x, n in zip(self.letters, self.counts):
            if k < n:
                return x, k
            k -= n
        raise IndexError(self.at)

    def step(self, by: int) -> bool:
        """Move to the next (``by`` 1) or previous (-1) match; True when it wrapped."""
        total = self.total
        new = self.at + by
        self.at = new % total
        return not 0 <= new < total


@dataclass
class Progress(Message):
    done: int
    total: int


@dataclass
class Found(Message):
    letter: object
    number: int
    line: str
    #: how many matches the body shows (at least one: the matching line)
    count: int = 1


@dataclass
class Finished(Message):
    cancelled: bool
    matched: int
    read: int


class BodySearchScreen(ModalScreen[object]):
    #: the footer's keys here (``widgets.footer``)
    FOOTER_KEYS = footer.BODY_SEARCH
    BINDINGS = [
        Binding("escape", "cancel_or_close", "Cancel/close", id="bodysearch.close"),
        Binding("j", "results_down", "Down", show=False, id="bodysearch.down"),
        Binding("k", "results_up", "Up", show=False, id="bodysearch.up"),
    ]
    DEFAULT_CSS = """
    BodySearchScreen { align: center middle; }
    BodySearchScreen > Vertical {
        width: 100%; max-width: 110; height: 100%; max-height: 40;
        border: round $primary; background: $surface; padding: 0 1;
    }
    BodySearchScreen #bs-input { margin: 0 0 1 0; }
    /* the scrollbar's room kept from the start: results cut before the list overflowed
       would otherwise wrap once it appears */
    BodySearchScreen #bs-results { height: 1fr; border: none; scrollbar-gutter: stable; }
    BodySearchScreen #bs-status { height: 1; color: $text-muted; }
    """

    def __init__(self, letters: list, view_label: str) -> None:
        super().__init__()
        self.letters = letters
        self.view_label = view_label
        self.found: list[object] = []
        #: how many matches each found letter's body shows
        self.counts: list[int] = []
        self.needle = ""
        #: what was searched for, as typed
        self.typed = ""
        self.running = False

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Search bodies"
            yield Static(Content(f"Reads the bodies of the {len(self.letters)} letters in ") + self.view_label
                         + Content(" (the query language reads headers only)."), id="bs-about")
            yield Input(placeholder="text to find in bodies (Enter: search, Esc: cancel or close)", id="bs-input")
            yield ProgressBar(total=max(1, len(self.letters)), show_eta=False, id="bs-progress")
            yield Static(Content(""), id="bs-status")
            yield OptionList(id="bs-results")
        yield ContextFooter()

    def on_mount(self) -> None:
        self.query_one("#bs-progress", ProgressBar).display = False  # until a search starts
        self.set_focus(self.query_one("#bs-input", Input))  # now, not later: keys typed behind F land here

    @on(Input.Submitted, "#bs-input")
    def _start(self, event: Input.Submitted) -> None:
        needle = event.value.strip()
        if not needle:
            return
        self.found = []
        self.counts = []
        self.typed = needle
        self.needle = needle.casefold()
        self.query_one("#bs-progress", ProgressBar).display = True
        self.query_one("#bs-results", OptionList).clear_options()
        self.query_one("#bs-progress", ProgressBar).update(progress=0, total=max(1, len(self.letters)))
        self.running = True
        self._search(needle)

    @work(thread=True, exclusive=True, group="body-search", exit_on_error=False)
    def _search(self, needle: str) -> None:
        worker = get_current_worker()
        root = self.app.root
        wanted = needle.casefold()
        total = len(self.letters)
        matched = 0
        for i, x in enumerate(self.letters):
            if worker.is_cancelled:
                self.post_message(Finished(True, matched, i))
                return
            body, _, err = read_body(root, x.path, BODY_LIMIT)
            if not err:
                for n, line in enumerate(body.splitlines(), 1):
                    if wanted in line.casefold():
                        matched += 1
                        if matched <= MAX_RESULTS:
                            count = len(match_spans(shown_body(body), needle))
                            self.post_message(Found(x, n, line, max(1, count)))
                        break
            if i % 50 == 0 or i == total - 1:
                self.post_message(Progress(i + 1, total))
        self.post_message(Finished(False, matched, total))

    def on_progress(self, message: Progress) -> None:
        if not self.running:
            return
        self.query_one("#bs-progress", ProgressBar).update(progress=message.done)
        self.query_one("#bs-status", Static).update(
            Content(f"read {message.done} of {message.total} · {len(self.found)} matching"))

    def on_found(self, message: Found) -> None:
        x = message.letter
        self.found.append(x)
        self.counts.append(message.count)
        results = self.query_one("#bs-results", OptionList)
        width = max(40, results.scrollable_content_region.width - 1)
        # the letter as the list shows it (mark, date, seats, type, subject: the versions of
        # a chain looked alike by subject alone), then the matching line, cut to one line
        # around the match (a long line wrapped into what looked like the next result)
        head = self.app._describe(ListRow(f"found:{x.path}", x), width)
        line = message.line.strip()
        at = line.casefold().find(self.needle)
        if at > width // 2:
            line = "…" + line[at - width // 4:]
        found = cleans(Content.styled(f"    line {message.number}: ", "$text-muted"),
                       clean(line[:400], single_line=True)).truncate(width, ellipsis=True)
        results.add_option(Option(Content("\n").join([head, found])))

    def on_finished(self, message: Finished) -> None:
        if message.cancelled:
            return  # the cancel already said so
        self.running = False
        words = "cancelled after" if message.cancelled else "read"
        more = f" (the first {MAX_RESULTS} listed)" if message.matched > MAX_RESULTS else ""
        self.query_one("#bs-status", Static).update(
            Content(f"{words} {message.read} of {len(self.letters)} · {message.matched} matching{more}"))
        if self.found:
            results = self.query_one("#bs-results", OptionList)
            results.highlighted = 0
            results.focus()

    @on(OptionList.OptionSelected, "#bs-results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        self.workers.cancel_group(self, "body-search")
        n = len(self.counts)  # (a result listed while the worker ran on)
        walk = BodyMatches(self.typed, self.found[:n], self.counts[:n])
        walk.at = walk.first_of(self.found[event.option_index])
        self.dismiss(walk)

    def action_results_down(self) -> None:
        self.query_one("#bs-results", OptionList).action_cursor_down()

    def action_results_up(self) -> None:
        self.query_one("#bs-results", OptionList).action_cursor_up()

    def action_cancel_or_close(self) -> None:
        if self.running:
            # a worker cancelled before it started never reports: say so here
            self.workers.cancel_group(self, "body-search")
            self.running = False
            done = self.query_one("#bs-progress", ProgressBar).progress
            self.query_one("#bs-status", Static).update(
                Content(f"cancelled after {int(done)} of {len(self.letters)} · {len(self.found)} matching"))
            return
        self.dismiss(None)

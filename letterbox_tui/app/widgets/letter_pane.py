"""The selected letter: Body, Thread, Chain and Provenance tabs.

Nothing here reads a file on the UI thread: the body (on every highlight), the sha256 of
up to 64 MiB (when Provenance is looked at) and an unreadable file's offending line are
read in thread workers, which post small messages back; a result that arrives after the
selection moved on is dropped. What the tabs show is built by ``letter_text`` from the
model; every string from a letter goes through ``sanitize``.

The body is shown as written (wrapped, sanitized, every link target visible); ``M``
toggles a bounded Markdown rendering (see ``body``). That rendering's widget, with its
module, markdown-it and Textual's Markdown, is made the first time it is asked for
(``LetterPane.body``). The pane is in the app's first frame, its tabs are not: what they
show (the letter model, ``letter_text``, Textual's tabs) is imported when they are built
(``build``) or first filled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual import getters, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from ..model import BODY_LIMIT
from ..sanitize import clean, clean_str

if TYPE_CHECKING:
    from textual.widgets import TabbedContent

    from letterbox_tui.core.check import Finding
    from letterbox_tui.core.model import Letter

    from ..model import AppModel
    from .body import LetterBody
    from .thread_view import ThreadView

TABS = ("body", "thread", "chain", "provenance")
#: Markdown makes a widget per block: bodies larger than this stay as written.
MARKDOWN_LIMIT = 24 * 1024
MARKDOWN_LINES = 600
#: How much of a long body is shown (as written).
PLAIN_LIMIT = 32 * 1024
#: a body search's matches highlighted in one letter at most (a body of one repeated word)
MAX_MATCHES = 1000


def match_spans(text: str, needle: str) -> list[tuple[int, int]]:
    """Where ``needle`` occurs in ``text``, case-insensitive: (start, end) offsets."""
    if not needle:
        return []
    found = re.finditer(re.escape(needle), text, re.IGNORECASE)
    return [m.span() for _, m in zip(range(MAX_MATCHES), found)]


def sha256_of(root: str, rel: str) -> str:
    """A letter file's sha256 (``core.views.letterfile``: imported when first asked for)."""
    from letterbox_tui.core.views.letterfile import sha256_of as file_sha256

    return file_sha256(root, rel)


@dataclass
class BodyRead(Message):
    """A worker read the body of the letter shown under ``key``."""

    key: str
    text: str
    truncated: bool
    error: str


@dataclass
class ProvenanceRead(Message):
    key: str
    sha256: str
    history: dict | None = None  # a letterbox in git: the commit that brought the file


@dataclass
class FindingRead(Message):
    """The offending lines of the files a finding names (see ``_read_finding``)."""

    key: str
    lines: list[Content]


class LetterPane(Vertical):
    """Shows one row: a letter, or a finding from the Problems view."""

    #: reading: h reads the letter this one replies to (in the Thread tab, h moves there);
    #: j/k scroll a line, space and - a page, g/G to the top/bottom (mutt's pager; only
    #: the arrows scrolled)
    BINDINGS = [
        Binding("h", "app.parent", "Read the letter it answers", show=False, id="letter.parent"),
        Binding("j", "scroll_lines(1)", "Scroll down", show=False, id="letter.down"),
        Binding("k", "scroll_lines(-1)", "Scroll up", show=False, id="letter.up"),
        Binding("space", "scroll_pages(1)", "Page down", show=False, id="letter.page_down"),
        Binding("minus", "scroll_pages(-1)", "Page up", show=False, id="letter.page_up"),
        Binding("g", "scroll_edge(-1)", "Top", show=False, id="letter.top"),
        Binding("G", "scroll_edge(1)", "Bottom", show=False, id="letter.bottom"),
    ]

    DEFAULT_CSS = """
    LetterPane { height: 1fr; }
    LetterPane .pane-text { padding: 0 1; width: 1fr; height: auto; }
    LetterPane #letter-head { padding: 0 1; background: $panel; height: auto; }
    LetterPane #body-mode { padding: 0 1; height: 1; color: $text-muted; }
    LetterPane Markdown { padding: 0 1; margin: 0; }
    """

    head = getters.query_one("#letter-head", Static)
    body_mode = getters.query_one("#body-mode", Static)
    plain_body = getters.query_one("#letter-plain", Static)
    chain_text = getters.query_one("#letter-chain", Static)
    provenance_text = getters.query_one("#letter-provenance", Static)

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.model: AppModel | None = None
        self.letter: Letter | None = None
        self.shown_key: str | None = None
        #: the body as shown (sanitized), and the key of the row it belongs to
        self.body_text: str = ""
        self.body_key: str | None = None
        self.body_truncated = False
        #: False: as written (the default); True: rendered as Markdown
        self.markdown = False
        self._provenance_for: Letter | None = None
        #: the Thread and Chain tabs filled for the letter shown (each is filled when it is
        #: first looked at: the first thread asked about maps every letter's thread)
        self._filled: set[str] = set()
        #: the Markdown rendering, once made (``body``)
        self._body: LetterBody | None = None
        #: a body search's matches to highlight: (the letter, the needle, which match is
        #: current, "match k of N"); see ``highlight_match``
        self._matches: tuple[object, str, int, str] | None = None

    @property
    def body(self) -> LetterBody:
        """The body rendered as Markdown (``M``), hidden until asked for: made and mounted
        the first time it is wanted."""
        if self._body is None:
            self._body = self._made_body("")
            self._body.display = False
        return self._body

    def _made_body(self, markdown: str) -> LetterBody:
        from .body import LetterBody

        made = LetterBody(markdown, id="letter-body", open_links=False)
        self.query_one("#body-scroll", VerticalScroll).mount(made)
        return made

    def _hide_markdown(self) -> None:
        if self._body is not None:
            self._body.display = False

    #: the tabs are mounted (``build``); until then ``show`` only remembers what to show
    ready = False

    @property
    def tabs(self) -> TabbedContent:
        from textual.widgets import TabbedContent

        return self.query_one("#letter-tabs", TabbedContent)

    def open_body(self, focus: bool = True) -> None:
        """Turn to the Body tab (and give it the focus); nothing before the tabs are mounted
        (they open on the body: ``build``)."""
        if self.ready:
            self.tabs.active = "tab-body"
            if focus:
                self.query_one("#body-scroll").focus()

    @property
    def thread_view(self) -> ThreadView:
        from .thread_view import ThreadView

        return self.query_one("#letter-thread", ThreadView)
    _wanted: tuple | None = None

    def compose(self) -> ComposeResult:
        return iter(())  # (the tabs are mounted after the first frame: ``build``)

    async def build(self) -> None:
        """Mount the tabs, once: after the first answers are shown (the frames before
        them, the letterbox being read, need none of them: ``LetterboxApp.mount_after_read``)."""
        if self.ready or self.children:
            return
        from textual.widgets import TabbedContent, TabPane

        from .thread_view import ThreadView

        text = partial(Static, Content(""), classes="pane-text")
        tabs = TabbedContent(id="letter-tabs", initial="tab-body")
        for pane in (  # (as ``with TabbedContent():`` adds them)
            TabPane("Body", VerticalScroll(
                Static(Content(""), id="letter-head"), Static(Content(""), id="body-mode"), text(id="letter-plain"),
                # (the Markdown rendering, ``#letter-body``, is mounted here when first wanted)
                id="body-scroll"), id="tab-body"),
            TabPane("Thread", ThreadView(id="letter-thread"), id="tab-thread"),
            TabPane("Chain", VerticalScroll(text(id="letter-chain")), id="tab-chain"),
            TabPane("Provenance", VerticalScroll(text(id="letter-provenance")), id="tab-provenance"),
        ):
            tabs.compose_add_child(pane)
        await self.mount(tabs)
        if not self.query("#letter-head"):  # the app closed meanwhile
            return
        self.ready = True
        if self._wanted is not None:
            model, row = self._wanted
            self._wanted = None
            self.show(model, row, force=True)

    def _scroller(self) -> VerticalScroll | None:
        w = self.app.focused
        return w if isinstance(w, VerticalScroll) and self in w.ancestors else None

    # Scrolls are immediate: deferred to the next refresh (Textual's default), five quick
    # j each scrolled from the same old position, one line in all.
    def action_scroll_lines(self, lines: int) -> None:
        if (w := self._scroller()) is not None:
            w.scroll_relative(y=lines, animate=False, immediate=True)

    def action_scroll_pages(self, pages: int) -> None:
        if (w := self._scroller()) is not None:
            w.scroll_relative(y=pages * max(1, w.scrollable_content_region.height - 1), animate=False, immediate=True)

    def action_scroll_edge(self, end: int) -> None:
        """``g``: the top of what is read, ``G``: its bottom."""
        if (w := self._scroller()) is not None:
            w.scroll_to(y=w.max_scroll_y if end > 0 else 0, animate=False, immediate=True)

    # --- public -------------------------------------------------------------------
    def show(self, model: AppModel | None, row, *, force: bool = False) -> None:
        """Show a list row (a ``ListRow``) or nothing."""
        if not self.ready:  # (shown once the tabs are mounted)
            self._wanted = (model, row)
            return
        key = None if row is None else row.key
        if not force and model is self.model and key == self.shown_key:
            return
        from letterbox_tui.core.check import Finding
        from letterbox_tui.core.model import Letter

        from .letter_text import finding_lines, head_text
        self.model = model
        self.shown_key = key
        letter = getattr(row, "letter", None)
        self.letter = letter if isinstance(letter, Letter) else None
        self._provenance_for = None
        self._filled = set()
        if model is None or row is None:
            self._blank("No letter selected.")
            return
        if self.letter is None:
            self._show_item(model, row)
            return
        x = self.letter
        head = head_text(model, x)
        if isinstance(row.item, Finding):
            head = Content("\n").join(finding_lines(model, row.item) + [Content(""), head])
            self._read_finding(model, key, row.item)
        match_reasons = row.extra.get("reasons") if isinstance(row.extra, dict) else None
        if match_reasons:
            from ..model import reason_lines

            head = Content("\n").join(
                [Content.styled("Whether this letter matches the query is unknown, because", "bold $unknown")]
                + reason_lines(match_reasons) + [Content(""), head])
        attention = getattr(row.item, "attention", None)  # an owed item: what it waits on
        if attention:
            from ..owed_rows import attention_lines

            head = Content("\n").join([head, *attention_lines(attention, model.at)])
        self.head.update(head)
        self._head_content = head
        if self.body_key != key:
            self._set_body("", pending=True)
        self._read_body(model.root, x.path, key)
        self.thread_view.show_lines([])
        self.chain_text.update(Content(""))
        self.provenance_text.update(Content(""))
        self.fill_tab(self.tabs.active)

    def fill_tab(self, tab_id: str) -> None:
        """Fill the tab ``tab_id`` for the letter shown, when it is not filled yet (the
        tabs not looked at are left empty: see ``_filled``)."""
        if tab_id == "tab-provenance":
            self._fill_provenance()
            return
        if tab_id not in ("tab-thread", "tab-chain") or tab_id in self._filled:
            return
        if self.model is None or self.letter is None:
            return
        self._filled.add(tab_id)
        from .letter_text import chain_text, thread_lines

        if tab_id == "tab-thread":
            self.thread_view.show_lines(thread_lines(self.model, self.letter), selected=self.letter)
        else:
            self.chain_text.update(chain_text(self.model, self.letter))

    def highlight_match(self, letter, needle: str, nth: int, label: str) -> None:
        """Highlight ``needle`` in ``letter``'s body as written, its ``nth`` match as the
        current one, scrolled into view (``letter`` None: no highlights)."""
        had = self._matches
        self._matches = (letter, needle, nth, label) if letter is not None and needle else None
        shown = self.letter is not None and self.letter in (letter, had and had[0])
        if shown and self.body_key == self.shown_key:
            self._render_body()

    def toggle_markdown(self) -> bool:
        self.markdown = not self.markdown
        self._render_body()
        return self.markdown

    # --- workers: nothing on the UI thread reads a file ------------------------------
    @work(thread=True, exclusive=True, group="body", exit_on_error=False)
    def _read_body(self, root: str, rel: str, key: str) -> None:
        from letterbox_tui.core.views.letterfile import read_body

        body, truncated, err = read_body(root, rel, BODY_LIMIT)
        self.post_message(BodyRead(key, body, truncated, err))

    def on_body_read(self, message: BodyRead) -> None:
        if message.key != self.shown_key:
            return  # the selection moved on
        self.body_key = message.key
        if message.error:
            self._set_body("", error=message.error)
        else:
            self._set_body(clean_str(message.text), truncated=message.truncated)

    @work(thread=True, exclusive=True, group="provenance", exit_on_error=False)
    def _hash(self, root: str, rel: str, key: str) -> None:
        from letterbox_tui.core.sync_history import added  # one git log in a repository, else a few stats

        self.post_message(ProvenanceRead(key, sha256_of(root, rel), added(root, rel)))

    def on_provenance_read(self, message: ProvenanceRead) -> None:
        if message.key != self.shown_key or self.model is None or self.letter is None:
            return
        from .letter_text import provenance_text

        self.provenance_text.update(provenance_text(self.model, self.letter, message.sha256, message.history))

    @work(thread=True, exclusive=True, group="finding", exit_on_error=False)
    def _read_finding(self, model: AppModel, key: str, item: Finding) -> None:
        from .problem_lines import offending_lines

        lines = offending_lines(model, item)
        if lines:
            self.post_message(FindingRead(key, lines))

    def on_finding_read(self, message: FindingRead) -> None:
        if message.key != self.shown_key:
            return
        self._head_content = self._head_content + Content("\n") + Content("\n").join(message.lines)
        self.head.update(self._head_content)

    def _fill_provenance(self) -> None:
        if self.model is None or self.letter is None or self._provenance_for is self.letter:
            return
        self._provenance_for = self.letter
        from .letter_text import provenance_text

        self.provenance_text.update(provenance_text(self.model, self.letter, "(computing…)"))
        self._hash(self.model.root, self.letter.path, self.shown_key)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id:
            self.fill_tab(event.pane.id)

    # --- the body -------------------------------------------------------------------
    def _set_body(self, body: str, truncated: bool = False, *, pending: bool = False, error: str = "") -> None:
        self.body_text = body
        self.body_truncated = truncated
        self._body_error = error
        self._body_pending = pending
        self._render_body()

    def _render_body(self) -> None:
        body = self.body_text
        error = getattr(self, "_body_error", "")
        if getattr(self, "_body_pending", False) or error or not body:
            self._hide_markdown()
            self.body_mode.display = False
            self.plain_body.display = True
            if error:
                self.plain_body.update(Content.styled("The body could not be read: ", "italic $error")
                                       + clean(error, single_line=True))
            else:
                self.plain_body.update(Content(""))
            return
        self.body_mode.display = True
        long = len(body) > MARKDOWN_LIMIT or body.count("\n") > MARKDOWN_LINES
        note = "… body truncated for display (over 256 KiB); see the file." if self.body_truncated else ""
        if self.markdown and not long:
            self.body_mode.update(Content.styled("rendered as Markdown, link targets shown · M: as written", "italic"))
            self.plain_body.display = False
            self.plain_body.update(Content(""))
            text = body + (f"\n\n*{note}*" if note else "")
            if self._body is None:
                self._body = self._made_body(text)  # (renders ``text`` once mounted)
            else:
                self._body.display = True
                self._body.show(text)
            return
        if self.markdown:
            mode = "a long body: shown as written, not rendered as Markdown · M: as written"
        else:
            mode = "as written · M: render as Markdown"
        self.body_mode.update(Content.styled(mode, "italic"))
        if self._body is not None:
            self._body.display = False
            self._body.show("")
        self.plain_body.display = True
        shown = body[:PLAIN_LIMIT]
        if len(body) > PLAIN_LIMIT:
            note = f"… the first {PLAIN_LIMIT // 1024} KiB are shown; the whole letter is at the path in Provenance."
        text = clean(shown)
        matches = self._matches
        if matches is not None and matches[0] is self.letter:
            text = self._highlighted(text, matches)
        self.plain_body.update(text + Content.styled("\n" + note if note else "", "italic $text-muted"))

    def _highlighted(self, text: Content, matches: tuple) -> Content:
        """``text`` (sanitized) with a body search's matches styled (spans, never markup),
        the current one marked apart, and scrolled to once it is laid out."""
        _, needle, nth, label = matches
        spans = match_spans(text.plain, needle)
        for i, (a, b) in enumerate(spans):
            text = text.stylize("bold reverse $accent" if i == nth else "reverse $secondary", a, b)
        self.body_mode.update(Content.assemble(Content.styled(label, "bold"),
                                               Content.styled(" · n/N: next/previous match · Esc in the list: end", "italic")))
        if spans:
            start = spans[min(nth, len(spans) - 1)][0]
            self.call_after_refresh(self._scroll_to_offset, text.plain, start)
        return text

    def _scroll_to_offset(self, plain: str, start: int) -> None:
        """Scroll the body so the line holding offset ``start`` is in view (a third down)."""
        from textual.content import Content as C

        scroll = self.query_one("#body-scroll", VerticalScroll)
        width = max(1, self.plain_body.content_region.width)
        before = plain[:plain.rfind("\n", 0, start) + 1] if "\n" in plain[:start] else ""
        rows = len(C(before.rstrip("\n")).wrap(width)) if before else 0
        line = C(plain[len(before):start]).wrap(width)
        rows += max(0, len(line) - 1)
        y = self.plain_body.virtual_region.y + rows
        scroll.scroll_to(y=max(0, y - scroll.scrollable_content_region.height // 3), animate=False, immediate=True)

    def _blank(self, message: str) -> None:
        self.head.update(Content(message))
        self._head_content = Content(message)
        self.body_key = None
        self._set_body("")
        self.thread_view.show_lines([])
        for w in (self.chain_text, self.provenance_text):
            w.update(Content(""))

    def _show_item(self, model: AppModel, row) -> None:
        from letterbox_tui.core.check import Finding

        from .letter_text import ThreadLine, finding_lines, group_lines

        item = row.item
        if isinstance(item, Finding):
            lines = finding_lines(model, item)
            self._read_finding(model, row.key, item)
        elif hasattr(item, "seat") and hasattr(item, "items"):  # a seat's group in Owed & late
            lines = group_lines(model, item)
        else:
            lines = [Content("Nothing to show for this row.")]
        text = Content("\n").join(lines)
        self.head.update(text)
        self._head_content = text
        self.body_key = None
        self._set_body("")
        self.thread_view.show_lines([ThreadLine(line) for line in lines])  # (captions: no letter)
        for w in (self.chain_text, self.provenance_text):
            w.update(text)

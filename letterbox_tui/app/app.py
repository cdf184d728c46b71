"""The letterbox app: mailboxes, the letter list and the selected letter.

The answers are read in a worker thread (``store.open_answers``) and posted as a message,
so the first frame, saying the letterbox is being read, comes before them. A file event
(or, without a native watcher, a cheap poll of directory mtimes) reads them again in the
same worker group, keeping the selection.

By concern, in mixins of ``LetterboxApp``: reading the letterbox (``scanning.py``), reading
letters and layout (``reading.py``), writing (``writing.py``), the raw file in a pager or a
pipe (``raw_file.py``), git
sync (``sync_mixin.py``), the truth file (``truth_file.py``). Here: the widgets, the header,
banner, mailboxes and status line, the query bar and the ``@on`` handlers (Textual collects
those only from the app class itself).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from datetime import datetime, timezone
from pathlib import Path

from textual import events, getters, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.widgets import Input, OptionList, Static
from textual.worker import Worker, WorkerState

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.settings import Settings, UserSettings, load_settings, load_user_settings

from .commands import LetterboxCommands
from .model import VIEW_BY_NAME, VIEWS, AppModel
from .sanitize import clean, cleans
from .owed_rows import code_label, most_urgent_key, owed_rows
from .raw_file import RawFileMixin
from .reading import ReadingMixin
from .scanning import ScanDone, ScanningMixin, ScanProgress, ViewBuilt, reading_text  # noqa: F401 - the messages
from .sync_mixin import SyncMixin, sync_banner
from .truth_file import TruthFileMixin
from .writing import WritingMixin
from .themes import BUILTIN, DEFAULT_THEME, APP_VARIABLES, load_themes, shipped_themes_dir, user_themes_dir
from .seen import Seen, newest_time
from .widgets import footer
from .widgets.footer import ContextFooter
from .widgets.letter_list import LetterList, ListRow
from .widgets.letter_pane import LetterPane
from .widgets.mailboxes import MailboxList
from .widgets.status_line import status_text
from .widgets.top_bar import topbar_text

Clock = Callable[[], datetime]


class LetterboxApp(ScanningMixin, ReadingMixin, WritingMixin, RawFileMixin, SyncMixin, TruthFileMixin, App[int]):
    """Humans auditing seats: what is owed and late, what is in dispute, what is true."""

    CSS_PATH = "app.tcss"
    TITLE = "letterbox-tui"
    COMMANDS = App.COMMANDS | {LetterboxCommands}
    ENABLE_COMMAND_PALETTE = True

    # Keys follow mutt/aerc: q goes back (quits from the list), Q quits from anywhere,
    # j/k move everywhere, / searches the list and n/N go to the next/previous match.
    BINDINGS = [
        Binding("q", "back_or_quit", "Back/Quit", id="app.quit"),
        Binding("Q", "quit", "Quit", show=False, id="app.quit_now"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("colon,ctrl+p", "command_palette", "Commands", show=False, id="app.palette"),
        Binding("slash", "search", "Search", id="app.search"),
        Binding("backslash", "query", "Filter", id="app.query"),
        Binding("n", "next_match(1)", "Next", show=False, id="app.next"),
        Binding("N", "next_match(-1)", "Previous", show=False, id="app.prev"),
        Binding("1", "view('owed')", "Owed", show=False, id="view.owed"),
        Binding("2", "view('disputes')", "Disputes", show=False, id="view.disputes"),
        Binding("3", "view('truth')", "Truth", show=False, id="view.truth"),
        Binding("4", "view('all')", "All", show=False, id="view.all"),
        Binding("p,5", "view('problems')", "Problems", show=False, id="view.problems"),
        Binding("right_square_bracket", "tab(1)", "Next tab", show=False, id="letter.next_tab"),
        Binding("left_square_bracket", "tab(-1)", "Prev tab", show=False, id="letter.prev_tab"),
        Binding("M", "toggle_markdown", "Body: Markdown / as written", show=False, id="letter.markdown"),
        Binding("o", "owed_order", "Owed: by seat / most overdue", show=False, id="owed.order"),
        Binding("a", "owed_attention(1)", "Owed: next attention code", show=False, id="owed.attention"),
        Binding("A", "owed_attention(-1)", "Owed: previous attention code", show=False, id="owed.attention_back"),
        Binding("e", "pager", "Raw file in $PAGER", show=False, id="letter.pager"),
        Binding("F", "body_search", "Search bodies (this view)", show=False, id="app.body_search"),
        Binding("T", "toggle_threads", "Threaded / flat list", show=False, id="list.threads"),
        Binding("vertical_line", "pipe", "Pipe the file to a command", show=False, id="letter.pipe"),
        Binding("z", "fold", "Fold seat (thread when T)", show=False, id="owed.fold"),
        Binding("Z", "fold_all", "Fold all seats", show=False, id="owed.fold_all"),
        Binding("b", "toggle_sidebar", "Show/hide Mailboxes", show=False, id="app.sidebar"),
        Binding("c", "compose", "Compose", id="letter.compose"),
        Binding("r", "reply", "Reply", id="letter.reply"),
        Binding("C", "chase", "Chase the seat that owes it", show=False, id="letter.chase"),
        Binding("s", "supersede", "Supersede", show=False, id="letter.supersede"),
        Binding("m", "mark", "Mark for a dispute", show=False, id="letter.mark"),
        Binding("d", "dispute", "Dispute the marked letters", show=False, id="letter.dispute"),
        Binding("u", "rule", "Rule on a dispute", show=False, id="letter.rule"),
        Binding("R", "review", "Record a review", show=False, id="app.review"),
        Binding("P", "progress", "Progress note", show=False, id="letter.progress"),
        Binding("W", "write_truth", "Write truth file", show=False, id="truth.write"),
        Binding("f5,ctrl+r", "rescan", "Rescan", show=False, id="app.rescan"),
        Binding("S", "sync", "Sync", show=False, id="app.sync"),
        Binding("escape", "escape", "Close bar / back to list", show=False, id="app.escape"),
    ]

    #: the model of the last answers read (None until the first are in)
    model: AppModel | None = None

    topbar = getters.query_one("#topbar", Static)
    banner = getters.query_one("#banner", Static)
    mailbox_list = getters.query_one("#mailboxes", MailboxList)
    list_title = getters.query_one("#list-title", Static)
    list_columns = getters.query_one("#list-columns", Static)
    letter_list = getters.query_one("#letters", LetterList)
    letter_pane = getters.query_one("#letter-pane", LetterPane)
    # the query, search and pipe bars: mounted after the first frame (``mount_bars``)
    query_bar = getters.query_one("#query-bar", Vertical)
    query_input = getters.query_one("#query", Input)
    query_error = getters.query_one("#query-error", Static)
    search_bar = getters.query_one("#search-bar", Horizontal)
    pipe_bar = getters.query_one("#pipe-bar", Horizontal)
    pipe_input = getters.query_one("#pipe", Input)
    search_input = getters.query_one("#search", Input)
    status_line = getters.query_one("#status", Static)

    def __init__(
        self,
        root: str | os.PathLike[str],
        participants: Iterable[str] | None = None,
        *,
        view: str | None = None,
        letter: str | None = None,
        theme: str | None = None,
        now: datetime | Clock | None = None,
        settings: Settings | None = None,
        user_settings: UserSettings | None = None,
        poll_interval: float | None = 2.0,
        theme_dirs: Iterable[Path] | None = None,
    ) -> None:
        super().__init__()
        self._passed_on = OrderedDict()
        self.root = os.path.realpath(os.fspath(root))
        self.participants = list(participants) if participants else None
        self.settings = settings if settings is not None else load_settings(self.root)
        # key bindings (and the preferred theme) come only from the user's own config,
        # never from the letterbox's shared settings file (#18 item 11)
        self.user_settings = user_settings if user_settings is not None else load_user_settings()
        self.start_view = VIEW_BY_NAME.get(view or "owed", "view:owed")
        self.start_letter = letter
        if isinstance(now, datetime):
            fixed = now
            self.clock: Clock = lambda: fixed
        else:
            self.clock = now or (lambda: datetime.now(timezone.utc))
        self.poll_interval = poll_interval
        self.mailbox_id = self.start_view
        self.query_text: str | None = None
        #: the list search (``/``): its text, or None
        self.search_text: str | None = None
        self.fingerprint: tuple = ()
        self.scanning = False
        self.scan_count = 0
        self.scan_error: str | None = None
        #: the list shows a built-in view still being built (``build_view``)
        self._showing_pending = False
        self.scan_started = time.monotonic()
        self.scan_seconds = 0.0
        self._watch_stop = threading.Event()
        self._rescan_timer = None
        self._rescan_wanted = False
        #: a form asked for before the first scan ended ("compose", "reply", …), opened after it
        self.writer_waiting: str | None = None
        #: what the user has seen (new-letter markers), kept in the XDG state directory
        self.seen = Seen.load(self.root)
        self._announced: set[str] = set()
        # themes: shipped, then the user's own folder (overrides by name)
        dirs = list(theme_dirs) if theme_dirs is not None else [shipped_themes_dir(), user_themes_dir()]
        loaded = load_themes(*dirs)
        self.theme_errors = loaded.errors
        self.register_theme(BUILTIN)
        for t in loaded.themes.values():
            self.register_theme(t)
        wanted = theme or self.user_settings.theme or self.settings.theme or DEFAULT_THEME
        if wanted not in self.available_themes:
            self.theme_errors.append(f"no theme named {wanted!r}; using {DEFAULT_THEME}")
            wanted = DEFAULT_THEME
        self.theme = wanted
        if self.user_settings.keymap:
            self.set_keymap(dict(self.user_settings.keymap))

    # --- layout -------------------------------------------------------------------
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(APP_VARIABLES)

    # --- keys typed right behind a key that opens a screen --------------------------------
    #: the keys lately passed on to the focused widget, by id: (the key, the screen it was
    #: passed on in); a few dozen at most (a key a field took never comes back)
    _passed_on: OrderedDict[int, tuple[events.Key, object]]

    async def on_event(self, event: events.Event) -> None:
        """A key is passed on to the focused widget and comes back to the app, bubbling up,
        for the bindings. One that comes back after a screen was opened over the screen it
        was passed on in (``c``, then at once ``Tab Tab my-slug``; ``F`` then ``zebra``) was
        typed for the new screen: it is passed on afresh, in order, to the field that screen
        focused, never taken as the old screen's key (on the list ``s`` opens a form, ``e``
        the pager). The screen-opening actions return once their screen is mounted and its
        first field focused, so the keys behind them wait for it."""
        if type(event) is events.Key:
            passed = self._passed_on
            if not event.is_forwarded:
                passed[id(event)] = (event, self.screen_stack[-1] if self.screen_stack else None)
                while len(passed) > 64:
                    passed.popitem(last=False)
            else:
                found = passed.pop(id(event), None)
                if found is not None and found[0] is event and self.screen_stack and found[1] is not self.screen_stack[-1]:
                    self.post_message(events.Key(event.key, event.character))
                    return
        await super().on_event(event)

    def compose(self) -> ComposeResult:
        yield Static(Content("letterbox-tui"), id="topbar")
        yield Static(Content(""), id="banner")
        with Horizontal(id="main"):
            with Vertical(id="mailboxes-pane"):
                yield MailboxList(id="mailboxes")
            with Vertical(id="right"):
                yield Static(Content(""), id="list-title")
                yield Static(Content(""), id="list-columns")
                yield LetterList(id="letters")
                yield LetterPane(id="letter-pane")
        # (the query, search and pipe bars go here, above the status line: ``mount_bars``)
        yield Static(Content(""), id="status")
        yield ContextFooter()

    #: the query, search and pipe bars are mounted (``mount_bars``)
    bars_mounted = False

    async def mount_bars(self) -> None:
        """Mount the query, search and pipe bars, hidden, once: after the first frame,
        which shows none of them (their inputs were a part of its cost)."""
        if self.bars_mounted:
            return
        self.bars_mounted = True
        from .widgets.query_input import QueryInput

        bars = [
            Vertical(QueryInput(placeholder="filter by query terms, e.g.  type=request late=yes   (Enter: run, ↑↓: history, →: complete, Esc: close)",
                                id="query", compact=True),
                     Static(Content(""), id="query-error"), id="query-bar"),
            Horizontal(Static(Content("/"), id="search-label"),
                       Input(placeholder="search the list (Enter: find, n/N: next/previous, Esc: close)", id="search", compact=True),
                       id="search-bar"),
            Horizontal(Static(Content("|"), id="pipe-label"),
                       Input(placeholder="pipe the letter file to a shell command (Enter: run, Esc: close)", id="pipe", compact=True),
                       id="pipe-bar"),
        ]
        for bar in bars:
            bar.display = False
        await self.mount_all(bars, before=self.status_line)
        if self.is_headless and self.query("#query"):  # tests and screenshots: no blinking cursor
            self.query_input.cursor_blink = False  # (unless the app closed meanwhile)

    def on_mount(self) -> None:
        self.letter_list.describe = self._describe
        self._apply_layout(self.size.width, self.size.height)
        if self.is_headless:  # tests and screenshots: no animation (and no blinking cursor: ``mount_bars``)
            self.animation_level = "none"
        self.banner.display = False
        self.list_columns.display = False
        self.query_one("#mailboxes-pane", Vertical).border_title = "Mailboxes"
        self.query_one("#right", Vertical).border_title = "Letters"
        self.letter_list.empty_text = reading_text()
        self.scanning = True  # (the first frame says so: the worker starts after it)
        self.scan_stage = "reading the letterbox"
        self._update_topbar()
        self.letter_list.focus()
        # (the ids are collected from the screens' classes, which imports them: only for a keymap)
        unknown_ids = sorted(set(self.user_settings.keymap) - known_binding_ids()) if self.user_settings.keymap else []
        for notice in self.settings.notices + self.user_settings.notices:
            self.notify(clean(notice), title="Settings", severity="warning", timeout=10)
        if unknown_ids:
            self.notify(clean("[keymap] names no such binding: " + ", ".join(unknown_ids) + " (see ? for the ids)"),
                        title="Settings", severity="warning", timeout=10)
        if self.theme_errors:
            self.notify(clean("Theme problems:\n" + "\n".join(self.theme_errors)), title="Themes", severity="warning", timeout=10)
        # draw first, then read (the worker thread competes for the interpreter); the
        # letter's tabs and the bars once the first answers are shown (``mount_after_read``)
        self.call_after_refresh(self._first_frame_drawn)
        # a theme chosen from now on (the palette's "Theme") is kept for next time
        self._theme_kept = self.theme
        if self.poll_interval:  # (and the watcher, once the first answers are shown: ``on_scan_done``)
            self.set_interval(self.poll_interval, self._poll, name="poll")

    async def _first_frame_drawn(self) -> None:
        if self.query("#letters"):  # (not when the app closed meanwhile)
            self.start_scan()

    #: the letter's tabs and the bars were asked to be mounted (``mount_after_read``)
    _mounting_rest = False

    #: the letter of ``--letter`` is read as soon as the tabs are up (a short screen)
    read_at_start = False

    async def mount_after_read(self) -> None:
        """The letter's tabs, then the query, search and pipe bars, once: when the first
        read has ended and what it found is drawn. The reading worker and the UI thread share
        one interpreter, so mounting them while it read (or before it) only put the list
        off by as long. What the pane was asked to show meanwhile is shown once its tabs are
        up (``LetterPane.show``); a key for a bar before then waits for it (``after_bars``)."""
        if self._mounting_rest or not self.query("#letters"):
            return
        self._mounting_rest = True
        await self.letter_pane.build()
        if self.read_at_start:  # ``--letter`` on a short screen: its body shown, as Enter shows it
            self.letter_pane.open_body()
        if self.query("#letters"):  # (not when the app closed meanwhile)
            await self.mount_bars()

    def after_bars(self, action: Callable[[], object]) -> Awaitable[None] | None:
        """``action`` (one opening a bar) at once, or, when a key came before the bars were
        mounted (the first moments), once they are: Textual awaits what an action returns,
        so the keys typed after it still reach the bar."""
        if self.bars_mounted:
            action()
            return None

        async def mounted_then() -> None:
            await self.mount_bars()
            action()

        return mounted_then()

    def on_unmount(self) -> None:
        self._watch_stop.set()
        if self.model is not None:
            # everything the last scan showed has been in front of the user
            self.seen.save(newest_time(self.model.snapshot.letters))

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group not in ("scan", "view") or event.state != WorkerState.ERROR:
            return
        err = event.worker.error
        why = str(err) if isinstance(err, LetterboxError) else f"{type(err).__name__}: {err}"
        if event.worker.group == "view":  # the view says so; opening it again tries again
            self.views_building = frozenset()
            if self._showing_pending and self.query("#letters"):
                self.letter_list.set_rows([], empty=cleans(("Could not build this view: ", "bold $error"), (why, "$error")))
            self.notify(clean(why), title="View failed", severity="error")
            return
        self.scanning = False
        self.scan_error = why
        if self.model is None and self.query("#letters"):
            self.letter_list.empty_text = cleans(("Could not read the letterbox: ", "bold $error"), (why, "$error"))
            self.letter_list.refresh()
            self.call_after_refresh(self.mount_after_read)  # (the bars still filter nothing, but open)
        self._update_topbar()
        self.notify(clean(self.scan_error), title="Scan failed", severity="error")

    def footer_keys(self) -> footer.FooterKeys | None:
        """The footer's keys for the focused pane (``widgets.footer``)."""
        focused = self.focused
        if focused is None:
            return footer.LIST
        if focused is self.letter_list:
            return footer.OWED if self.mailbox_id == "view:owed" and self.query_text is None else footer.LIST
        if focused is self.mailbox_list:
            return footer.MAILBOXES
        if isinstance(focused, Input):
            return footer.BAR
        if self.letter_pane in focused.ancestors_with_self:
            return footer.THREAD if focused is self.letter_pane.thread_view else footer.LETTER
        return None

    # --- the theme, kept in the user's own config ---------------------------------------
    _theme_kept: str | None = None

    def watch_theme(self, theme: str) -> None:
        """A theme chosen in the app is written to the user's ``config.toml`` (XDG config
        directory, never the letterbox), in a worker; the one it opened with is not."""
        if self._theme_kept is None or theme == self._theme_kept or not self.user_settings.path:
            return  # (before the first frame; or a run that must not touch the user's files)
        self._theme_kept = theme
        self.run_worker(partial(self._keep_theme, theme, self.user_settings.path), thread=True,
                        group="keep-theme", exclusive=True, exit_on_error=False)

    def _keep_theme(self, theme: str, path: str) -> None:
        from letterbox_tui.core.settings import write_user_setting

        try:
            write_user_setting("theme", None, theme, path=path)
        except (LetterboxError, OSError) as exc:
            self.call_from_thread(self.notify, clean(f"The theme is not kept for next time: {exc}"),
                                  title="Settings", severity="warning")

    # --- header, banner, mailboxes --------------------------------------------------
    #: what the reading worker is doing (the top bar says it)
    scan_stage = "reading the letterbox"

    def _update_topbar(self) -> None:
        self.topbar.update(topbar_text(self))

    def _update_banner(self) -> None:
        banner = self.banner
        m = self.model
        # a letterbox in git: whether this copy is current (the sync block was taken in
        # the scan worker; see sync_mixin)
        copy = sync_banner(m.snapshot.scope.sync, len(m.unpushed or ()), m.remotes) if m is not None else None
        if m is None or (m.snapshot.scope.complete and copy is None):
            banner.display = False
            banner.update(Content(""))
            return
        if m.snapshot.scope.complete:
            text = copy
        else:
            scope = m.snapshot.scope
            # Problems lists what was not read; a partial scope alone is the user's choice
            # (--participant), which Problems has nothing to say of
            text = Content.assemble(
                ("⚠ Incomplete scope: ", "bold"),
                clean("; ".join(scope.why_incomplete()), single_line=True),
                (". Answers that depend on what could not be read are shown as unknown; absence is not proof. ", ""),
                ("Press p for Problems.", "bold underline") if not scope.all_read
                else ("Start without --participant to read every seat.", "bold"),
            )
            if copy is not None:
                text = Content("\n").join([text, copy])
        banner.update(text)
        banner.display = True

    def _refresh_mailboxes(self) -> None:
        m = self.model
        if m is None:
            return
        width = self.mailbox_list.scrollable_content_region.width or 28
        self.mailbox_list.show_mailboxes(m, self.mailbox_id, self.new_counts(), width=width)

    def _highlight_mailbox(self, mailbox_id: str) -> None:
        self.mailbox_list.highlight_mailbox(mailbox_id)

    @on(OptionList.OptionSelected, "#mailboxes")
    def _mailbox_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id and not event.option.id.startswith("heading:"):
            self.open_mailbox(event.option.id)
            self.sidebar_picked()

    def open_mailbox(self, mailbox_id: str) -> None:
        self.mailbox_id = mailbox_id
        self.query_text = None
        self._highlight_mailbox(mailbox_id)
        keep = None
        if mailbox_id == "view:owed" and self.model is not None:
            # as at the start: the review starts at the most urgent task (not a heading)
            keep = most_urgent_key(self.model, self.owed_code)
        self._show_mailbox(keep=keep)

    def _mailbox_label(self, mailbox_id: str) -> Content:
        for vid, label, _ in VIEWS:
            if vid == mailbox_id:
                return Content(label)
        if mailbox_id.startswith("seat:"):
            _, seat, folder = (mailbox_id.split(":") + ["inbox"])[:3]
            return Content(f"{seat} · {folder}")
        if mailbox_id.startswith("query:"):
            return Content("Saved query: ") + clean(mailbox_id[6:], single_line=True)
        if mailbox_id == "view:leases":
            return Content("Leases")
        return Content(mailbox_id)

    def _show_mailbox(self, keep: str | None = None) -> None:
        m = self.model
        lst = self.letter_list
        if m is None:
            return
        title = self._mailbox_label(self.mailbox_id)
        hint = ""
        empty = Content("Nothing here.")
        try:
            if self.query_text is not None:
                rows = m.query_rows(self.query_text)
                title = Content("Query: ") + clean(self.query_text, single_line=True)
            elif self.mailbox_id == "view:owed":
                rows = owed_rows(m, self.owed_order, self.owed_folded, self.owed_code)
                if self.owed_code is not None and rows is not None:
                    title = Content.assemble(title, (" · only ", "$text-muted"), code_label(self.owed_code))
                    hint = "   a: next code · A: previous · Esc: every task"
            else:
                rows = m.rows(self.mailbox_id)
        except LetterboxError as exc:
            rows = []
            empty = cleans(("Query error: ", "bold $error"), (str(exc), "$error"))
        self._showing_pending = rows is None
        if rows is not None and self.threaded and self.mailbox_id != "view:owed":
            from .thread_rows import threaded_rows

            rows = threaded_rows(m, rows, self.thread_folded)
        if rows is None:  # a built-in view opened for the first time
            self.build_view(self.mailbox_id)
            rows = []
            empty = Content.styled("Building this view…", "bold $warning")
        if not rows and self.mailbox_id == "view:owed" and self.query_text is None:
            if self.owed_code is not None:
                empty = Content(f"No owed task carries {self.owed_code} now (a: the next code, Esc: every task).")
            elif m.snapshot.scope.complete:
                empty = Content("Nothing is owed: every task is answered, closed or superseded.")
            else:  # (never said as proof of an incomplete scope: ``owed`` says the same)
                empty = clean(m.snapshot.scope.none_found("Nothing is owed") + ".")
        n, noun = m.letter_rows(rows), "row"
        if self.mailbox_id == "view:disputes" and self.query_text is None:
            # the letters a dispute names are rows under it: 1 dispute read "3 rows"
            n, noun = sum(1 for r in rows if r.heading is None and r.depth == 0), "dispute"
        self.shown_noun = noun
        count = "" if self._showing_pending else f"  {n} {noun}{'s' if n != 1 else ''}"  # (none while it is built)
        self.list_title.update(
            Content.assemble(Content.styled(" ", ""), title.stylize_before("bold"), (count, "$text-muted"),
                             (hint, "$text-muted")))
        lst.set_rows(rows, keep=keep, empty=empty)
        self._update_columns()
        if self._select_now and not self._showing_pending:
            # a letter just written: the cursor goes to it (a new version, a dispute...);
            # after a supersede it fell on the seat's heading
            wrote, self._select_now = self._select_now, None
            i = next((i for i, r in enumerate(rows) if r.heading is None and getattr(r.letter, "id", None) == wrote), None)
            if i is not None:
                lst.cursor = i
                lst.scroll_to_cursor()
        self.shown_rows = n
        self._show_selected(force=True)
        self._update_status()
        owed = self.mailbox_id == "view:owed" and self.query_text is None
        if owed != self._footer_owed:  # the footer's keys differ there (``footer_keys``)
            self._footer_owed = owed
            self.refresh_bindings()

    def _update_status(self) -> None:
        """The status line (see ``widgets.status_line``)."""
        try:
            line = self.status_line
        except NoMatches:
            return
        line.update(status_text(self))

    def _selected_key(self) -> str | None:
        row = self.letter_list.current
        return row.key if row else None

    @on(LetterList.Highlighted)
    def _row_highlighted(self, event: LetterList.Highlighted) -> None:
        self._show_selected()

    @on(LetterList.Opened)
    def _row_opened(self, event: LetterList.Opened) -> None:
        """Enter: read the letter (the body gets focus, so the arrows scroll it); on a
        folded seat or thread heading, unfold it (it opened the group's summary as a
        letter); on an open one, read the group's first letter (Enter opens, as in mutt
        and aerc: it folded the group, which ``z`` does)."""
        row = event.row
        if row.heading is not None and row.extra.get("fold"):
            group = row.extra["fold"]
            if group in (self.thread_folded if row.extra.get("thread") else self.owed_folded):
                self.action_fold()
                return
            lst = self.letter_list
            first = lst.cursor + 1
            if not (first < len(lst.rows) and lst.rows[first].heading is None):
                return
            lst.move_to(first)
            row = lst.rows[first]
        if not self.letter_pane.ready:  # (the tabs come just after the first answers)
            return
        self._mark_opened(row.letter)
        self.letter_pane.open_body()

    def _show_selected(self, force: bool = False) -> None:
        try:
            row = self.letter_list.current
            pane = self.letter_pane
        except NoMatches:  # the app is shutting down
            return
        pane.show(self.model, row, force=force)

    def _describe(self, row: ListRow, width: int) -> Content:
        m = self.model
        if m is None:
            return Content(row.key)
        owed = self.mailbox_id == "view:owed" and self.query_text is None
        from .widgets.row_text import describe as describe_row, owed_fill

        if owed and (width, owed_fill(m)) != self._columns_for:  # (a resize, a scrollbar, new answers)
            self.call_later(self._update_columns)

        return describe_row(m, row, width, owed=owed, fresh=self.is_fresh(row))

    #: the footer was last drawn for Owed & late's list (its keys: ``footer.OWED``)
    _footer_owed = True

    #: the list width and the rows' measures (``OwedFill``) Owed & late's column header
    #: was drawn for
    _columns_for: tuple | None = None

    def _update_columns(self) -> None:
        """Owed & late's column header, over the columns the rows have at the list's width
        (each row is drawn one cell in, after the mark column)."""
        try:
            header, lst = self.list_columns, self.letter_list
        except NoMatches:
            return
        shown = self.mailbox_id == "view:owed" and self.query_text is None and self.model is not None
        header.display = shown
        if not shown:
            return
        region = lst.scrollable_content_region
        width = region.width or lst.size.width
        if not lst.show_vertical_scrollbar and lst.virtual_size.height > region.height > 0:
            # rows just set that will not fit: their scrollbar comes with the next layout,
            # and the rows are drawn beside it (so is their header, from the start)
            width -= lst.styles.scrollbar_size_vertical
        width -= 1
        from .widgets.row_text import owed_fill, owed_header

        fill = owed_fill(self.model)
        self._columns_for = (width, fill)
        header.update(Content(" ") + owed_header(width, fill))

    # --- actions ------------------------------------------------------------------
    def action_view(self, name: str) -> None:
        self.open_mailbox(VIEW_BY_NAME[name])

    def action_tab(self, step: int) -> None:
        if not self.letter_pane.ready:  # (the first frame: no tabs yet)
            return
        tabs = self.letter_pane.tabs
        order = ["tab-body", "tab-thread", "tab-chain", "tab-provenance"]
        i = order.index(tabs.active) if tabs.active in order else 0
        tabs.active = order[(i + step) % len(order)]
        self.letter_pane.fill_tab(tabs.active)  # (before the thread view takes the keys)
        focused = self.focused
        reading = focused is not None and self.letter_pane in focused.ancestors_with_self
        if reading or self.screen_stack[0].has_class("-short"):
            # reading: the new tab takes the keys (j/k move in the Thread tree); on a short
            # screen the pane is hidden from the list, so ] and [ start reading (they did
            # nothing visible at 80x24)
            if tabs.active == "tab-thread":
                self.letter_pane.thread_view.focus()
            else:
                self.call_after_refresh(lambda: self._focus_tab(tabs.active))

    def _focus_tab(self, tab_id: str) -> None:
        from textual.containers import VerticalScroll

        for scroll in self.letter_pane.query_one(f"#{tab_id}").query(VerticalScroll):
            scroll.focus()
            return

    def action_show_tab(self, name: str) -> None:
        if not self.letter_pane.ready:
            return
        self.letter_pane.tabs.active = f"tab-{name}"
        self.letter_pane.fill_tab(f"tab-{name}")

    def action_query(self) -> Awaitable[None] | None:
        return self.after_bars(self._open_query)

    def _open_query(self) -> None:
        bar = self.query_bar
        bar.display = True
        inp = self.query_input
        if self.query_text:
            inp.value = self.query_text
        inp.focus()

    @on(Input.Submitted, "#query")
    def _query_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        err = self.query_error
        m = self.model
        if m is None:
            err.update(Content.styled("Still scanning; try again in a moment.", "$warning"))
            return
        if not text:
            self.query_text = None
            err.update(Content(""))
            self.query_bar.display = False
            self._show_mailbox()
            self.letter_list.focus()
            return
        try:
            m.query_rows(text)
        except LetterboxError as exc:
            err.update(cleans(("✗ ", "bold $error"), (str(exc), "$error")))
            return
        err.update(Content(""))
        self.query_text = text
        from .widgets.query_input import QueryInput

        if isinstance(event.input, QueryInput):
            event.input.remember(text)
        self.query_bar.display = False  # the status line shows the filter (the bar kept 2 rows)
        self._show_mailbox()
        self.letter_list.focus()

    def action_escape(self) -> None:
        for bar in (self.query_bar, self.search_bar, self.pipe_bar) if self.bars_mounted else ():
            if bar.display:
                bar.display = False
                self.query_error.update(Content(""))
                self.letter_list.focus()
                return
        focused = self.focused
        if focused is not None and self.letter_pane in focused.ancestors_with_self:
            self.letter_list.focus()
            return
        if self.body_matches is not None:
            self.end_body_search()
            return
        if self.query_text is not None:
            self.query_text = None
            self._show_mailbox()
            return
        if self.owed_code is not None and self.mailbox_id == "view:owed":
            self.owed_code = None
            self._show_mailbox(keep=self._selected_key())

    # --- search in the list (/, n, N) ----------------------------------------------
    def action_search(self) -> Awaitable[None] | None:
        return self.after_bars(self._open_search)

    def _open_search(self) -> None:
        self.search_bar.display = True
        self.query_bar.display = False
        if self.search_text:
            self.search_input.value = self.search_text
        self.search_input.focus()

    @on(Input.Submitted, "#pipe")
    def _pipe_submitted(self, event: Input.Submitted) -> None:
        self.pipe_submitted(event.value)

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        self.search_bar.display = False
        self.letter_list.focus()
        self.search_text = text or None
        if text and self.body_matches is not None:
            self.end_body_search()  # (n/N repeat the newest search)
        self._update_status()
        if text:
            self._find(1, include_current=True)

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def _saved_query_problems(self, settings: Settings) -> None:
        from letterbox_tui.core.settings import saved_query_problems

        problems = saved_query_problems(settings)
        if problems:
            self.notify(clean("letterbox-tui.toml:\n" + "\n".join(problems)), title="Saved queries",
                        severity="warning", timeout=10)


def known_binding_ids() -> set[str]:
    """Every binding id the app defines (for checking ``[keymap]`` in the settings)."""
    from .screens.chase import ChaseScreen
    from .screens.choice import ChoiceScreen
    from .screens.help import HelpScreen
    from .screens.progress import ProgressScreen
    from .screens.write import WriteScreen
    from .widgets.query_input import QueryInput

    ids = set()
    for cls in (LetterboxApp, LetterList, LetterPane, WriteScreen, ChaseScreen, HelpScreen, ChoiceScreen, QueryInput,
                ProgressScreen):
        for b in cls.BINDINGS:
            if isinstance(b, Binding) and b.id:
                ids.add(b.id)
    return ids

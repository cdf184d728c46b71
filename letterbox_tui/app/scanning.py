"""Reading the letterbox, as a mixin of ``LetterboxApp``: one worker asks the one entry,
``store.open_answers``, and builds the model of its answers; the first frame is drawn
before it starts, showing that the letterbox is being read. A file event (``watchfiles``,
``reading.py``), the cheap poll where no watcher runs, the clock moving on, a letter
written here, or ``ctrl+r`` reads it again, keeping the selection.

The model's built-in views are built when first wanted: the opening view and Owed & late
(its count is the daily review at a glance) with the answers; each other view, All letters
too, in a worker when it is first opened (the list says it is being built meanwhile), and
again with each later read once opened.

Handlers here are ``on_<message>`` methods (a plain mixin's ``@on`` decorators are not
collected by Textual's message pump metaclass).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual import work
from textual.content import Content
from textual.message import Message
from textual.worker import get_current_worker

from letterbox_tui.core.settings import display_zone, load_settings

from .model import BUILDERS, AppModel
from .owed_rows import most_urgent_key
from .reading import find_newer
from .sanitize import clean, cleans
from .watch import folder_fingerprint, git_fingerprint

#: what the list says until the first answers arrive
READING = "Reading the letterbox…"


@dataclass
class ScanProgress(Message):
    """What the reading worker is doing (the top bar says it)."""

    stage: str


@dataclass
class ScanDone(Message):
    """The answers are in and the model's first view is built (the app is usable)."""

    model: AppModel
    fingerprint: tuple
    #: ``git_fingerprint`` taken before the answers were read (a fetch after it rescans)
    git_marks: tuple = ()
    #: the views still being built for it, after this message (``ViewBuilt`` each)
    later: tuple[str, ...] = ()
    #: what the store said it could not do (one line each: damaged, locked...; the answers
    #: are the letters' own)
    notices: tuple[str, ...] = ()


@dataclass
class ViewBuilt(Message):
    """The built-in view ``view`` of ``model`` is built (its rows and count)."""

    model: AppModel
    view: str


class ScanningMixin:
    #: ``git_fingerprint`` of the answers shown (() outside git)
    git_marks: tuple = ()
    #: the built-in views a worker is building for the current model
    views_building: frozenset[str] = frozenset()

    def start_scan(self) -> None:
        self.scan_started = time.monotonic()
        self.scanning = True
        self._update_topbar()
        now, later = self._views_wanted()
        self.scan_letterbox(now, later)

    def _views_wanted(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The views the next model is built with before it is shown (the one shown, and
        Owed & late, whose count is the review at a glance; All letters too on the first
        read when a letter was asked for on the command line: it is looked for there), and
        after (those opened on the model before it, so their counts stay). Every other
        view waits until it is first opened: at 100,000 letters All letters alone is a
        row per letter, sorted."""
        first = self.mailbox_id if self.mailbox_id in BUILDERS else "view:owed"
        wanted = [first, "view:owed"]
        if self.model is None and self.start_letter:
            wanted.append("view:all")
        now = tuple(dict.fromkeys(wanted))
        before = self.model
        later = tuple(vid for vid in BUILDERS if before is not None and before.built(vid) and vid not in now)
        return now, later

    @work(thread=True, exclusive=True, group="scan", exit_on_error=False)
    def scan_letterbox(self, now: tuple[str, ...], later: tuple[str, ...] = ()) -> None:
        worker = get_current_worker()
        at = self.clock()
        fingerprint = folder_fingerprint(self.root)
        git_marks = git_fingerprint(self.root)
        settings = load_settings(self.root)
        self.post_message(ScanProgress("reading the letterbox"))
        from letterbox_tui.store import open_answers  # (imported here: the first frame does not wait for it)

        from .widgets import row_text  # noqa: F401 - the list's measures (``model.MEASURES``), taken in the model

        notices: list[str] = []  # (never on stderr: the terminal is the app's)
        writing: list = []  # the store's writing of computed answers: once the views are up
        res = open_answers(self.root, at, participants=self.participants, id_time_is_utc=settings.id_time_is_utc,
                           notice=notices.append, write=writing.append)
        try:
            if worker.is_cancelled:
                return
            self.post_message(ScanProgress(f"building {now[0][5:]}"))
            model = AppModel.build(self.root, settings, res, at, views=now,
                                   zone=display_zone(settings, self.user_settings))
            mark = self.seen.watermark
            if mark is not None:  # the new letters: found here, off the UI thread
                find_newer(model, mark)
            if worker.is_cancelled:
                return
            self.post_message(ScanDone(model, fingerprint, git_marks, later, tuple(notices)))
            for vid in later:  # opened on the model before: built again, once this one is shown
                if worker.is_cancelled:
                    return
                model.compute(vid)
                self.post_message(ViewBuilt(model, vid))
        finally:
            for job in writing:  # kept for the next start and the command line
                job()

    def build_view(self, vid: str) -> None:
        """Build the view ``vid`` of the current model in a worker (``ViewBuilt`` says when)."""
        model = self.model
        if model is None or model.built(vid) or vid in self.views_building:
            return
        self.views_building = self.views_building | {vid}
        self._update_topbar()
        self.run_worker(lambda: self._build_view(model, vid), thread=True, group="view", exit_on_error=False)

    def _build_view(self, model: AppModel, vid: str) -> None:
        model.compute(vid)
        self.post_message(ViewBuilt(model, vid))

    def on_scan_progress(self, message: ScanProgress) -> None:
        if not self.query("#letters"):  # the app is shutting down
            return
        self.scan_stage = message.stage
        self._update_topbar()

    def on_view_built(self, message: ViewBuilt) -> None:
        if message.model is not self.model or not self.query("#letters"):
            return
        self.views_building = self.views_building - {message.view}
        self._refresh_mailboxes()
        if self._showing_pending and self.mailbox_id == message.view:
            self._show_mailbox(keep=self._selected_key())
        if self.body_search_waiting == message.view:
            self.body_search_waiting = None
            if self.mailbox_id == message.view and len(self.screen_stack) == 1:
                self.call_later(self.action_body_search)
        self._update_topbar()

    def on_scan_done(self, message: ScanDone) -> None:
        if not self.query("#letters"):  # the app is shutting down
            return
        self.scanning = False
        self.scan_seconds = time.monotonic() - self.scan_started
        self.scan_error = None
        self.scan_count += 1
        self.views_building = frozenset(message.later)
        if message.notices:
            self.notify(clean("\n".join(message.notices)), title="Store", severity="warning", timeout=10)
        self.fingerprint = message.fingerprint
        self.git_marks = message.git_marks
        first = self.model is None
        if first or message.model.settings != self.settings:
            self._saved_query_problems(message.model.settings)
        self.settings = message.model.settings
        self.model = message.model
        self._after_scan_seen(first)
        self._refresh_mailboxes()
        keep = self._selected_key()
        if first and self.start_letter:
            from letterbox_tui.core.references import start_id

            wanted = start_id(message.model.snapshot, self.start_letter)  # an id, token, display id, path
            from letterbox_tui.core.model import letters_with_id

            found = letters_with_id(message.model.snapshot.letters, wanted)
            if found:
                target = found[0]
                rows = self.model.rows(self.mailbox_id) or []
                row = next((r for r in rows if r.letter is target), None)
                if row is None:
                    self.mailbox_id = "view:all"
                    self._highlight_mailbox(self.mailbox_id)
                    row = next((r for r in self.model.rows("view:all") or [] if r.letter is target), None)
                self._show_mailbox(keep=row.key if row is not None else None)
                self.letter_pane.open_body(focus=False)
                # a short screen shows the letter only while it is read: read it, once its
                # tabs are up (``mount_after_read``)
                self.read_at_start = self.screen_stack[0].has_class("-short")
            else:
                self._show_mailbox()
                self.notify(cleans(("no letter ", ""), (self.start_letter, "bold"), (" in scope", "")), severity="error")
        elif first and self.mailbox_id == "view:owed":
            self._show_mailbox(keep=most_urgent_key(message.model))  # the review starts at the most urgent
        else:
            self._show_mailbox(keep=keep)
        self._update_topbar()
        self._update_banner()
        self.check_truth_file()
        if first:  # the letter's tabs and the bars, once this is drawn (``mount_after_read``)
            self.call_after_refresh(self.mount_after_read)
            # drafts kept from before (Esc, a closed app, a crash) are offered back
            self.call_after_refresh(self.action_drafts, True)
            self.call_after_refresh(self.open_waiting_writer)
            if self.poll_interval:  # watched from now on (the poll did until here), once this is drawn
                self.call_after_refresh(self._watch_letterbox)
        if self._rescan_wanted:
            self._rescan_wanted = False
            self.start_scan()

    def _poll(self) -> None:
        """Read the letterbox again when a folder changed (where no native watcher runs),
        or when the clock has moved on enough that lateness may have changed (at most
        every minute, and never more than a tenth of the time, so a letterbox that takes
        10 s to read is re-read every 100 s); in git, also when a fetch or a commit moved
        a ref (the watcher skips ``.git``)."""
        if self.scanning:
            return
        if not self.watching and folder_fingerprint(self.root) != self.fingerprint:
            self.start_scan()
            return
        if self.git_marks and git_fingerprint(self.root) != self.git_marks:
            self.start_scan()  # a fetch or commit made outside the app: the banner follows
            return
        m = self.model
        if m is not None:
            age = (self.clock() - m.at).total_seconds()
            if age >= max(60.0, 10 * self.scan_seconds):
                self.start_scan()

    def action_rescan(self) -> None:
        self.start_scan()


def reading_text(stage: str | None = None) -> Content:
    """What the list says until the first answers arrive."""
    if stage:
        return cleans((READING, "bold"), (f"  {stage}", "$text-muted"))
    return clean(READING, style="bold")

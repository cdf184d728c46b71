"""Scanning, as a mixin of ``LetterboxApp``: the scan runs in a worker thread and posts
its progress and result as messages, so the first paint happens before the scan ends; a
cheap poll (directory mtimes, or only the clock while the native watcher runs) rescans,
keeping the selection.

At start-up on an unchanged letterbox, Owed & late (the opening view) is shown first from
the derived index (``prefetch_owed``: a thread started with the app, before the first
paint; ``core.speed.index_owed``), its rows built as the whole letterbox builds them, and
shown as soon as it is made (in the first frame when made before the app mounts,
``show_ready_preview``); the scan worker then loads the whole letterbox (header cache) and
the model replaces it. When
the index could not serve that start (none yet, or the letterbox changed since), the first
scan leaves a ``letterbox-tui query`` behind it, in a process of its own, which builds or
refreshes the index as any command does: the next start reads no header it has seen.

Handlers here are ``on_<message>`` methods (a plain mixin's ``@on`` decorators are not
collected by Textual's message pump metaclass).
"""

from __future__ import annotations

import gc
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

from textual import work
from textual.content import Content
from textual.message import Message
from textual.worker import get_current_worker

from letterbox_tui.core.references import start_id
from letterbox_tui.core.settings import load_settings

from . import early
from .model import AppModel
from .owed_rows import most_urgent_key
from .sanitize import clean, cleans
from .watch import folder_fingerprint


@dataclass
class ScanProgress(Message):
    stage: str
    step: int
    steps: int


@dataclass
class ScanDone(Message):
    """The scan is resolved and its first view is ready (the app is usable)."""

    model: AppModel
    fingerprint: tuple
    #: derived files this scan did not use, one line each (``core.speed.files.take_notices``)
    notices: tuple[str, ...] = ()


@dataclass
class OwedShown(Message):
    """Owed & late from the derived index (``AppModel.from_preview``), to show while the
    whole letterbox loads; ``shown`` is set once the frame showing it is drawn."""

    model: AppModel
    shown: threading.Event


class PreviewReady(Message):
    """The preview from the index is made (``show_ready_preview``)."""


@dataclass
class ViewsDone(Message):
    """Every built-in view of ``model`` is computed (counts are final)."""

    model: AppModel


class ScanningMixin:
    #: Owed & late from the index, shown until the first scan is done (``model`` is None
    #: until then, so everything that needs the whole letterbox waits for it)
    preview: AppModel | None = None
    _preview_future: Future | None = None
    #: the first scan may leave the index to be brought up to date (``_keep_index``)
    _index_wanted = False

    @property
    def shown_model(self) -> AppModel | None:
        """What the list and the letter pane show: the scan's model, else the preview."""
        return self.model if self.model is not None else self.preview

    def prefetch_owed(self) -> None:
        """Read Owed & late from the derived index in a thread of its own, started with the
        app: the stat proof (without the GIL) and SQLite overlap Textual's start-up. Only
        for a first scan that opens on Owed & late over the whole letterbox, with the
        derived files allowed; the scan worker takes the result."""
        from letterbox_tui.core.speed.files import cache_wanted

        if self.participants or self.start_letter or self.start_view != "view:owed" or not cache_wanted():
            return
        self._index_wanted = True
        self._preview_future = early.take(self.root, self.settings)  # the command line's, begun before Textual
        if self._preview_future is not None:
            return
        future: Future = Future()
        root, settings, at = self.root, self.settings, self.clock()

        def run() -> None:
            try:
                future.set_result(early.owed_preview_model(root, settings, at))
            except Exception as exc:  # noqa: BLE001 - a head start only: the scan answers
                future.set_exception(exc)

        self._preview_future = future
        threading.Thread(target=run, name="owed-preview", daemon=True).start()

    def _take_preview(self) -> AppModel | None:
        future, self._preview_future = self._preview_future, None
        if future is None:
            return None
        try:
            return future.result()
        except Exception:  # noqa: BLE001 - shown in tests (test_owed_first); the scan goes on
            return None

    def start_scan(self) -> None:
        self.scan_started = time.monotonic()
        self.scanning = True
        self._update_topbar()
        self.scan_letterbox()

    @work(thread=True, exclusive=True, group="scan", exit_on_error=False)
    def scan_letterbox(self) -> None:
        from letterbox_tui.core.speed.choice import scan_letterbox
        from letterbox_tui.core.speed.files import take_notices

        worker = get_current_worker()
        preview = self._take_preview() if self.scan_count == 0 else None
        keep_index = self._index_wanted and preview is None
        self._index_wanted = False
        if preview is not None and not worker.is_cancelled:
            shown = threading.Event()
            self.post_message(OwedShown(preview, shown))
            # the scan below holds the interpreter for long stretches: it starts once the
            # owed rows are on the screen, not while the UI thread is drawing them
            shown.wait(5.0)
            preview.read_rest()  # the other rows' letters and notes (a row drawn meanwhile waits)
        at = self.clock()
        self.post_message(ScanProgress("reading headers", 1, 4))
        fingerprint = folder_fingerprint(self.root)
        settings = load_settings(self.root)
        # with the derived cache (outside the letterbox) unless switched off: an unchanged
        # letter costs a stat. freeze: a big scan's letters leave the collector's sight at
        # once (else its next passes walk them all, ~0.2 s each at 100,000 letters); the app
        # re-freezes the whole heap once the scan is shown (``_freeze_heap``).
        take_notices()  # what came before this scan is not about it
        snapshot = scan_letterbox(
            self.root, self.participants, id_time_is_utc=settings.id_time_is_utc, now=at, freeze=True
        )
        if worker.is_cancelled:
            return
        # resolving and building make millions of objects and no cycles: the collector's
        # passes over them held the interpreter for 50-100 ms at a time while the user
        # moved in the opening view; what they made leaves its sight at the end
        collecting = gc.isenabled()
        gc.disable()
        try:
            model = self._resolve_and_build(worker, snapshot, settings, fingerprint, at)
        finally:
            if len(snapshot.letters) >= early.PREVIEW_MIN_LETTERS:  # (a test's stays collectable)
                gc.freeze()
            if collecting:
                gc.enable()
        big = len(snapshot.letters) >= early.PREVIEW_MIN_LETTERS
        if model is not None and keep_index and big and not snapshot.scope.partial:
            keep_index_fresh(self.root)

    def _resolve_and_build(self, worker, snapshot, settings, fingerprint, at) -> AppModel | None:
        from letterbox_tui.core.resolve import resolve
        from letterbox_tui.core.speed.files import take_notices

        self.post_message(ScanProgress("resolving answers", 2, 4))
        res = resolve(snapshot, at)
        if worker.is_cancelled:
            return None
        first = self.mailbox_id if self.mailbox_id.startswith("view:") else "view:owed"
        self.post_message(ScanProgress(f"building {first[5:]}", 3, 4))
        model = AppModel.build(self.root, settings, snapshot, res, at, first=first)
        if self.start_letter and self.scan_count == 0:
            model.compute("view:all")  # where --letter is looked for
        if worker.is_cancelled:
            return None
        self.post_message(ScanDone(model, fingerprint, tuple(take_notices())))
        self.post_message(ScanProgress("building the other views", 4, 4))
        model.finish(cancelled=lambda: worker.is_cancelled)
        if worker.is_cancelled:
            return None
        self.post_message(ViewsDone(model))
        return model

    def on_scan_progress(self, message: ScanProgress) -> None:
        if not self.query("#letters"):  # the app is shutting down
            return
        self.scan_stage = f"{message.stage} ({message.step}/{message.steps})"
        self._update_topbar()
        if self.model is None:
            self.letter_list.empty_text = Content(f"Scanning the letterbox… {self.scan_stage}")
            self.letter_list.refresh()

    def show_ready_preview(self) -> None:
        """At mount: a preview made already (the command line begins it before Textual is
        imported) is shown in the first frame; one still being made is shown as soon as it
        is (``PreviewReady``). Not once the scan worker, which starts after the first frame,
        has taken it and posted it (``OwedShown``, which then only says it is on the screen)."""
        future = self._preview_future
        if future is None:
            return
        if not future.done():
            future.add_done_callback(lambda _: self.post_message(PreviewReady()))  # (from the preview's thread)
            return
        if future.exception() is not None:
            return
        model = future.result()
        if model is not None and self.model is None and self.preview is None:
            self._put_preview(model)

    def on_preview_ready(self, message: PreviewReady) -> None:
        future = self._preview_future
        if future is not None and self.query("#letters"):  # (None: the worker took it)
            self.show_ready_preview()

    def _put_preview(self, model: AppModel) -> None:
        self.preview = model
        self._refresh_mailboxes()
        self._show_mailbox(keep=most_urgent_key(model))  # the review starts at the most urgent
        self._update_topbar()

    def on_owed_shown(self, message: OwedShown) -> None:
        if self.model is not None or not self.query("#letters"):
            message.shown.set()
            return
        if self.preview is not message.model:  # (else shown at mount)
            self._put_preview(message.model)
        self.call_after_refresh(message.shown.set)

    def on_views_done(self, message: ViewsDone) -> None:
        if message.model is not self.model or not self.query("#letters"):
            return
        self.views_pending = False
        self._refresh_mailboxes()
        if self.letter_list.rows == () or self._showing_pending:
            self._show_mailbox(keep=self._selected_key())
        self._update_topbar()

    def on_scan_done(self, message: ScanDone) -> None:
        if not self.query("#letters"):  # the app is shutting down
            return
        self.scanning = False
        self.scan_seconds = time.monotonic() - self.scan_started
        self.views_pending = not message.model.finished
        self.scan_error = None
        self.scan_count += 1
        if message.notices:  # a damaged or outdated derived file: answered from the letters
            self.notify(clean("\n".join(message.notices)), title="Derived files", severity="warning", timeout=10)
        self.fingerprint = message.fingerprint
        first = self.model is None
        previewed = self.preview is not None  # the user may have moved in it: kept
        self.preview = None
        if first or message.model.settings != self.settings:
            self._saved_query_problems(message.model.settings)
        self.settings = message.model.settings
        self.model = message.model
        _freeze_heap(self.scan_count)
        self._after_scan_seen(first)
        self._refresh_mailboxes()
        keep = self._selected_key()
        if first and self.start_letter:
            wanted = start_id(message.model.snapshot, self.start_letter)  # an id, token, display id, path
            found = [x for x in message.model.snapshot.letters if x.id == wanted]
            if found:
                target = found[0]
                rows = self.model.rows(self.mailbox_id) or []
                row = next((r for r in rows if r.letter is target), None)
                if row is None:
                    self.mailbox_id = "view:all"
                    self._highlight_mailbox(self.mailbox_id)
                    row = next((r for r in self.model.rows("view:all") or [] if r.letter is target), None)
                self._show_mailbox(keep=row.key if row is not None else None)
                self.letter_pane.tabs.active = "tab-body"
            else:
                self._show_mailbox()
                self.notify(cleans(("no letter ", ""), (self.start_letter, "bold"), (" in scope", "")), severity="error")
        elif first and self.mailbox_id == "view:owed" and not previewed:
            self._show_mailbox(keep=most_urgent_key(message.model))  # the review starts at the most urgent
        else:
            self._show_mailbox(keep=keep)
        self._update_topbar()
        self._update_banner()
        self.check_truth_file()
        if first:  # drafts kept from before (Esc, a closed app, a crash) are offered back
            self.call_after_refresh(self.action_drafts, True)
            self.call_after_refresh(self.open_waiting_writer)
        if self._rescan_wanted:
            self._rescan_wanted = False
            self.start_scan()

    def _poll(self) -> None:
        """Rescan when a folder changed, or when the clock has moved on enough that
        lateness may have changed (at most every minute, and never more than a tenth
        of the time, so a letterbox that takes 10 s to resolve is re-read every 100 s)."""
        if self.scanning:
            return
        if not self.watching and folder_fingerprint(self.root) != self.fingerprint:
            self.start_scan()
            return
        m = self.model
        if m is not None:
            age = (self.clock() - m.at).total_seconds()
            if age >= max(60.0, 10 * self.scan_seconds):
                self.start_scan()

    def action_rescan(self) -> None:
        self.start_scan()


def keep_index_fresh(root: str) -> None:
    """Bring the derived index of ``root`` up to date in a process of its own: a query
    (its answer thrown away) builds it when there is none, refreshes what changed, or
    finds it fresh, as every command does (``cli.indexed``). Best effort: the index is only
    ever a head start."""
    import subprocess
    import sys

    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "letterbox_tui", "--root", root, "query", "id=-"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return
    threading.Thread(target=child.wait, name="index-keeper", daemon=True).start()  # reaped when done


def _freeze_heap(scans: int) -> None:
    """Move what the scan built (100,000 letters and their answers) out of the garbage
    collector's sight: a full collection would otherwise walk every letter again and
    again, which showed up as pauses of seconds while scrolling. Cyclic garbage from
    older scans is collected every tenth scan."""
    gc.unfreeze()
    if scans % 10 == 0:
        gc.collect()
    gc.freeze()

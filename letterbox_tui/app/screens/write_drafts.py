"""How a writing form keeps its draft: as it is typed (debounced: once the keys pause for
``QUIET`` seconds, or ``MOST`` seconds after the first unsaved key while they go on; in a
worker, of the latest values), at once when asked (Esc, "Save draft"), and when the app
closes with the form open. Saves that finish out of order never overwrite a newer one, and
none brings a draft back after the form was sent or discarded. The drafts live in the
user's XDG state directory (``core.draft_store``), never in the letterbox."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

from textual import work

from letterbox_tui.core.draft_store import KeptDraft

from ..sanitize import clean

#: a draft is saved once the keys pause this long (seconds): on disk within 0.3 s of the
#: last key, yet not once a keystroke while someone types
QUIET = 0.2
#: ... or this long after the first unsaved key, while the typing goes on
MOST = 1.0


class DraftKeeping:
    """Mixed into ``WriteScreen`` (which gives ``store``, ``draft_name``, ``kind``,
    ``target``, ``marked``, ``values()``, ``changed()`` and the ``_done``/``_sending``/
    ``_initial``/``_latest`` state)."""

    def _init_drafts(self) -> None:
        self._save_timer = None
        self._unsaved_since: float | None = None  # monotonic time of the first unsaved change
        self._last_change = 0.0  # monotonic time of the last change
        self._draft_lock = threading.Lock()
        self._draft_seq = 0  # saves asked for
        self._draft_written = 0  # the newest save on disk
        self._drafts_closed = False
        self._fields_written: dict | None = None  # the fields of the newest save on disk

    def _schedule_autosave(self) -> None:
        """A field changed: one save follows the last key by ``QUIET`` (or the first
        unsaved key by ``MOST``). A key only notes its time; the one timer running looks
        at it when it fires and waits again while the keys go on (no timer made and
        stopped per key)."""
        now = time.monotonic()
        self._last_change = now
        if self._unsaved_since is None:
            self._unsaved_since = now
        if self._save_timer is None:
            self._save_timer = self.set_timer(QUIET, self._autosave_due, name="autosave")

    def _autosave_due(self) -> None:
        now = time.monotonic()
        due = min(self._last_change + QUIET, (self._unsaved_since or now) + MOST)
        if now < due - 0.005:
            self._save_timer = self.set_timer(due - now, self._autosave_due, name="autosave")
            return
        self._autosave()

    def _autosave(self) -> None:
        self._save_timer = None
        self._unsaved_since = None
        if self._done or self._sending:
            return
        if not self.changed():
            self._forget_draft()
            return
        self.keep_draft(wait=False)

    def _draft_of(self, values: dict) -> KeptDraft:
        return KeptDraft(self.kind, {k: v for k, v in values.items() if v is not None},
                         self.target.id if self.target else "", [x.id for x in self.marked],
                         datetime.now(timezone.utc).isoformat(timespec="seconds"), self.draft_name)

    def keep_draft(self, values: dict | None = None, *, wait: bool = True) -> bool:
        """Write the form to the user's state directory (never the letterbox): at once
        (``wait``), or in a worker as it is typed, so a slow disk never holds the form up."""
        draft = self._draft_of(self.values() if values is None else values)
        self._draft_seq += 1
        if not wait:
            self._write_draft_in_worker(draft, self._draft_seq)
            return True
        try:
            self._write_draft(draft, self._draft_seq)
        except OSError as exc:
            self.notify(clean(f"Could not keep the draft: {exc.strerror or exc}"), severity="error")
            return False
        return True

    def _write_draft(self, draft: KeptDraft, seq: int) -> None:
        """Any thread. A save older than one already written, or after the form was sent
        or discarded, writes nothing (saves may finish out of order)."""
        with self._draft_lock:
            if self._drafts_closed or seq <= self._draft_written:
                return
            self.store.save(draft)
            self._draft_written = seq
            self._fields_written = draft.fields

    @work(thread=True, group="draft", exit_on_error=False)
    def _write_draft_in_worker(self, draft: KeptDraft, seq: int) -> None:
        self._write_draft(draft, seq)

    def _forget_draft(self, *, close: bool = False) -> None:
        """Remove the kept draft (the form is back as it opened, or sent, or discarded);
        ``close``: no save still under way may bring it back."""
        with self._draft_lock:
            self._draft_written = self._draft_seq
            self._fields_written = None
            self._drafts_closed = self._drafts_closed or close
            try:
                self.store.discard(self.draft_name)
            except OSError:
                pass

    def on_unmount(self) -> None:
        # the app closing with the form open: keep what was typed (as last changed: the
        # widgets may be gone by now)
        if not self._done and self._latest is not None and self._latest != self._initial:
            draft = self._draft_of(self._latest)
            if draft.fields == self._fields_written:
                return  # already on disk as it stands (the last autosave)
            try:
                self._draft_seq += 1
                self._write_draft(draft, self._draft_seq)
            except OSError:
                pass

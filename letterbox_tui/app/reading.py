"""The reading side of the app, as a mixin of ``LetterboxApp``: going back and quitting,
the 80x24 layout, searching the list, moving to what needs attention, opening a letter from
the Thread tab, new-letter markers and watching the letterbox for changes.

Handlers here are ``on_<message>`` methods (a plain mixin's ``@on`` decorators are not
collected by Textual's message pump metaclass).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual import events, work
from textual.css.query import NoMatches
from textual.worker import get_current_worker

from .sanitize import cleans
from .owed_rows import BY_SEAT, MOST_OVERDUE, codes_present, most_urgent_key, next_code
from .seen import newest_time
from .watch import FilesChanged, folder_fingerprint, watch_letterbox
from .widgets.letter_list import ListRow

if TYPE_CHECKING:  # (the letter model and the letter pane's tabs come after the first frame)
    from .widgets.thread_view import ThreadView

#: below this many columns the mailboxes sidebar folds away; below SHORT rows the letter
#: is shown only when it is being read (mutt's index and pager)
NARROW = 100
SHORT = 32


def find_newer(model, mark: int) -> list:
    """The model's letters whose file is newer than ``mark``, found once per model and mark
    (a walk of every letter's file time, and those letters decoded: the scan worker calls it
    before the model is shown, so the UI thread only reads it)."""
    key = ("newer than", mark)
    newer = model._once.get(key)
    if newer is None:
        from letterbox_tui.core.lazy import newer_than

        newer = model._once[key] = newer_than(model.snapshot.letters, mark)
    return newer


class ReadingMixin:
    # --- watching for changes (watchfiles; the mtime poll is the fallback) -----------
    #: True while the native watcher runs; the poll then checks only the clock
    watching = False

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False)
    def _watch_letterbox(self) -> None:
        """Watch for changes: started once the first answers are shown (``on_scan_done``),
        as setting the watch up holds the interpreter for a while on a large letterbox."""
        worker = get_current_worker()
        self.watching = True

        def caught_up() -> None:  # what changed before the watch was up: seen by the folders' times
            if folder_fingerprint(self.root) != self.fingerprint:
                self.post_message(FilesChanged(0))

        try:
            watch_letterbox(self.root, self._watch_stop, lambda n: self.post_message(FilesChanged(n)),
                            lambda: worker.is_cancelled, ready=caught_up)
        finally:
            self.watching = False

    def on_files_changed(self, message: FilesChanged) -> None:
        """A burst of file events: rescan once it is quiet for a moment."""
        if self._rescan_timer is not None:
            self._rescan_timer.stop()
        self._rescan_timer = self.set_timer(0.25, self._rescan_after_changes)

    def _rescan_after_changes(self) -> None:
        self._rescan_timer = None
        if self.scanning:
            self._rescan_wanted = True
        else:
            self.start_scan()

    #: letters new since the user last looked (counted once a scan; the status line shows
    #: it: the sidebar with its per-mailbox counts is folded away at 80 columns)
    fresh_count = 0

    def fresh_letters(self) -> list:
        m = self.model
        mark = self.seen.watermark
        if m is None or mark is None:
            return []
        # the letters newer than the mark, found once per model (in the scan worker:
        # ``find_newer``; here only when the mark moved since); then those not opened since
        return [x for x in find_newer(m, mark) if self.seen.is_new(x)]

    def new_counts(self) -> dict[str, int]:
        """Letters that arrived since the user last looked, per mailbox id."""
        fresh = self.fresh_letters()
        m = self.model
        if not fresh or m is None:
            return {}
        out: dict[str, int] = {"view:all": len(fresh)}
        paths = {x.path for x in fresh}
        for vid, rows in m.views.items():
            if vid != "view:all":
                n = len({r.letter.path for r in rows if r.heading is None and r.letter is not None and r.letter.path in paths})
                if n:
                    out[vid] = n
        for x in fresh:
            for key in (f"seat:{x.seat}", f"seat:{x.seat}:{x.folder}", f"seat:{x.sender}:sent"):
                out[key] = out.get(key, 0) + 1
        return out

    def is_fresh(self, row: ListRow) -> bool:
        """Did this row's letter arrive since the user last looked? (see ``seen``)"""
        x = row.letter
        return x is not None and hasattr(x, "mtime_ns") and self.seen.is_new(x)

    def _after_scan_seen(self, first: bool) -> None:
        """The first scan of a letterbox never opened here sets the watermark (nothing is
        new yet); a later scan announces letters that arrived since."""
        m = self.model
        if m is None:
            return
        from letterbox_tui.core.model import letters_with_id

        if self.select_written and letters_with_id(m.snapshot.letters, self.select_written):
            self._select_now, self.select_written = self.select_written, None
        if self.seen.watermark is None:
            self.seen.watermark = newest_time(m.snapshot.letters)
            # written in a thread: nothing on the UI thread touches a file
            self.run_worker(partial(self.seen.save, self.seen.watermark), thread=True, group="seen",
                            exit_on_error=False)
            return
        every = self.fresh_letters()
        self.fresh_count = len(every)
        fresh = [x for x in every if x.path not in self._announced]
        self._announced.update(x.path for x in fresh)
        if fresh and not first:
            x = max(fresh, key=lambda x: x.mtime_ns)
            more = f" and {len(fresh) - 1} more" if len(fresh) > 1 else ""
            self.notify(cleans(("From ", ""), (x.sender, "bold"), (": ", ""), (x.subject or x.id, ""), (more, "")),
                        title=f"{len(fresh)} new letter{'s' if len(fresh) != 1 else ''}", timeout=6)

    def action_back_or_quit(self) -> None:
        """``q``: back to the list from the letter or the mailboxes; from the list, back to
        the Body tab when ``]``/``[`` turned it there, else quit (asking first when a draft
        or a write is pending: ``writing.quit_asking``)."""
        focused = self.focused
        if focused is not self.letter_list:  # reading, the mailboxes, or nothing focused
            self.letter_list.focus()
            return
        tabs = self.letter_pane.tabs if self.letter_pane.ready else None
        if tabs is not None and tabs.active != "tab-body":  # (at 160 columns ] turns the tab while the list keeps the keys)
            tabs.active = "tab-body"
            return
        self.quit_asking()

    def action_toggle_markdown(self) -> None:
        if not self.letter_pane.ready:  # (no body yet: the tabs come after the first answers)
            return
        on = self.letter_pane.toggle_markdown()
        self._update_status()
        self.notify("Body rendered as Markdown (link targets shown)" if on else "Body shown as written", timeout=2)

    def action_toggle_sidebar(self) -> None:
        pane = self.query_one("#mailboxes-pane")
        pane.display = not pane.display
        self.sidebar_chosen = pane.display
        if not pane.display and self.focused is self.mailbox_list:
            self.letter_list.focus()
        elif pane.display and self.size.width < NARROW:
            self.mailbox_list.focus()  # shown on a narrow screen: to pick a mailbox

    def sidebar_picked(self) -> None:
        """A mailbox picked from the sidebar ``b`` brought out on a narrow screen: it folds
        away again and the list takes the keys (it stayed, and kept the focus)."""
        if self.size.width < NARROW:
            self.query_one("#mailboxes-pane").display = False
            self.sidebar_chosen = None
        self.letter_list.focus()

    # --- layout: 80x24 is a normal terminal -----------------------------------------
    #: the sidebar has the room it needs from this many columns (``b`` toggles it)
    sidebar_chosen: bool | None = None

    def on_resize(self, event: events.Resize) -> None:
        self._apply_layout(event.size.width, event.size.height)
        # the bars fit their width when written: written again (after a resize to 80 columns
        # their ends were cut off), and the cursor's row kept in sight
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        self._update_topbar()
        self._update_status()
        # after the new layout's sizes are in (the list is a few rows when reading)
        self.call_after_refresh(self.letter_list.scroll_to_cursor, True)

    def _apply_layout(self, width: int, height: int) -> None:
        """Below ``NARROW`` columns the sidebar folds away (``b`` brings it back); below
        ``SHORT`` rows the screen is mutt's: the list alone, Enter opens the letter
        under a few rows of the list, q goes back."""
        try:
            pane = self.query_one("#mailboxes-pane")
        except NoMatches:
            return
        pane.display = self.sidebar_chosen if self.sidebar_chosen is not None else width >= NARROW
        self.set_class(width < NARROW, "-narrow")  # (toasts become a strip: app.tcss)
        self.screen_stack[0].set_class(height < SHORT, "-short")
        self.letter_list.invalidate()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Reading (focus in the letter pane) shows the letter on a short screen."""
        widget = event.widget
        main = self.screen_stack[0]
        if widget is self.letter_list:
            main.remove_class("-reading")
            self._show_selected()  # back from a letter read off this list (see read_letter)
        elif self.letter_pane in widget.ancestors_with_self:
            main.add_class("-reading")
        else:
            return
        self.call_after_refresh(self.letter_list.scroll_to_cursor, True)

    def action_next_match(self, step: int) -> None:
        """``n``/``N``: the next/previous match of the last search (a body search ``F``:
        the next match in the bodies; ``/``: the next row); with no search, the
        next/previous row that needs attention (late, unknown, or a task nobody has
        accepted yet)."""
        if self.body_matches is not None:
            wrapped = self.body_matches.step(step)
            self._show_body_match()
            if wrapped:
                where = "the first match (search hit the bottom)" if step > 0 else "the last match (search hit the top)"
                self.notify(f"Wrapped around to {where}", timeout=3)
        elif self.search_text:
            self._find(step)
        else:
            self.action_next_attention(step)

    def _find(self, step: int, include_current: bool = False) -> None:
        lst = self.letter_list
        needle = (self.search_text or "").casefold()
        if not lst.rows or not needle:
            return
        n = len(lst.rows)
        i = lst.cursor if lst.cursor >= 0 else 0
        if include_current:
            i -= step
        width = max(80, lst.size.width)
        for _ in range(n):
            i = (i + step) % n
            row = lst.rows[i]
            if row.heading is None and needle in self._describe(row, width).plain.casefold():
                lst.cursor = i
                lst.scroll_to_cursor()
                return
        self.notify(cleans(("Not found in this list: ", ""), (self.search_text or "", "bold")), timeout=3)

    def on_thread_view_open(self, event: ThreadView.Open) -> None:
        """Enter on a letter of the Thread tab: read it (see ``read_letter``)."""
        self.read_letter(event.letter)

    def read_letter(self, letter) -> None:
        """Read ``letter`` in the pane, as mutt's pager follows a thread: in this list the
        cursor moves to it; a letter not in this list is shown without leaving the list
        (q goes back to the list where it was). The body takes the keys."""
        lst = self.letter_list
        i = next((i for i, r in enumerate(lst.rows) if r.letter is letter and r.heading is None), None)
        if i is not None:
            lst.cursor = i
            lst.scroll_to_cursor(center=True)
        else:
            self.letter_pane.show(self.model, ListRow(f"read:{letter.path}", letter))
        self._mark_opened(letter)
        self.letter_pane.open_body()  # (once its tabs are up, just after the first answers)

    def action_parent(self) -> None:
        """``h`` while reading: read the letter this one replies to."""
        pane = self.letter_pane
        x = pane.letter
        pane.fill_tab("tab-thread")  # (filled when first looked at: h is asked from the Body too)
        line = next((ln for ln in pane.thread_view.lines if x is not None and ln.letter is x), None)
        if line is None or line.parent is None:
            self.notify("This letter replies to nothing in its thread.", timeout=2)
            return
        self.read_letter(line.parent)

    def _mark_opened(self, letter) -> None:
        if letter is not None and hasattr(letter, "mtime_ns") and self.seen.is_new(letter):
            self.seen.opened.add(letter.path)
            self.fresh_count = max(0, self.fresh_count - 1)
            self.letter_list.invalidate()
            self._refresh_mailboxes()
            self._update_status()

    def select_letter(self, letter) -> bool:
        """Move the list's cursor to ``letter``, switching to All when it is not here."""
        m = self.model
        if m is None:
            return False
        lst = self.letter_list
        i = next((i for i, r in enumerate(lst.rows) if r.letter is letter and r.heading is None), None)
        if i is None:
            self.mailbox_id = "view:all"
            self.query_text = None
            self._highlight_mailbox(self.mailbox_id)
            self._show_mailbox()
            i = next((i for i, r in enumerate(lst.rows) if r.letter is letter), None)
        if i is None:
            return False
        lst.cursor = i
        lst.scroll_to_cursor(center=True)
        return True

    def action_next_attention(self, step: int) -> None:
        """Next (or previous) row that needs attention: late, unknown, or an open task
        nobody has accepted yet."""
        lst = self.letter_list
        m = self.model
        if m is None or not lst.rows:
            return
        n = len(lst.rows)
        i = lst.cursor
        for _ in range(n):
            i = (i + step) % n
            row = lst.rows[i]
            if row.heading is None and self._needs_attention(row):
                lst.cursor = i
                lst.scroll_to_cursor()
                return
        self.notify("Nothing else needs attention here.", timeout=2)

    def _needs_attention(self, row: ListRow) -> bool:
        """A letter by ``core.views.attention.needs_attention``; any other row with an item
        (a finding, a lease) does."""
        from letterbox_tui.core.model import Letter
        from letterbox_tui.core.views.attention import needs_attention

        m = self.model
        x = row.letter
        if m is None:
            return False
        if not isinstance(x, Letter):
            return row.item is not None
        return needs_attention(x, m.res)

    # --- Owed & late: order, folding ------------------------------------------------
    owed_order = BY_SEAT
    owed_folded: frozenset[str] = frozenset()

    def _in_owed(self) -> bool:
        if self.mailbox_id == "view:owed" and self.query_text is None:
            return True
        self.notify("o, z, Z and a arrange Owed & late (press 1)", timeout=3)
        return False

    def action_owed_order(self) -> None:
        """``o``: by owing seat, or most overdue first across seats (the cursor stays)."""
        if not self._in_owed():
            return
        self.owed_order = MOST_OVERDUE if self.owed_order == BY_SEAT else BY_SEAT
        self._show_mailbox(keep=self._owed_keep())

    #: Owed & late shows only the items carrying this attention code (``a``/``A``; None: all)
    owed_code: str | None = None

    def action_owed_attention(self, step: int) -> None:
        """``a``: show only the owed items carrying the next attention code present (most
        urgent first), then every item again; ``A`` the other way; ``Esc`` clears it. The
        cursor goes to the most urgent item carrying the code (it stays when cleared)."""
        if not self._in_owed() or self.model is None or self.model.owed is None:
            return
        present = codes_present(self.model)
        if not present and self.owed_code is None:
            self.notify("No owed task carries an attention code.", timeout=3)
            return
        self.owed_code = next_code(present, self.owed_code, step)
        keep = self._selected_key() if self.owed_code is None else most_urgent_key(self.model, self.owed_code)
        self._show_mailbox(keep=keep)

    def action_fold(self) -> None:
        """``z``: fold (or unfold) the seat group under the cursor (or, in a threaded list,
        the thread)."""
        row = self.letter_list.current
        if self.threaded and self.mailbox_id != "view:owed":
            tid = row.extra.get("fold") if row is not None and row.extra.get("thread") else None
            if tid is None and row is not None and row.letter is not None and hasattr(row.letter, "thread_id"):
                tid = row.letter.thread_id
            if tid is not None:
                self.thread_folded = self.thread_folded ^ {tid}
                self._show_mailbox(keep=f"thread:{tid}")
            return
        if not self._in_owed() or self.owed_order != BY_SEAT:
            return
        seat = self._cursor_seat()
        if seat is None:
            return
        self.owed_folded = self.owed_folded ^ {seat}
        self._show_mailbox(keep=f"group:{seat}" if seat in self.owed_folded else self._owed_keep())

    def action_fold_all(self) -> None:
        """``Z``: fold every seat (a wall of 700 rows becomes one line a seat), or unfold all."""
        if not self._in_owed() or self.owed_order != BY_SEAT or self.model is None or self.model.owed is None:
            return
        seats = {g.seat for g in self.model.owed.groups}
        here = self._cursor_seat()
        self.owed_folded = frozenset() if self.owed_folded >= seats else frozenset(seats)
        keep = f"group:{here}" if here and here in self.owed_folded else self._owed_keep()
        self._show_mailbox(keep=keep)

    def _cursor_seat(self) -> str | None:
        row = self.letter_list.current
        if row is None:
            return None
        if row.extra.get("fold"):
            return row.extra["fold"]
        x = row.letter
        return getattr(x, "recipient", None)

    def _owed_keep(self) -> str | None:
        row = self.letter_list.current
        if row is None:
            return None
        if row.extra.get("fold"):
            return row.key
        return row.key

    # --- searching bodies (F): explicit, never a query term ---------------------------
    #: the view whose body search F asked for while it was being built, or None
    body_search_waiting: str | None = None

    async def action_body_search(self) -> None:
        from .screens.body_search import BodySearchScreen

        if self._showing_pending:  # (4F typed fast: the view's letters are not listed yet)
            self.body_search_waiting = self.mailbox_id
            self.notify("Building this view; the body search opens when it is built.", timeout=3)
            return
        seen: set[int] = set()
        letters = []
        for row in self.letter_list.rows:
            x = row.letter
            if x is not None and hasattr(x, "mtime_ns") and id(x) not in seen:
                seen.add(id(x))
                letters.append(x)
        if not letters:
            self.notify("No letters in this view to search.", timeout=2)
            return
        label = self._mailbox_label(self.mailbox_id)
        await self.push_screen(BodySearchScreen(letters, label), self._body_search_done)

    #: the walk of the last body search's matches (``n``/``N``), or None
    body_matches = None

    def _body_search_done(self, walk) -> None:
        """Enter on a result reads that letter (at 80x24 it only moved the list's cursor,
        the body stayed hidden), its first match highlighted; n/N walk on from it."""
        if walk is not None:
            self.body_matches = walk
            self.search_text = None  # (n/N repeat the newest search)
            self._show_body_match()

    def _show_body_match(self) -> None:
        walk = self.body_matches
        letter, nth = walk.current()
        self.letter_pane.highlight_match(letter, walk.needle, nth, f"match {walk.at + 1} of {walk.total}")
        if self.letter_pane.letter is not letter or self.focused is None or self.letter_pane not in self.focused.ancestors_with_self:
            self.read_letter(letter)
        self._update_status()

    def end_body_search(self) -> None:
        """Esc in the list, or a new list search: the body search's walk and highlights end."""
        self.body_matches = None
        self.letter_pane.highlight_match(None, "", 0, "")
        self._update_status()

    # --- a threaded list (T) -----------------------------------------------------------
    threaded = False
    thread_folded: frozenset[str] = frozenset()

    def action_toggle_threads(self) -> None:
        """``T``: show the list threaded (reply trees, folding with ``z``), or flat."""
        if self.mailbox_id == "view:owed" and self.query_text is None:
            self.notify("Owed & late is grouped by seat; T threads the other lists.", timeout=3)
            return
        from .thread_rows import MAX_THREADED

        if not self.threaded and len(self.letter_list.rows) > MAX_THREADED:
            self.notify(f"Over {MAX_THREADED} rows: filter (\\) first to thread them.", timeout=4)
            return
        self.threaded = not self.threaded
        self._show_mailbox(keep=self._selected_key())

"""Writing, as a mixin of ``LetterboxApp``: marking letters for a dispute, the selected
letter, opening the write forms (compose, reply, supersede, dispute, rule, review, chase),
a progress note, and the drafts kept from before; a written letter triggers a rescan."""

from __future__ import annotations

from textual.content import Content

from .sanitize import cleans

#: the worker groups that write something of the user's: a letter, a draft, a progress
#: note, a sync's commit and push
WRITE_GROUPS = ("write", "draft", "progress", "sync")


class WritingMixin:
    #: the id of the letter just written, until the scan that finds it (see _show_mailbox)
    select_written: str | None = None
    _select_now: str | None = None

    def action_mark(self) -> None:
        lst = self.letter_list
        row = lst.current
        if row is None or row.letter is None:
            return
        key = row.key
        if key in lst.marked:
            lst.marked.discard(key)
        else:
            lst.marked.add(key)
        lst.invalidate()
        self._update_status()  # the status line counts the marks (a toast covered the form d opens)

    def marked_letters(self) -> list:
        lst = self.letter_list
        m = self.model
        if m is None:
            return []
        from letterbox_tui.core.lazy import by_path

        found = by_path(m.snapshot.letters)
        out = []
        for key in sorted(lst.marked):
            letter = found(key.split(">")[-1])
            if letter is not None and letter not in out:
                out.append(letter)
        return out

    def selected_letter(self):
        """The letter being read (focus in the letter pane), else the list's current one."""
        from letterbox_tui.core.model import Letter

        pane = self.letter_pane
        focused = self.focused
        if focused is not None and pane in focused.ancestors_with_self and isinstance(pane.letter, Letter):
            return pane.letter
        row = self.letter_list.current
        return row.letter if row is not None and isinstance(row.letter, Letter) else None

    async def _open_writer(self, kind: str) -> None:
        from .screens.write import open_writer

        m = self.model
        if m is None:  # the key is kept, not dropped: the form opens once the letterbox is read
            self.writer_waiting = kind
            self.notify("Reading the letterbox; the form opens when it is read.", timeout=3)
            return
        if kind == "chase":
            from .screens.chase import open_chase

            chase = open_chase(self)
            if chase is not None:
                await self.push_screen(chase, self._chased)  # (mounted before the next key: ``OPENERS``)
            return
        screen = open_writer(self, kind)
        if screen is not None:
            await self.push_screen(screen, self._written)

    def _written(self, result: str | None) -> None:
        if result:
            self.seen.written.add(result)  # not announced, nor marked new, when it appears
            self.select_written = result  # the cursor goes to it when it shows up in this list
            self.notify(cleans(("Written: ", "bold"), (result, "")), timeout=4)
            self.letter_list.marked.clear()
            self._update_status()
            self.start_scan()

    def _chased(self, result: str | None) -> None:
        """A chase written: the list stays on the task, which shows its ``chased`` code once
        the letterbox is read again (the chase letter itself is in no list the cursor is on)."""
        if result:
            self.seen.written.add(result)
            self.notify(cleans(("Chased: ", "bold"), (result, "")), timeout=4)
            self.start_scan()

    async def action_chase(self) -> None:
        """Chase the selected task (``screens.chase``)."""
        await self._open_writer("chase")

    async def action_compose(self) -> None:
        await self._open_writer("compose")

    async def action_reply(self) -> None:
        await self._open_writer("reply")

    async def action_supersede(self) -> None:
        await self._open_writer("supersede")

    async def action_dispute(self) -> None:
        await self._open_writer("dispute")

    async def action_rule(self) -> None:
        await self._open_writer("rule")

    async def action_review(self) -> None:
        await self._open_writer("review")

    async def action_progress(self) -> None:
        """A progress note on the selected letter, in its ack sidecar (issue 13 point 5)."""
        from letterbox_tui.core.sidecar import progress_of

        from .screens.progress import ProgressScreen

        x, m = self.selected_letter(), self.model
        if x is None or m is None:
            self.notify("Select a letter you accepted first.", severity="warning")
            return
        now = progress_of(m.root, x, m.snapshot)
        await self.push_screen(ProgressScreen(m.root, x, now.line(self.clock()) if now else ""), self._written)

    async def open_waiting_writer(self) -> None:
        """Open the form asked for while the first scan ran (``_open_writer``), unless another
        screen (a kept draft offered back) is showing by now."""
        kind, self.writer_waiting = self.writer_waiting, None
        if kind is not None and len(self.screen_stack) == 1:
            await self._open_writer(kind)

    def action_drafts(self, quiet: bool = False) -> None:
        from .screens.drafts import offer_kept_drafts

        offer_kept_drafts(self, quiet=quiet)

    # --- quitting ---------------------------------------------------------------------
    def pending_writes(self) -> list[str]:
        """What is not finished if the app quits now: kept drafts (not sent), writes under
        way. Empty: nothing."""
        from letterbox_tui.core.draft_store import DraftStore

        out = []
        n = len(DraftStore(self.root).kept())
        if n:
            out.append(f"{n} kept draft{'s' if n != 1 else ''}, not sent (offered back at the next start)")
        busy = sorted({w.group for w in self.workers if w.group in WRITE_GROUPS and not w.is_finished}
                      | ({"sync"} if getattr(self, "syncing", False) else set()))
        if busy:
            out.append("a write under way (" + ", ".join(busy) + ")")
        return out

    def quit_asking(self) -> None:
        """Quit, asking first when a draft or a write is pending (``q`` from the list quit
        at once). The answers are Stay (the safe one, Esc) and Exit: a second ``q`` is no
        answer, so q-for-back pressed twice does not quit."""
        from .screens.choice import ChoiceScreen

        pending = self.pending_writes()
        if not pending:
            self.exit(0)
            return
        text = Content("Not finished: " + "; ".join(pending) + ".\nQuit anyway?")
        self.push_screen(ChoiceScreen("Quit?", text, [("stay", "Stay"), ("quit", "Exit")], safe="stay"),
                         lambda answer: self.exit(0) if answer == "quit" else None)

"""The footer: the keys for where the focus is, not the same six everywhere.

Each context names the bindings it shows, by binding id (or, for a widget's own unnamed
binding such as an Input's Enter, by action), in order, with the word the footer gives
it there: in the list, Enter reads; reading, ``q`` goes back; in a form, ``ctrl+s`` sends.
The keys shown are the bindings' own (a ``[keymap]`` remap shows the new key), and only
those the focus can reach are shown. A screen says its context with ``FOOTER_KEYS``; the
main screen asks the app (``footer_keys``), which goes by the focused pane.
"""

from __future__ import annotations

from textual.app import NoScreen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: (binding id or action, the footer's word for it)
FooterKeys = tuple[tuple[str, str], ...]

LIST: FooterKeys = (
    ("list.open", "Read"), ("app.search", "Search"), ("app.query", "Filter"), ("app.body_search", "Bodies"),
    ("letter.compose", "Compose"), ("letter.reply", "Reply"), ("app.help", "Help"), ("app.quit", "Quit"),
)
#: the list in Owed & late: its tasks are chased (C) where the list searches bodies (F)
OWED: FooterKeys = tuple(("letter.chase", "Chase") if name == "app.body_search" else (name, word) for name, word in LIST)
LETTER: FooterKeys = (
    ("app.quit", "Back"), ("letter.down", "Scroll"), ("letter.page_down", "Page"), ("letter.next_tab", "Tab"),
    ("letter.markdown", "Markdown"), ("app.next", "Next"), ("letter.reply", "Reply"), ("app.help", "Help"),
)
THREAD: FooterKeys = (
    ("app.quit", "Back"), ("thread.down", "Down"), ("thread.open", "Read"), ("thread.parent", "Parent"),
    ("letter.next_tab", "Tab"), ("letter.reply", "Reply"), ("app.help", "Help"),
)
MAILBOXES: FooterKeys = (
    ("select", "Open"), ("mailboxes.down", "Down"), ("app.sidebar", "Hide"), ("app.quit", "Back"), ("app.help", "Help"),
)
BAR: FooterKeys = (("submit", "Run"), ("app.escape", "Close"), ("query.previous", "History"))
FORM: FooterKeys = (
    ("write.send", "Send"), ("form.next_field", "Next field"), ("write.editor", "$EDITOR"), ("write.cancel", "Cancel"),
)
CHASE: FooterKeys = (("chase.send", "Send"), ("form.next_field", "Next field"), ("chase.cancel", "Cancel"))
HELP: FooterKeys = (("help.close", "Close"), ("help.down", "Scroll"), ("help.page_down", "Page"))
CHOICE: FooterKeys = (("choice.back", "Back"),)
BODY_SEARCH: FooterKeys = (("submit", "Search"), ("bodysearch.down", "Down"), ("select", "Read"),
                           ("bodysearch.close", "Cancel/close"))


class ContextFooter(Footer):
    """A ``Footer`` showing the keys of the focused context (see the module docstring)."""

    #: a recompose is scheduled (``bindings_changed``)
    _recompose_pending = False
    #: the keys the footer shows, as ``_keys`` gave them (None: not composed from them)
    _shown: list | None = None

    def bindings_changed(self, screen) -> None:
        """As ``Footer``'s, but the changes signalled before the footer is next composed
        make one recompose, and none when the keys it would show are those it shows:
        ``Footer`` schedules one per signal, each unmounting and mounting every key again,
        and a start signals several in a row (the first focus, the screen's stack, Textual's
        own refresh after them, the list's context), most changing no key. The one
        scheduled looks at the bindings as they are when it runs, so none is missed."""
        self._bindings_ready = True
        if not screen.app.app_focus or self._recompose_pending:
            return
        if self.is_attached and screen is self.screen:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_once)

    async def _recompose_once(self) -> None:
        self._recompose_pending = False
        if not self.is_attached:  # (its screen closed meanwhile)
            return
        try:
            if self._shown is not None and self._keys() == self._shown:
                return
        except NoScreen:
            return
        await self.recompose()

    def _keys(self) -> list | None:
        """What the focused context shows: (binding, enabled, tooltip, key shown, word) for
        each of its keys the focus reaches, in its order; None where no context names them
        (``Footer``'s own keys) or before the bindings are ready."""
        if not self._bindings_ready:
            return None
        screen = self.screen
        wanted = getattr(screen, "FOOTER_KEYS", None)
        if wanted is None and screen is self.app.screen_stack[0] and hasattr(self.app, "footer_keys"):
            wanted = self.app.footer_keys()
        if wanted is None:
            return None
        # the first binding the focus reaches for each id (or action), by its shortest key
        found: dict[str, tuple] = {}
        for _node, binding, enabled, tooltip in screen.active_bindings.values():
            for name in (binding.id, binding.action):
                if not name:
                    continue
                shown = self.app.get_key_display(binding)
                kept = found.get(name)
                if kept is None or len(shown) < len(kept[3]):
                    found[name] = (binding, enabled, tooltip, shown)
        return [(*found[name], word) for name, word in wanted if name in found]

    def compose(self):
        keys = self._shown = self._keys()
        if keys is None:
            if self._bindings_ready:
                yield from super().compose()
            return
        self.styles.grid_size_columns = len(keys)
        for binding, enabled, tooltip, shown, word in keys:
            yield FooterKey(binding.key, shown, word, binding.action, disabled=not enabled,
                            tooltip=tooltip or binding.description).data_bind(compact=Footer.compact)

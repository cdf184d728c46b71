"""``?``: every key, as the current keymap has it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets import footer
from ..widgets.footer import ContextFooter

INTRO = "\n".join([  # a line a paragraph: the screen wraps them (hard breaks made ragged lines at 80)
    "Owed & late opens first: tasks still owed, by the seat that owes them, late first.",
    "/ searches the list and F the bodies; n and N go to the next/previous match of the last search "
    "(with no search: the next letter to act on: "
    "late, unknown, or a task nobody has accepted yet). \\ filters by query.",
    "q goes back (from the list it quits); Q quits from anywhere. j/k scroll this help, space/b page.",
    "Unknown is an answer: the record cannot settle it, and the reason is named.",
    "A banner at the top means the scope is incomplete; press p to see why.",
])


class HelpScreen(ModalScreen[None]):
    #: the footer's keys here (``widgets.footer``)
    FOOTER_KEYS = footer.HELP
    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close"),
        Binding("j,down", "scroll(1)", "Scroll down", show=False, id="help.down"),
        Binding("k,up", "scroll(-1)", "Scroll up", show=False, id="help.up"),
        Binding("space,pagedown,ctrl+d", "page(1)", "Page down", show=False, id="help.page_down"),
        Binding("b,pageup,ctrl+u", "page(-1)", "Page up", show=False, id="help.page_up"),
        Binding("g,home", "edge(0)", "Top", show=False, id="help.top"),
        Binding("G,end", "edge(1)", "Bottom", show=False, id="help.bottom"),
    ]
    # fits 80x24: the whole width up to 100 columns, the whole height less a margin
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 100%; max-width: 100; height: 100%; max-height: 44;
        border: round $primary; background: $surface; padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll() as vs:
            vs.border_title = "Keys"
            yield Static(self._text(), id="help-text")
        yield ContextFooter()

    def _text(self) -> Content:
        from textual.binding import Binding as B

        app = self.app
        keymap = getattr(app, "_keymap", {}) or {}
        lines = [Content(INTRO)]
        sections = [("Anywhere", app), ("In the list", app.query_one("#letters")),
                    ("In Mailboxes (b shows them below 100 columns)", app.query_one("#mailboxes")),
                    ("Reading a letter", app.query_one("#letter-pane"))]
        sections += [("In the Thread tab", node) for node in app.query("#letter-thread")]  # (once mounted)
        for title, node in sections:  # a heading each: the same j or h does its own thing in each
            found: dict[str, tuple[list[str], str]] = {}
            for key, bindings in node._bindings.key_to_bindings.items():
                for b in bindings:
                    if not b.id:
                        continue
                    keys, _ = found.setdefault(b.id, ([], b.description or b.action))
                    if key not in keys:
                        keys.append(key)
            lines += [Content(""), Content.styled(title, "bold")]
            for bid, (keys, description) in found.items():
                if bid in keymap:
                    keys = [k.strip() for k in keymap[bid].split(",")]
                shown = ", ".join(app.get_key_display(B(k, "")) for k in keys)
                lines.append(Content.assemble((f"  {shown:<12}", "bold $accent"), (f"{description:<30}", ""),
                                              (f" {bid}", "$text-muted")))
        from ..owed_rows import legend

        lines += [Content(""), *legend()]
        lines.append(Content(""))
        lines.append(Content("  : or ctrl+p             command palette (views, writing, themes)"))
        lines.append(Content(""))
        lines.append(Content(_times_line(app)))
        from letterbox_tui.core.settings import user_config_path

        where = _home(str(user_config_path()))
        lines.append(Content.styled(f'  Remap any key with [keymap] in your own {where}: "binding.id" = "keys"', "$text-muted"))
        lines.append(Content.styled("  (a letterbox's shared letterbox-tui.toml never changes what a key does)", "$text-muted"))
        return Content("\n").join(lines)

    def action_scroll(self, lines: int) -> None:
        self.query_one(VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_edge(self, bottom: int) -> None:
        vs = self.query_one(VerticalScroll)
        if bottom:
            vs.scroll_end(animate=False, immediate=True)
        else:
            vs.scroll_home(animate=False, immediate=True)

    def action_page(self, pages: int) -> None:
        vs = self.query_one(VerticalScroll)
        vs.scroll_relative(y=pages * max(1, vs.scrollable_content_region.height - 1), animate=False)

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)


def _home(path: str) -> str:
    import os

    home = os.path.expanduser("~")
    if home and home != "/" and path.startswith(home + os.sep):
        return "~" + path[len(home):]
    return path


def _times_line(app) -> str:
    """Which zone the times on screen are in, and how to change it."""
    from letterbox_tui.core.times import zone_words

    model = getattr(app, "model", None)
    if model is None:
        return "Times are shown in your local time zone (TZ honoured); [time] zone = \"utc\" shows UTC."
    return (f"Times are shown in {zone_words(model.at, model.zone)}; \"today\" (due today, until=today) is its "
            "calendar day. [time] zone = \"utc\" (or a zone name) in your config or the letterbox's "
            "letterbox-tui.toml changes it.")

"""``?``: every key, as the current keymap has it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

INTRO = """Owed & late opens first: tasks still owed, by the seat that owes them, late first.
n and N jump to the next letter to act on: late, unknown, or a task nobody has accepted yet.
Unknown is an answer: the record cannot settle it, and the reason is named.
A banner at the top means the scope is incomplete; press p to see why."""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90; height: 80%; border: round $primary; background: $surface; padding: 1 2;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll() as vs:
            vs.border_title = "Keys"
            yield Static(self._text(), id="help-text")

    def _text(self) -> Content:
        from textual.binding import Binding as B

        app = self.app
        keymap = getattr(app, "_keymap", {}) or {}
        found: dict[str, tuple[list[str], str]] = {}
        nodes = [app, app.query_one("#letters")]
        for node in nodes:
            for key, bindings in node._bindings.key_to_bindings.items():
                for b in bindings:
                    if not b.id:
                        continue
                    keys, _ = found.setdefault(b.id, ([], b.description or b.action))
                    if key not in keys:
                        keys.append(key)
        lines = [Content(INTRO), Content("")]
        for bid, (keys, description) in found.items():
            if bid in keymap:
                keys = [k.strip() for k in keymap[bid].split(",")]
            shown = ", ".join(app.get_key_display(B(k, "")) for k in keys)
            lines.append(Content.assemble((f"  {shown:<22}", "bold $accent"), (f"{description:<20}", ""), (f"  {bid}", "$text-muted")))
        lines.append(Content(""))
        lines.append(Content("  : or ctrl+p             command palette (views, writing, themes)"))
        from letterbox_tui.core.settings import user_config_path

        where = _home(str(user_config_path()))
        lines.append(Content.styled(f'  Remap any key with [keymap] in your own {where}: "binding.id" = "keys"', "$text-muted"))
        lines.append(Content.styled("  (a letterbox's shared letterbox-tui.toml never changes what a key does)", "$text-muted"))
        return Content("\n").join(lines)

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)


def _home(path: str) -> str:
    import os

    home = os.path.expanduser("~")
    if home and home != "/" and path.startswith(home + os.sep):
        return "~" + path[len(home):]
    return path

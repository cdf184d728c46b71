"""The current-truth file from the app (#17): ``W`` writes the digest file an agent loads
(``core.truth_file``), asking for its path once and remembering it in the user's own
settings; the status line of Current truth says whether the last written file is current.

The file is read and written in a thread worker (a slow disk never freezes the app), and
every refusal of the core (a path inside the letterbox, a symlink, a user's own file) is
shown as it is; nothing at the path is ever overwritten that is not a letterbox-tui digest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from letterbox_tui.core.errors import LetterboxError

from .sanitize import clean, cleans, home_path

#: What the path prompt offers the first time.
DEFAULT_NAME = "MEMORY-letters.md"


@dataclass
class TruthFileState(Message):
    """What the worker found or did: ``status`` is written, unchanged, current, stale or
    error; ``detail`` says how (the core's one line)."""

    path: str
    status: str
    detail: str
    wrote: bool


class TruthPathScreen(ModalScreen[str | None]):
    """Asks where the current-truth file lives (Enter keeps it, Esc cancels)."""

    DEFAULT_CSS = """
    TruthPathScreen { align: center middle; }
    TruthPathScreen > Vertical { width: 90%; max-width: 100; height: auto; padding: 1 2;
                                 border: round $primary; background: $surface; }
    TruthPathScreen #truth-error { color: $error; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="truth.cancel")]

    def __init__(self, suggestion: str, root: str) -> None:
        super().__init__()
        self.suggestion = suggestion
        self.root = root

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Content.styled("Write the current-truth file", "bold"))
            yield Static(Content("A Markdown digest with front matter, outside the letterbox; "
                                 "rewritten only when its letters change. Enter writes, Esc cancels."))
            yield Input(self.suggestion, id="truth-path")
            yield Static(Content(""), id="truth-error")

    def on_mount(self) -> None:
        self.query_one("#truth-path", Input).focus()

    @on(Input.Submitted, "#truth-path")
    def _submitted(self, event: Input.Submitted) -> None:
        value = os.path.expanduser(event.value.strip())
        error = self.query_one("#truth-error", Static)
        if not value:
            error.update(Content("A path is needed."))
            return
        from letterbox_tui.core.truth_file import refuse_inside

        try:
            refuse_inside(Path(value), Path(self.root))
        except LetterboxError as exc:
            error.update(clean(str(exc), single_line=True))
            return
        self.dismiss(os.path.abspath(value))

    def action_cancel(self) -> None:
        self.dismiss(None)


class TruthFileMixin:
    """The app's part: ``action_write_truth`` and the status it keeps (``truth_state``)."""

    truth_state: TruthFileState | None = None

    def action_write_truth(self) -> None:
        from letterbox_tui.core.settings import remembered_digest_path

        if self.model is None:  # type: ignore[attr-defined]
            self.notify("Still scanning; try again in a moment.", severity="warning")  # type: ignore[attr-defined]
            return
        path = remembered_digest_path(self.root)  # type: ignore[attr-defined]
        if path:
            self.truth_worker(path, write=True)
            return
        root = Path(self.root)  # type: ignore[attr-defined]
        suggestion = str(root.parent / DEFAULT_NAME) if root.parent != root else DEFAULT_NAME
        self.push_screen(TruthPathScreen(suggestion, self.root), self._truth_path_chosen)  # type: ignore[attr-defined]

    def _truth_path_chosen(self, path: str | None) -> None:
        if path:
            self.truth_worker(path, write=True, remember=True)

    def check_truth_file(self) -> None:
        """After a scan: is the remembered file (if any) still current? Never writes. The
        remembered path is looked up in the worker (it reads the user's config file)."""
        self.truth_worker(None, write=False)

    @work(thread=True, exclusive=True, group="truth-file", exit_on_error=False)
    def truth_worker(self, path: str | None, write: bool, remember: bool = False) -> None:
        from letterbox_tui.core import truth_file
        from letterbox_tui.core.settings import remember_digest_path, remembered_digest_path

        model = self.model  # type: ignore[attr-defined]
        if model is None:
            return
        if path is None:  # the remembered file, if any
            try:
                path = remembered_digest_path(self.root)  # type: ignore[attr-defined]
            except LetterboxError:
                return
            if not path:
                return
        try:
            if write:
                out = truth_file.write_digest(Path(path), Path(model.root), model.res, None,
                                              generated_at=self.clock())  # type: ignore[attr-defined]
                if remember:
                    remember_digest_path(model.root, path)
                # what was just written (or left as it was) is current
                state = TruthFileState(path, out.status, out.detail, True)
            else:
                out = truth_file.check_digest(Path(path), Path(model.root), model.res, None)
                state = TruthFileState(path, out.status, out.detail, False)
        except (LetterboxError, OSError) as exc:
            state = TruthFileState(path, "error", str(exc), write)
        self.post_message(state)  # type: ignore[attr-defined]

    def on_truth_file_state(self, message: TruthFileState) -> None:
        self.truth_state = message
        if message.wrote:
            severity = "error" if message.status == "error" else "information"
            # the detail repeated the status ("written / written"): the path is said instead
            detail = message.detail if message.detail != message.status else home_path(message.path)
            self.notify(clean(detail, single_line=True), title=f"Current-truth file {message.status}",  # type: ignore[attr-defined]
                        severity=severity, timeout=5)
        self._update_status()  # type: ignore[attr-defined]

    def truth_status_text(self) -> Content | None:
        """For the status line of Current truth: the file and whether it is current."""
        s = self.truth_state
        if s is None:
            return Content.styled(" · truth file: none (W writes one)", "$text-muted")
        style = {"current": "$success", "unchanged": "$success", "written": "$success",
                 "stale": "bold $warning"}.get(s.status, "bold $error")
        word = "current" if s.status in ("current", "unchanged", "written") else s.status
        return cleans(Content.styled(" · truth file ", "$text-muted"), (home_path(s.path), ""),
                      Content.styled(f": {word}", style))


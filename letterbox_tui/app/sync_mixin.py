"""A letterbox kept in git, in the app (#16): the banner says when this copy is not known
current, ``S`` syncs it (commit, fetch, rebase, push: ``core.sync_run``) in a thread
worker, and the sidebar's *Not pushed* mailbox lists the letters other machines do not
have yet (``AppModel.unpushed``, taken in the scan worker).

The sync's result or its one-line refusal is a notification; a rescan follows, so what
arrived from the other machines is shown at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import work
from textual.content import Content
from textual.message import Message

from letterbox_tui.core.errors import LetterboxError

from .sanitize import clean


@dataclass
class SyncDone(Message):
    """The sync worker's outcome: ``summary`` when it synced, else ``error``."""

    summary: str
    error: str


def sync_banner(block: dict[str, Any] | None, unpushed: int | None, remotes: list[str] | None = None) -> Content | None:
    """The banner's words for a copy in git that is not known current (behind its upstream
    as last fetched, never fetched, or holding letters not pushed); None when current.
    ``remotes``: the repository's, when it has no upstream (none: S has nowhere to sync)."""
    if not block:
        return None
    from letterbox_tui.core.sync import behind_line

    words = behind_line(block)
    nowhere = block.get("upstream") is None and remotes == []
    if block.get("upstream") is None:
        words = f"local copy has no {'remote' if nowhere else 'upstream'}: nothing is shared yet"
    if unpushed:
        words = (words + "; " if words else "") + f"{unpushed} file{'s' if unpushed != 1 else ''} not pushed"
    if not words:
        return None
    # (the words may begin "local copy …": said once, as the banner's start)
    lead = "local copy"
    rest = words[len(lead):] if words.startswith(lead) else ": " + words
    return Content.assemble(("⇅ Local copy", "bold"), clean(rest, single_line=True), (". ", ""),
                            ("To share it: git remote add origin URL, then S.", "bold") if nowhere
                            else ("Press S to sync.", "bold underline"))


class SyncMixin:
    """``action_sync`` and its worker, for ``LetterboxApp``."""

    syncing = False

    def action_sync(self) -> None:
        if self.syncing:
            self.notify("a sync is already running")  # type: ignore[attr-defined]
            return
        self.syncing = True
        self.notify("syncing…", timeout=2)  # type: ignore[attr-defined]
        self._sync_worker()

    @work(thread=True, exclusive=True, group="sync", exit_on_error=False)
    def _sync_worker(self) -> None:
        from letterbox_tui.core.sync_git import NoRemote
        from letterbox_tui.core.sync_run import sync

        try:
            result = sync(self.root)  # type: ignore[attr-defined]
        except NoRemote:  # (the command line's words name its --remote, which the app has not)
            self.post_message(SyncDone("", "no remote to sync with: add one (git remote add origin URL), "  # type: ignore[attr-defined]
                                           "then press S again"))
            return
        except LetterboxError as exc:
            self.post_message(SyncDone("", str(exc)))  # type: ignore[attr-defined]
            return
        except Exception as exc:  # noqa: BLE001 - shown, never a crash of the app
            self.post_message(SyncDone("", f"{type(exc).__name__}: {exc}"))  # type: ignore[attr-defined]
            return
        n = len(result.committed)
        summary = (f"{n} file{'s' if n != 1 else ''} committed, {result.pulled} from {result.remote}, "
                   f"{'pushed' if result.pushed else 'not pushed'}")
        self.post_message(SyncDone(summary, ""))  # type: ignore[attr-defined]

    def on_sync_done(self, message: SyncDone) -> None:  # by name: a mixin's @on is not collected
        self.syncing = False
        if message.error:
            self.notify(clean(message.error, single_line=True), title="Sync refused", severity="error")  # type: ignore[attr-defined]
        else:
            self.notify(clean(message.summary, single_line=True), title="Synced")  # type: ignore[attr-defined]
        self.start_scan()  # type: ignore[attr-defined]

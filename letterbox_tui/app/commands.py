"""The app's own commands in the command palette (Textual's defaults stay)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

#: (title, action, help) — every command is also reachable by a key (see ``?``).
APP_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("View: Owed & late", "view('owed')", "tasks still owed, late first"),
    ("View: Open disputes", "view('disputes')", "where we still disagree"),
    ("View: Current truth", "view('truth')", "what is in force, and what is in doubt"),
    ("View: All letters", "view('all')", "every readable letter, newest first"),
    ("View: Problems", "view('problems')", "unreadable files, unsupported entries, forks, cycles"),
    ("Record review", "review", "write a review letter to your own seat"),
    ("Compose a letter", "compose", "write a new letter"),
    ("Drafts: restore a kept draft", "drafts", "drafts kept from Esc, a closed app or a crash"),
    ("Reply to the selected letter", "reply", "ack, nack, result or info"),
    ("Chase the selected task", "chase", "ask the seat that owes it how it stands"),
    ("Supersede the selected letter", "supersede", "write a letter that replaces it"),
    ("Mark the selected letter for a dispute", "mark", "mark two or more, then dispute"),
    ("Dispute the marked letters", "dispute", "raise a dispute naming the marked letters"),
    ("Rule on the selected dispute", "rule", "choose the upheld letter"),
    ("Query", "query", "filter with SPEC 6 terms"),
    ("Rescan the letterbox", "rescan", "read every folder again"),
    ("Letter: Body", "show_tab('body')", "the letter's text"),
    ("Letter: Thread", "show_tab('thread')", "the reply tree"),
    ("Letter: Chain", "show_tab('chain')", "the supersession chain"),
    ("Letter: Provenance", "show_tab('provenance')", "file, hash, flags, every derived answer"),
    ("Keys", "help", "every key binding"),
)


class LetterboxCommands(Provider):
    """Views, writing screens and letter tabs."""

    async def _run(self, action: str) -> None:
        await self.app.run_action(action)

    async def discover(self) -> Hits:
        for title, action, help_text in APP_COMMANDS:
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, help_text in APP_COMMANDS:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, action), help=help_text)

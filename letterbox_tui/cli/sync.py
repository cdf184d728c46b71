"""``letterbox-tui sync``: share the letterbox with the other machines through git.

    letterbox-tui sync               # commit what is new, fetch, rebase, push
    letterbox-tui sync --no-push     # the same, without pushing (no remote: commit only)
    letterbox-tui sync --remote R    # another remote than the branch's own
    letterbox-tui sync --restore-letters  # take the remote's changes, but commit back
                                          # the letters it deleted or rewrote

Exit 2 with one line on a conflict (nothing changed: the rebase undoes itself), on an
unreachable remote, a refused login or a remote that gives no answer within
``[git] network_timeout`` (nothing local changed), outside git. A letter another machine
deleted or rewrote in place is never deleted or rewritten here: one line per letter, exit
2, nothing changed, unless ``--restore-letters``. The repository's own hooks run, as git
runs them (``pre-push``, ``reference-transaction``); a reading command runs none.
"""

from __future__ import annotations

import sys
import time
from argparse import Namespace

from letterbox_tui.core import sync as sync_state
from letterbox_tui.core.sync_run import sync

from .common import open_root
from .output import emit_json

#: a fetch's progress is shown once it has taken this long
PROGRESS_AFTER = 1.0


class ProgressLine:
    """git's fetch progress on stderr, once a fetch has run ``PROGRESS_AFTER`` seconds: one
    line rewritten in place on a terminal, else at most one line a second."""

    def __init__(self) -> None:
        self.began = time.monotonic()
        self.last = 0.0
        self.tty = sys.stderr.isatty()
        self.shown = False

    def __call__(self, line: str) -> None:
        now = time.monotonic()
        if now - self.began < PROGRESS_AFTER or (not self.tty and now - self.last < 1.0):
            return
        self.last = now
        self.shown = True
        if self.tty:
            sys.stderr.write("\r\x1b[K" + line[:200])
        else:
            sys.stderr.write(line[:200] + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown and self.tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def cmd_sync(args: Namespace) -> int:
    root = open_root(args)
    progress = ProgressLine()
    try:
        result = sync(root, push=not args.no_push, remote=args.remote, progress=progress,
                      restore_letters=args.restore_letters)
    finally:
        progress.done()
    state = sync_state.status(root)
    if args.json:
        emit_json({**result.to_json(), "sync": state})
        return 0
    parts = [f"{len(result.committed)} file{'s' if len(result.committed) != 1 else ''} committed"]
    if result.pulled:
        parts.append(f"{result.pulled} from {result.remote}")
    if result.rebased:
        parts.append(f"{result.rebased} local commit{'s' if result.rebased != 1 else ''} rebased")
    parts.append("pushed" if result.pushed else "not pushed")
    if result.remote is None:
        print(f"committed on {result.branch}: {parts[0]}; no remote, so nothing fetched or pushed "
              "(git remote add origin URL to share it)")
    else:
        print(f"synced {result.branch} with {result.remote}: " + ", ".join(parts))
    if result.restored:
        print(f"{len(result.restored)} letter(s) the remote deleted or rewrote committed back as they are here")
    if result.waiting:
        print(f"{len(result.waiting)} file(s) wait for a reply or move in progress: next sync")
    if state and state.get("uncommitted"):
        print(f"{state['uncommitted']} file(s) arrived while syncing: next sync")
    return 0

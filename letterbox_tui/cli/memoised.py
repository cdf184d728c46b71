"""``query --json`` and ``exists --json`` through the answer memo (``core.speed.memo``).

A repeated answer on an unchanged letterbox is replayed after a ``stat`` of every letter
file, without loading the reading commands' modules (the resolver, the query evaluator,
the rows): their import alone is a tenth of a warm replay. Anything the memo cannot vouch
for runs ``cli.read`` as usual, which records its answer for next time.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from datetime import datetime, timezone
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from letterbox_tui.core.speed import memo

if TYPE_CHECKING:
    from letterbox_tui.core.model import Snapshot
    from letterbox_tui.core.query import Query
    from letterbox_tui.core.resolve import Resolution


def cmd_query(args: Namespace) -> int:
    return _answer(args, "query")


def cmd_exists(args: Namespace) -> int:
    return _answer(args, "exists")


def _answer(args: Namespace, command: str) -> int:
    memoised = Memoised.open(args, command)
    if memoised is not None and (code := memoised.replay()) is not None:
        return code
    from . import indexed  # the derived index, else from scratch (cli.read)

    return getattr(indexed, f"cmd_{command}")(args, memoised)


class Memoised:
    """One ``--json`` answer's memo: replayed when it can be vouched for, else recorded."""

    @classmethod
    def open(cls, args: Namespace, command: str) -> Memoised | None:
        """None for text output (its width and colours are the terminal's), for a terminal
        (a person reads it: what reaches a terminal is always made afresh by the sanitizing
        printers, never replayed from a file), or when the cache is switched off
        (``LETTERBOX_TUI_NO_CACHE``). Scripts and agents read JSON from a pipe or a file."""
        if not getattr(args, "json", False) or not memo.enabled() or sys.stdout.isatty():
            return None
        if any(_relative(term) for term in args.terms):
            return None  # since=-7d, at=now: the same words ask a new question every moment
        return cls(args, command)

    def __init__(self, args: Namespace, command: str) -> None:
        from .common import open_root, settings_utc

        root = open_root(args)
        self.memo = memo.Memo(str(root), settings_utc(root), getattr(args, "participant", None))
        out = sys.stdout
        self.indent = None  # compact, as on every pipe
        self.encoding = (out.encoding or "utf-8", out.errors or "strict")
        # the scope's sync block (how current a copy kept in git is) can change while no
        # letter file does (a commit, a fetch): the memo is kept per sync state
        form = f"json-{self.encoding[0]}-{self.encoding[1]}-{sync_token(str(root))}"
        self.key = memo.answer_key(command, list(args.terms), form)

    def replay(self) -> int | None:
        """Print the memoised answer with this run's ``scanned_at``; None when there is none."""
        began = datetime.now(timezone.utc)
        hit = self.memo.replay(self.key)
        if hit is None:
            return None
        import json  # (a miss goes on to the index without it: loaded while its proof runs)

        data, code, at, size = hit
        scanned = json.dumps(began.isoformat().replace("+00:00", "Z")).encode(self.encoding[0])
        view = memoryview(data)
        sys.stdout.flush()
        out = sys.stdout.buffer
        out.write(view[:at])
        out.write(scanned)
        out.write(view[at + size :])
        out.flush()
        return code

    def emit(self, obj: dict[str, Any], snapshot: Snapshot, res: Resolution, query: Query) -> int:
        """Print ``obj`` as JSON, then record it (after the answer is out)."""
        from . import output
        from .common import scope_exit

        text = output.dumps_json(obj, indent=self.indent) + "\n"
        sys.stdout.write(text)
        sys.stdout.flush()
        code = scope_exit(snapshot.scope)
        memo.record_after_answer(self.memo, self.key, snapshot, text, self.encoding, code, res.at, query.at is not None)
        return code

    def emit_pieces(self, pieces: Sequence[Callable[[], str]], snapshot: Snapshot, res: Resolution,
                    query: Query) -> int:
        """``emit`` for JSON made in pieces (``read._query_json``): written as they are
        made (a large answer in two halves at once, ``cli.halves``), and recorded after
        the answer, a large one from the pieces made again (the answer is never held whole
        before it is out)."""
        from letterbox_tui.core.speed.after import BACKGROUND_ROWS
        from letterbox_tui.core.speed.ending import ending

        from .common import scope_exit
        from .halves import write_pieces

        if len(snapshot.letters) < BACKGROUND_ROWS:  # small: kept as written (cheaper than making it again)
            text = "".join(piece() for piece in pieces) + "\n"
            sys.stdout.write(text)
        else:
            write_pieces(pieces, fork=ending())
            text = lambda: "".join(piece() for piece in pieces) + "\n"  # noqa: E731
        sys.stdout.flush()
        code = scope_exit(snapshot.scope)
        memo.record_after_answer(self.memo, self.key, snapshot, text, self.encoding, code, res.at,
                                 query.at is not None)
        return code


def sync_token(root: str) -> str:
    """``core.sync.token(core.sync.status(root))``; outside git (no ``.git`` at the root's
    real path or above it, as ``core.sync.find_repo`` looks) without loading core.sync."""
    import os

    cur = os.path.realpath(root)
    while not os.path.lexists(os.path.join(cur, ".git")):
        parent = os.path.dirname(cur)
        if parent == cur:
            return "nogit"
        cur = parent
    from letterbox_tui.core import sync

    return sync.token(sync.status(root))


def _relative(term: str) -> bool:
    """A term whose time is relative to the clock (``since=-7d``, ``at=now``)."""
    from letterbox_tui.core.grammar import RELATIVE_TIME_RE

    for op in ("<=", ">=", "=", "<", ">"):
        key, sep, value = term.partition(op)
        if sep:
            return RELATIVE_TIME_RE.fullmatch(value) is not None
    return False

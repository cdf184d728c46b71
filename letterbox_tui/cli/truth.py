"""The current-truth file and the review habit, as commands: ``digest --write PATH``,
``digest --check PATH`` and ``review --check --every INTERVAL``. The work is the core's
(``core.truth_file``, ``core.review``); this prints it and picks the exit code.
"""

from __future__ import annotations

from argparse import Namespace
from datetime import datetime, timezone
from pathlib import Path

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.model import Snapshot
from letterbox_tui.core.resolve import Resolution

from . import output
from .common import load, scope_exit


def _say(args: Namespace, doc: dict, line: str) -> None:
    if args.json:
        output.emit_json(doc)
    else:
        output.console().print(output.text(line))


def digest_file(args: Namespace, root: Path, snapshot: Snapshot, res: Resolution) -> int:
    """``digest --write PATH`` (exit 0, or 3 on an incomplete scope) and ``digest --check
    PATH`` (0 current, 1 stale, 3 current but over an incomplete scope)."""
    from letterbox_tui.core import truth_file

    scope = snapshot.scope
    if args.write is not None:
        out = truth_file.write_digest(Path(args.write), root, res, args.seat,
                                      generated_at=datetime.now(timezone.utc), max_lines=args.max_lines)
        _say(args, {**out.to_json(), "scope": scope.to_json()}, f"{out.path}: {out.detail}")
        return scope_exit(scope)
    out = truth_file.check_digest(Path(args.check), root, res, args.seat)
    _say(args, {**out.to_json(), "scope": scope.to_json()}, f"{out.path}: {out.detail}")
    if out.status == "stale":
        return 1
    return scope_exit(scope)


def cmd_review_check(args: Namespace) -> int:
    """``review --check --every 1d --as S``: exit 1 when a review is due, else 0."""
    from letterbox_tui.core.review import parse_interval, review_status

    from .common import check_seat, parse_at

    if not args.every:
        raise LetterboxError("review --check needs --every INTERVAL (e.g. --every 1d)")
    every = parse_interval(args.every)
    at = parse_at(args.at)
    _, _, snapshot = load(args)
    check_seat(snapshot, args.as_seat)
    status = review_status(snapshot, args.as_seat, every, at)
    _say(args, {**status.to_json(), "scope": snapshot.scope.to_json()}, status.describe())
    return 1 if status.due else 0

"""The current-truth file and the review habit, as commands: ``digest --write PATH``,
``digest --check PATH`` and ``review --check --every INTERVAL``. The work is the core's
(``core.truth_file``, ``core.review``); this prints it and picks the exit code.
"""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

from letterbox_tui.core.errors import LetterboxError

from . import output
from .common import scope_exit

if TYPE_CHECKING:
    from letterbox_tui.core.resolve import Resolution


def cmd_digest(args: Namespace) -> int:
    """``digest``: with ``--write``/``--check PATH`` the digest file, else as the reading
    command (``cli.read``)."""
    if args.write is None and args.check is None:
        from .read import cmd_digest as derive

        return derive(args)
    from .common import answers, check_seat, parse_at

    at = parse_at(args.at, args=args)
    root, _, res = answers(args, at)
    check_seat(res.snapshot, args.seat)
    return digest_file(args, root, res)


def _say(args: Namespace, doc: dict, line: str) -> None:
    if args.json:
        output.emit_json(doc)
    else:
        output.console().print(output.text(line))


def digest_file(args: Namespace, root: Path, res: Resolution) -> int:
    """``digest --write PATH`` (exit 0, or 3 on an incomplete scope) and ``digest --check
    PATH`` (0 current, 1 stale, 3 current but over an incomplete scope)."""
    from letterbox_tui.core import truth_file

    from .common import now

    scope = res.snapshot.scope
    if args.write is not None:
        out = truth_file.write_digest(Path(args.write), root, res, args.seat,
                                      generated_at=now(), max_lines=args.max_lines)
        code = scope_exit(scope)
        _say(args, {**out.to_json(), "scope": scope.to_json()}, f"{out.path}: {out.detail}")
        return code
    out = truth_file.check_digest(Path(args.check), root, res, args.seat)
    code = 1 if out.status == "stale" else scope_exit(scope)
    _say(args, {**out.to_json(), "scope": scope.to_json()}, f"{out.path}: {out.detail}")
    return code


def cmd_review_check(args: Namespace) -> int:
    """``review --check --every 1d --as S``: exit 1 when a review is due, else 0 (3 on an
    incomplete scope, SPEC 7)."""
    from letterbox_tui.core.review import parse_interval, review_status

    from .common import answers, check_seat, parse_at

    if not args.every:
        raise LetterboxError("review --check needs --every INTERVAL (e.g. --every 1d)")
    every = parse_interval(args.every)
    at = parse_at(args.at, args=args)
    snapshot = answers(args, at)[2].snapshot
    check_seat(snapshot, args.as_seat)
    status = review_status(snapshot, args.as_seat, every, at)
    _say(args, {**status.to_json(), "scope": snapshot.scope.to_json()}, status.describe())
    return 1 if status.due else scope_exit(snapshot.scope)

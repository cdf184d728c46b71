"""The current-truth file and the review habit, as commands: ``digest --write PATH``,
``digest --check PATH`` and ``review --check --every INTERVAL``. The work is the core's
(``core.truth_file``, ``core.review``); this prints it and picks the exit code.
"""

from __future__ import annotations

import json
import os
from argparse import Namespace
from datetime import datetime, timezone
from pathlib import Path

from typing import TYPE_CHECKING

from letterbox_tui.core.errors import LetterboxError

from . import output
from .common import load, scope_exit

if TYPE_CHECKING:
    from letterbox_tui.core.model import Snapshot
    from letterbox_tui.core.resolve import Resolution


def cmd_digest(args: Namespace) -> int:
    """``digest``: with ``--write``/``--check PATH`` first through the answer memo (an
    unchanged letterbox and an untouched file are answered without a scan), else as the
    reading command (``cli.read``)."""
    if args.write is None and args.check is None:
        from .read import cmd_digest as derive

        return derive(args)
    code = replayed(args)
    if code is not None:
        return code
    from letterbox_tui.core.collector import paused_gc
    from letterbox_tui.core.resolve import resolve

    from . import keep
    from .common import check_seat, parse_at

    at = parse_at(args.at)
    with paused_gc():
        _, _, snapshot = load(args)
        check_seat(snapshot, args.seat)
        res = resolve(snapshot, at)
        keep(res)
        return digest_file(args, Path(snapshot.root), snapshot, res)


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
        code = scope_exit(scope)
        _say(args, {**out.to_json(), "scope": scope.to_json()}, f"{out.path}: {out.detail}")
        # what running it again would say: unchanged, and the file current
        again = truth_file.Outcome(out.path, "unchanged", out.source, out.cited,
                                   "unchanged: its letters and answers are as they were")
        current = truth_file.Outcome(out.path, "current", out.source, out.cited, "current")
        _remember(args, snapshot, res, {"write": (again, code), "check": (current, code)})
        return code
    out = truth_file.check_digest(Path(args.check), root, res, args.seat)
    code = 1 if out.status == "stale" else scope_exit(scope)
    _say(args, {**out.to_json(), "scope": scope.to_json()}, f"{out.path}: {out.detail}")
    _remember(args, snapshot, res, {"check": (out, code)})
    return code


# --- an unchanged letterbox and an untouched file: the answer memo vouches -------------
#
# An agent's start-up runs ``digest --write`` every time. When no letter file changed (a
# stat of each, as the answer memo checks), the file at PATH is the very file this command
# left (its device, inode, size, mtime and ctime), and the clock has passed no deadline,
# the answer is what it was: replayed without scanning or resolving anything.

def _file_key(args: Namespace, mode: str) -> str | None:
    from letterbox_tui.core.speed import memo

    path = os.path.abspath(args.write if mode == "write" else args.check)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    stat_sig = f"{st.st_dev}:{st.st_ino}:{st.st_mode}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    argv = [mode, path, args.seat or "", str(args.max_lines), args.at or "", stat_sig]
    return memo.answer_key("digest-file", argv, "json")


def _memo(args: Namespace, root: Path):
    from letterbox_tui.core import sync
    from letterbox_tui.core.settings import load_settings
    from letterbox_tui.core.speed import memo

    settings = load_settings(root)
    m = memo.Memo(str(root), settings.id_time_is_utc, getattr(args, "participant", None))
    # the scope's sync block is part of the answer: kept per sync state
    return m, sync.token(sync.status(root))


def replayed(args: Namespace) -> int | None:
    """The memoised answer of ``digest --write/--check PATH``, printed; None when the memo
    cannot vouch for it (then the command runs as usual)."""
    from letterbox_tui.core.speed import memo

    from .common import open_root

    if not memo.enabled() or (args.at and _relative(args.at)):
        return None
    mode = "write" if args.write is not None else "check"
    key = _file_key(args, mode)
    if key is None:
        return None
    root = open_root(args)
    m, token = _memo(args, root)
    hit = m.replay(f"{key}-{token}")
    if hit is None:
        return None
    data, code, _, _ = hit
    doc = json.loads(bytes(data))  # (the memo hands out a view of its file)
    doc["scope"]["scanned_at"] = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    _say(args, doc, f"{doc['path']}: {doc['detail']}")
    return code


def _remember(args: Namespace, snapshot: Snapshot, res: Resolution, answers: dict) -> None:
    from letterbox_tui.core.speed import memo

    if not memo.enabled() or (args.at and _relative(args.at)):
        return
    m, token = _memo(args, Path(snapshot.root))
    for mode, (out, code) in answers.items():
        key = _file_key(args if mode == ("write" if args.write is not None else "check") else _as(args, mode), mode)
        if key is None:
            continue
        text = output.dumps_json({**out.to_json(), "scope": snapshot.scope.to_json()}, indent=None) + "\n"
        memo.record_after_answer(m, f"{key}-{token}", snapshot, text, ("utf-8", "strict"), code,
                                 res.at, args.at is not None)


def _as(args: Namespace, mode: str) -> Namespace:
    """``args`` as the other mode would give them (after --write, the same file's --check)."""
    path = args.write if args.write is not None else args.check
    return Namespace(**{**vars(args), "write": path if mode == "write" else None,
                        "check": path if mode == "check" else None})


def _relative(value: str) -> bool:
    from letterbox_tui.core.grammar import RELATIVE_TIME_RE

    return RELATIVE_TIME_RE.fullmatch(value) is not None


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

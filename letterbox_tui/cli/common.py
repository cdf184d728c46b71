"""What every command shares: opening the letterbox, its answers (``answers``), the clock
and ``--at``, the seat named, the scope's exit code."""

from __future__ import annotations

import sys
from argparse import Namespace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.root import resolve_root

if TYPE_CHECKING:
    from letterbox_tui.core.model import Scope, Snapshot
    from letterbox_tui.core.resolve import Resolution
    from letterbox_tui.core.settings import Settings


def open_root(args: Namespace) -> Path:
    """The letterbox the command works on (``LetterboxError`` when it is not one). A
    reading command's ``--fetch`` fetches its git upstream first (once)."""
    root = resolve_root(getattr(args, "root", None))
    if getattr(args, "fetch", False):
        from letterbox_tui.core.sync_run import fetch_for_reading
        from letterbox_tui.core.text import clean

        args.fetch = False
        if notice := fetch_for_reading(root):  # the remote gave no answer: the local copy, said so
            print(f"letterbox-tui: {clean(notice, single_line=True)}", file=sys.stderr)
    return root


def answers(args: Namespace, at: datetime) -> tuple[Path, Settings, Resolution]:
    """Every derived answer a reading command gives, at the clock ``at``: the root
    resolved (and fetched with ``--fetch``), its settings read, restricted by
    ``--participant``, from the one entry ``letterbox_tui.store.open_answers``."""
    from letterbox_tui.core.settings import load_settings
    from letterbox_tui.store import open_answers

    root = open_root(args)
    settings = load_settings(root)
    res = open_answers(root, at, participants=getattr(args, "participant", None),
                       id_time_is_utc=settings.id_time_is_utc)
    return root, settings, res


def load(args: Namespace) -> tuple[Path, Settings, Snapshot]:
    """A writing command's letterbox: the root resolved, its settings read and its letters
    scanned (pointers are checked against them), restricted by ``--participant``."""
    from letterbox_tui.core.scan import scan
    from letterbox_tui.core.settings import load_settings

    root = open_root(args)
    settings = load_settings(root)
    snapshot = scan(root, getattr(args, "participant", None), id_time_is_utc=settings.id_time_is_utc)
    return root, settings, snapshot


def scope_exit(scope: Scope) -> int:
    """3 when the scope is incomplete (results are still printed), else 0."""
    return 0 if scope.complete else 3


def zone(args: Namespace):
    """The zone the command's text shows times in, and the calendar of its ``today``
    (``core.times``): the user's ``[time] zone``, else the letterbox's, else the system's
    local zone (None). Read once per command; JSON keeps times as written."""
    cached = getattr(args, "_zone", False)
    if cached is not False:
        return cached
    from letterbox_tui.core.settings import display_zone, load_settings, load_user_settings

    found = display_zone(load_settings(resolve_root(getattr(args, "root", None))), load_user_settings())
    args._zone = found
    return found


def now() -> datetime:
    """The command's clock: every reading command asks it once (a test sets it)."""
    return datetime.now(timezone.utc)


def parse_at(value: str | None, what: str = "--at", args: Namespace | None = None) -> datetime:
    """``--at T``: RFC 3339 with an offset or relative to now (``--at=-1d``, ``today``;
    SPEC 6: ``today`` is the display zone's, ``zone(args)``), default now; else exit 2."""
    from letterbox_tui.core.query import not_a_time, parse_when

    clock = now()
    if value is None:
        return clock
    tz = zone(args) if args is not None and value in ("today", "yesterday") else None
    when = parse_when(value, clock, tz)
    if when is None:
        raise not_a_time(what, value)
    return when


def check_seat(snapshot: Snapshot, seat: str | None) -> None:
    """Exit 2 when ``seat`` is named but is not a seat of the letterbox."""
    if seat is not None and seat not in snapshot.seats:
        from . import output

        raise LetterboxError(f"no seat {output.clean(seat)!r} in {snapshot.root}")

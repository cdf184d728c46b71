"""What every command shares: opening the letterbox, scanning it, ``--at``, the seat named,
the scope's exit code."""

from __future__ import annotations

import os
import sys
from argparse import Namespace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.root import resolve_root
from letterbox_tui.core.speed.ending import keep
from letterbox_tui.core.speed.files import cache_wanted

if TYPE_CHECKING:  # (imported where used: a question the derived index answers needs none)
    from letterbox_tui.core.model import Scope, Snapshot
    from letterbox_tui.core.settings import Settings

#: ``core.settings.SETTINGS_NAME`` (a test checks they agree)
SETTINGS_FILE = "letterbox-tui.toml"


#: called with the snapshot ``load`` made (the derived index builds from it after the answer)
on_loaded = None
#: False: ``load`` scans without the header cache (neither read nor written): a question
#: asked while the index builder writes that cache and the index (``cli.indexed``)
use_header_cache: bool | None = None


def open_root(args: Namespace) -> Path:
    """The letterbox the command works on (``LetterboxError`` when it is not one). A
    reading command's ``--fetch`` fetches its git upstream first (once)."""
    root = resolve_root(getattr(args, "root", None))
    wanted = cache_wanted()
    if not wanted or "letterbox_tui.core.sync" in sys.modules:
        from letterbox_tui.core import sync

        sync.KEEP = wanted  # the kept sync block follows the one cache switch, both ways
    if getattr(args, "fetch", False):
        from letterbox_tui.core.sync_run import fetch_for_reading
        from letterbox_tui.core.text import clean

        args.fetch = False
        if notice := fetch_for_reading(root):  # the remote gave no answer: the local copy, said so
            print(f"letterbox-tui: {clean(notice, single_line=True)}", file=sys.stderr)
    return root


def settings_utc(root: Path | str) -> bool:
    """``load_settings(root).id_time_is_utc``, without loading the settings' modules when
    the letterbox has no settings file (the default: nothing to read, nothing to check)."""
    try:
        os.lstat(os.path.join(os.fspath(root), SETTINGS_FILE))
    except FileNotFoundError:
        return False
    except OSError:
        pass  # load_settings says what is wrong
    from letterbox_tui.core.settings import load_settings

    return load_settings(root).id_time_is_utc


def load(args: Namespace) -> tuple[Path, Settings, Snapshot]:
    """Resolve the root, read its settings and scan it (restricted by --participant)."""
    from letterbox_tui.core.settings import load_settings
    from letterbox_tui.core.speed.choice import scan_letterbox

    root = open_root(args)
    settings = load_settings(root)
    participants = getattr(args, "participant", None)
    # With the derived cache (unless switched off): an unchanged letter costs a stat. A big
    # save is detached (the answer does not wait for it), except before `check --verify`,
    # which rewrites the cache itself and must not race a saver.
    detach = not getattr(args, "verify", False)
    snapshot = scan_letterbox(
        root, participants, id_time_is_utc=settings.id_time_is_utc, background=detach, freeze=True,
        use_cache=use_header_cache,
    )
    keep(snapshot)
    from letterbox_tui.core.sync import status

    snapshot.scope.sync = status(root)  # how current a copy kept in git is (None outside git)
    if on_loaded is not None:
        on_loaded(snapshot)
    return root, settings, snapshot


def scope_exit(scope: Scope) -> int:
    """3 when the scope is incomplete (results are still printed), else 0."""
    return 0 if scope.complete else 3


def parse_at(value: str | None, what: str = "--at") -> datetime:
    """``--at T``: RFC 3339 with an offset or relative to now (``--at=-1d``, ``today``;
    SPEC 6), default now; else exit 2."""
    from letterbox_tui.core.query import parse_when

    now = datetime.now(timezone.utc)
    if value is None:
        return now
    when = parse_when(value, now)
    if when is None:
        raise LetterboxError(f"{what} {value!r}: expected RFC 3339 with an offset (2026-10-04T00:00:00Z) "
                             "or a relative time (now, today, yesterday, -7d, +2d, -36h, -90m)")
    return when


def check_seat(snapshot: Snapshot, seat: str | None) -> None:
    """Exit 2 when ``seat`` is named but is not a seat of the letterbox."""
    if seat is not None and seat not in snapshot.seats:
        from . import output

        raise LetterboxError(f"no seat {output.clean(seat)!r} in {snapshot.root}")

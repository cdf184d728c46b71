"""What every command shares: opening the letterbox, printing JSON, the scope's exit code."""

from __future__ import annotations

import json
import os
import sys
from argparse import Namespace
from pathlib import Path
from typing import Any

from letterbox_tui.cli import keep
from letterbox_tui.core.cache import scan_cached
from letterbox_tui.core.model import Scope, Snapshot
from letterbox_tui.core.root import resolve_root
from letterbox_tui.core.scan import scan
from letterbox_tui.core.settings import Settings, load_settings


def open_root(args: Namespace) -> Path:
    """The letterbox the command works on (``LetterboxError`` when it is not one)."""
    return resolve_root(getattr(args, "root", None))


def load(args: Namespace) -> tuple[Path, Settings, Snapshot]:
    """Resolve the root, read its settings and scan it (restricted by --participant)."""
    root = open_root(args)
    settings = load_settings(root)
    participants = getattr(args, "participant", None)
    if os.environ.get("LETTERBOX_TUI_NO_CACHE"):
        snapshot = scan(root, participants, id_time_is_utc=settings.id_time_is_utc)
    else:
        # The derived cache in the user's cache directory: an unchanged letter costs a stat.
        # A big save is detached (the answer does not wait for it), except before
        # `check --verify`, which rewrites the cache itself and must not race a saver.
        detach = not getattr(args, "verify", False)
        snapshot = scan_cached(
            root, participants, id_time_is_utc=settings.id_time_is_utc, background=detach, freeze=True
        )
    keep(snapshot)
    return root, settings, snapshot


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2))
    sys.stdout.write("\n")


def scope_exit(scope: Scope) -> int:
    """3 when the scope is incomplete (results are still printed), else 0."""
    return 0 if scope.complete else 3

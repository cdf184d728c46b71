"""Which letterbox to open (SPEC 2): --root, LETTERBOX_DIR, the protocol's default-dir file,
then ./.letterbox. Not a letterbox: one line and exit 2 (a ``LetterboxError``)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import LetterboxError
from .grammar import valid_seat

NOT_A_LETTERBOX_HINT = "run 'letterbox-tui init DIR --seats a,b' or 'letterbox-tui demo DIR'"


def default_dir_file() -> Path:
    return Path(os.path.expanduser("~")) / ".config" / "agent-letterbox" / "default-dir"


def candidate_root(root: str | None = None, env: dict[str, str] | None = None) -> tuple[Path, str]:
    """The directory to use and where that choice came from, first rule that applies."""
    env = os.environ if env is None else env
    if root:
        return Path(root), "--root"
    if env.get("LETTERBOX_DIR"):
        return Path(env["LETTERBOX_DIR"]), "LETTERBOX_DIR"
    dd = default_dir_file()
    try:
        text = dd.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        text = ""
    if text:
        return Path(os.path.expanduser(text)), str(dd)
    return Path(".letterbox"), "./.letterbox"


def is_letterbox(path: Path) -> bool:
    """A letterbox holds ``locks/`` or at least one seat directory with an ``inbox/``."""
    try:
        if (path / "locks").is_dir():
            return True
        with os.scandir(path) as it:
            for e in it:
                if valid_seat(e.name) and e.is_dir() and (path / e.name / "inbox").is_dir():
                    return True
    except OSError:
        return False
    return False


def resolve_root(root: str | None = None, env: dict[str, str] | None = None) -> Path:
    """The letterbox to open, or ``LetterboxError`` saying it is not one."""
    path, source = candidate_root(root, env)
    if not is_letterbox(path):
        raise LetterboxError(f"{path} is not a letterbox (from {source}); {NOT_A_LETTERBOX_HINT}")
    return Path(os.path.realpath(path))

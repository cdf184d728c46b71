"""Which letterbox to open (SPEC 2), the protocol's order: --root, LETTERBOX_DIR, the
default-dir file (one location), then ./.letterbox. Not a letterbox: one line and exit 2
(a ``LetterboxError``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import LetterboxError
from .grammar import valid_seat

NOT_A_LETTERBOX_HINT = "run 'letterbox-tui init DIR --seats a,b' or 'letterbox-tui demo DIR'"
_MAX_DEFAULT_DIR = 65536  # bytes: a path, never a stream


def default_dir_file(env: dict[str, str] | None = None) -> Path:
    """``${XDG_CONFIG_HOME:-$HOME/.config}/agent-letterbox/default-dir``: the one place the
    protocol's tools keep the default letterbox (a set but empty XDG_CONFIG_HOME counts as
    unset, as the shell's ``:-`` reads it)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg else Path(env.get("HOME") or os.path.expanduser("~")) / ".config"
    return base / "agent-letterbox" / "default-dir"


def _read_default_dir(path: Path) -> str:
    """The path a default-dir file names, or "" when it is absent, empty or not a small
    regular file (never blocks on a FIFO, never reads a device or a huge file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        data = os.read(fd, _MAX_DEFAULT_DIR + 1)
    except OSError:
        return ""
    finally:
        os.close(fd)
    if len(data) > _MAX_DEFAULT_DIR:
        return ""
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return os.fsdecode(data).strip()


def candidate_root(root: str | None = None, env: dict[str, str] | None = None) -> tuple[Path, str]:
    """The directory to use and where that choice came from, first rule that applies."""
    env = os.environ if env is None else env
    if root == "":  # ``--root "$BOX"`` with BOX unset: never another letterbox in its place
        raise LetterboxError("--root is empty: give the letterbox directory")
    if root:
        return Path(root), "--root"
    if env.get("LETTERBOX_DIR"):
        return Path(env["LETTERBOX_DIR"]), "LETTERBOX_DIR"
    dd = default_dir_file(env)
    text = _read_default_dir(dd)
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
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return False
    return False


def resolve_root(root: str | None = None, env: dict[str, str] | None = None) -> Path:
    """The letterbox to open, or ``LetterboxError`` saying it is not one."""
    path, source = candidate_root(root, env)
    if not is_letterbox(path):
        raise LetterboxError(not_a_letterbox(str(path), source))
    return Path(os.path.realpath(path))


def not_a_letterbox(path: str, source: str) -> str:
    """What a reader says of ``path`` (chosen by ``source``, ``candidate_root``'s) when it is
    not, or no longer, a letterbox."""
    return f"{_shown(path)} is not a letterbox (from {source}); {NOT_A_LETTERBOX_HINT}"


def _shown(text: str) -> str:
    """A path fit for one line on a terminal: control characters and undecodable bytes escaped."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif 0xDC80 <= ord(ch) <= 0xDCFF:  # an undecodable byte, as os.fsdecode keeps it
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)

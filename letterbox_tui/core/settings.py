"""This project's optional settings file, ``<root>/letterbox-tui.toml``.

```toml
theme = "letterbox-dark"

[time]
id_time_is_utc = false   # id prefixes were written in UTC: use them when `sent` is missing

[queries]                # saved queries, shown as mailboxes in the app
"Late requests" = "type=request late=yes"

[keymap]                 # binding id = keys, as Textual's set_keymap takes them
"letter.reply" = "a"
```

Reading uses the standard library's ``tomllib`` (fast, read-only); unreadable settings
are an error with the reason, never silently ignored.
"""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass, field

from .errors import LetterboxError

SETTINGS_NAME = "letterbox-tui.toml"
MAX_SETTINGS = 1 << 20  # bytes; a larger file is refused, never read in part


@dataclass(slots=True, frozen=True)
class Settings:
    id_time_is_utc: bool = False
    theme: str = ""
    queries: dict[str, str] = field(default_factory=dict)
    keymap: dict[str, str] = field(default_factory=dict)


def load_settings(root: str | os.PathLike[str]) -> Settings:
    """Read ``letterbox-tui.toml`` at ``root``; defaults when there is none."""
    path = os.path.join(os.fspath(root), SETTINGS_NAME)
    if "\x00" in path:
        raise LetterboxError(f"cannot read settings {path!r}: a NUL byte in the path")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise LetterboxError(f"cannot read settings {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise LetterboxError(f"cannot read settings {path}: not a regular file")
            raw = fh.read(MAX_SETTINGS + 1)
            if len(raw) > MAX_SETTINGS:
                raise LetterboxError(f"cannot read settings {path}: larger than {MAX_SETTINGS} bytes")
            data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LetterboxError(f"cannot read settings {path}: {exc}") from None
    except RecursionError:
        raise LetterboxError(f"cannot read settings {path}: nested too deeply") from None
    except OSError as exc:
        raise LetterboxError(f"cannot read settings {path}: {exc.strerror}") from None
    time = data.get("time", {})
    queries = data.get("queries", {})
    keymap = data.get("keymap", {})
    theme = data.get("theme", "")
    if not isinstance(time, dict) or not isinstance(time.get("id_time_is_utc", False), bool):
        raise LetterboxError(f"cannot read settings {path}: [time] id_time_is_utc must be true or false")
    for name, table in (("queries", queries), ("keymap", keymap)):
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise LetterboxError(f"cannot read settings {path}: [{name}] values must be strings")
    if not isinstance(theme, str):
        raise LetterboxError(f"cannot read settings {path}: theme must be a string")
    return Settings(bool(time.get("id_time_is_utc", False)), theme, dict(queries), dict(keymap))

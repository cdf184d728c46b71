"""Settings, from two places that are never mixed up.

**The letterbox's own** ``<root>/letterbox-tui.toml`` is shared by every seat (through git
too), so it holds only what describes the letterbox: saved queries, a default theme name and
the time rule. It can never change what a key press does::

    theme = "letterbox-dark"
    human_seats = ["simon"]  # seats a person answers from (owed: waiting-on-human)
    silence = "2d"           # accepted work or a lease quiet for longer: accepted-silent, lease-silent
    due_soon = "24h"         # a deadline this near: due-soon
    [time]
    id_time_is_utc = false   # id prefixes were written in UTC: use them when `sent` is missing
    zone = "local"           # times shown in local time (the default), "utc" or a zone name
    [queries]                # saved queries, shown as mailboxes in the app
    "Late requests" = "type=request late=yes"

**The user's own** ``config.toml`` in the XDG config directory
(``~/.config/letterbox-tui/config.toml``) holds what is the user's alone: key bindings, the
theme they prefer, the digest file they last wrote for each letterbox::

    theme = "letterbox-light"
    [keymap]                 # binding id = keys, as Textual's set_keymap takes them
    "letter.reply" = "a"
    [digest]                 # remembered per letterbox (its real path)
    "/home/me/team-box" = "/home/me/team-box-truth.md"

Both are validated by the pydantic models in ``settings_model`` (one docstring per field),
which report every problem at once, one line each (``SettingsError``). A file whose shape is
plainly right (only known keys, each of the declared type) is taken without importing
pydantic: that import costs a reading command ~70 ms, more than the rest of its start. Keys
the letterbox file may not hold (``[keymap]``) and keys nobody knows are ignored with a
notice. Reading uses the standard library's ``tomllib``; writing a user setting uses
``tomlkit`` so the user's comments stay.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from . import flags as fsflags
from .errors import LetterboxError
from .user_files import replace_atomically

from .settings_types import (  # noqa: F401  (the settings' names, re-exported here)
    KEY_RE,
    LETTERBOX_KEYS,
    MAX_SETTINGS,
    SETTINGS_NAME,
    USER_CONFIG_NAME,
    USER_KEYS,
    USER_ONLY,
    Settings,
    SettingsError,
    UserSettings,
    parse_interval,
)


# --- reading ------------------------------------------------------------------------

def _read_toml(path: str, *, follow: bool) -> dict[str, Any] | None:
    """The TOML table at ``path``, None when there is no file. Never blocks on a FIFO,
    never reads a file in part; ``follow``: a symlink is followed (the user's own dotfiles
    often are one), else refused (the shared letterbox)."""
    if "\x00" in path:
        raise LetterboxError(f"cannot read settings {path!r}: a NUL byte in the path")
    flags = fsflags.READ_FOLLOWING if follow else fsflags.READ
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LetterboxError(f"cannot read settings {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise LetterboxError(f"cannot read settings {path}: not a regular file")
            raw = fh.read(MAX_SETTINGS + 1)
            if len(raw) > MAX_SETTINGS:
                raise LetterboxError(f"cannot read settings {path}: larger than {MAX_SETTINGS} bytes")
            return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LetterboxError(f"cannot read settings {path}: {exc}") from None
    except RecursionError:
        raise LetterboxError(f"cannot read settings {path}: nested too deeply") from None
    except OSError as exc:
        raise LetterboxError(f"cannot read settings {path}: {exc.strerror}") from None


def _plain(data: dict[str, Any], shape: dict[str, Any]) -> bool:
    """True when ``data`` holds only keys of ``shape``, each exactly of its type."""
    for key, value in data.items():
        want = shape.get(key)
        if want is None:
            return False
        if isinstance(want, dict):
            if not isinstance(value, dict):
                return False
            if str in want:  # a table of str -> str
                if not all(type(v) is str for v in value.values()):
                    return False
            elif not _plain(value, want):
                return False
        elif isinstance(want, list):  # a list of one type
            if type(value) is not list or not all(type(v) is want[0] for v in value):
                return False
        elif type(value) is not want:
            return False
    return True


def load_settings(root: str | os.PathLike[str]) -> Settings:
    """Read ``letterbox-tui.toml`` at ``root``; defaults when there is none.
    ``SettingsError`` (every problem) when it cannot be used."""
    path = os.path.join(os.fspath(root), SETTINGS_NAME)
    data = _read_toml(path, follow=False)
    if not data:
        return Settings()
    if _plain(data, LETTERBOX_KEYS):
        time = data.get("time", {})
        silence = parse_interval(data.get("silence", "2d"))
        due_soon = parse_interval(data.get("due_soon", "24h"))
        zone = time.get("zone", "local")
        if silence is not None and due_soon is not None and _zone_ok(zone):
            return Settings(time.get("id_time_is_utc", False), data.get("theme", ""), dict(data.get("queries", {})),
                            human_seats=tuple(data.get("human_seats", ())), silence=silence, due_soon=due_soon,
                            zone=zone)
    from .settings_model import letterbox_settings

    return letterbox_settings(data, path, _home(str(user_config_path())))


def saved_query_problems(settings: Settings) -> list[str]:
    """Each saved query that is not in the query language, one line each (its own message).
    Apart from ``load_settings``, which every command pays for: the app asks this when the
    settings change, and a bad saved query never stops a command that does not run it."""
    import shlex
    from datetime import datetime, timezone

    from .query import parse_query

    clock = datetime(2000, 1, 1, tzinfo=timezone.utc)  # relative times parse against any clock
    out = []
    for name, text in settings.queries.items():
        shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in name)[:40]
        try:
            terms = shlex.split(text)
            if not terms:
                raise LetterboxError("empty query")
            parse_query(terms, clock)
        except ValueError as exc:
            out.append(f'[queries] "{shown}": cannot split: {exc}')
        except LetterboxError as exc:
            out.append(f'[queries] "{shown}": {exc}')
    return out


def user_config_path() -> Path:
    """``config.toml`` in the user's XDG config directory for letterbox-tui."""
    from platformdirs import user_config_path as base

    return base("letterbox-tui") / USER_CONFIG_NAME


def user_state_dir() -> Path:
    """The user's XDG state directory for letterbox-tui (drafts, query history): never the
    letterbox. Not created here."""
    from platformdirs import user_state_path

    return user_state_path("letterbox-tui")


def load_user_settings(path: str | os.PathLike[str] | None = None) -> UserSettings:
    """The user's own settings (default ``user_config_path()``); defaults when there is
    none. ``SettingsError`` (every problem) when it cannot be used."""
    where = os.fspath(path) if path is not None else os.fspath(user_config_path())
    data = _read_toml(where, follow=True)
    if not data:
        return UserSettings(path=where)
    zone = data.get("time", {}).get("zone", "") if isinstance(data.get("time"), dict) else ""
    if _plain(data, USER_KEYS) and _keys_plain(data.get("keymap", {})) and (not zone or _zone_ok(zone)):
        return UserSettings(data.get("theme", ""), dict(data.get("keymap", {})), dict(data.get("digest", {})), (), where,
                            zone=zone)
    from .settings_model import user_settings

    return user_settings(data, where)


def _zone_ok(name: object) -> bool:
    from .times import zone_named

    try:
        zone_named(name)  # type: ignore[arg-type]
    except (ValueError, AttributeError):
        return False  # the model says why
    return True


def display_zone(settings: Settings, user: UserSettings | None = None):
    """The zone times are shown in (``core.times``): the user's ``[time] zone``, else the
    letterbox's, else the system's local zone (None)."""
    from .times import zone_named

    name = (user.zone if user is not None else "") or settings.zone
    try:
        return zone_named(name)
    except ValueError:  # (both files are checked when read: not reached)
        return None


def _keys_plain(keymap: dict[str, str]) -> bool:
    return all(v and all(KEY_RE.fullmatch(k.strip()) for k in v.split(",")) for v in keymap.values())


# --- writing a user setting ----------------------------------------------------------

def read_user_setting(table: str, key: str | None = None, *, path: str | os.PathLike[str] | None = None) -> Any:
    """One user setting: ``read_user_setting("theme")`` or ``read_user_setting("digest",
    root)``; None when it is not set."""
    s = load_user_settings(path)
    value = getattr(s, table, None) if table in USER_KEYS else None
    if key is None or value is None:
        return value or None
    return value.get(key)


def write_user_setting(table: str, key: str | None, value: str | None, *, path: str | os.PathLike[str] | None = None) -> None:
    """Set (or, with ``value`` None, remove) one user setting, keeping the file's comments
    and every other setting. The result is validated before anything is written; the file
    is replaced atomically (a temporary beside it, fsync, rename)."""

    import tomlkit

    where = Path(os.path.realpath(path if path is not None else user_config_path()))
    if table not in USER_KEYS or (key is None) != (not isinstance(USER_KEYS[table], dict)):
        raise LetterboxError(f"no user setting {table!r}" + (f" [{key!r}]" if key else ""))
    raw = ""
    if _read_toml(os.fspath(where), follow=True) is not None:
        raw = where.read_text(encoding="utf-8")
    doc = tomlkit.parse(raw)
    if key is None:
        if value is None:
            doc.pop(table, None)
        else:
            doc[table] = value
    else:
        tab = doc.get(table)
        if tab is None:
            if value is None:
                return
            tab = tomlkit.table()
            doc[table] = tab
        if value is None:
            tab.pop(key, None)
        else:
            tab[key] = value
    text = tomlkit.dumps(doc)
    data = tomllib.loads(text)
    from .settings_model import user_settings

    user_settings(data, os.fspath(where))  # refuses (every problem) before any write
    replace_atomically(where, text, dir_mode=0o777)


def remembered_digest_path(root: str | os.PathLike[str], *, path: str | os.PathLike[str] | None = None) -> str | None:
    """The digest file last written for the letterbox at ``root`` (its real path), or None."""
    return read_user_setting("digest", os.path.realpath(os.fspath(root)), path=path)


def remember_digest_path(root: str | os.PathLike[str], digest: str | os.PathLike[str] | None, *,
                         path: str | os.PathLike[str] | None = None) -> None:
    """Remember (None: forget) the digest file for the letterbox at ``root``."""
    real = os.path.realpath(os.fspath(root))
    write_user_setting("digest", real, None if digest is None else os.path.abspath(os.fspath(digest)), path=path)


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/" and path.startswith(home + os.sep):
        return "~" + path[len(home):]
    return path

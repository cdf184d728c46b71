"""The settings' names and value types, apart from where they are read (``settings``) and
how they are checked (``settings_model``): both import this, neither the other's."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from .errors import LetterboxError

SETTINGS_NAME = "letterbox-tui.toml"
USER_CONFIG_NAME = "config.toml"
MAX_SETTINGS = 1 << 20  # bytes; a larger file is refused, never read in part

#: What the letterbox file may hold, and each key's TOML type (the fast path's test; the
#: pydantic model in ``settings_model`` is the definition and says the same).
LETTERBOX_KEYS: dict[str, Any] = {"theme": str, "time": {"id_time_is_utc": bool, "zone": str}, "queries": {str: str},
                                  "human_seats": [str], "silence": str, "due_soon": str}
USER_KEYS: dict[str, Any] = {"theme": str, "time": {"zone": str}, "keymap": {str: str}, "digest": {str: str}}
#: Tables that change what a key press does (or runs): only ever the user's own.
USER_ONLY = ("keymap", "keys", "bindings", "editor", "pager", "commands")


class SettingsError(LetterboxError):
    """Settings that cannot be used: every problem, one line each (``problems``)."""

    def __init__(self, path: str | os.PathLike[str], problems: list[str]) -> None:
        self.path = os.fspath(path)
        self.problems = list(problems)
        n = len(self.problems)
        head = f"cannot read settings {self.path}: " + (self.problems[0] if n == 1 else f"{n} problems")
        super().__init__(head if n == 1 else head + ": " + "; ".join(self.problems))
        self.head = head

    def __str__(self) -> str:
        if len(self.problems) == 1:
            return self.head
        return self.head + "".join("\n  " + p for p in self.problems)


@dataclass(slots=True, frozen=True)
class Settings:
    """The letterbox's settings. ``notices``: what was ignored, and why (shown by the app)."""

    id_time_is_utc: bool = False
    theme: str = ""
    queries: dict[str, str] = field(default_factory=dict)
    notices: tuple[str, ...] = ()
    network_timeout: float = 30.0  #: seconds a git network step may go without an answer
    #: seats a person answers from (``waiting-on-human``)
    human_seats: tuple[str, ...] = ()
    #: how long an accepted task or a lease holder may say nothing (``accepted-silent``,
    #: ``lease-silent``; chasing again within it asks first)
    silence: timedelta = timedelta(days=2)
    #: how near a deadline makes a task ``due-soon``
    due_soon: timedelta = timedelta(hours=24)
    #: the zone times are shown in (``[time] zone``: local, utc or a zone name)
    zone: str = "local"


@dataclass(slots=True, frozen=True)
class UserSettings:
    """The user's own settings (XDG config). ``digest``: letterbox real path -> digest file."""

    theme: str = ""
    keymap: dict[str, str] = field(default_factory=dict)
    digest: dict[str, str] = field(default_factory=dict)
    notices: tuple[str, ...] = ()
    path: str = ""
    #: the zone times are shown in (``[time] zone``); empty: the letterbox's (else local)
    zone: str = ""


_INTERVAL = re.compile(r"([1-9][0-9]{0,5})([smhdw])")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_interval(text: str) -> timedelta | None:
    """``90m``, ``24h``, ``2d``, ``1w`` (``30s`` too); None when it is not one."""
    m = _INTERVAL.fullmatch(text.strip()) if isinstance(text, str) else None
    return timedelta(**{_UNIT[m.group(2)]: int(m.group(1))}) if m else None


#: One key name in a keymap value (``ctrl+s``, ``question_mark``, ``A``, ``f5``).
KEY_RE = re.compile(r"[A-Za-z0-9_+-]+|[!-~]")

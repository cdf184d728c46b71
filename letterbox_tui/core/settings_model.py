"""The settings' definitions: pydantic models, a docstring on every field (posting's
``config.py`` is the model). ``core.settings`` imports this module only when a file is not
plainly right, or to check a user setting before writing it: pydantic's import is slow.

``letterbox_settings(data, path)`` and ``user_settings(data, path)`` turn a parsed TOML table
into the frozen settings, or raise ``SettingsError`` listing every problem, one line each.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError, field_validator

from .settings_types import KEY_RE, SETTINGS_NAME, USER_ONLY, Settings, SettingsError, UserSettings, parse_interval


class _Table(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)


class TimeRules(_Table):
    """``[time]``: how times are read where a letter's own are missing."""

    id_time_is_utc: StrictBool = False
    """Id prefixes (``YYYY-MM-DDTHHMMSS``) were written in UTC: a letter whose ``sent`` is
    missing or ambiguous takes its time from its id, flagged ``time-from-id`` (never for
    letters to or from ``external-bridge``)."""

    zone: StrictStr = "local"
    """The zone times are shown in, in the app and the CLI's text (JSON stays as written):
    ``"local"`` (the system's, ``TZ`` honoured), ``"utc"``, or a zone name such as
    ``"Europe/Berlin"``. It is also the calendar of "today" (``due today``, ``until=today``)."""

    @field_validator("zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        from .times import zone_named

        zone_named(value)  # ValueError: the one-line problem
        return value


class GitRules(_Table):
    """``[git]``: a letterbox kept in git and shared through it (``sync``)."""

    network_timeout: float = Field(default=30.0, gt=0, le=3600, strict=False)
    """Seconds a network step (``sync``'s fetch and push, a reading command's ``--fetch``)
    may go without an answer from the remote; then it is stopped, with one line, and
    nothing here has changed (``--fetch`` answers from the local copy)."""

    @field_validator("network_timeout", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"must be a number of seconds (got {_show(value)})")
        return value


class LetterboxSettingsModel(_Table):
    """``<root>/letterbox-tui.toml``: shared by every seat, so nothing here may change what a
    key press does."""

    theme: StrictStr = ""
    """The theme the app opens with unless the user's own config or ``--theme`` names one."""

    time: TimeRules = Field(default_factory=TimeRules)
    """Time rules (``[time]``)."""

    queries: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    """Saved queries (``[queries]``): a name, then query terms as ``letterbox-tui query``
    takes them; each is a mailbox in the app."""

    git: GitRules = Field(default_factory=GitRules)
    """A letterbox kept in git (``[git]``)."""

    human_seats: list[StrictStr] = Field(default_factory=list)
    """Seats a person answers from (e.g. ``["simon"]``): what such a seat owes is
    ``waiting-on-human`` in Owed & late, kept apart from agents that are merely idle."""

    silence: StrictStr = "2d"
    """How long accepted work may go without a progress note or reply, and a lease holder
    without writing anything, before ``owed`` marks it ``accepted-silent`` / ``lease-silent``
    (a count and a unit: ``90m``, ``36h``, ``2d``, ``1w``); chasing twice within it asks first."""

    due_soon: StrictStr = "24h"
    """How near a deadline makes an owed task ``due-soon`` (``12h``, ``24h``, ``2d``)."""

    @field_validator("silence", "due_soon")
    @classmethod
    def _interval(cls, value: str) -> str:
        if parse_interval(value) is None:
            raise ValueError(f"expected a count of 1 or more and a unit, e.g. 90m, 24h, 2d or 1w (got {_show(value)})")
        return value


class UserTimeRules(_Table):
    """``[time]`` in the user's own config: how times are shown to them."""

    zone: StrictStr = ""
    """The zone times are shown in (``"local"``, ``"utc"`` or a zone name); it beats the
    letterbox's ``[time] zone``. Empty: the letterbox's, else local time."""

    @field_validator("zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        from .times import zone_named

        if value:
            zone_named(value)
        return value


class UserSettingsModel(_Table):
    """The user's own ``config.toml`` (XDG config directory)."""

    theme: StrictStr = ""
    """The theme the app opens with (``--theme`` still wins)."""

    time: UserTimeRules = Field(default_factory=UserTimeRules)
    """How times are shown (``[time]``)."""

    keymap: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    """Key bindings (``[keymap]``): a binding id (see ``?`` in the app), then the keys, comma
    separated, as Textual names them (``ctrl+s``, ``question_mark``, ``f5``)."""

    digest: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    """The digest file last written for each letterbox (``[digest]``): the letterbox's real
    path, then the file's."""

    @field_validator("keymap")
    @classmethod
    def _keys(cls, value: dict[str, str]) -> dict[str, str]:
        bad = [bid for bid, keys in value.items()
               if not keys or not all(KEY_RE.fullmatch(k.strip()) for k in keys.split(","))]
        if bad:
            raise ValueError("keys are key names separated by commas (e.g. \"ctrl+s,f2\"); not so for "
                             + ", ".join(_show(b) for b in bad))
        return value


_TABLES = ("time", "queries", "keymap", "digest", "git")
_TYPES = {"bool_type": "must be true or false", "string_type": "must be a string", "list_type": "must be a list",
          "dict_type": "must be a table", "model_type": "must be a table"}


def _show(value: Any, limit: int = 40) -> str:
    """A key or value for a one-line message: quoted, no control or format character."""
    text = value if isinstance(value, str) else repr(value)
    text = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f'"{text}"' if isinstance(value, str) else text


def _where(loc: tuple[Any, ...]) -> str:
    if not loc:
        return "the file"
    head = str(loc[0])
    out = f"[{head}]" if head in _TABLES else _show(head).strip('"')
    for part in loc[1:]:
        out += " " + (str(part) if isinstance(part, str) and part.isidentifier() and head == "time" else _show(part))
    return out


def _problems(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if p != "[key]")
        what = _TYPES.get(err["type"])
        if what is None:
            what = str(err["msg"]).removeprefix("Value error, ")
        got = err.get("input")
        shown = f" (got {_show(got)})" if what in _TYPES.values() and not isinstance(got, dict) else ""
        out.append(f"{_where(loc)}: {what}{shown}")
    return out


def _extras(model: BaseModel, prefix: str, user_only_refused: bool, where: str) -> list[str]:
    notices = []
    for key in model.model_extra or {}:
        if user_only_refused and not prefix and key in USER_ONLY:
            notices.append(f"{SETTINGS_NAME}: [{_show(key).strip(chr(34))}] ignored: key bindings and commands "
                           f"come only from your own config ({where})")
        else:
            notices.append(f"unknown setting {prefix}{_show(key)} ignored")
    for name, value in model:
        if isinstance(value, BaseModel):
            notices += _extras(value, f"[{name}] ", False, where)
    return notices


def letterbox_settings(data: dict[str, Any], path: str, user_config: str = "~/.config/letterbox-tui/config.toml") -> Settings:
    """The letterbox's settings from its parsed file, or ``SettingsError`` (every problem).
    ``user_config``: where the user's own config is, for the notice about keys."""
    try:
        m = LetterboxSettingsModel.model_validate(data)
    except ValidationError as exc:
        raise SettingsError(path, _problems(exc)) from None
    return Settings(m.time.id_time_is_utc, m.theme, dict(m.queries), tuple(_extras(m, "", True, user_config)),
                    network_timeout=float(m.git.network_timeout),
                    human_seats=tuple(m.human_seats), silence=parse_interval(m.silence),
                    due_soon=parse_interval(m.due_soon), zone=m.time.zone)


def user_settings(data: dict[str, Any], path: str) -> UserSettings:
    """The user's settings from their parsed file, or ``SettingsError`` (every problem)."""
    try:
        m = UserSettingsModel.model_validate(data)
    except ValidationError as exc:
        raise SettingsError(path, _problems(exc)) from None
    return UserSettings(m.theme, dict(m.keymap), dict(m.digest), tuple(_extras(m, "", False, "")), path,
                        zone=m.time.zone)

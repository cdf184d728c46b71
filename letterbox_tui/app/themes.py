"""Themes are TOML files: the shipped ``themes/`` folder and the user's own.

Each file holds a ``textual.theme.Theme``'s fields at the top level and the app's own
colours (``$late``, ``$unknown`` ...) in ``[variables]``. Every colour is checked with
``Color.parse`` when the file is loaded, because a bad colour would otherwise crash at
paint time; every failure across every file is collected and reported at once, and a
theme that fails is skipped (the app falls back to the built-in ``letterbox-dark``).
"""

from __future__ import annotations

import os

from letterbox_tui.core import flags as fsflags
import sys
import tomllib  # (reading only: ~5 ms less of the app's start than tomlkit)
from dataclasses import dataclass, field
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

#: The app's own theme variables and their defaults (used when a theme leaves one out).
APP_VARIABLES: dict[str, str] = {
    "late": "#FF6B6B",
    "due-soon": "#E5C07B",
    "unknown": "#C792EA",
    "closed": "#7A8494",
    "current": "#7FB77E",
    "superseded": "#7A8494",
    "dispute": "#F78C6C",
    "banner-background": "#5C1F24",
    "banner-foreground": "#FFE3E3",
}

COLOUR_FIELDS = (
    "primary", "secondary", "warning", "error", "success", "accent",
    "foreground", "background", "surface", "panel", "boost",
)
DEFAULT_THEME = "letterbox-dark"

#: The built-in fallback, identical to themes/letterbox-dark.toml.
BUILTIN = Theme(
    name=DEFAULT_THEME,
    dark=True,
    primary="#5FA8D3",
    secondary="#2E5A78",
    accent="#E0A458",
    warning="#E5C07B",
    error="#E06C75",
    success="#7FB77E",
    foreground="#D8DEE9",
    background="#15191F",
    surface="#1C2129",
    panel="#252C37",
    variables=dict(APP_VARIABLES),
)


@dataclass
class LoadedThemes:
    themes: dict[str, Theme] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def shipped_themes_dir() -> Path:
    """The shipped ``themes/``: beside the package in a source tree or editable install,
    else where ``pip install .`` put it (``<prefix>/share/letterbox-tui/themes``)."""
    source = Path(__file__).resolve().parent.parent.parent / "themes"
    if source.is_dir():
        return source
    return Path(sys.prefix) / "share" / "letterbox-tui" / "themes"


def user_themes_dir() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("letterbox-tui")) / "themes"


def _check_colour(where: str, key: str, value: object, errors: list[str]) -> bool:
    if not isinstance(value, str):
        errors.append(f"{where}: {key} must be a colour string")
        return False
    try:
        Color.parse(value)
    except ColorParseError:
        errors.append(f"{where}: {key} = {value!r} is not a colour")
        return False
    return True


def parse_theme(text: str, where: str, errors: list[str]) -> Theme | None:
    """One theme from TOML text, or None with every problem appended to ``errors``."""
    try:
        doc = tomllib.loads(text)
    except Exception as exc:  # noqa: BLE001 - tomllib.TOMLDecodeError, or a text it cannot take
        errors.append(f"{where}: not valid TOML ({str(exc).splitlines()[0]})")
        return None
    before = len(errors)
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.append(f"{where}: name is missing")
    if "primary" not in doc:
        errors.append(f"{where}: primary is missing")
    kwargs: dict[str, object] = {}
    for key, value in doc.items():
        if key in COLOUR_FIELDS:
            if _check_colour(where, key, value, errors):
                kwargs[key] = value
        elif key == "dark":
            if not isinstance(value, bool):
                errors.append(f"{where}: dark must be true or false")
            kwargs[key] = value
        elif key in ("luminosity_spread", "text_alpha"):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                errors.append(f"{where}: {key} must be a number")
            kwargs[key] = value
        elif key == "variables":
            if not isinstance(value, dict):
                errors.append(f"{where}: [variables] must be a table")
                continue
            variables = dict(APP_VARIABLES)
            for vkey, vvalue in value.items():
                if vkey in APP_VARIABLES and not _check_colour(where, f"variables.{vkey}", vvalue, errors):
                    continue
                if not isinstance(vvalue, str):
                    errors.append(f"{where}: variables.{vkey} must be a string")
                    continue
                variables[str(vkey)] = vvalue
            kwargs["variables"] = variables
        elif key == "name":
            kwargs[key] = value
        else:
            errors.append(f"{where}: unknown key {key!r}")
    if len(errors) > before:
        return None
    kwargs.setdefault("variables", dict(APP_VARIABLES))
    return Theme(**kwargs)  # type: ignore[arg-type]


def load_themes(*dirs: Path | None) -> LoadedThemes:
    """Every ``*.toml`` theme in ``dirs`` (later folders override earlier names)."""
    out = LoadedThemes()
    for folder in dirs:
        if folder is None:
            continue
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".toml"))
        except FileNotFoundError:
            continue
        except OSError as exc:
            out.errors.append(f"{folder}: cannot list themes ({exc.strerror})")
            continue
        for n in names:
            path = Path(folder) / n
            try:
                text = _read_small(path)
            except (OSError, UnicodeError) as exc:
                out.errors.append(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})")
                continue
            theme = parse_theme(text, str(path), out.errors)
            if theme is not None:
                out.themes[theme.name] = theme
    return out


def _read_small(path: Path, limit: int = 1 << 16) -> str:
    fd = os.open(path, fsflags.READ)
    try:
        return os.read(fd, limit).decode("utf-8")
    finally:
        os.close(fd)

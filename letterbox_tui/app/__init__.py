"""The terminal app (SPEC 8). ``run_app`` is what ``letterbox-tui`` with no command calls.

``make_app`` is the factory tests and the screenshot script use: it takes the clock
(``now``) so what the app shows is deterministic.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from letterbox_tui.core.errors import LetterboxError


def make_app(
    root: str | os.PathLike[str] | None = None,
    participants: Iterable[str] | None = None,
    view: str | None = None,
    letter: str | None = None,
    theme: str | None = None,
    *,
    now=None,
    poll_interval: float | None = 2.0,
    theme_dirs=None,
    user_settings=None,
):
    """Resolve the root (``LetterboxError`` when it is not a letterbox), read its settings
    and the user's own (``user_settings``: given instead, e.g. ``UserSettings()`` for a
    run that must not read them), and build the app without running it."""
    from letterbox_tui.core.root import resolve_root
    from letterbox_tui.core.settings import load_settings, load_user_settings

    from .app import LetterboxApp

    resolved = resolve_root(os.fspath(root) if root is not None else None)
    settings = load_settings(resolved)
    if user_settings is None:  # keys and theme: the user's own, never the letterbox's
        user_settings = load_user_settings()
    if participants:
        from letterbox_tui.core.grammar import valid_seat

        for seat in participants:
            if not valid_seat(seat) or not os.path.isdir(os.path.join(resolved, seat)):
                raise LetterboxError(f"no seat {seat!r} in {resolved}")
    app = LetterboxApp(
        resolved, participants, view=view, letter=letter, theme=theme, now=now,
        settings=settings, user_settings=user_settings, poll_interval=poll_interval, theme_dirs=theme_dirs,
    )
    if theme and theme not in app.available_themes:
        # a name typed on the command line is bad input: say so before the app starts
        # (an unknown theme in the settings file falls back, with a notice in the app)
        names = ", ".join(sorted(n for n in app.available_themes if n.startswith("letterbox")))
        raise LetterboxError(f"no theme named {theme!r} (letterbox themes: {names})")
    return app


def run_app(
    root: str | None = None,
    participants: Iterable[str] | None = None,
    view: str | None = None,
    letter: str | None = None,
    theme: str | None = None,
) -> int:
    """Open the app. A letterbox that cannot be opened is one line and exit 2, before the
    app starts (``LetterboxError`` propagates to the CLI, which prints it)."""
    app = make_app(root, participants, view, letter, theme)
    result = app.run()
    if app.return_code not in (None, 0):
        return int(app.return_code)
    return int(result or 0)


__all__ = ["make_app", "run_app"]

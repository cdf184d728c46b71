"""The body in ``$VISUAL`` / ``$EDITOR``: a private temporary file (never in the letterbox),
removed afterwards."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile

from ..sanitize import clean


def edit_body(screen, text: str) -> str | None:
    """The body as the editor left it, or None (unchanged; the reason is notified)."""
    from textual.app import SuspendNotSupported

    command = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
    fd, path = tempfile.mkstemp(prefix="letterbox-tui-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            with screen.app.suspend():
                code = subprocess.call(command + [path])
        except SuspendNotSupported:
            if not screen.app.is_headless:
                screen.notify("This terminal cannot hand over to an editor.", severity="warning")
                return None
            code = subprocess.call(command + [path], stdin=subprocess.DEVNULL)
        if code != 0:
            screen.notify(f"The editor exited with status {code}; the body is unchanged.", severity="warning")
            return None
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(1 << 20)
    except OSError as exc:
        screen.notify(clean(f"Could not run the editor: {exc.strerror or exc}"), severity="error")
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return None

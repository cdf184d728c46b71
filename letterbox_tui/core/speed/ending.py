"""A reading command's quick end: what it built is kept alive until the process ends, and
the process then ends at once (``os._exit``) once its output is flushed, instead of
freeing a hundred thousand letters object by object. The command line decides which
commands end this way (``cli.run``); in process (the tests, the app) nothing is kept."""

from __future__ import annotations

import gc
import os
import sys
from typing import NoReturn

#: what the running command built, kept until the process ends; None: not ending quickly
_kept: list | None = None


def start() -> None:
    """From now on ``keep`` keeps, and the process will end with ``end``. The cyclic
    collector is switched off: it would only make a last full pass over what is about to
    be dropped (about 0.1 s at 100,000 letters)."""
    global _kept
    _kept = []
    gc.disable()


def ending() -> bool:
    """True once ``start`` was called: this process ends right after the command."""
    return _kept is not None


def keep(*objects: object) -> None:
    """Keep ``objects`` alive until the process ends, when it ends quickly (``start``): at
    100,000 letters freeing the scan, the resolution and the rows object by object costs a
    third of a second after the answer is out. Otherwise does nothing."""
    if _kept is not None:
        _kept.append(objects)


def finish_after_answer() -> None:
    """Run the work left until after the answer (``after.run_after_answer``), when any was
    left: detached and not waited for when this process ends right after, and what it
    holds kept rather than freed first."""
    after = sys.modules.get("letterbox_tui.core.speed.after")
    if after is not None:
        sys.stdout.flush()
        keep(after.run_after_answer(ending=ending()))


def end(code: int, prog: str) -> NoReturn:
    """Flush the standard streams and end the process at once with ``code`` (nothing at
    exit is skipped: reading commands register no exit handlers and leave no file of
    theirs unclosed). A reader that went away is no error; another failure to write the
    output is one line on stderr and exit 2."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # whoever read our output stopped reading
        pass
    except OSError as exc:
        print(f"{prog}: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = code or 2
    try:
        sys.stderr.flush()
    except (OSError, AttributeError):  # AttributeError: started with stderr closed (2>&-)
        pass
    os._exit(code)

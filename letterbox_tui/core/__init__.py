"""The core library: no Textual import, ever. Letters, scanning, resolving, querying, writing.

The names below are loaded on first use (``letterbox_tui.core.Letter``), so importing one
core module does not import the rest. ``scan`` is not among them: ``letterbox_tui.core.scan``
is the module (``from letterbox_tui.core.scan import scan`` is the function)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "LetterboxError": "errors",
    "Answer": "model", "Letter": "model", "Reason": "model", "Scope": "model", "Snapshot": "model",
    "Unreadable": "model", "Unsupported": "model",
    "resolve_root": "root",
    "Settings": "settings", "load_settings": "settings",
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:
    from .errors import LetterboxError
    from .model import Answer, Letter, Reason, Scope, Snapshot, Unreadable, Unsupported
    from .root import resolve_root
    from .settings import Settings, load_settings


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

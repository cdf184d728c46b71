"""The core library: no Textual import, ever. Letters, scanning, resolving, querying, writing."""

from .errors import LetterboxError
from .model import Answer, Letter, Reason, Scope, Snapshot, Unreadable, Unsupported
from .root import resolve_root
from .scan import scan
from .settings import Settings, load_settings

__all__ = [
    "Answer", "Letter", "LetterboxError", "Reason", "Scope", "Settings", "Snapshot",
    "Unreadable", "Unsupported", "load_settings", "resolve_root", "scan",
]

"""Drafts of letters not yet sent, kept in the user's XDG state directory, never in the
letterbox (a draft is private until it is sent through the write gate).

``DraftStore(root)`` keeps one small JSON file per draft under
``<state>/drafts/<hash of the letterbox's real path>/``. A form saves its draft as it is
typed, so a draft survives the app being closed or killed; sending removes it; the next
start offers the kept drafts back. Files are written to a temporary beside them and
renamed, so a draft is whole or absent; an unreadable draft file is skipped, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import os

from . import flags as fsflags
import secrets
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .user_files import replace_atomically

#: a draft file larger than this is not a draft this project wrote (skipped)
MAX_DRAFT = 4 << 20


@dataclass(slots=True)
class KeptDraft:
    """What a form held: its ``kind`` (compose, reply, ...), the letter it was about
    (``target``, an id) and the marked letters (a dispute's), and every field's value."""

    kind: str
    fields: dict[str, str | bool] = field(default_factory=dict)
    target: str = ""
    marked: list[str] = field(default_factory=list)
    saved_at: str = ""
    name: str = ""

    def summary(self) -> str:
        """One line: what the draft is, for the offer to restore it."""
        what = {"compose": "a new letter", "reply": "a reply", "supersede": "a superseding letter",
                "dispute": "a dispute", "rule": "a ruling", "review": "a review"}.get(self.kind, self.kind)
        about = f" to {self.target}" if self.target and self.kind in ("reply", "rule") else (
            f" of {self.target}" if self.target else "")
        slug = self.fields.get("slug") or ""
        body = str(self.fields.get("body") or "").strip().splitlines()
        first = body[0][:60] if body else ""
        return f"{what}{about}" + (f" ({slug})" if slug else "") + (f": “{first}”" if first else "")


def state_dir() -> Path:
    from .settings import user_state_dir

    return user_state_dir()


class DraftStore:
    """The kept drafts of one letterbox (by its real path)."""

    def __init__(self, root: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> None:
        real = os.path.realpath(os.fspath(root))
        key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self.dir = Path(base if base is not None else state_dir()) / "drafts" / key
        self.root = real

    @staticmethod
    def new_name() -> str:
        return secrets.token_hex(8)

    def save(self, draft: KeptDraft) -> None:
        """Write ``draft`` (its ``name`` chosen if empty), whole or not at all."""
        if not draft.name:
            draft.name = self.new_name()
        data = json.dumps({"root": self.root, **asdict(draft)}, ensure_ascii=False, indent=1)
        replace_atomically(self.dir / f"{draft.name}.json", data)

    def discard(self, name: str) -> None:
        if name and all(c in "0123456789abcdef" for c in name):
            try:
                os.unlink(self.dir / f"{name}.json")
            except FileNotFoundError:
                pass

    def kept(self) -> list[KeptDraft]:
        """Every readable kept draft, newest first."""
        out = []
        try:
            names = [e.name for e in os.scandir(self.dir) if e.name.endswith(".json") and not e.name.startswith(".")]
        except OSError:
            return []
        for name in names:
            draft = self._read(self.dir / name)
            if draft is not None:
                out.append(draft)
        out.sort(key=lambda d: d.saved_at, reverse=True)
        return out

    def _read(self, path: Path) -> KeptDraft | None:
        try:
            fd = os.open(path, fsflags.READ)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    return None
                raw = fh.read(MAX_DRAFT + 1)
            if len(raw) > MAX_DRAFT:
                return None
            data = json.loads(raw.decode("utf-8"))
            fields = {str(k): v for k, v in data.get("fields", {}).items() if isinstance(v, (str, bool))}
            return KeptDraft(str(data["kind"]), fields, str(data.get("target", "")),
                             [str(x) for x in data.get("marked", [])], str(data.get("saved_at", "")), path.stem)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None

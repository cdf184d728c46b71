"""One letter as the faces show it: ``show`` (headers, answers with reasons, head, the
holder's progress note, provenance, body), ``current`` (chain, heads, head) and
``answered`` (terminal replies, acks, progress), each a SPEC 7 document (``core.schema``).
"""

from __future__ import annotations

from typing import Any

from ..errors import LetterboxError
from ..model import Letter
from ..references import resolve_reference, thread_reference
from ..resolve import Resolution
from ..rows import answers, row
from ..text import clean
from ..files import HASH_LIMIT
from .letterfile import BODY_MAX, read_letter


def copies(res: Resolution, letter_id: str) -> list[Letter]:
    """Every readable copy of the letter ``letter_id`` refers to (a full id, a display id,
    a token or a path: ``core.references``) by path, or ``LetterboxError`` naming the
    scope's completeness (SPEC 7: "no letter <id> in scope")."""
    found_id = resolve_reference(res.snapshot, letter_id)
    found = res.by_id(found_id) if found_id is not None else []
    if not found:
        raise LetterboxError(f"no letter {clean(letter_id, single_line=True)} in scope ({_done(res)})")
    return sorted(found, key=lambda x: x.path)


def _done(res: Resolution) -> str:
    scope = res.snapshot.scope
    return "complete scope" if scope.complete else "incomplete scope: " + ", ".join(scope.why_incomplete())


def thread_of(res: Resolution, reference: str) -> str:
    """The thread ``thread`` shows: that of the letter ``reference`` refers to, or a free
    thread label (``core.references.thread_reference``); else ``LetterboxError``."""
    found = thread_reference(res.snapshot, reference)
    if found is None:
        raise LetterboxError(f"no letter {clean(reference, single_line=True)} in scope ({_done(res)})")
    return found


def _progress(res: Resolution, letter: Letter) -> dict[str, Any] | None:
    from ..sidecar import progress_of

    progress = progress_of(str(res.snapshot.root), letter, res.snapshot)
    return None if progress is None else progress.to_json()


def _heads(res: Resolution, letter: Letter) -> list[str]:
    return list(dict.fromkeys(h.id for h in res.heads(letter)))


def shown(res: Resolution, letter: Letter, limit: int = BODY_MAX) -> dict[str, Any]:
    """One copy as ``show --json`` lists it (its file read through ``read_letter``)."""
    from ..sync import added

    root = str(res.snapshot.root)
    found = answers(letter, res)
    head = res.head(letter)
    # a huge file: the sha256 of a bounded prefix, and said so (sha256_bytes < size)
    f = read_letter(root, letter, limit, hash_limit=HASH_LIMIT, prefix=True)
    return {
        "id": letter.id,
        "headers": dict(letter.fields),
        "answers": {name: {"value": a.value, "reasons": [r.to_json() for r in a.reasons]} for name, a in found.items()},
        "head": head.id if head is not None else None,
        "heads": _heads(res, letter),
        "progress": _progress(res, letter),
        "provenance": {
            "path": letter.path,
            "seat": letter.seat,
            "folder": letter.folder,
            "sha256": f.sha256,
            "sha256_bytes": f.sha256_bytes,
            "size": f.size,
            "changed_since_scan": f.changed,
            "legacy": list(letter.flags),
            "malformed": list(letter.malformed),
            "error": f.error,
            # a letterbox in git: the commit that brought the file (one git log; null outside git)
            "history": added(root, letter.path),
        },
        "body": f.body,
        "body_truncated": f.body_truncated,
    }


def show_view(res: Resolution, letter_id: str, limit: int = BODY_MAX) -> dict[str, Any]:
    """The ``show --json`` document: every copy of the id."""
    return {"id": letter_id, "letters": [shown(res, x, limit) for x in copies(res, letter_id)],
            "scope": res.snapshot.scope.to_json()}


def current_view(res: Resolution, letter_id: str) -> dict[str, Any]:
    """The ``current --json`` document (of the id's first copy by path)."""
    letter = copies(res, letter_id)[0]
    ans = res.current(letter)
    head = res.head(letter)
    return {
        "id": letter.id,
        "current": ans.value,
        "head": head.id if head is not None else None,
        "heads": _heads(res, letter),
        "chain": list(dict.fromkeys(x.id for x in res.chain(letter))),
        "reasons": [r.to_json() for r in ans.reasons],
        "scope": res.snapshot.scope.to_json(),
    }


def answered_view(res: Resolution, letter_id: str) -> dict[str, Any]:
    """The ``answered --json`` document (of the id's first copy by path)."""
    letter = copies(res, letter_id)[0]
    ans = res.answered(letter)
    return {
        "id": letter.id,
        "answered": ans.value,
        "replies": [row(x, res) for x in res.replies(letter)],
        "acks": [row(x, res) for x in res.acks(letter)],
        "progress": _progress(res, letter),
        "reasons": [r.to_json() for r in ans.reasons],
        "scope": res.snapshot.scope.to_json(),
    }

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
        raise LetterboxError(f"no letter {_said(letter_id)} in scope ({_done(res)})")
    return sorted(found, key=lambda x: x.path)


def _said(reference: str) -> str:
    """A reference in a message: sanitized, and an empty one shown as such."""
    return clean(reference, single_line=True) if reference.strip() else repr(reference)


def _done(res: Resolution) -> str:
    scope = res.snapshot.scope
    return "complete scope" if scope.complete else "incomplete scope: " + ", ".join(scope.why_incomplete())


def thread_of(res: Resolution, reference: str) -> str:
    """The thread ``thread`` shows: that of the letter ``reference`` refers to, or a free
    thread label (``core.references.thread_reference``); else ``LetterboxError``."""
    found = thread_reference(res.snapshot, reference)
    if found is None:
        raise LetterboxError(f"no letter {_said(reference)} in scope ({_done(res)})")
    return found


def _progress(res: Resolution, letter: Letter) -> dict[str, Any] | None:
    from ..sidecar import progress_of

    progress = progress_of(str(res.snapshot.root), letter, res.snapshot)
    return None if progress is None else progress.to_json()


def disputed_by(res: Resolution, letter: Letter) -> list[tuple[Letter, list[Letter]]]:
    """Every readable dispute naming ``letter`` in its ``disputes``, with the readable
    rulings on it, sorted (what the letter itself never says: neither disputed letter is
    edited)."""
    return [(d, res.rulings(d)) for d in res.disputes_of(letter)]


def dispute_line(dispute_id: str, ruled_by: list[str]) -> str:
    """``disputed by <id> / ruled by <id>, ...`` (``open`` while no ruling names it), as
    ``show`` and the letter pane say it."""
    if not ruled_by:
        return f"disputed by {dispute_id} / open: no ruling yet"
    return f"disputed by {dispute_id} / ruled by {', '.join(ruled_by)}"


def dispute_lines(item: dict[str, Any]) -> list[str]:
    """The ``dispute_line`` of each dispute naming a letter of ``show``'s document."""
    return [dispute_line(x["dispute"], x["ruled_by"]) for x in item["disputed_by"]]


def _heads(res: Resolution, letter: Letter) -> list[str]:
    return list(dict.fromkeys(h.id for h in res.heads(letter)))


def shown(res: Resolution, letter: Letter, limit: int = BODY_MAX, *,
          history: dict[str, Any] | None | bool = False, heads: list[str] | None = None) -> dict[str, Any]:
    """One copy as ``show --json`` lists it (its file read through ``read_letter``);
    ``history``: its arrival as ``core.sync.added_all`` gave it (False: asked here);
    ``heads``: its chain's heads, when the caller has them (copies of one id share them)."""
    from ..sync_history import added

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
        "heads": _heads(res, letter) if heads is None else heads,
        "progress": _progress(res, letter),
        "disputed_by": [{"dispute": d.id, "ruled_by": [r.id for r in rulings]}
                        for d, rulings in disputed_by(res, letter)],
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
            "history": added(root, letter.path) if history is False else history,
        },
        "body": f.body,
        "body_truncated": f.body_truncated,
    }


def show_view(res: Resolution, letter_id: str, limit: int = BODY_MAX) -> dict[str, Any]:
    """The ``show --json`` document: every copy of the id (one chain, so one list of heads:
    listing it for each copy was quadratic in an id held by many files, all heads)."""
    from ..sync_history import added_all

    held = copies(res, letter_id)
    heads = _heads(res, held[0])
    arrivals = added_all(str(res.snapshot.root), [x.path for x in held])  # one history walk for all
    return {"id": held[0].id, "letters": [shown(res, x, limit, history=arrivals[x.path], heads=heads) for x in held],
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

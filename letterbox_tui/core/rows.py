"""One letter as a row (SPEC 6): its header fields as written plus its derived answers.

A row is what ``query --json`` prints and what every reading command nests. Build rows only
for letters that will be shown: each derived answer asks the resolver.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .model import Answer, Letter, Reason
from .query import dedupe, slug
from .resolve import Resolution, StateAnswer

#: The row's keys, in the order SPEC 6 lists them.
ROW_KEYS = (
    "id", "path", "seat", "folder", "from", "to", "type", "re", "thread", "supersedes",
    "priority", "requires_ack", "deadline", "sent", "slug", "subject", "fields", "state",
    "answered", "accepted", "current", "head", "superseded", "late", "legacy", "reasons",
)


def answers(letter: Letter, res: Resolution) -> dict[str, Answer | StateAnswer]:
    """The letter's derived answers, by name (the names ``Reason.about`` uses)."""
    return {
        "state": res.state(letter),
        "answered": res.answered(letter),
        "accepted": res.accepted(letter),
        "current": res.current(letter),
        "superseded": res.superseded(letter),
        "late": res.late(letter),
    }


def unknown_reasons(found: Iterable[Answer | StateAnswer]) -> tuple[Reason, ...]:
    """Every reason of the answers that are unknown, each once, in answer order."""
    out: list[Reason] = []
    for ans in found:
        if ans.value == "unknown":
            out.extend(ans.reasons)
    return dedupe(out)


def row(letter: Letter, res: Resolution, extra_reasons: tuple[Reason, ...] = ()) -> dict[str, Any]:
    """The row of SPEC 6 for ``letter``. ``extra_reasons`` (a query's ``match`` reasons)
    are added after the answers' own.

    ``thread`` is the thread the letter belongs to (its own id when its ``thread`` field is
    empty, SPEC 3); the field as written stays in ``fields``. Other values are as written,
    ``""`` when absent.
    """
    found = answers(letter, res)  # each asked once; a reason read only when its answer is unknown
    head = res.head(letter)
    made_slug = slug(letter)
    why = unknown_reasons(found.values()) + tuple(extra_reasons)
    reasons = dedupe(why) if why else ()
    return {
        "id": letter.id,
        "path": letter.path,
        "seat": letter.seat,
        "folder": letter.folder,
        "from": letter.sender,
        "to": letter.recipient,
        "type": letter.type,
        "re": letter.re,
        "thread": letter.thread_id,
        "supersedes": letter.supersedes,
        "priority": letter.priority,
        "requires_ack": letter.requires_ack,
        "deadline": letter.deadline,
        "sent": letter.sent,
        "slug": made_slug,
        "subject": letter.subject or made_slug,  # ``subject(letter)``, the slug made once
        "fields": letter.field_dict(),
        "state": found["state"].value,
        "answered": found["answered"].value,
        "accepted": found["accepted"].value,
        "current": found["current"].value,
        "head": head.id if head is not None else None,
        "superseded": found["superseded"].value,
        "late": found["late"].value,
        "legacy": list(letter.flags),
        "reasons": [r.to_json() for r in reasons],
    }

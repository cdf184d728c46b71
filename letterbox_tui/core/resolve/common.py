"""What every part of the resolver shares: bounds, sort keys, the ``state`` answer type, and
the reasons several answers build the same way."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from ..grammar import ID_RE
from ..model import Letter, Reason

TERMINAL_TYPES = ("result", "nack")
#: How many letters a reason names before it stops listing (the count is in its detail).
MAX_NAMED = 50
#: How many earlier answered versions reply-to-superseded names (nearest first).
MAX_BELOW = 10


@dataclass(slots=True, frozen=True)
class StateAnswer:
    """``state`` is open, closed or unknown (not yes/no), with reasons when unknown."""

    value: str  # "open" | "closed" | "unknown"
    reasons: tuple[Reason, ...] = ()


OPEN = StateAnswer("open")
CLOSED = StateAnswer("closed")


def letter_key(x: Letter) -> tuple[str, str]:
    return (x.id, x.path)


def path_key(x: Letter) -> str:
    return x.path


def sorted_letters(letters) -> list[Letter]:
    found = list(letters)
    if len(found) > 1:
        found.sort(key=letter_key)
    return found


def aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)


def about(reasons: tuple[Reason, ...], name: str) -> tuple[Reason, ...]:
    """The same reasons, each saying it belongs to the answer ``name``."""
    return tuple(r if r.about == name else Reason(r.code, name, r.detail, r.letters, r.paths) for r in reasons)


def names(ids) -> tuple[str, ...]:
    """The first ``MAX_NAMED`` of these ids, sorted, each once."""
    return tuple(sorted(set(ids)))[:MAX_NAMED]


def is_id(value: str) -> bool:
    return bool(value) and ID_RE.fullmatch(value) is not None


def outside_scope(letter: Letter, name: str) -> Reason:
    return Reason(
        "outside-scope", name,
        f"the scope is partial and a reply would be delivered to {letter.sender}, outside it",
        (letter.id,), (),
    )

"""What every part of the resolver shares: bounds, sort keys, the ``state`` answer type, and
the reasons several answers build the same way."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from ..grammar import ID_RE
from ..model import Letter, Reason

TERMINAL_TYPES = ("result", "nack")
#: How many letters (and files) a reason names before it stops listing; its detail then
#: gives the total and the command that lists them all.
MAX_NAMED = 20
#: How many reasons of one code an answer gives about a chain; past that, the last one
#: stands for the rest (``summarise``).
MAX_SAME = 3
#: What lists every letter a bounded reason leaves out.
LIST_ALL = "`letterbox-tui check` lists them all"
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


class Relabel:
    """``about`` for reasons many letters share (a cycle's, a chain's doubt, a duplicate's):
    relabelled once per tuple and answer name, not once per letter. Keyed by the tuple's
    identity; the tuple is kept, so its id is never reused while the key lives."""

    __slots__ = ("_done",)

    def __init__(self) -> None:
        self._done: dict[tuple[int, str], tuple[tuple[Reason, ...], tuple[Reason, ...]]] = {}

    def __call__(self, reasons: tuple[Reason, ...], name: str) -> tuple[Reason, ...]:
        if not reasons:
            return reasons
        key = (id(reasons), name)
        done = self._done.get(key)
        if done is None:
            done = self._done[key] = (reasons, about(reasons, name))
        return done[1]


def names(ids) -> tuple[str, ...]:
    """The first ``MAX_NAMED`` of these ids, sorted, each once."""
    return tuple(sorted(set(ids)))[:MAX_NAMED]


def more(total: int, how: str = LIST_ALL) -> str:
    """What a detail adds when its reason names ``MAX_NAMED`` of ``total`` letters."""
    if total <= MAX_NAMED:
        return ""
    return f" (naming {MAX_NAMED} of {total} letters: {how})"


def summarise(reasons: list[Reason], what: str) -> list[Reason]:
    """At most ``MAX_SAME`` of these reasons (one code, about one chain): past that, the
    last stands for the rest, naming ``MAX_NAMED`` of their letters and files."""
    if len(reasons) <= MAX_SAME:
        return reasons
    kept = reasons[:MAX_SAME - 1]
    rest = reasons[MAX_SAME - 1:]
    letters = first_unique((i for r in rest for i in r.letters), MAX_NAMED)
    paths = first_unique((p for r in rest for p in r.paths), MAX_NAMED)
    first = rest[0]
    return kept + [Reason(
        first.code, first.about,
        f"and {len(rest)} more {what} in this chain, the first: {first.detail}; {LIST_ALL}",
        letters, paths,
    )]


def first_unique(items, n: int) -> tuple[str, ...]:
    """The first ``n`` distinct items, in order (stops reading once it has them)."""
    found: dict[str, None] = {}
    for x in items:
        found[x] = None
        if len(found) >= n:
            break
    return tuple(found)


def is_id(value: str) -> bool:
    return bool(value) and ID_RE.fullmatch(value) is not None


def outside_scope(letter: Letter, name: str) -> Reason:
    return Reason(
        "outside-scope", name,
        f"the scope is partial and a reply would be delivered to {letter.sender}, outside it",
        (letter.id,), (),
    )

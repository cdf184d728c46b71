"""Disputes (SPEC 5): which disputes are open, and the rulings on each. Neither disputed
letter is edited; a dispute is open until a readable ruling names it in ``rules_on``.
(What a ruling's ``upholds`` settles is a question about forks: see ``forks``.)"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Letter
from .common import sorted_letters
from .index import Index


@dataclass(slots=True, frozen=True)
class OpenDispute:
    dispute: Letter
    disputed: tuple[Letter, ...]  # readable letters the dispute names, in its order


def open_disputes(index: Index) -> list[OpenDispute]:
    """Every dispute no readable ruling names, sorted by id then path."""
    found = []
    for letter in sorted_letters(x for x in index.snapshot.letters if x.type == "dispute"):
        if index.rulings_on.get(letter.id):
            continue
        disputed = tuple(x for d in (letter.disputes or ()) for x in index.holding(d))
        found.append(OpenDispute(letter, disputed))
    return found


def rulings(index: Index, dispute: Letter) -> list[Letter]:
    """The readable rulings on this dispute, sorted."""
    return sorted_letters(index.rulings_on.get(dispute.id, ()))

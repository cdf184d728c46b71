"""The structure around a letter as paths: what the resolver found that the letter's own
fields and the letters holding an id or a thread do not say, for a store to keep and answer
from without resolving again (``store.stored.StoredAnswers``).

Ids are not unique, so the answers about an id (the letters pointing at it) are kept once,
with the id's first holder by path (its *keeper*), and a chain's with the keeper of its
key; the answers about the whole scan with the scan's first letter. Everything is named by
path. A letter that keeps nothing (no letter points at its id, it is on no chain, it is not
the first) gets an empty dict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model import Letter

if TYPE_CHECKING:
    from . import Resolution


def _paths(letters) -> list[str]:
    return [x.path for x in letters]


def kept_structure(res: Resolution, letter: Letter) -> dict[str, Any]:
    """What ``letter`` keeps (keys: ``c`` children, ``s`` superseders, ``d`` the disputes
    naming its id, ``r`` the rulings on its id, ``k`` its chain's key, ``i`` and ``h`` the
    chain's ids and heads, ``w`` the scan's forks, cycles, dangling pointers and open
    disputes), each only when there is something to keep."""
    index = res.index
    lid = letter.id
    kept: dict[str, Any] = {}
    holders = index.holding(lid)
    if holders and holders[0] is letter:  # the id's keeper
        if lid in index.children:
            kept["c"] = _paths(res.children(letter))
        if lid in index.superseders:
            kept["s"] = _paths(res.superseders(letter))
        if lid in index.disputes_naming:
            kept["d"] = _paths(res.disputes_of(letter))
        if lid in index.rulings_on:
            kept["r"] = _paths(res.rulings(letter))
        if lid in index.parent:  # on a chain
            key = kept["k"] = index.find(lid)
            if key == lid:  # the keeper of the chain's key keeps the chain
                kept["i"] = res.chain_ids(letter)
                kept["h"] = _paths(res.heads(letter))
    letters = res.snapshot.letters
    if len(letters) and letters[0].path == letter.path:
        kept["w"] = scan_structure(res)
    return kept


def scan_structure(res: Resolution) -> dict[str, list]:
    """What the scan's first letter keeps about the whole scan (``w``): its forks,
    cycles, dangling pointers and open disputes."""
    return {
        "forks": [[f.at, list(f.branches), f.settled, f.winner, f.dispute, list(f.rulings), f.in_losing_branch]
                  for f in res.forks()],
        "cycles": [list(c) for c in res.cycles()],
        "dangling": [[d.letter.path, d.field, d.target] for d in res.dangling()],
        "open": [[o.dispute.path, _paths(o.disputed)] for o in res.open_disputes()],
    }

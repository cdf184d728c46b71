"""A letter's supersession chain as a tree: the data the app's Chain tab draws (it was
derived in the app). Computed from a ``Resolution`` only; the chain's letters are
``res.chain`` (what ``letterbox-tui current`` lists), arranged here:

- the roots are the chain's letters that supersede nothing in the chain, oldest first;
- a letter's children are the chain's letters that supersede it, oldest first; more than
  one child is a fork;
- a letter reached again is a cycle line (``cycle``), not drawn twice;
- letters no root reaches (a chain that is one cycle) are ``on_cycle``;
- ``dangling``: the letter's own ``supersedes`` names no readable letter in scope;
- ``disputes``: the dispute letters naming any letter of the chain, oldest first.

Iterative (a chain thousands long must not recurse) and capped at ``limit`` letters
(``more`` counts the rest).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model import Letter
from ..resolve import Resolution
from .order import time_key


@dataclass(frozen=True, slots=True)
class ChainLine:
    letter: Letter
    #: for each level above this line (below the roots): does a rail continue there (the
    #: ancestor at that level has a later sibling)
    rails: tuple[bool, ...]
    root: bool  # a root: no branch glyph
    last: bool  # the last child of its parent
    forks: int  # how many of the chain's letters supersede this one
    cycle: bool = False  # reached again: a cycle back to ``letter``


@dataclass(frozen=True, slots=True)
class ChainTree:
    letter: Letter
    chain: tuple[Letter, ...]
    head: Letter | None
    heads: tuple[Letter, ...]
    lines: tuple[ChainLine, ...]
    more: int
    on_cycle: tuple[Letter, ...]
    dangling: str | None
    disputes: tuple[Letter, ...]

    @property
    def alone(self) -> bool:
        """No chain: nothing supersedes the letter and it supersedes nothing."""
        return len(self.chain) <= 1 and not self.letter.supersedes


def chain_tree(res: Resolution, x: Letter, *, limit: int = 400,
               dispute_letters: Iterable[Letter] | None = None) -> ChainTree:
    """``dispute_letters``: the letterbox's dispute letters, when the caller has them at
    hand (else the answers say which disputes name the chain's letters)."""
    chain = list(res.chain(x))
    if x not in chain:
        chain = [x] + [c for c in chain if c is not x]
    ids = {c.id: c for c in chain}
    kids: dict[str, list[Letter]] = {}
    roots: list[Letter] = []
    for c in sorted(chain, key=time_key):
        if c.supersedes and c.supersedes in ids and c.supersedes != c.id:
            kids.setdefault(c.supersedes, []).append(c)
        else:
            roots.append(c)
    lines: list[ChainLine] = []
    seen: set[int] = set()
    shown = 0
    capped = False
    stack: list[tuple[Letter, tuple[bool, ...], bool, bool]] = [(r, (), True, True) for r in reversed(roots)]
    while stack:
        c, rails, last, root = stack.pop()
        if id(c) in seen:
            lines.append(ChainLine(c, rails, root, last, 0, cycle=True))
            continue
        if shown >= limit:
            capped = True
            break
        seen.add(id(c))
        shown += 1
        children = kids.get(c.id, [])
        lines.append(ChainLine(c, rails, root, last, len(children)))
        below = rails if root else rails + (not last,)
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], below, i == len(children) - 1, False))
    more = len(chain) - shown if capped else 0
    on_cycle = () if capped else tuple(c for c in chain if id(c) not in seen)[:limit]
    dangling = x.supersedes if x.supersedes and x.supersedes not in ids else None
    named = set(ids)
    if dispute_letters is not None:
        pool = [d for d in dispute_letters if d.type == "dispute" and named & set(d.disputes)]
    else:  # the disputes naming each id of the chain, each once
        pool = list({d.path: d for c in ids.values() for d in res.disputes_of(c)}.values())
    disputes = tuple(sorted(pool, key=time_key))
    return ChainTree(x, tuple(chain), res.head(x), tuple(res.heads(x)), tuple(lines), more, on_cycle, dangling, disputes)

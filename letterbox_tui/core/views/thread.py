"""A thread as a reply tree (SPEC 7 ``thread``), built and encoded without recursion.

One rule for a letter whose ``re`` names no letter of the thread (or that has no ``re``
but carries the thread's label): it is an extra root of the tree, after the thread's root.
The tree draws only the edges the record has; hanging such a letter under the root would
claim it replies to the root, which nothing on disk says. ``Node.via`` tells a face why a
node is a root (``"root"``, ``"detached"``: its ``re`` is not in the thread, ``"label"``:
no ``re``, in the thread by its label, ``"loop"``: on an ``re`` loop with no way in).

The tree is a flat pre-order list of nodes with their depth, so a 100,000-deep reply chain
costs a list, not a recursion; ``to_json`` and ``encode`` make the nested SPEC shape
iteratively (``json.dumps`` recurses and fails near 500 levels).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from ..model import Letter
from ..resolve import Resolution
from .order import time_key


@dataclass(slots=True, frozen=True)
class Node:
    letter: Letter
    depth: int
    via: str = "re"  # "re" (a reply inside the thread), "root", "detached", "label", "loop"

    @property
    def id(self) -> str:
        return self.letter.id


@dataclass(slots=True, frozen=True)
class ThreadView:
    thread: str
    root: str | None  # the thread's root letter's id, when it is in scope
    nodes: tuple[Node, ...]  # pre-order; a node's children follow it, one depth deeper

    @property
    def roots(self) -> list[Node]:
        return [n for n in self.nodes if n.depth == 0]

    @property
    def max_depth(self) -> int:
        return max((n.depth for n in self.nodes), default=0)

    def to_json(self) -> list[dict]:
        """The SPEC ``tree``: ``[{"id","children":[...]}]``, built with a stack."""
        tree: list[dict] = []
        path: list[list[dict]] = [tree]  # path[d]: the children list nodes of depth d go into
        for n in self.nodes:
            del path[n.depth + 1:]
            node = {"id": n.letter.id, "children": []}
            path[n.depth].append(node)
            path.append(node["children"])
        return tree

    def encode(self) -> str:
        """``json.dumps(self.to_json())`` (compact), without recursion."""
        return "".join(self._pieces())

    def _pieces(self) -> Iterator[str]:
        yield "["
        depth = -1
        for n in self.nodes:
            if n.depth <= depth:  # close the open nodes down to this one's siblings
                yield "]}" * (depth - n.depth + 1)
                yield ","
            yield '{"id":' + json.dumps(n.letter.id, ensure_ascii=False) + ',"children":['
            depth = n.depth
        if depth >= 0:
            yield "]}" * (depth + 1)
        yield "]"


def thread_view(res: Resolution, thread_id: str) -> ThreadView:
    """The thread's reply tree by ``re``, oldest first among siblings: the root (the
    letter whose id is the thread) first, then the extra roots in time order. A letter
    reached twice (an ``re`` loop, a duplicated id) is listed once."""
    members = sorted(res.thread(thread_id), key=time_key)
    first: dict[str, Letter] = {}
    for x in members:
        first.setdefault(x.id, x)
    children: dict[int, list[Letter]] = {}
    roots: list[tuple[Letter, str]] = []
    for x in members:
        parent = first.get(x.re) if x.re and x.re != x.id else None
        if parent is not None:
            children.setdefault(id(parent), []).append(x)
        elif x.id == thread_id:
            roots.append((x, "root"))
        else:
            roots.append((x, "detached" if x.re else "label"))
    roots.sort(key=lambda r: (r[1] != "root", time_key(r[0])))
    seen: set[int] = set()
    nodes: list[Node] = []

    def walk(top: Letter, via: str) -> None:
        stack = [(top, 0, via)]
        while stack:
            letter, depth, how = stack.pop()
            if id(letter) in seen:
                continue
            seen.add(id(letter))
            nodes.append(Node(letter, depth, how))
            kids = children.get(id(letter), ())
            stack.extend((k, depth + 1, "re") for k in reversed(kids))

    for letter, via in roots:
        walk(letter, via)
    for x in members:  # members on an re loop with no way in: extra roots
        if id(x) not in seen:
            walk(x, "loop")
    return ThreadView(thread_id, thread_id if thread_id in first else None, tuple(nodes))

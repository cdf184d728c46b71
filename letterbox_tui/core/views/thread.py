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

    def encode(self, indent: int | None = None, level: int = 0) -> str:
        """``json.dumps(self.to_json(), indent=indent)`` (compact without ``indent``),
        without recursion; ``level``: how deep the tree sits in its document (1 as the
        value of a top-level key), so the text can be spliced into an indented document."""
        return "".join(self._pieces(indent, level))

    def _pieces(self, indent: int | None, base: int) -> Iterator[str]:
        if indent is None:
            def nl(_level: int) -> str:
                return ""
            colon = ":"
        else:
            def nl(level: int) -> str:
                return "\n" + " " * (indent * level)
            colon = ": "
        nodes = self.nodes
        if not nodes:
            yield "[]"
            return
        yield "["

        def close(depth: int) -> Iterator[str]:  # the children list and object of a node at ``depth``
            at = base + 1 + 2 * depth
            yield nl(at + 1) + "]" + nl(at) + "}"

        count = len(nodes)
        prev = -1
        for i, n in enumerate(nodes):
            d = n.depth
            at = base + 1 + 2 * d
            if d <= prev:
                yield ","
            yield nl(at) + "{" + nl(at + 1) + '"id"' + colon + json.dumps(n.letter.id, ensure_ascii=False) + ","
            yield nl(at + 1) + '"children"' + colon
            after = nodes[i + 1].depth if i + 1 < count else -1
            if after > d:
                yield "["
            else:
                yield "[]" + nl(at) + "}"
                for k in range(d - 1, max(after, 0) - 1, -1):  # ancestors whose last child this is
                    yield from close(k)
            prev = d
        yield nl(base) + "]"


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

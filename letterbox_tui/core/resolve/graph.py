"""Graph walks the supersession analysis needs, all iterative (a chain may be 100,000 deep)."""

from __future__ import annotations

import heapq

from ..model import Letter


def tarjan(nodes: list[str], out: dict[str, tuple[str, ...]]) -> list[list[str]]:
    """Strongly connected components, iteratively; emitted sinks first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(out.get(start, ())))]
        while work:
            v, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(out.get(w, ()))))
                    pushed = True
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            if pushed:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                result.append(comp)
    return result


def reverse_reach(start: str, superseder_ids: dict[str, list[str]]) -> set[str]:
    """``start`` and every id that (transitively) supersedes it: one branch of a fork."""
    seen = {start}
    todo = [start]
    while todo:
        v = todo.pop()
        for s in superseder_ids.get(v, ()):
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return seen


def topological(ids: list[str], out: dict[str, tuple[str, ...]], superseders: dict[str, list[Letter]]) -> list[str]:
    """Superseded first, heads last, ties by id; ids on cycles last, by id."""
    id_set = set(ids)
    remaining = {i: len([t for t in out.get(i, ()) if t in id_set]) for i in ids}
    ready = [i for i in ids if remaining[i] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    done: set[str] = set()
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        done.add(v)
        for s in sorted({x.id for x in superseders.get(v, ())}):
            if s in id_set and s not in done:
                remaining[s] -= 1
                if remaining[s] == 0:
                    heapq.heappush(ready, s)
    order.extend(sorted(i for i in ids if i not in done))
    return order

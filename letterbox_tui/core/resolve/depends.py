"""Which letters a change can reach: the part of a snapshot whose answers may move.

Two readable letters are *linked* when they hold the same id, when one names the other's
id (``re``, ``supersedes``, ``rules_on``, ``upholds``, an element of ``disputes``, or an
id-shaped token of a malformed pointer), or when one holds a malformed ``supersedes`` and
the other lies in its thread. A letter's *cluster* is every letter linked to it,
transitively. What the resolver says about a letter (its answers with their reasons, the
letters pointing at its id, its chain, whether its pointers dangle, whether it is an open
dispute, the forks and cycles of its chain) reads only the letters of its cluster and what
the whole snapshot shares: its unreadable files, unsupported entries, sidecars and scope.

So, the shared part unchanged, the resolver over the clusters a change touches (``reach``)
and the shared part gives those letters exactly the answers it gives them over every
letter, and every other letter keeps the answers it had: ``resolve`` on such a sub-snapshot
is the one resolver, asked about fewer letters. ``tests/store/test_incremental.py`` checks
it against a full resolve on random letterboxes and changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..grammar import tokens
from ..model import Letter

#: a thread's key, apart from the ids (no id holds this character)
_THREAD = "\x00"


def doubted_threads(letters: Iterable[Letter]) -> set[str]:
    """The threads of the letters holding a malformed ``supersedes`` (such a pointer may
    target any chain of its thread: SPEC 5)."""
    return {x.thread_id for x in letters if x.malformed and "supersedes" in x.malformed and x.supersedes}


def links(x: Letter, threads: set[str]) -> list[str]:
    """The keys linking ``x`` to other letters: its id, every id its pointers may name, and
    (in one of the ``threads`` from ``doubted_threads``) its thread."""
    found = [x.id]
    malformed = x.malformed or ()
    for name in ("re", "supersedes", "rules_on", "upholds"):
        value = getattr(x, name)
        if value:
            found.append(value)
            if name in malformed:
                found.extend(tokens(value))
    found.extend(x.disputes or ())
    if threads and x.thread_id in threads:
        found.append(_THREAD + x.thread_id)
    return found


def reach(changed: Iterable[Letter], before: Iterable[Letter], threads: set[str],
          holders: Callable[[str], Iterable[Letter]]) -> tuple[dict[str, Letter], set[str]]:
    """The letters whose answers a change may move, by path: the clusters of ``changed``
    (the letters that are new or differ, or whose sidecar came or went) and of every
    letter linked to one of ``before`` (the versions the change replaced or removed);
    with every key those letters and ``before`` hold (whatever of the whole scan names one
    of them was theirs). ``threads``: ``doubted_threads`` of the letters after the change
    and of ``before``; ``holders(key)``: the letters after the change that may hold the
    key among their ``links`` (more do no harm: each is asked)."""
    seen: set[str] = set()
    todo: list[str] = []
    for x in (*changed, *before):
        todo.extend(links(x, threads))
    found: dict[str, Letter] = {}
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        for x in holders(key):
            if x.path not in found:
                held = links(x, threads)
                if key in held:
                    found[x.path] = x
                    todo.extend(held)
    return found, seen


def thread_of(key: str) -> str | None:
    """The thread a key of ``links`` stands for (None: the key is an id)."""
    return key[1:] if key[:1] == _THREAD else None

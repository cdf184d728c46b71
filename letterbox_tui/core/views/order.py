"""The one time order of letters: by ``sent`` (only a valid offset gives a letter its time,
SPEC 3), letters without a time last, ties by id, then path. Every view and both faces
sort with these (there were four copies of this key)."""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Letter

_LAST = float("inf")


def time_key(letter: Letter) -> tuple[float, str, str]:
    """Oldest first; letters without a time after every timed one."""
    t = letter.sent_at
    return (t.timestamp() if t is not None else _LAST, letter.id, letter.path)


def oldest_first(letters: Iterable[Letter]) -> list[Letter]:
    return sorted(letters, key=time_key)


def newest_first(letters: Iterable[Letter]) -> list[Letter]:
    """Newest first; letters without a time still last (then by id, path)."""
    timed: list[Letter] = []
    untimed: list[Letter] = []
    for x in letters:
        (timed if x.sent_at is not None else untimed).append(x)
    timed.sort(key=time_key, reverse=True)
    untimed.sort(key=time_key)
    return timed + untimed

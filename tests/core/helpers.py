"""Helpers the core tests share: resolving a test letterbox at a fixed clock, picking one
letter, reading reason codes, and a brute-force oracle for supersession cycles."""

from __future__ import annotations

from datetime import datetime, timezone

from letterbox_tui.core.model import Snapshot
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)


def resolved(box, participants=None, *, atomic=True):
    """Scan the box (optionally a partial scope, or marked non-atomic) and resolve at AT."""
    snap = scan(box.root, participants)
    if not atomic:
        snap.scope.atomic = False
    return resolve(snap, AT)


def one(res, letter_id):
    (letter,) = res.by_id(letter_id)
    return letter


def codes(answer):
    return [r.code for r in answer.reasons]


def reaches_cycle(snapshot: Snapshot) -> set[str]:
    """Brute force: ids on a supersession cycle or leading into one (readable, well-formed
    edges to existing ids only)."""
    ids = {x.id for x in snapshot.letters}
    edges: dict[str, set[str]] = {}
    for x in snapshot.letters:
        if x.supersedes and "supersedes" not in x.malformed and x.supersedes in ids:
            edges.setdefault(x.id, set()).add(x.supersedes)

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(edges.get(start, ()))
        while todo:
            v = todo.pop()
            if v not in seen:
                seen.add(v)
                todo.extend(edges.get(v, ()))
        return seen

    on_cycle = {i for i in ids if i in reach(i)}
    return {i for i in ids if i in on_cycle or reach(i) & on_cycle}


def scan_within(root, seconds: float = 10.0, **kw) -> Snapshot:
    """Scan in a thread: a scan that blocks (a FIFO, a hang) fails the test with "scan
    blocked" instead of hanging the suite; an exception from the scan is re-raised."""
    import threading

    from letterbox_tui.core.scan import scan as _scan

    out: dict[str, object] = {}

    def run():
        try:
            out["snap"] = _scan(root, **kw)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "scan blocked"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["snap"]  # type: ignore[return-value]

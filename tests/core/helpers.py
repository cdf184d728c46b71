"""Helpers the core tests share: resolving a test letterbox at a fixed clock, picking one
letter, reading reason codes, and a brute-force oracle for supersession cycles."""

from __future__ import annotations

import os
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


def on_open(monkeypatch, hook):
    """Call ``hook(name)`` each time the scanner opens something (before opening it)."""
    real_open = os.open

    def hooked(path, flags, mode=0o777, *, dir_fd=None):
        hook(os.fsdecode(path))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", hooked)


def once_on_open(monkeypatch, name: str, action) -> dict[str, bool]:
    """Run ``action()`` the first time the scanner opens ``name`` (a file or folder name);
    the returned ``{"done": ...}`` tells whether it ran."""
    state = {"done": False}

    def hook(opened: str) -> None:
        if opened == name and not state["done"]:
            state["done"] = True
            action()

    on_open(monkeypatch, hook)
    return state

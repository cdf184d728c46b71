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


def tamper_cached_row(root, rel: str, fields: dict[str, str], slots: dict | None = None, sent_code: int | None = None):
    """Make the derived cache's row for ``rel`` say ``fields`` (and the Letter ``slots``
    given) while every stat key still matches the file: what no stat can show, and what
    ``check --verify`` is for. Saves the cache file."""
    from letterbox_tui.core.letters import FIELD_SLOTS, restore, state
    from letterbox_tui.core.speed import cache as cache_mod

    c = cache_mod.HeaderCache(root, False)
    row = list(c.rows[rel])
    letter = restore(row[1])
    keys, values = list(letter._field_keys), list(letter._field_values)
    slot_of = {key: slot for key, slot, _, _ in FIELD_SLOTS}
    for key, value in fields.items():
        values[keys.index(key)] = value
        setattr(letter, slot_of.get(key, key), value)
    letter._field_values = tuple(values)
    for slot, value in (slots or {}).items():
        setattr(letter, slot, value)
    if sent_code == 0:
        letter.sent_at = None
    row[1] = state(letter)
    c.rows[rel] = tuple(row)
    c._fresh, c._changed = dict(c.rows), True
    assert c.save()


def on_open(monkeypatch, hook):
    """Call ``hook(name)`` each time the scanner opens something (before opening it).

    Only the pure-Python reader opens files through ``os.open`` (the C accelerator makes no
    Python call to hook), so it is the one scanning while the hook is in place."""
    monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
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

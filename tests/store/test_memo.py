"""What one set of stored answers keeps once found: each id's keeper, the letters pointing
at it, and ``late`` at its own clock. Found together (``warm_children``) they equal the
resolver's one by one; found damaged, they are dropped and the resolver answers; another
clock never sees this one's ``late``."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from letterbox_tui.core.demo import DEMO_NOW, write_demo
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.store import open_answers
from letterbox_tui.store.db import store_path
from letterbox_tui.store.stored import StoredAnswers
from tests.store.test_damage import _keepers, _replaced
from tests.store.test_differential import structure

AT = DEMO_NOW + timedelta(hours=3)


@pytest.fixture
def demo(tmp_path):
    root = tmp_path / "box"
    write_demo(root)
    return root.resolve()


def stored(root, said=None):
    open_answers(root, AT)
    got = open_answers(root, AT, notice=(said if said is not None else []).append)
    assert isinstance(got, StoredAnswers)
    return got


def paths(letters):
    return [x.path for x in letters]


def test_children_found_together_are_the_resolvers_one_by_one(demo, monkeypatch):
    truth = resolve(scan(demo), AT)
    res = stored(demo)
    letters = list(res.snapshot.letters)
    res.warm_children(letters)
    def no_lookup(*args):
        raise AssertionError("children looked up again after they were found together")

    monkeypatch.setattr(StoredAnswers, "_kept_under", no_lookup)
    for x in letters:
        assert paths(res.children(x)) == paths(truth.children(x)), x.path
        assert paths(res.acks(x)) == paths(truth.acks(x))
        assert paths(res.replies(x)) == paths(truth.replies(x))
    monkeypatch.undo()
    assert structure(res) == structure(truth)


def _damage_children(root):
    """The first keeper of children made to name a file the scan has not (its checksum kept
    in order): the damage is found only when its structure is read."""
    import json

    from letterbox_tui.store.records import answers_checksum

    target = _keepers(root)[0]
    con = sqlite3.connect(store_path(str(root)))
    (record,) = con.execute("SELECT record FROM answers WHERE path = ?", (target,)).fetchone()
    head, kept = record.rsplit(b"\x1f", 1)
    record = head + b"\x1f" + _replaced(json.loads(kept), "c", '["nobody/inbox/nothing.md"]').encode()
    con.execute("UPDATE answers SET record = ?, crc = ? WHERE path = ?",
                (record, answers_checksum(target, record), target))
    con.commit()
    con.close()
    return target


def test_damage_found_while_finding_children_together(demo):
    """One notice, and every answer the resolver's over the same scan."""
    stored(demo)
    _damage_children(demo)
    said: list[str] = []
    res = open_answers(demo, AT, notice=said.append)
    assert isinstance(res, StoredAnswers)
    res.warm_children(list(res.snapshot.letters))
    assert len(said) == 1 and "damaged" in said[0], said
    truth = resolve(scan(demo), AT)
    for x in res.snapshot.letters:
        assert paths(res.children(x)) == paths(truth.children(x))
    assert structure(res) == structure(truth)


def test_what_was_found_is_dropped_with_the_answers(demo, monkeypatch):
    """Children found before the damage are not answered from the store after it."""
    stored(demo)
    target = _damage_children(demo)
    said: list[str] = []
    res = open_answers(demo, AT, notice=said.append)
    letters = list(res.snapshot.letters)
    asked = [x for x in letters if x.path != target and res.children(x)]
    assert asked and not said
    found = {x.path: paths(res.children(x)) for x in asked}
    damaged = next(x for x in letters if x.path == target)
    res.children(damaged)  # reads the damaged record
    assert len(said) == 1
    calls: list[str] = []
    real = type(res.resolution).children

    def children(self, letter):
        calls.append(letter.path)
        return real(self, letter)

    monkeypatch.setattr(type(res.resolution), "children", children)
    assert {x.path: paths(res.children(x)) for x in asked} == found
    assert calls == [x.path for x in asked]  # each asked of the resolver, none kept
    assert all(res.late(x) == res.resolution.late(x) for x in letters)


def test_late_at_another_clock_is_never_this_clocks(demo):
    res = stored(demo)
    letters = [x for x in res.snapshot.letters if x.task]
    now = [res.late(x).value for x in letters]
    later = res.with_clock(AT + timedelta(days=60))
    truth_later = resolve(scan(demo), AT + timedelta(days=60))
    assert [later.late(x).value for x in letters] == [truth_later.late(x).value for x in letters] != now
    assert [res.late(x).value for x in letters] == now
    assert [res.late(x, AT + timedelta(days=60)).value for x in letters] != now  # asked at a clock: not kept
    assert [res.late(x).value for x in letters] == now

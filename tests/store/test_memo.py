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


@pytest.fixture(params=["just-written", "settled"])
def demo(tmp_path, monkeypatch, request):
    """The demo; "settled": the store takes its files as old (``test_differential``), so
    its letters are decoded when asked and its indexes used."""
    if request.param == "settled":
        monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    root = tmp_path / "box"
    write_demo(root)
    return root.resolve()


@pytest.fixture
def settled(demo, request):
    if "settled" not in request.node.callspec.id:
        pytest.skip("the store's indexes are used for settled files")
    return demo


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


# --- the letters the digest may call uncertain ---------------------------------------------

@pytest.mark.parametrize("days", [-30, 0, 3, 60])
def test_the_digest_looks_only_at_the_kept_uncertain_letters_at_any_clock(settled, days):
    """The index is written at one clock and read at another: the digest is the resolver's
    at each, and no other letter's answers are asked for its uncertain part."""
    from letterbox_tui.core.digest import digest, may_be_uncertain

    at = AT + timedelta(days=days)
    truth = resolve(scan(settled), at)
    want = digest(truth)
    assert want["uncertain"], "the demo has uncertain answers"
    open_answers(settled, AT)
    res = open_answers(settled, at)
    assert isinstance(res, StoredAnswers)
    kept = res.uncertain_letters()
    assert paths(kept) == [x.path for x in truth.snapshot.letters if may_be_uncertain(x, truth)]
    assert set(paths(kept)) < {x.path for x in truth.snapshot.letters}
    assert digest(res) == want
    assert digest(open_answers(settled, at), "simon") == digest(truth, "simon")


def test_an_uncertain_index_naming_no_letter_is_damage(settled):
    import json

    from letterbox_tui.core.digest import digest
    from letterbox_tui.store.db import index_checksum

    stored(settled)
    value = json.dumps({"letters": ["nobody/inbox/nothing.md"]}).encode()
    con = sqlite3.connect(store_path(str(settled)))
    con.execute("UPDATE indexes SET value = ?, crc = ? WHERE name = 'uncertain'",
                (value, index_checksum("uncertain", value)))
    con.commit()
    con.close()
    said: list[str] = []
    res = open_answers(settled, AT, notice=said.append)
    assert digest(res) == digest(resolve(scan(settled), AT))
    assert len(said) == 1 and "damaged" in said[0], said

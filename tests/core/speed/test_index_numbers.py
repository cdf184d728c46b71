"""The index numbers its rows in scan order (``n``: a query's ORDER BY needs no sort) and
keeps what a query filters by in the narrow ``q``: a refresh numbers a new letter between
its neighbours', builds afresh when no number is left, and ``check --verify`` finds a ``q``
row or a number that is not what the letters say."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.scan import scan
from letterbox_tui.core.settings import load_settings
from letterbox_tui.core.speed import index_build as ib
from letterbox_tui.core.speed import memo
from letterbox_tui.core.speed.index import Index

from test_index_incremental import Box, _resolver, _rows


def _letter(path: str):
    seat, folder, name = path.split("/")
    return SimpleNamespace(path=path, seat=seat, folder=folder, name=name, type="request")


def test_place_numbers_new_letters_between_their_neighbours():
    letters = [_letter(p) for p in ("a/inbox/1", "a/inbox/2", "a/inbox/3", "a/processed/1", "a-b/inbox/1")]
    old = {"a/inbox/1": 100, "a/processed/1": 104}
    got = ib.place(letters, old)
    assert set(got) == {"a/inbox/2", "a/inbox/3", "a-b/inbox/1"}
    # "a" sorts before "a-b" as a seat, though "a/" sorts after "a-" as a path
    assert 100 < got["a/inbox/2"] < got["a/inbox/3"] < 104 < got["a-b/inbox/1"]
    assert ib.place(letters, {"a/inbox/1": 100, "a/processed/1": 102}) is None  # two letters, one number
    head = ib.place(letters, {"a/inbox/3": 5})
    assert head["a/inbox/1"] < head["a/inbox/2"] < 5 < head["a/processed/1"] < head["a-b/inbox/1"]
    fresh = ib.place(letters, {})
    assert [fresh[x.path] for x in letters] == sorted(fresh.values())


def test_numbers_follow_scan_order_and_texts_go_by_type():
    letters = [_letter(p) for p in ("b/inbox/1", "a/inbox/2", "a/inbox/1")]
    letters[2].type = "ack"
    n, tn = ib.numbers(letters)
    assert list(n) == [3 * ib.GAP, 2 * ib.GAP, ib.GAP]
    assert list(tn) == [3, 2, 1]  # the ack first, then the requests in scan order


def test_a_refresh_with_no_number_left_builds_afresh(tmp_path, monkeypatch):
    """Letters filed again and again between the same two neighbours: the numbers run out
    and the whole index is written anew; every step equals a build from scratch."""
    monkeypatch.setattr(ib, "GAP", 4)
    box = Box(tmp_path / "box")
    for _ in range(6):
        box.apply(("add", "alpha", "beta", "request", 0, "none", 0, True, ""))
    snapshot = scan(box.root, id_time_is_utc=False)
    ix = Index(str(box.root), False)
    ix.write_all(snapshot, _resolver(snapshot))
    whole = []
    real = ix.write_all
    monkeypatch.setattr(ix, "write_all", lambda *a, **k: (whole.append(1), real(*a, **k)))
    for step in range(5):  # each move lands between beta's two processed letters' numbers
        box.apply(("move", 3 + step % 2))
        box.apply(("add", "alpha", "beta", "result", step, "re", 0, False, ""))
        snapshot = scan(box.root, id_time_is_utc=False)
        ix.refresh(snapshot, _resolver)
        fresh = Index(str(box.root), False, path=str(tmp_path / f"scratch-{step}.index"))
        fresh.write_all(snapshot, _resolver(snapshot))
        assert _rows(ix) == _rows(fresh), step
        fresh.close()
    assert whole, "the numbers never ran out"
    ix.close()


@pytest.fixture
def settled(monkeypatch):
    monkeypatch.setattr(memo, "RACY_NS", 0)


def _verify(capsys, root) -> list[dict]:
    main(["--root", str(root), "check", "--verify", "--json"])
    out, _ = capsys.readouterr()
    return [f for f in json.loads(out)["findings"] if f["code"] == "stale-index"]


@pytest.mark.parametrize("tamper", [
    "UPDATE q SET state = 'closed' WHERE n = (SELECT n FROM q WHERE state = 'open' LIMIT 1)",
    "DELETE FROM q WHERE n = (SELECT max(n) FROM q)",
    "UPDATE letters SET n = -n WHERE n = (SELECT max(n) FROM letters)",  # out of scan order
    "DELETE FROM texts WHERE tn = (SELECT max(tn1) FROM letters)",  # a row past its deadline
    "UPDATE q SET tn1 = NULL WHERE n = (SELECT n FROM letters WHERE tn1 IS NOT NULL LIMIT 1)",
    "INSERT INTO texts VALUES (-1, '{}')",
])
def test_check_verify_finds_a_q_row_or_a_number_out_of_place(tmp_path, capsys, settled, tamper):
    root = tmp_path / "box"
    write_demo(root)
    os.environ.pop("LETTERBOX_TUI_NO_CACHE", None)
    main(["--root", str(root), "query", "type=request", "--json"])
    capsys.readouterr()
    assert _verify(capsys, root) == []  # (and dropped: the next question builds it again)
    main(["--root", str(root), "query", "type=request", "--json"])
    capsys.readouterr()
    ix = Index(str(root), load_settings(root).id_time_is_utc)
    assert ix.open() and ix.why_not() is None
    (before,) = ix.db.execute("SELECT count(*) FROM letters WHERE tn1 IS NOT NULL").fetchone()
    assert before, "the demo has a row past its deadline"
    ix.db.execute(tamper)
    ix.close()
    assert _verify(capsys, root)


def test_place_with_every_letter_numbered_places_none():
    letters = [_letter(p) for p in ("a/inbox/1", "a/inbox/2")]
    assert ib.place(letters, {"a/inbox/1": 5, "a/inbox/2": 9}) == {}
    assert ib.place(letters, {"a/inbox/1": 5, "b/inbox/9": 9}) == {"a/inbox/2": 5 + ib.GAP}

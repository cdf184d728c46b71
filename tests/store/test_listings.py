"""Folder listings a watcher vouches for (``core.listings``): a folder no change was reported
under, which stats as it did, is neither listed nor stat-ed again; every answer is the one
a scan of every file gives, whatever was reported, missed or reported late."""

from __future__ import annotations

import os

import pytest

from letterbox_tui.core import listings as listings_module
from letterbox_tui.core import scan as scan_module
from letterbox_tui.core.listings import Listings
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.store import open_answers
from tests.conftest import make_box
from tests.store.test_differential import AT, _unclocked, documents


@pytest.fixture
def settled(monkeypatch):
    """Every file and folder counts as settled at once (as after RACY_NS)."""
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    monkeypatch.setattr(scan_module, "RACY_NS", -(10**12))


@pytest.fixture
def listed(monkeypatch) -> list[str]:
    """The folders each scan lists and stats (the others it took as the watcher vouched)."""
    seen: list[str] = []
    real = scan_module._Scan._kept_folder

    def counted(self, entries, prefix):
        seen.append(prefix)
        return real(self, entries, prefix)

    monkeypatch.setattr(scan_module._Scan, "_kept_folder", counted)
    return seen


def _box(tmp_path):
    box = make_box(tmp_path / "box", "alpha", "beta")
    box.letter("a1", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("a2", frm="beta", to="alpha", type="info")
    box.letter("a3", frm="alpha", to="beta", type="decision", folder="processed")
    return box


def _watched(box, listings, listed) -> list[str]:
    """Open the answers twice (the store built, then vouched for) and say which folders
    the second opening listed and stat-ed."""
    open_answers(box.root, AT, watched=listings)
    listed.clear()
    open_answers(box.root, AT, watched=listings)
    return sorted(listed)


def _same(box, listings) -> None:
    got = open_answers(box.root, AT, watched=listings)
    want = resolve(scan(box.root), AT)
    assert _unclocked(documents(got)) == _unclocked(documents(want))


def test_a_folder_no_change_was_reported_under_is_taken_as_listed(tmp_path, settled, listed):
    box = _box(tmp_path)
    listings = Listings(str(box.root))
    listings.ready()
    assert _watched(box, listings, listed) == []  # each as the first opening listed it, reading it
    new = box.letter("a4", frm="beta", to="alpha", type="result", re="a1", seat="beta")
    listings.report([str(new)])
    listed.clear()
    _same(box, listings)
    assert listed == ["beta/inbox/"]  # listed (and read file by file), the others taken as listed
    listed.clear()
    open_answers(box.root, AT, watched=listings)
    assert listed == []  # as it was read, now that the store vouches for its files


def test_an_edit_in_place_is_seen_once_reported(tmp_path, settled, listed):
    box = _box(tmp_path)
    listings = Listings(str(box.root))
    listings.ready()
    _watched(box, listings, listed)
    path = box.root / "beta" / "inbox" / "a1.md"
    stat = path.stat()
    path.write_bytes(path.read_bytes().replace(b"type: request", b"type: decision"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with its old mtime
    listings.report([str(path)])
    _same(box, listings)


def test_a_change_the_watcher_missed_is_seen_by_the_folders_own_times(tmp_path, settled, listed):
    box = _box(tmp_path)
    listings = Listings(str(box.root))
    listings.ready()
    _watched(box, listings, listed)
    before = os.stat(box.root / "beta" / "inbox").st_mtime_ns
    box.letter("a4", frm="alpha", to="beta", type="info")  # no report: as when a queue overflowed
    os.utime(box.root / "beta" / "inbox", ns=(before + 10**9, before + 10**9))  # (a coarse clock)
    listed.clear()
    _same(box, listings)
    assert "a4" in {r["id"] for r in _rows(box, listings)}


def _rows(box, listings):
    from letterbox_tui.core.documents import query_document
    from letterbox_tui.core.query import parse_query

    return query_document(open_answers(box.root, AT, watched=listings), parse_query([], AT))["matches"]


def test_a_seat_reported_changed_lists_each_of_its_folders_again(tmp_path, settled, listed):
    box = _box(tmp_path)
    listings = Listings(str(box.root))
    listings.ready()
    _watched(box, listings, listed)
    listings.report([str(box.root / "beta")])
    listed.clear()
    open_answers(box.root, AT, watched=listings)
    assert sorted(listed) == ["beta/inbox/", "beta/processed/"]


def test_the_letterbox_itself_or_a_path_outside_it_forgets_every_listing(tmp_path, settled, listed):
    box = _box(tmp_path)
    listings = Listings(str(box.root))
    listings.ready()
    for reported in (str(box.root), str(tmp_path / "elsewhere" / "x.md")):
        _watched(box, listings, listed)
        listings.report([reported])
        listed.clear()
        open_answers(box.root, AT, watched=listings)
        assert len(listed) == 4, reported


def test_nothing_is_kept_before_the_watcher_runs_or_after_it_stops(tmp_path, settled, listed):
    box = _box(tmp_path)
    listings = Listings(str(box.root))
    assert listings.begin() is None
    assert len(_watched(box, listings, listed)) == 4
    listings.ready()
    _watched(box, listings, listed)
    listings.lost()
    assert listings.begin() is None
    listed.clear()
    open_answers(box.root, AT, watched=listings)
    assert len(listed) == 4


def test_a_change_reported_after_a_scan_began_keeps_nothing_it_listed_there(tmp_path):
    listings = Listings(str(tmp_path))
    listings.ready()
    scan_pass = listings.begin()
    listings.report([str(tmp_path / "beta" / "inbox" / "a1.md")])  # maybe after the scan listed it
    ident = (1, 2, 3, 4)
    scan_pass.saw("beta/inbox/", ident, (["a1.md"], [1, 2, 3, 4], []))
    scan_pass.saw("alpha/inbox/", ident, (["a2.md"], [1, 2, 3, 4], []))
    later = listings.begin()
    assert later.take("beta/inbox/", ident) is None
    assert later.take("alpha/inbox/", ident) == (["a2.md"], [1, 2, 3, 4], [])
    assert later.take("alpha/inbox/", (1, 2, 3, 5)) is None  # the folder stats otherwise now
    listings.ready()  # a watcher started again: what an older scan saw is not kept
    scan_pass.saw("alpha/inbox/", ident, (["a2.md"], [1, 2, 3, 4], []))
    assert listings.begin().take("alpha/inbox/", ident) is None


def test_a_listing_is_kept_for_a_while_only(tmp_path, settled, listed, monkeypatch):
    box = _box(tmp_path)
    listings = Listings(str(box.root))
    listings.ready()
    _watched(box, listings, listed)
    monkeypatch.setattr(listings_module, "TRUST_NS", -1)
    listed.clear()
    open_answers(box.root, AT, watched=listings)
    assert len(listed) == 4


def test_a_folder_changed_just_before_the_scan_is_not_kept(tmp_path, listed, monkeypatch):
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))  # the store vouches for its files
    box = _box(tmp_path)
    listings = Listings(str(box.root))
    listings.ready()
    assert len(_watched(box, listings, listed)) == 4  # its folders' own times are too recent
    listed.clear()
    open_answers(box.root, AT, watched=listings)
    assert len(listed) == 4


def test_index_rows_decoded_before_are_taken_again_and_still_checked(tmp_path, settled, monkeypatch):
    """The index rows decoded for a resident process's listings (``store.db.Decoded``): a
    row whose bytes are the ones decoded before is not decoded again; a row that changed
    is; a row whose checksum no longer matches is damage, said, decoded before or not."""
    import sqlite3

    from letterbox_tui.store import db
    from letterbox_tui.store.db import store_path

    box = _box(tmp_path)
    listings = Listings(str(box.root))  # (no watcher runs: every folder is listed)
    names: list[str] = []
    real = db._decoded

    def counted(name, value, crc):
        names.append(name)
        return real(name, value, crc)

    monkeypatch.setattr(db, "_decoded", counted)
    open_answers(box.root, AT)
    for _ in range(2):
        got = open_answers(box.root, AT, watched=listings)
        _rows_of(got)
    names.clear()
    _rows_of(open_answers(box.root, AT, watched=listings))
    assert names == []  # every row as decoded before
    box.letter("a4", frm="beta", to="alpha", type="result", re="a1", seat="beta")
    open_answers(box.root, AT, watched=listings)
    names.clear()
    _rows_of(open_answers(box.root, AT, watched=listings))
    assert names and all(name.endswith(":beta/inbox/") or ":" not in name for name in names), names
    con = sqlite3.connect(store_path(os.path.realpath(box.root)))
    con.execute("UPDATE indexes SET crc = crc + 1 WHERE name = 'headers:alpha/inbox/'")
    con.commit()
    con.close()
    said: list[str] = []
    got = open_answers(box.root, AT, watched=listings, notice=said.append)
    assert _rows_of(got) == _rows_of(resolve(scan(box.root), AT))
    assert len(said) == 1 and "damaged" in said[0], said


def _rows_of(answers):
    """Rows of a query that reads the header columns (to=, type=) and owed answers."""
    from letterbox_tui.core.documents import query_document
    from letterbox_tui.core.query import parse_query

    doc = query_document(answers, parse_query(["to=alpha,beta", "type=request,result,info,decision"], AT))
    return _unclocked({"rows": doc["matches"]})

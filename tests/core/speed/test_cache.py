"""The derived header cache (SPEC 9): never trusted over the file, never inside the letterbox,
and letters come back from it exactly as a fresh scan builds them."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import time
from pathlib import Path

import pytest

from letterbox_tui.core.speed import cache as cache_mod
from letterbox_tui.core.speed.accel import reader
from letterbox_tui.core.letters import letters_equal
from letterbox_tui.core.speed.cache import HeaderCache, cache_path
from letterbox_tui.core.speed.choice import scan_cached
from letterbox_tui.core.speed.verify import verify_cache
from letterbox_tui.core.model import Letter
from letterbox_tui.core.scan import scan

from tests.core.helpers import tamper_cached_row


@pytest.fixture(autouse=True)
def _no_racy_window(monkeypatch):
    """Letters written by a test are seconds old at most: trust them, except in the test
    of the racy window itself."""
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)


def cached_scan(root, utc: bool = False, participants=None):
    """One scan through the cache, saved, as the CLI does it; returns (snapshot, cache)."""
    c = HeaderCache(root, utc)
    snap = scan(root, participants, id_time_is_utc=utc, cache=c, reader=reader())
    keep = [s for s in snap.seats if participants is not None and s not in participants]
    c.save(keep_seats=keep)
    return snap, c


def by_path(snap) -> dict:
    return {x.path: x for x in [*snap.letters, *snap.unreadable]}


def assert_same(a, b) -> None:
    pa, pb = by_path(a), by_path(b)
    assert sorted(pa) == sorted(pb)
    for p in pa:
        assert letters_equal(pa[p], pb[p]), p
    assert a.scope.to_json() | {"scanned_at": ""} == b.scope.to_json() | {"scanned_at": ""}


def varied(box) -> None:
    """Letters exercising every attribute the cache must give back."""
    box.letter("t-1", type="request", requires_ack="true", deadline="2026-02-01T10:00:00+02:00",
               sent="2026-01-02T03:04:05Z")
    box.letter("2026-01-05T101500-alpha-info-x-0123abcd", sent=None, subject="no sent: time from id")
    box.letter("n-1", sent="2026-01-01T00:00:00", requires_ack=None, deadline="soon")  # ambiguous
    box.letter("al-1", name="al-1-0123abcd.md", re="t-1", thread="t-1")  # alias
    box.letter("mm-1", name="other.md", supersedes="bad id!", extra_field="kept as written")
    box.letter("d-1", type="dispute", disputes="t-1, n-1", folder="processed")
    box.letter("r-1", type="ruling", rules_on="d-1", upholds="t-1", frm="beta", to="alpha")
    box.raw("beta/inbox/broken.md", "---\nid: b-1\nfrom: alpha\nfrom: beta\nto x\n---\n")
    box.raw("beta/inbox/bom.md", b"\xef\xbb\xbf---\nid: x\n---\n")
    box.raw("alpha/processed/crlf.md", b"---\r\nid: c-1\r\nfrom: beta\r\nto: alpha\r\ntype: info\r\n---\r\nbody")
    box.raw("beta/inbox/t-1.md.ack", "")


# --- identical letters ----------------------------------------------------------------


@pytest.mark.parametrize("utc", [False, True])
def test_cached_and_uncached_scans_give_identical_letters(box, utc):
    varied(box)
    plain = scan(box.root, id_time_is_utc=utc)
    cold, c1 = cached_scan(box.root, utc)
    warm, c2 = cached_scan(box.root, utc)
    assert c1.misses == len(by_path(plain)) and c1.hits == 0
    assert c2.hits == len(by_path(plain)) and c2.misses == 0
    assert_same(plain, cold)
    assert_same(plain, warm)
    assert any("time-from-id" in x.flags for x in warm.letters) is utc
    assert warm.unreadable and all(u.legible is not v.legible for u, v in zip(warm.unreadable, cold.unreadable))


def test_times_come_back_with_their_offsets(box):
    box.letter("t-1", sent="2026-01-02T03:04:05+05:30", deadline="2026-01-03T00:00:00-07:00")
    cached_scan(box.root)
    (letter,) = cached_scan(box.root)[0].letters
    assert letter.sent_at.isoformat() == "2026-01-02T03:04:05+05:30"
    assert letter.deadline_at.utcoffset().total_seconds() == -7 * 3600


# --- never trusted over the file ------------------------------------------------------


def test_changed_letter_is_seen_after_a_warm_scan(box):
    path = box.letter("a-1", priority="next")
    cached_scan(box.root)
    path.write_text(path.read_text().replace("priority: next", "priority: whenever"))
    snap, c = cached_scan(box.root)
    assert snap.letters[0].priority == "whenever" and c.misses == 1


def test_added_letter_is_seen(box):
    box.letter("a-1")
    cached_scan(box.root)
    box.letter("a-2")
    snap, c = cached_scan(box.root)
    assert sorted(x.id for x in snap.letters) == ["a-1", "a-2"] and (c.hits, c.misses) == (1, 1)


def test_moved_letter_is_seen_in_its_new_folder(box):
    box.letter("a-1", type="request", requires_ack="true")
    cached_scan(box.root)
    os.replace(box.root / "beta/inbox/a-1.md", box.root / "beta/processed/a-1.md")
    snap, c = cached_scan(box.root)
    assert [(x.path, x.folder) for x in snap.letters] == [("beta/processed/a-1.md", "processed")]
    assert list(c.rows) == ["beta/processed/a-1.md"]


def test_deleted_letter_is_gone_and_dropped_on_save(box):
    box.letter("a-1")
    box.letter("a-2")
    cached_scan(box.root)
    (box.root / "beta/inbox/a-1.md").unlink()
    snap, c = cached_scan(box.root)
    assert [x.id for x in snap.letters] == ["a-2"]
    assert list(HeaderCache(box.root, False).rows) == ["beta/inbox/a-2.md"]


def test_replaced_file_with_a_new_inode_is_reread(box):
    path = box.letter("a-1", priority="next")
    cached_scan(box.root)
    st = path.stat()
    tmp = box.root / "beta/inbox/.tmp"
    tmp.write_text(path.read_text().replace("priority: next", "priority: nowww"))
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)
    snap, c = cached_scan(box.root)
    assert snap.letters[0].priority == "nowww" and c.misses == 1


def test_in_place_edit_with_mtime_restored_is_seen_by_its_ctime(box):
    path = box.letter("a-1", priority="next")
    box.letter("a-2")
    cached_scan(box.root)
    time.sleep(0.05)  # the edit gets a later ctime than the first read saw
    st = path.stat()
    with open(path, "r+b") as fh:  # same inode, same size
        data = fh.read()
        fh.seek(0)
        fh.write(data.replace(b"priority: next", b"priority: noww"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    fresh, c = cached_scan(box.root)
    assert c.hits == 1 and c.misses == 1
    assert {x.id: x.priority for x in fresh.letters} == {"a-1": "noww", "a-2": "next"}


def test_verify_catches_a_row_that_disagrees_with_its_file(box):
    """What no stat can show (a cache row that does not say what the file says) is what
    ``check --verify`` is for: the row is reported and dropped."""
    box.letter("a-1", priority="next")
    box.letter("a-2")
    cached_scan(box.root)
    rel = "beta/inbox/a-1.md"
    tamper_cached_row(box.root, rel, {"priority": "noww"})
    stale, c = cached_scan(box.root)
    assert c.hits == 2 and {x.id: x.priority for x in stale.letters}["a-1"] == "noww"
    assert verify_cache(box.root, stale) == [rel]
    fresh, c = cached_scan(box.root)  # the wrong row was dropped
    assert {x.id: x.priority for x in fresh.letters} == {"a-1": "next", "a-2": "next"} and c.misses == 1


def test_verify_finds_nothing_on_an_unchanged_letterbox(box):
    varied(box)
    snap, _ = cached_scan(box.root)
    assert verify_cache(box.root, snap) == []


def test_verify_reports_a_vanished_file(box):
    box.letter("a-1")
    snap, _ = cached_scan(box.root)
    (box.root / "beta/inbox/a-1.md").unlink()
    assert verify_cache(box.root, snap) == ["beta/inbox/a-1.md"]


def test_rows_record_a_content_hash_of_the_header_bytes(box):
    path = box.letter("a-1", body="one body\n")
    _, c = cached_scan(box.root)
    h = c.hashes["beta/inbox/a-1.md"]
    assert len(h) == 16
    path.write_text(path.read_text().replace("one body", "another body, longer"))
    _, c = cached_scan(box.root)
    assert c.hashes["beta/inbox/a-1.md"] == h  # the body is not part of the header


# --- a damaged or foreign cache is ignored ----------------------------------------------


@pytest.mark.parametrize("damage", ["garbage", "truncated", "magic", "version", "empty", "global"])
def test_corrupt_cache_file_is_ignored_and_rebuilt(box, damage):
    varied(box)
    plain = scan(box.root)
    cached_scan(box.root)
    p = Path(cache_path(box.root, False))
    data = p.read_bytes()
    if damage == "garbage":
        data = os.urandom(len(data))
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "magic":
        data = b"X" + data[1:]
    elif damage == "version":
        data = data[:8] + (cache_mod.VERSION + 1).to_bytes(4, "little") + data[12:]
    elif damage == "empty":
        data = b""
    elif damage == "global":  # a crafted pickle must never run code
        evil = pickle.dumps(_Evil(str(box.root.parent / "pwned")))
        meta = pickle.dumps(cache_mod._meta(os.path.realpath(box.root), False))
        from letterbox_tui.core.speed.files import write_framed

        write_framed(str(p), cache_mod.MAGIC, cache_mod.VERSION, [cache_mod._HEAD.pack(len(meta), len(evil)), meta, evil, evil])
        data = p.read_bytes()  # a good checksum over a crafted pickle
    p.write_bytes(data)
    c = HeaderCache(box.root, False)
    assert c.rows == {} and not c.loaded
    snap = scan(box.root, id_time_is_utc=False, cache=c)
    assert_same(plain, snap)
    assert c.save()
    assert HeaderCache(box.root, False).loaded
    assert not (box.root.parent / "pwned").exists()


class _Evil:
    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self):
        return (os.system, ("touch " + self.target,))


def test_a_cache_written_for_another_letter_layout_is_ignored(box, monkeypatch):
    box.letter("a-1")
    cached_scan(box.root)
    assert HeaderCache(box.root, False).loaded
    kept, unreadable, row = cache_mod._LAYOUT
    slots = list(kept[1])
    slots[0], slots[1] = slots[1], slots[0]  # same width, other names
    monkeypatch.setattr(cache_mod, "_LAYOUT", ((kept[0], tuple(slots), *kept[2:]), unreadable, row))
    assert not HeaderCache(box.root, False).loaded


def test_a_wrongly_shaped_row_is_not_trusted(box):
    box.letter("a-1")
    cached_scan(box.root)
    p = Path(cache_path(box.root, False))
    c = HeaderCache(box.root, False)
    row = c.rows["beta/inbox/a-1.md"]
    c.rows["beta/inbox/a-1.md"] = row[:-1]  # one cell short
    cache_mod.write_cache_file(str(p), os.path.realpath(box.root), False, c.rows, {})  # a good checksum
    assert not HeaderCache(box.root, False).loaded


def test_a_cache_from_another_root_is_not_used(tmp_path):
    from tests.conftest import make_box

    a = make_box(tmp_path / "a")
    b = make_box(tmp_path / "b")
    a.letter("x-1", priority="now")
    b.letter("x-1", priority="next")  # same path, same size
    os.utime(b.root / "beta/inbox/x-1.md", ns=(0, 0))
    os.utime(a.root / "beta/inbox/x-1.md", ns=(0, 0))
    cached_scan(a.root)
    assert cache_path(a.root, False) != cache_path(b.root, False)
    shutil.copy(cache_path(a.root, False), cache_path(b.root, False))  # a's rows under b's name
    c = HeaderCache(b.root, False)
    assert not c.loaded
    snap = scan(b.root, id_time_is_utc=False, cache=c)
    assert snap.letters[0].priority == "next"


def test_a_cache_built_under_another_time_setting_is_not_reused(box):
    box.letter("2026-01-05T101500-alpha-info-x-0123abcd", sent=None)
    off, _ = cached_scan(box.root, utc=False)
    on, c = cached_scan(box.root, utc=True)
    assert c.misses == 1
    assert off.letters[0].sent_at is None and on.letters[0].sent_at is not None
    p = Path(cache_path(box.root, True))
    shutil.copy(cache_path(box.root, False), p)  # the other setting's rows under this name
    assert not HeaderCache(box.root, True).loaded


# --- outside the letterbox; saving ---------------------------------------------------


def test_scans_with_cache_leave_the_letterbox_byte_for_byte_unchanged(box):
    varied(box)
    before = box.tree_bytes()
    for _ in range(2):
        cached_scan(box.root)
    scan_cached(box.root, id_time_is_utc=False)
    assert box.tree_bytes() == before
    where = Path(cache_path(box.root, False))
    assert where.exists()
    assert Path(os.environ["XDG_CACHE_HOME"]) in where.parents
    assert Path(os.path.realpath(box.root)) not in where.parents


def test_cache_lives_in_the_xdg_cache_home(box, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "elsewhere"))
    box.letter("a-1")
    scan_cached(box.root, id_time_is_utc=False)
    assert len(list((tmp_path / "elsewhere" / "letterbox-tui").iterdir())) == 1


def test_unchanged_scan_does_not_rewrite_and_leaves_no_temporaries(box):
    box.letter("a-1")
    cached_scan(box.root)
    p = Path(cache_path(box.root, False))
    before = p.stat().st_mtime_ns, p.stat().st_ino
    _, c = cached_scan(box.root)
    assert not c.save()
    assert (p.stat().st_mtime_ns, p.stat().st_ino) == before
    assert [x.name for x in p.parent.iterdir()] == [p.name]


def test_concurrent_savers_never_corrupt_the_cache(box):
    box.letter("a-1")
    c1, c2 = HeaderCache(box.root, False), HeaderCache(box.root, False)
    scan(box.root, id_time_is_utc=False, cache=c1)
    box.letter("a-2")
    scan(box.root, id_time_is_utc=False, cache=c2)
    c2.save()
    c1.save()  # the last writer wins whole; neither file is ever half-written
    c = HeaderCache(box.root, False)
    assert c.loaded and list(c.rows) == ["beta/inbox/a-1.md"]
    snap = scan(box.root, id_time_is_utc=False, cache=c)
    assert sorted(x.id for x in snap.letters) == ["a-1", "a-2"]


def test_partial_scan_keeps_the_other_seats_rows(box):
    box.letter("to-beta", to="beta")
    box.letter("to-alpha", frm="beta", to="alpha")
    cached_scan(box.root)
    _, c = cached_scan(box.root, participants=["alpha"])
    assert sorted(HeaderCache(box.root, False).rows) == ["alpha/inbox/to-alpha.md", "beta/inbox/to-beta.md"]


def test_unwritable_cache_directory_costs_speed_not_answers(box, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    box.letter("a-1")
    snap = scan_cached(box.root, id_time_is_utc=False)
    assert [x.id for x in snap.letters] == ["a-1"]


def test_scan_without_a_cache_is_unchanged(box):
    varied(box)
    a = scan(box.root, id_time_is_utc=False)
    b = scan(box.root, id_time_is_utc=False, cache=None)
    assert_same(a, b)
    assert not Path(cache_path(box.root, False)).exists()


def test_the_cli_load_uses_the_cache(box, capsys):
    from letterbox_tui.cli import main

    box.letter("a-1", type="request", requires_ack="true")
    assert main(["--root", str(box.root), "query", "type=request", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    c = HeaderCache(box.root, False)
    assert c.loaded and list(c.rows) == ["beta/inbox/a-1.md"]
    assert main(["--root", str(box.root), "query", "type=request", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    first["scope"]["scanned_at"] = second["scope"]["scanned_at"] = ""
    assert first == second


def test_background_save_waits_for_the_answer_then_writes_from_a_detached_process(box, monkeypatch):
    import time

    from letterbox_tui.core.speed import after

    monkeypatch.setattr(after, "BACKGROUND_ROWS", 1)
    box.letter("a-1")
    box.letter("a-2")
    snap = scan_cached(box.root, id_time_is_utc=False, background=True)
    assert sorted(x.id for x in snap.letters) == ["a-1", "a-2"]
    assert not HeaderCache(box.root, False).loaded  # left until the answer is out ...
    after.run_after_answer()  # ... then written by a detached process
    deadline = time.monotonic() + 20
    while not HeaderCache(box.root, False).loaded and time.monotonic() < deadline:
        time.sleep(0.02)
    c = HeaderCache(box.root, False)
    assert sorted(c.rows) == ["beta/inbox/a-1.md", "beta/inbox/a-2.md"]
    warm = scan(box.root, id_time_is_utc=False, cache=c)
    assert c.hits == 2 and not c.needs_save()
    assert_same(snap, warm)


def test_unreadable_rows_cover_every_field(box):
    box.raw("beta/inbox/broken.md", "---\nid: b-1\nfrom: alpha\nfrom: beta\nto x\n---\n")
    cold, _ = cached_scan(box.root)
    warm, c = cached_scan(box.root)
    assert c.hits == 1 and warm.unreadable == cold.unreadable
    assert warm.unreadable[0].legible == {"id": "b-1"} and "to x" in warm.unreadable[0].illegible


def test_a_file_changed_just_before_it_was_read_is_not_cached(box, monkeypatch):
    """The racy window is on the ctime (the time no tool can set): an mtime set long ago
    does not make a file just written trustworthy."""
    monkeypatch.setattr(cache_mod, "RACY_NS", 400_000_000)
    old = box.letter("old-1")
    time.sleep(0.5)
    fresh = box.letter("fresh-1")
    os.utime(fresh, ns=(0, 1_000_000_000))  # an mtime long ago, a ctime just now
    _, c = cached_scan(box.root)
    assert list(c.rows) == ["beta/inbox/old-1.md"]  # the fresh one may still change unseen
    _, c = cached_scan(box.root)
    assert (c.hits, c.misses) == (1, 1)
    time.sleep(0.5)  # now it is old enough
    _, c = cached_scan(box.root)
    assert sorted(c.rows) == ["beta/inbox/fresh-1.md", "beta/inbox/old-1.md"]
    assert old.exists()


def test_a_cache_directory_inside_the_letterbox_is_never_used(box, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(box.root / ".cache"))
    box.letter("a-1")
    before = box.tree_bytes()
    snap = scan_cached(box.root, id_time_is_utc=False)
    assert [x.id for x in snap.letters] == ["a-1"]
    assert box.tree_bytes() == before
    monkeypatch.setenv("XDG_CACHE_HOME", str(box.root))  # would look like a seat
    scan_cached(box.root, id_time_is_utc=False)
    assert box.tree_bytes() == before


def test_temporaries_of_dead_writers_are_swept(box):
    box.letter("a-1")
    where = Path(cache_path(box.root, False)).parent
    where.mkdir(parents=True)
    dead = where / ".tmp-dead.headers"
    live = where / ".tmp-live.headers"
    dead.write_bytes(b"half")
    live.write_bytes(b"half")
    os.utime(dead, ns=(0, 10**18))  # long ago
    cached_scan(box.root)
    assert not dead.exists() and live.exists()

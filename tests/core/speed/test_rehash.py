"""The header cache across checkouts, rebases and branch switches: a letter whose stat
changed but whose header bytes did not is read again (never trusted on a stale stat) and
its row reused by the header's hash, not counted as a miss; any other change is a miss."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from datetime import datetime, timezone

import pytest

from letterbox_tui.core.letters import letters_equal
from letterbox_tui.core.query import parse_query, run_query
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.core.speed import accel
from letterbox_tui.core.speed import cache as cache_mod
from letterbox_tui.core.speed.cache import HeaderCache
from letterbox_tui.core.speed.files import take_notices
from letterbox_tui.core.speed.verify import verify_cache

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
READERS = ["pure", pytest.param("c", marks=pytest.mark.skipif(
    accel.scanio(pure=False) is None, reason="the C accelerator is not built"))]


@pytest.fixture(autouse=True)
def _no_racy_window(monkeypatch):
    """Letters written by a test are seconds old at most: trust them."""
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)


def cached_scan(root, kind: str):
    c = HeaderCache(root, False)
    snap = scan(root, cache=c, reader=accel.reader(pure=kind == "pure"))
    c.save()
    return snap, c


def letters_of(box) -> list:
    return sorted(p for p in box.root.glob("*/*/*.md"))


def fill(box) -> None:
    box.letter("t-1", type="request", requires_ack="true", deadline="2026-02-01T10:00:00+02:00",
               sent="2026-01-02T03:04:05Z", body="a body\n")
    box.letter("2026-01-05T101500-alpha-info-x-0123abcd", sent=None, subject="time from the id")
    box.letter("n-1", sent="2026-01-01T00:00:00", requires_ack=None, deadline="soon")
    box.letter("al-1", name="al-1-0123abcd.md", re="t-1", thread="t-1")
    box.letter("mm-1", name="other.md", supersedes="bad id!", extra_field="kept as written")
    box.letter("d-1", type="dispute", disputes="t-1, n-1", folder="processed")
    box.letter("r-1", type="ruling", rules_on="d-1", upholds="t-1", frm="beta", to="alpha")
    box.letter("a-1", type="result", re="t-1", frm="beta", to="alpha")
    box.raw("beta/inbox/broken.md", "---\nid: b-1\nfrom: alpha\nfrom: beta\nto x\n---\n")
    box.raw("alpha/processed/crlf.md", b"---\r\nid: c-1\r\nfrom: beta\r\nto: alpha\r\ntype: info\r\n---\r\nbody")
    box.raw("beta/inbox/t-1.md.ack", "")


def answers(snap) -> dict:
    """What the questions people ask say of this snapshot (path -> outcome), per query."""
    res = resolve(snap, AT)
    out = {}
    for terms in (["owed"], ["from=alpha"], ["type=request"], ["late"], ["sent<2026-01-03"]):
        try:
            q = parse_query(terms)
        except Exception:  # noqa: BLE001 - a term this build does not have is not the point here
            continue
        result = run_query(q, res)
        out[" ".join(terms)] = (sorted(x.path for x in result.matches),
                                sorted((x.path, tuple(sorted(r.code for r in why))) for x, why in result.unknown))
    assert out  # at least some of the questions ran
    return out


def assert_same_as_from_scratch(root, snap) -> None:
    scratch = scan(root, reader=accel.reader(pure=True))  # no cache at all
    a = {x.path: x for x in [*snap.letters, *snap.unreadable]}
    b = {x.path: x for x in [*scratch.letters, *scratch.unreadable]}
    assert sorted(a) == sorted(b)
    for p in a:
        assert letters_equal(a[p], b[p]), p
    assert answers(snap) == answers(scratch)


def touch_all(box) -> None:
    later = time.time() + 5
    for p in letters_of(box):
        os.utime(p, (later, later))


@pytest.mark.parametrize("kind", READERS)
def test_touching_every_letter_reuses_every_row_by_hash(box, kind):
    fill(box)
    n = len(letters_of(box))
    _, c = cached_scan(box.root, kind)
    assert c.misses == n
    touch_all(box)
    snap, c = cached_scan(box.root, kind)
    assert (c.hits, c.misses, c.reused) == (0, 0, n)
    assert_same_as_from_scratch(box.root, snap)
    # the rows now carry the new stat: the next scan is warm
    after = {x.path: x.mtime_ns for x in snap.letters}
    assert all(m == (box.root / p).stat().st_mtime_ns for p, m in after.items())
    _, c = cached_scan(box.root, kind)
    assert (c.hits, c.misses, c.reused) == (n, 0, 0)


@pytest.mark.parametrize("kind", READERS)
def test_a_changed_header_is_parsed_again_not_reused(box, kind):
    fill(box)
    path = box.letter("p-1", priority="next")
    n = len(letters_of(box))
    cached_scan(box.root, kind)
    touch_all(box)
    path.write_text(path.read_text().replace("priority: next", "priority: urgent-now"))
    snap, c = cached_scan(box.root, kind)
    assert (c.hits, c.misses, c.reused) == (0, 1, n - 1)
    assert {x.id: x.priority for x in snap.letters}["p-1"] == "urgent-now"
    assert_same_as_from_scratch(box.root, snap)


@pytest.mark.parametrize("kind", READERS)
def test_a_body_change_keeps_the_row_with_the_new_size(box, kind):
    path = box.letter("p-1", body="short\n")
    cached_scan(box.root, kind)
    path.write_text(path.read_text().replace("short", "a much longer body than before"))
    snap, c = cached_scan(box.root, kind)
    assert (c.misses, c.reused) == (0, 1)
    assert snap.letters[0].size == path.stat().st_size
    assert_same_as_from_scratch(box.root, snap)


@pytest.mark.parametrize("kind", READERS)
def test_a_same_size_header_edit_with_mtime_restored_is_caught(box, kind):
    """The edit is seen by its ctime and parsed again (its hash differs); and a row whose
    stat was made to match a stale header (what no stat can show) is what ``check
    --verify`` catches: reported, dropped, never brought back by a hash."""
    path = box.letter("p-1", priority="next")
    box.letter("p-2")
    cached_scan(box.root, kind)
    time.sleep(0.05)
    st = path.stat()
    with open(path, "r+b") as fh:
        data = fh.read()
        fh.seek(0)
        fh.write(data.replace(b"priority: next", b"priority: noww"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    rel = "beta/inbox/p-1.md"
    # the stale row made to match the file's stat now (a clock or file system that fools it)
    c = HeaderCache(box.root, False)
    now = path.stat()
    row = c.rows[rel]
    c.rows[rel] = (row[0], row[1], now.st_size, now.st_mtime_ns, now.st_ino, now.st_ctime_ns)
    c._fresh, c._changed = dict(c.rows), True
    assert c.save()
    stale, c = cached_scan(box.root, kind)
    assert c.hits == 2 and {x.id: x.priority for x in stale.letters}["p-1"] == "next"
    assert verify_cache(box.root, stale, id_time_is_utc=False) == [rel]
    touch_all(box)  # after a checkout: the dropped row is not reused, the other is
    fresh, c = cached_scan(box.root, kind)
    assert (c.misses, c.reused) == (1, 1)
    assert {x.id: x.priority for x in fresh.letters} == {"p-1": "noww", "p-2": "next"}
    assert verify_cache(box.root, fresh, id_time_is_utc=False) == []


def test_an_old_format_cache_is_rebuilt_not_misread(box):
    box.letter("p-1")
    c = HeaderCache(box.root, False)
    scan(box.root, cache=c, reader=accel.reader(pure=True))
    c.save()
    with open(c.path, "rb") as fh:
        data = bytearray(fh.read())
    data[8:12] = (cache_mod.VERSION - 1).to_bytes(4, "little")  # the frame's version word
    with open(c.path, "wb") as fh:
        fh.write(data)
    take_notices()
    snap, c = cached_scan(box.root, "pure")
    assert c.misses == 1 and c.reused == 0 and len(snap.letters) == 1
    assert any(f"format {cache_mod.VERSION - 1}, not {cache_mod.VERSION}" in x for x in take_notices())


def _git(cwd, *args) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("kind", READERS)
def test_a_branch_switch_and_back_reuses_rows_by_hash(box, kind):
    """With real git. ``git checkout other && git checkout -`` re-creates every file the
    other branch lacks or holds otherwise (new inodes and mtimes, the same bytes): answered
    as from scratch, by reuse. A branch whose letters differ only in their bodies (what a
    rebase or an edit of bodies does) is reused too, both ways; a changed header is not."""
    fill(box)
    path = box.letter("p-1", priority="next")
    n = len(letters_of(box))
    _git(box.root, "init", "-q", "-b", "main")
    _git(box.root, "add", "-A")
    _git(box.root, "commit", "-qm", "letters")
    _git(box.root, "checkout", "-qb", "other")
    path.write_text(path.read_text().replace("priority: next", "priority: later"))
    for p in letters_of(box):
        if p != path:
            p.unlink()
    _git(box.root, "add", "-A")
    _git(box.root, "commit", "-qm", "other: one letter, its header changed")
    _git(box.root, "checkout", "-q", "main")
    _git(box.root, "checkout", "-qb", "bodies")
    for p in letters_of(box):
        p.write_bytes(p.read_bytes() + b"\nanother line of body\n")
    _git(box.root, "commit", "-qam", "bodies: every letter's body longer")
    _git(box.root, "checkout", "-q", "main")
    time.sleep(0.02)
    _, c = cached_scan(box.root, kind)
    assert c.misses == n
    before = {p: p.stat().st_ctime_ns for p in letters_of(box)}
    _git(box.root, "checkout", "-q", "other")
    _git(box.root, "checkout", "-q", "-")
    assert all(p.stat().st_ctime_ns != before[p] for p in letters_of(box))  # git re-created them all
    snap, c = cached_scan(box.root, kind)
    assert (c.hits, c.misses, c.reused) == (0, 0, n)
    assert_same_as_from_scratch(box.root, snap)
    _git(box.root, "checkout", "-q", "bodies")
    snap, c = cached_scan(box.root, kind)
    assert (c.hits, c.misses, c.reused) == (0, 0, n)
    assert_same_as_from_scratch(box.root, snap)
    _git(box.root, "checkout", "-q", "other")
    snap, c = cached_scan(box.root, kind)
    assert len(snap.letters) == 1 and snap.letters[0].priority == "later" and (c.misses, c.reused) == (1, 0)
    assert_same_as_from_scratch(box.root, snap)


@pytest.mark.parametrize("kind", READERS)
def test_a_row_kept_under_another_files_path_is_never_reused(box, kind):
    """A crafted file (good checksum) that files p-1's row and hash under p-2's path: p-2's
    header does not hash as p-1's, and a row must name its own path to be reused."""
    a = box.letter("p-1", priority="next")
    b = box.letter("p-2", priority="later")
    b.write_bytes(a.read_bytes())  # the same header bytes in both files
    cached_scan(box.root, kind)
    c = HeaderCache(box.root, False)
    one, two = "beta/inbox/p-1.md", "beta/inbox/p-2.md"
    c.rows[two] = c.rows[one]
    c.hashes[two] = c.hashes[one]
    c._fresh, c._changed = dict(c.rows), True
    assert c.save()
    touch_all(box)
    snap, c = cached_scan(box.root, kind)
    assert (c.misses, c.reused) == (1, 1)
    assert sorted(x.path for x in snap.letters) == [one, two]
    assert_same_as_from_scratch(box.root, snap)

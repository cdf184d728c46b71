"""What a cold scan keeps per letter, counted in bytes (tracemalloc), never timed.

Issue 15: a cold query at 100,000 letters peaks at most 150 MB. Most of it is what the scan
keeps per letter until the answer is out (the letters, and what the header cache holds
for its save after the answer); these tests bound that, and hold the letters it makes to
be the letters ``core.letters.build`` makes (exact answers, whatever is shared).
"""

from __future__ import annotations

import gc
import os
import tracemalloc

import pytest

from letterbox_tui.core.letters import build, letters_equal
from letterbox_tui.core.header import parse_header
from letterbox_tui.core.speed import accel
from letterbox_tui.core.speed import cache as cache_mod
from letterbox_tui.core.speed.after import run_after_answer
from scripts.benchgen import generate
from letterbox_tui.core.speed.choice import scan_cached

needs_c = pytest.mark.skipif(not accel.letters_in_c(), reason="the C accelerator is not built")

#: bytes a cold scan keeps per letter (letters, scope, what the cache holds for its save)
BOUND = 1100
N = 3000


@pytest.fixture
def generated(tmp_path, monkeypatch):
    root = tmp_path / "lb"
    generate(root, N)
    # files written a moment ago are racily recent and never cached: treat them as old,
    # so the cache holds what it holds for a real letterbox until its save
    monkeypatch.setattr(cache_mod, "RACY_NS", -1)
    return root


@needs_c
def test_a_cold_scan_keeps_at_most_its_bound_per_letter(generated):
    scan_cached(generated, id_time_is_utc=False)  # imports and the accelerator's tables
    os.unlink(cache_mod.cache_path(generated, False))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        snapshot = scan_cached(generated, id_time_is_utc=False, background=True)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    run_after_answer()  # the save left until after the answer
    assert len(snapshot.letters) == N
    per_letter = kept / N
    assert per_letter <= BOUND, f"{per_letter:.0f} bytes per letter"
    assert os.path.exists(cache_mod.cache_path(generated, False))


@needs_c
def test_what_repeats_is_shared_and_the_letters_are_build_s(generated):
    from letterbox_tui.core.scan import scan

    snapshot = scan(generated, id_time_is_utc=False, reader=accel.reader())
    letters = snapshot.letters
    made_in_c = [x for x in letters if x._field_values is None]
    assert len(made_in_c) > N // 2  # most letters: every key has a slot
    for slot in ("sender", "recipient", "type", "priority", "requires_ack"):
        values = [getattr(x, slot) for x in made_in_c]
        assert len({id(v) for v in values}) <= 2 * len(set(values)), slot  # about one str per value
    assert len({id(x._field_keys) for x in made_in_c}) < 10  # one key tuple per key order
    # each letter is the one build() makes from the same file, its fields read back exactly
    for x in letters[:: max(1, N // 300)]:
        with open(os.path.join(generated, x.path), "rb") as fh:
            data = fh.read(32768)
        same = build(parse_header(data), path=x.path, seat=x.seat, folder=x.folder, name=x.name,
                     size=x.size, mtime_ns=x.mtime_ns, inode=x.inode, id_time_is_utc=False)
        assert letters_equal(x, same) and x.fields == same.fields


@needs_c
@pytest.mark.parametrize("extra", [0, 1, 40, 80, 111, 112, 113, 127, 128, 129, 200, 255, 256, 257, 3000])
def test_the_header_hash_of_a_letter_made_in_c_is_the_cache_s(tmp_path, extra):
    """The C reader keeps a made letter's header as its BLAKE2b-128 digest (the header
    cache's ``header_hash``) across every length around the hash's 128-byte blocks."""
    from letterbox_tui.core.speed._scanio import read_headers
    from letterbox_tui.core.speed.cache import header_hash

    lid = "2026-05-01T001900-alpha-info-paint"
    head = f"---\nid: {lid}\nfrom: alpha\nto: beta\ntype: info\nrequires_ack: false\nsent: 2026-05-01T00:19:00Z\n"
    subject = "subject: " + "s" * extra + "\n" if extra else ""
    data = (head + subject + "---\nbody\n" * 3).encode()
    (tmp_path / f"{lid}.md").write_bytes(data)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        (made,) = read_headers(fd, [f"{lid}.md"], 1, ("beta", "inbox", "beta/inbox/"))
    finally:
        os.close(fd)
    assert type(made[8]).__name__ == "Letter"
    assert made[7] == header_hash(data) and len(made[7]) == 16


def test_a_stat_beyond_64_bits_is_kept_unpacked_not_lost(box):
    """What the scan saw is kept packed in 64-bit words; a file time beyond them (year
    2286) is kept as it is, and every other file's stat beside it."""
    from letterbox_tui.core.scan import scan

    far = box.letter("2026-01-01T000000-alpha-info-far-aaaaaaaa")
    near = box.letter("2026-01-01T000100-alpha-info-near-bbbbbbbb")
    os.utime(far, ns=(0, 10**19))
    snapshot = scan(box.root, id_time_is_utc=False)  # the pure reader: exact Python ints
    files = snapshot.seen.files["beta/inbox"]
    by_name = {f[0]: f for f in files}
    assert by_name[far.name][2] == 10**19 == os.stat(far).st_mtime_ns
    st = os.stat(near)
    assert by_name[near.name][1:] == (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    assert len(files) == 2


@needs_c
def test_a_time_beyond_64_bits_is_read_in_c_as_os_stat_gives_it(box):
    """The C reader gives a file time set past the year 2262 as os.stat does (it wrapped
    to a negative number), and the scan keeps it unpacked."""
    from letterbox_tui.core.scan import scan

    far = box.letter("2026-01-01T000000-alpha-info-far-aaaaaaaa")
    box.letter("2026-01-01T000100-alpha-info-near-bbbbbbbb")
    os.utime(far, ns=(0, 10**19))
    fast = scan(box.root, id_time_is_utc=False, reader=accel.reader())
    pure = scan(box.root, id_time_is_utc=False)
    (x,) = [x for x in fast.letters if x.name == far.name]
    assert x.mtime_ns == 10**19 == os.stat(far).st_mtime_ns
    assert [letters_equal(a, b) for a, b in zip(fast.letters, pure.letters)] == [True, True]
    assert fast.seen.files == pure.seen.files


@needs_c
def test_a_batch_of_letters_made_in_c_mixed_with_others_is_taken_in_order(box, monkeypatch):
    """Letters the C reader made come a batch at a time (their hashes and stats packed),
    among letters build() makes, unreadable files, a FIFO and a file time past 64 bits:
    the scan, what it saw and what the header cache keeps are the pure reader's."""
    from letterbox_tui.core.scan import scan
    from letterbox_tui.core.speed.cache import HeaderCache

    monkeypatch.setattr(cache_mod, "RACY_NS", -1)
    for i in range(300):  # over one batch (accel.FIRST_BATCH), several kinds in each
        lid = f"2026-01-01T{i // 60:02d}{i % 60:02d}00-alpha-info-n{i:03d}-aaaaaaaa"
        if i % 7 == 3:
            box.letter(lid, priority=None)  # not canonical: build() makes it
        elif i % 11 == 5:
            box.raw(f"beta/inbox/{lid}.md", "---\nid: broken\n")  # unreadable
        else:
            path = box.letter(lid)
            if i == 200:
                os.utime(path, ns=(0, 10**19))
    os.mkfifo(box.root / "beta/inbox/2026-01-01T999999-alpha-info-fifo-aaaaaaaa.md")
    fast_cache, pure_cache = HeaderCache(box.root, False), HeaderCache(box.root, False, path=str(box.root.parent / "p"))
    fast = scan(box.root, id_time_is_utc=False, reader=accel.reader(), cache=fast_cache)
    pure = scan(box.root, id_time_is_utc=False, cache=pure_cache)
    assert len(fast.letters) == len(pure.letters) > 200 and fast.unreadable == pure.unreadable
    assert all(letters_equal(a, b) for a, b in zip(fast.letters, pure.letters))
    assert fast.unsupported == pure.unsupported and fast.seen.files == pure.seen.files
    fast_cache.save()
    pure_cache.save()
    assert fast_cache.rows == pure_cache.rows and fast_cache.hashes == pure_cache.hashes

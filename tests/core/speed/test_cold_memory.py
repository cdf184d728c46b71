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
from letterbox_tui.core.speed.benchgen import generate
from letterbox_tui.core.speed.choice import scan_cached

needs_c = pytest.mark.skipif(not accel.letters_in_c(), reason="the C accelerator is not built")

#: bytes a cold scan keeps per letter (letters, scope, what the cache holds for its save)
BOUND = 1600
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

"""Loading the header cache lets other threads run: its rows are unpickled a frame at a time
through ``files.Pieces`` (from ``io.BytesIO`` the C unpickler held the interpreter lock
for the whole load, ~0.2 s at 100,000 rows, while the app's keys waited), with the same
rows as before."""

from __future__ import annotations

import io
import pickle
import sys
import threading
import time

import pytest

from letterbox_tui.core.speed import cache as cache_mod
from letterbox_tui.core.speed import files
from letterbox_tui.core.speed.accel import reader
from letterbox_tui.core.speed.cache import HeaderCache, read_cache_file, write_cache_file
from letterbox_tui.core.scan import scan


@pytest.fixture(autouse=True)
def _no_racy_window(monkeypatch):
    """Letters written by a test are seconds old at most: cache them (as test_cache does)."""
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_pieces_unpickle_what_bytesio_does(protocol):
    b = bytes if protocol >= 3 else str  # (bytes are a global in the text protocols, refused)
    data = {f"seat-{i % 7}/inbox/letter-{i}.md": (i, ("x" * (i % 50), i * 3, b(i % 9)), -i, 2**70 + i)
            for i in range(5000)}
    data["big"] = (b(300_000), "s" * 200_000, [None, True, 1.5])  # (objects larger than a frame)
    blob = pickle.dumps(data, protocol=protocol)
    pieces = files.Pieces(memoryview(blob))
    assert files.NoGlobals(pieces).load() == files.NoGlobals(io.BytesIO(blob)).load() == data
    if protocol >= 4:
        assert pieces.reads > len(blob) // (128 * 1024)  # a frame (or a large object) at a time


def test_pieces_refuse_globals_as_before():
    blob = pickle.dumps(threading.Lock, protocol=5)
    with pytest.raises(pickle.UnpicklingError):
        files.NoGlobals(files.Pieces(blob)).load()


def _many_rows(box, n: int) -> tuple[dict, dict]:
    box.letter("2026-11-28T140000-alpha-request-one-abcdef01", frm="alpha", to="beta", type="request",
               sent="2026-11-28T14:00:00Z", subject="one")
    c = HeaderCache(box.root, False)
    scan(box.root, id_time_is_utc=False, cache=c, reader=reader())
    c.save()
    rows, hashes = read_cache_file(c.path, c.root, False)
    (path, row), = rows.items()
    return {f"{path}-{i}": row for i in range(n)}, {f"{path}-{i}": hashes[path] for i in range(n)}


def test_another_thread_runs_while_the_cache_is_loaded(box, monkeypatch):
    rows, hashes = _many_rows(box, 20_000)
    made = HeaderCache(box.root, False)
    write_cache_file(made.path, made.root, False, rows, hashes)

    counted = [0]
    seen: list[int] = []
    stop = threading.Event()

    class Watched(files.Pieces):  # what the other thread had counted at each read
        __slots__ = ()

        def read(self, n=-1):
            seen.append(counted[0])
            return super().read(n)

    def count():
        while not stop.is_set():
            counted[0] += 1

    monkeypatch.setattr(cache_mod, "Pieces", Watched)
    other = threading.Thread(target=count, daemon=True)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        other.start()
        while counted[0] == 0:  # (running)
            time.sleep(0.001)
        c = HeaderCache(box.root, False)
        c._load()
    finally:
        stop.set()
        sys.setswitchinterval(old)
        other.join()
    assert c.loaded and c.rows == rows  # the same rows, in the same order
    assert list(c.rows) == list(rows)
    assert len(seen) > 50  # read a frame at a time
    assert len(set(seen)) > 1  # and the other thread ran between two reads

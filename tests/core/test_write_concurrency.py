"""Concurrent writers lose nothing (SPEC 4): several processes sending at once."""

from __future__ import annotations

import multiprocessing
import random
import time
from datetime import datetime, timezone

from letterbox_tui.core.scan import scan
from letterbox_tui.core.write import Draft, deliver

NOW = datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)
WRITERS = 4
EACH = 50


def _small_token_space(rng: random.Random):
    # 512 possible suffixes for 200 letters in the same second: collisions are certain,
    # so the exclusive create and the retry with a new suffix are exercised.
    return lambda: f"{rng.randrange(512):08x}"


def _writer(root: str, n: int, out) -> None:
    token = _small_token_space(random.Random(n))
    ids = []
    for i in range(EACH):
        body = f"writer {n} letter {i}\n"
        ids.append(deliver(root, Draft("alpha", "beta", "info", f"w{n}", body), now=NOW, token=token).id)
    out.put(ids)


def test_concurrent_senders_lose_nothing_and_ids_are_unique(box):
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(box.root), n, out)) for n in range(WRITERS)]
    for p in procs:
        p.start()
    # Meanwhile, read: a reader never sees a partial letter (no unreadable file, ever).
    scans = 0
    while any(p.is_alive() for p in procs) or scans == 0:
        snap = scan(box.root, max_attempts=1)
        assert snap.unreadable == [] and all(x.id + ".md" == x.name for x in snap.letters)
        scans += 1
        time.sleep(0.02)
    reported = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    ids = [i for batch in reported for i in batch]
    assert len(ids) == len(set(ids)) == WRITERS * EACH
    snap = scan(box.root)
    assert snap.scope.complete and not snap.unreadable
    assert sorted(letter.id for letter in snap.letters) == sorted(ids)
    bodies = set()
    for letter in snap.letters:
        bodies.add((box.root / letter.path).read_text().split("---\n", 2)[2])
    assert bodies == {f"writer {n} letter {i}\n" for n in range(WRITERS) for i in range(EACH)}
    assert not [p for p in (box.root / "beta/inbox").iterdir() if p.name.startswith(".")]

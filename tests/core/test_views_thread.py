"""The thread tree (``core.views.thread``): one rule for orphans (extra roots, never hung
under the root), each letter once, built and encoded without recursion and in linear time."""

from __future__ import annotations

import gc
import json
import random
import time
from datetime import datetime, timedelta, timezone

import pytest

from letterbox_tui.core.model import Letter, Scope, Snapshot
from letterbox_tui.core.resolve import Resolution, resolve
from letterbox_tui.core.views.thread import ThreadView, thread_view
from tests.core.helpers import AT, resolved

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _shape(view: ThreadView) -> list[tuple[str, int, str]]:
    return [(n.id, n.depth, n.via) for n in view.nodes]


def test_orphan_replies_are_extra_roots_after_the_root(box):
    box.letter("root-1", sent="2026-01-01T00:00:00Z")
    box.letter("r-1", re="root-1", thread="root-1", sent="2026-01-01T01:00:00Z")
    box.letter("r-2", re="r-1", thread="root-1", sent="2026-01-01T02:00:00Z")
    box.letter("r-0", re="root-1", thread="root-1", sent="2026-01-01T00:30:00Z")
    box.letter("lost-1", re="gone-1", thread="root-1", sent="2025-12-01T00:00:00Z")  # parent absent
    box.letter("tagged-1", thread="root-1", sent="2026-01-02T00:00:00Z")  # no re, the label only
    view = thread_view(resolved(box), "root-1")
    assert view.root == "root-1"
    assert _shape(view) == [
        ("root-1", 0, "root"), ("r-0", 1, "re"), ("r-1", 1, "re"), ("r-2", 2, "re"),
        ("lost-1", 0, "detached"), ("tagged-1", 0, "label"),
    ]
    assert view.to_json() == [
        {"id": "root-1", "children": [{"id": "r-0", "children": []},
                                       {"id": "r-1", "children": [{"id": "r-2", "children": []}]}]},
        {"id": "lost-1", "children": []}, {"id": "tagged-1", "children": []},
    ]


def test_a_thread_without_its_root_and_a_reply_loop(box):
    box.letter("a-1", re="b-1", thread="gone-1", sent="2026-01-01T01:00:00Z")
    box.letter("b-1", re="a-1", thread="gone-1", sent="2026-01-01T02:00:00Z")
    box.letter("c-1", re="gone-1", thread="gone-1", sent="2026-01-01T03:00:00Z")
    view = thread_view(resolved(box), "gone-1")
    assert view.root is None
    assert _shape(view) == [("c-1", 0, "detached"), ("a-1", 0, "loop"), ("b-1", 1, "re")]


def test_a_duplicated_id_is_listed_once_per_file(box):
    box.letter("root-1")
    box.letter("r-1", re="root-1", thread="root-1", seat="alpha")
    box.letter("r-1", re="root-1", thread="root-1", seat="beta")
    view = thread_view(resolved(box), "root-1")
    assert [n.id for n in view.nodes] == ["root-1", "r-1", "r-1"]
    assert sorted(n.letter.path for n in view.nodes[1:]) == ["alpha/inbox/r-1.md", "beta/inbox/r-1.md"]


def _chain_snapshot(n: int, branching: bool = False) -> Snapshot:
    rng = random.Random(n)
    letters = []
    for i in range(n):
        if i == 0:
            parent = ""
        elif branching:
            parent = f"m-{rng.randrange(i)}"
        else:
            parent = f"m-{i - 1}"
        sent = T0 + timedelta(seconds=i)
        letters.append(Letter(
            id=f"m-{i}", sender="alpha", recipient="beta", type="info", re=parent,
            thread="" if i == 0 else "m-0", sent=sent.isoformat(), seat="beta", folder="inbox",
            path=f"beta/inbox/m-{i}.md", name=f"m-{i}.md", sent_at=sent,
        ))
    scope = Scope(root="/nowhere", participants=["alpha", "beta"], files=n, letters=n)
    return Snapshot("/nowhere", letters, [], [], scope, seats=["alpha", "beta"])


def test_encode_is_json_dumps_of_the_tree():
    for n in (1, 2, 7, 60, 300):
        view = thread_view(resolve(_chain_snapshot(n, branching=True), AT), "m-0")
        assert len(view.nodes) == n
        assert view.encode() == json.dumps(view.to_json(), separators=(",", ":"))
        assert json.loads(view.encode()) == view.to_json()


def _chain(n: int) -> Resolution:
    res = resolve(_chain_snapshot(n), AT)
    res.thread("m-0")  # the resolver's own index (sorted once) is not this view's cost
    return res


def _cpu_seconds(res: Resolution, n: int) -> float:
    """The processor time one build and encoding of an ``n``-deep reply chain takes.

    Processor time of this thread, not wall time: on a loaded machine wall time counts
    the time other processes had the core. The collector is off while it runs: its full
    passes walk every live object of the process (the snapshot, pytest's own), a cost of
    the heap, not of this walk."""
    gc.collect()
    gc.disable()
    try:
        t = time.thread_time()
        view = thread_view(res, "m-0")
        text = view.encode()
        tree = view.to_json()
        spent = time.thread_time() - t
    finally:
        gc.enable()
    assert view.max_depth == n - 1 and len(view.nodes) == n
    assert text.count('"id"') == n and len(tree) == 1
    return spent


@pytest.mark.slow
def test_a_deep_reply_chain_is_built_and_encoded_in_linear_time():
    """100,000 deep needs no recursion (json.dumps fails near 500); time grows linearly:
    sixteen times the letters take about sixteen times the processor time (a little more:
    past the processor's caches a letter costs a little more), far below the 256 times a
    quadratic walk would. Each size keeps its fastest of three runs: processor time only
    ever adds to a run's real cost (a cache shared with a busy neighbour, a migration), so
    the fastest is the closest to it. The large size stops at its first run under the
    bound: the fastest of three could only be lower, so the answer is the same."""
    small_n, large_n = 6_250, 100_000
    small_res, large_res = _chain(small_n), _chain(large_n)
    small = min(_cpu_seconds(small_res, small_n) for _ in range(3))
    large = float("inf")
    for _ in range(3):
        large = min(large, _cpu_seconds(large_res, large_n))
        if large / small < 64:  # 64: four times off linear, four times short of quadratic
            break
    assert large / small < 64, (small, large)


def test_encode_indented_splices_into_an_indented_document():
    for n in (0, 1, 2, 9, 120):
        view = thread_view(resolve(_chain_snapshot(n, branching=True), AT), "m-0") if n else ThreadView("x", None, ())
        tree = view.to_json()
        assert view.encode(2) == json.dumps(tree, indent=2)
        doc = json.dumps({"thread": "x", "tree": None, "scope": {}}, indent=2)
        spliced = doc.replace('"tree": null', '"tree": ' + view.encode(2, 1))
        assert spliced == json.dumps({"thread": "x", "tree": tree, "scope": {}}, indent=2)

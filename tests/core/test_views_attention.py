"""How a letter stands in a word, and whether it needs attention (``core.views.attention``):
the app's status column and its n/N keys, on the demo where every case occurs."""

from __future__ import annotations

import pytest

from letterbox_tui.core.demo import DEMO_NOW, remove_archive, write_demo
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.core.views.attention import KINDS, needs_attention, standing


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "box"
    write_demo(root, seed=7, now=DEMO_NOW)
    remove_archive(root)  # its unsupported entry would hold every open answer unknown
    return resolve(scan(root, now=DEMO_NOW), DEMO_NOW)


def find(res, kind: str, slug: str, n: int = 0):
    found = sorted((x for x in res.snapshot.letters if x.type == kind and f"-{kind}-{slug}-" in x.id), key=lambda x: x.id)
    return found[n]


def test_each_standing_on_the_demo(res):
    old = find(res, "decision", "release-date", 0)
    newer = res.superseders(old)[0]
    assert standing(old, res).word == f"superseded by {newer.id[:14]}…" and standing(old, res).kind == "superseded"
    cycle = find(res, "decision", "style-guide")
    s = standing(cycle, res)
    assert s.kind == "unknown" and s.word.startswith("current? ") and "cycle" in s.word
    assert standing(find(res, "request", "vendor-benchmarks"), res).word == "late"
    assert standing(find(res, "request", "auth-review"), res).word == "closed"
    assert standing(find(res, "request", "ledger-migration"), res).word == "accepted"  # its .md.ack
    assert standing(find(res, "request", "q1-roadmap"), res).word == "open"
    assert standing(find(res, "info", "office-hours"), res).word == ""  # current, not a task
    assert {standing(x, res).kind for x in res.snapshot.letters} <= set(KINDS)


def test_what_needs_attention_on_the_demo(res):
    assert needs_attention(find(res, "request", "vendor-benchmarks"), res)  # late
    assert needs_attention(find(res, "request", "q1-roadmap"), res)  # open, nobody accepted it
    assert needs_attention(find(res, "decision", "style-guide"), res)  # current unknown
    assert not needs_attention(find(res, "request", "ledger-migration"), res)  # accepted, not late
    assert not needs_attention(find(res, "request", "auth-review"), res)  # answered and closed
    assert not needs_attention(find(res, "info", "office-hours"), res)


def test_the_rule_is_its_answers(res):
    """Every letter: attention exactly when late is not no, current is unknown, or a task
    not closed that nobody accepted or answered."""
    for x in res.snapshot.letters:
        want = (res.late(x).value != "no" or res.current(x).unknown
                or (x.task and res.state(x).value != "closed" and not res.accepted(x).yes and not res.answered(x).yes))
        assert needs_attention(x, res) == bool(want), x.id

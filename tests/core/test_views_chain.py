"""A supersession chain as a tree (``core.views.chain``): the Chain tab's data."""

from __future__ import annotations

from letterbox_tui.core.views.chain import chain_tree
from tests.core.helpers import one, resolved


def _shape(tree):
    return [(ln.letter.id, ln.rails, ln.root, ln.last, ln.forks, ln.cycle) for ln in tree.lines]


def test_a_forked_chain_and_its_dispute(box):
    box.letter("v-1", type="decision", sent="2026-01-01T00:00:00Z")
    box.letter("v-2", type="decision", supersedes="v-1", sent="2026-01-02T00:00:00Z")
    box.letter("v-3a", type="decision", supersedes="v-2", sent="2026-01-03T00:00:00Z")
    box.letter("v-3b", type="decision", supersedes="v-2", sent="2026-01-03T01:00:00Z")
    box.letter("v-4", type="decision", supersedes="v-3a", sent="2026-01-04T00:00:00Z")
    box.letter("d-1", type="dispute", disputes="v-3a,v-3b", sent="2026-01-05T00:00:00Z")
    box.letter("other-1", type="dispute", disputes="elsewhere-1,elsewhere-2", sent="2026-01-05T00:00:00Z")
    res = resolved(box)
    tree = chain_tree(res, one(res, "v-2"))
    assert _shape(tree) == [
        ("v-1", (), True, True, 1, False),
        ("v-2", (), False, True, 2, False),
        ("v-3a", (False,), False, False, 1, False),
        ("v-4", (False, True), False, True, 0, False),
        ("v-3b", (False,), False, True, 0, False),
    ]
    assert tree.head is None and {h.id for h in tree.heads} == {"v-4", "v-3b"}
    assert [d.id for d in tree.disputes] == ["d-1"] and not tree.alone and tree.more == 0
    # the same disputes when the caller hands them in
    pool = [x for x in res.snapshot.letters if x.type == "dispute"]
    assert chain_tree(res, one(res, "v-2"), dispute_letters=pool).disputes == tree.disputes


def test_a_cycle_a_dangling_pointer_a_lone_letter_and_the_cap(box):
    box.letter("c-1", type="decision", supersedes="c-2", sent="2026-01-01T00:00:00Z")
    box.letter("c-2", type="decision", supersedes="c-1", sent="2026-01-02T00:00:00Z")
    box.letter("p-1", type="decision", supersedes="gone-1", sent="2026-01-01T00:00:00Z")
    box.letter("lone-1", sent="2026-01-01T00:00:00Z")
    for i in range(1, 8):
        box.letter(f"l-{i}", type="decision", supersedes=f"l-{i - 1}" if i > 1 else "", sent=f"2026-01-0{i}T00:00:00Z")
    res = resolved(box)
    cyc = chain_tree(res, one(res, "c-1"))
    assert cyc.lines == () and {x.id for x in cyc.on_cycle} == {"c-1", "c-2"}  # no letter starts it
    assert chain_tree(res, one(res, "p-1")).dangling == "gone-1"
    assert chain_tree(res, one(res, "lone-1")).alone
    capped = chain_tree(res, one(res, "l-3"), limit=3)
    assert [ln.letter.id for ln in capped.lines] == ["l-1", "l-2", "l-3"] and capped.more == 4 and capped.on_cycle == ()

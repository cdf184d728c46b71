"""Supersession (SPEC 5): current, superseded, chain, heads, head, and every reason code."""

from __future__ import annotations

import os
from tests.core.helpers import codes, one, resolved


def current(res, letter_id):
    return res.current(one(res, letter_id))


def test_pointer_chain_has_one_head_and_order_is_by_pointer(box):
    box.letter("a", type="decision")
    box.letter("b", type="decision", supersedes="a")
    box.letter("c", type="decision", supersedes="b")
    res = resolved(box)
    assert [current(res, i).value for i in "abc"] == ["no", "no", "yes"]
    a = one(res, "a")
    assert res.head(a).id == "c"
    assert [x.id for x in res.heads(a)] == ["c"]
    assert [x.id for x in res.chain(a)] == ["a", "b", "c"]
    assert [x.id for x in res.superseders(a)] == ["b"]
    assert res.superseded(a).value == "yes"
    assert res.superseded(one(res, "c")).value == "no"


def test_chain_order_follows_pointers_not_ids(box):
    box.letter("z-old", type="decision")
    box.letter("a-new", type="decision", supersedes="z-old")
    res = resolved(box)
    assert [x.id for x in res.chain(one(res, "z-old"))] == ["z-old", "a-new"]
    assert res.chain_ids(one(res, "a-new")) == ["z-old", "a-new"]


def test_pointers_never_the_clock(box):
    box.letter("a", type="decision", sent="2026-03-01T00:00:00Z")
    box.letter("b", type="decision", supersedes="a", sent="2020-01-01T00:00:00Z")
    res = resolved(box)
    assert current(res, "b").value == "yes"
    assert current(res, "a").value == "no"


def test_letter_without_pointers_is_its_own_chain_and_current(box):
    box.letter("alone", type="decision")
    res = resolved(box)
    alone = one(res, "alone")
    assert res.current(alone).value == "yes" and res.current(alone).reasons == ()
    assert res.chain(alone) == [alone] and res.head(alone) is alone
    assert res.superseded(alone).value == "no"


def test_cycle_never_picks_a_winner(box):
    box.letter("a", type="decision", supersedes="b")
    box.letter("b", type="decision", supersedes="a")
    box.letter("c", type="decision", supersedes="a")  # leads into the cycle
    res = resolved(box)
    for i in "abc":
        ans = current(res, i)
        assert ans.value == "unknown" and codes(ans) == ["cycle"]
        assert ans.reasons[0].letters == ("a", "b")
        assert ans.reasons[0].about == "current"
        assert sorted(ans.reasons[0].paths) == ["beta/inbox/a.md", "beta/inbox/b.md"]
    assert res.head(one(res, "a")) is None
    assert res.superseded(one(res, "a")).value == "unknown"
    assert codes(res.superseded(one(res, "a"))) == ["cycle"]
    assert res.cycles() == [("a", "b")]


def test_self_supersession_is_a_cycle(box):
    box.letter("a", type="decision", supersedes="a")
    res = resolved(box)
    assert codes(current(res, "a")) == ["cycle"]
    assert res.cycles() == [("a",)]


def test_unsettled_fork_makes_the_chain_unknown(box):
    box.letter("a", type="decision")
    box.letter("b", type="decision", supersedes="a")
    box.letter("c", type="decision", supersedes="a")
    res = resolved(box)
    assert current(res, "a").value == "no"
    for i in "bc":
        ans = current(res, i)
        assert ans.value == "unknown" and codes(ans) == ["fork"]
        assert ans.reasons[0].letters == ("a", "b", "c")
    a = one(res, "a")
    assert res.head(a) is None
    assert [x.id for x in res.heads(a)] == ["b", "c"]
    assert [x.id for x in res.chain(a)] == ["a", "b", "c"]
    # Nothing may supersede a fork's branch: superseded is no while current is unknown.
    assert res.superseded(one(res, "b")).value == "no"
    (fork,) = res.forks()
    assert (fork.at, fork.branches, fork.settled) == ("a", ("b", "c"), False)


def test_fork_below_makes_the_whole_chain_unknown(box):
    box.letter("a", type="decision")
    box.letter("b", type="decision", supersedes="a")
    box.letter("c", type="decision", supersedes="a")
    box.letter("d", type="decision", supersedes="b")
    res = resolved(box)
    assert codes(current(res, "d")) == ["fork"]
    assert current(res, "b").value == "no"


def test_pointer_to_a_duplicated_id_is_ambiguous(box):
    box.letter("a", type="decision")
    box.letter("a", type="decision", seat="alpha")
    box.letter("b", type="decision", supersedes="a")
    res = resolved(box)
    b = one(res, "b")
    ans = res.current(b)
    assert ans.value == "unknown" and codes(ans) == ["ambiguous-reference"]
    assert ans.reasons[0].letters[0] == "a"
    assert ans.reasons[0].paths == ("alpha/inbox/a.md", "beta/inbox/a.md")
    assert [res.current(x).value for x in res.by_id("a")] == ["no", "no"]


def test_duplicated_id_without_pointers_to_it_is_not_ambiguous(box):
    box.letter("a", type="decision")
    box.letter("a", type="decision", seat="alpha")
    box.letter("x", type="decision")
    res = resolved(box)
    assert current(res, "x").value == "yes"
    assert [res.current(x).value for x in res.by_id("a")] == ["yes", "yes"]
    # Two files, both current: no single head.
    assert res.head(res.by_id("a")[0]) is None


def test_malformed_supersedes_naming_an_existing_id(box):
    box.letter("a", type="decision")
    box.letter("other", type="decision")
    box.letter("h", type="decision", supersedes="a?")
    res = resolved(box)
    h = one(res, "h")
    assert h.malformed == ("supersedes",) and h.supersedes == "a?"
    ans = current(res, "a")
    assert ans.value == "unknown" and codes(ans) == ["malformed-pointer"]
    assert ans.reasons[0].letters == ("h",) and ans.reasons[0].paths == ("beta/inbox/h.md",)
    assert current(res, "other").value == "yes"
    assert res.current(h).value == "yes"
    assert codes(res.superseded(one(res, "a"))) == ["malformed-pointer"]
    assert res.superseded(one(res, "other")).value == "no"


def test_malformed_supersedes_naming_nothing_doubts_its_thread(box):
    box.letter("root", type="decision")
    box.letter("t2", type="decision", thread="root")
    box.letter("t3", type="decision", thread="root", supersedes="t2")
    box.letter("h", type="decision", thread="root", supersedes="!!!")
    box.letter("elsewhere", type="decision")
    res = resolved(box)
    for i in ("root", "t3"):
        assert codes(current(res, i)) == ["malformed-pointer"], i
    assert current(res, "t2").value == "no"
    assert current(res, "h").value == "yes"  # its own chain is not in doubt
    assert current(res, "elsewhere").value == "yes"


def test_unreadable_file_whose_legible_supersedes_names_the_chain(box):
    box.letter("a", type="decision")
    box.letter("b", type="decision", supersedes="a")
    box.letter("x", type="decision")
    box.raw("beta/inbox/broken.md", "---\nid: broken\nsupersedes: a\nnot a field line\n---\n")
    res = resolved(box)
    ans = current(res, "b")
    assert ans.value == "unknown" and codes(ans) == ["unreadable-file"]
    assert ans.reasons[0].paths == ("beta/inbox/broken.md",)
    assert current(res, "x").value == "yes"
    # Per letter: the broken file may supersede a (already superseded) but not b.
    assert res.superseded(one(res, "b")).value == "no"


def test_unreadable_file_mentioning_an_id_in_its_illegible_part(box):
    box.letter("a", type="decision")
    box.letter("x", type="decision")
    box.raw("beta/inbox/broken.md", b"---\nid: broken\nsupersedes: \xff a\n---\n")
    res = resolved(box)
    assert codes(current(res, "a")) == ["unreadable-file"]
    assert codes(res.superseded(one(res, "a"))) == ["unreadable-file"]
    assert current(res, "x").value == "yes"


def test_unsupported_entry_may_supersede_anything(box):
    box.letter("a", type="decision")
    box.letter("b", type="decision", supersedes="a")
    (box.root / "beta" / "archive").mkdir()
    res = resolved(box)
    ans = current(res, "b")
    assert ans.value == "unknown" and codes(ans) == ["unsupported-entry"]
    assert ans.reasons[0].paths == ("beta/archive",)
    assert current(res, "a").value == "no"  # a readable letter supersedes it
    assert codes(res.superseded(one(res, "b"))) == ["unsupported-entry"]


def test_symlink_and_fifo_are_unsupported_entries(box, tmp_path):
    box.letter("a", type="decision")
    outside = tmp_path / "outside.md"
    outside.write_text("---\nid: z\n---\n")
    os.symlink(outside, box.root / "beta" / "inbox" / "link.md")
    os.mkfifo(box.root / "alpha" / "inbox" / "pipe.md")
    res = resolved(box)
    ans = current(res, "a")
    assert codes(ans) == ["unsupported-entry"]
    assert ans.reasons[0].paths == ("alpha/inbox/pipe.md", "beta/inbox/link.md")


def test_partial_scope_is_outside_scope(box):
    box.letter("a", type="decision")
    res = resolved(box, ["beta"])
    assert codes(current(res, "a")) == ["outside-scope"]
    assert codes(res.superseded(one(res, "a"))) == ["outside-scope"]


def test_non_atomic_scan(box):
    box.letter("a", type="decision")
    res = resolved(box, atomic=False)
    assert codes(current(res, "a")) == ["non-atomic-scan"]


def test_dangling_pointer_is_harmless(box):
    box.letter("b", type="decision", supersedes="gone")
    res = resolved(box)
    b = one(res, "b")
    assert res.current(b).value == "yes"
    assert [(d.letter.id, d.field, d.target) for d in res.dangling()] == [("b", "supersedes", "gone")]


def test_every_reason_is_about_current_and_uses_spec_codes(box):
    box.letter("a", type="decision")
    box.letter("b", type="decision", supersedes="a")
    box.letter("c", type="decision", supersedes="a")
    box.raw("beta/inbox/broken.md", "---\nid: broken\nsupersedes: b\nbad line\n---\n")
    (box.root / "alpha" / "archive").mkdir()
    res = resolved(box, atomic=False)
    ans = current(res, "b")
    assert codes(ans) == ["fork", "unreadable-file", "unsupported-entry", "non-atomic-scan"]
    assert {r.about for r in ans.reasons} == {"current"}
    assert all(r.detail for r in ans.reasons)


def test_an_unreadable_file_holding_the_id_makes_a_pointer_ambiguous(box):
    box.letter("a", type="decision")
    box.raw("alpha/inbox/a.md", "---\nid: a\nbroken line\n---\n")
    box.letter("b", type="decision", supersedes="a")
    res = resolved(box)
    assert res.holders("a") == ["alpha/inbox/a.md", "beta/inbox/a.md"]
    ans = current(res, "b")
    assert codes(ans) == ["ambiguous-reference"]
    assert ans.reasons[0].paths == ("alpha/inbox/a.md", "beta/inbox/a.md")


def test_malformed_thread_fallback_also_makes_superseded_unknown(box):
    box.letter("root", type="decision")
    box.letter("h", type="decision", thread="root", supersedes="%%%")
    box.letter("apart", type="decision")
    res = resolved(box)
    ans = res.superseded(one(res, "root"))
    assert ans.value == "unknown" and codes(ans) == ["malformed-pointer"]
    assert ans.reasons[0].about == "superseded" and ans.reasons[0].letters == ("h",)
    assert res.superseded(one(res, "apart")).value == "no"
    assert res.superseded(one(res, "h")).value == "no"


def test_heads_and_head_are_answered_per_chain(box):
    box.letter("a", type="decision")
    box.letter("b", type="decision", supersedes="a")
    box.letter("c", type="decision", supersedes="b")
    res = resolved(box)
    heads = {x.id: res.head(x).id for x in res.snapshot.letters}
    assert heads == {"a": "c", "b": "c", "c": "c"}
    # Callers may change the lists they get without changing the resolution.
    res.chain(one(res, "a")).clear()
    res.heads(one(res, "a")).clear()
    assert [x.id for x in res.chain(one(res, "b"))] == ["a", "b", "c"]
    assert [x.id for x in res.heads(one(res, "b"))] == ["c"]

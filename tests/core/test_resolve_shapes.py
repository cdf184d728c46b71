"""Hostile supersession shapes (issue 18, items 1-3): a wide fork, a long cycle, a comb (a
chain with a side branch at every link), with and without rulings settling its forks.

Reasons name at most ``MAX_NAMED`` letters and say how many there are and what lists them
all; members share their reasons; and resolving, every row as JSON and ``check`` grow
linearly: each shape at two sizes, the larger four times the smaller, must cost less than
eight times as much CPU time (the quadratic shapes cost sixteen times and more). Memory is
traced at an eighth and twice the smaller size, sixteen times apart, and must grow less than
thirty-two times (the square grows 256 times): tracing slows every allocation several times
over, and the wider span shows a square term as plainly as the sizes timed would.
"""

from __future__ import annotations

import gc
import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from letterbox_tui.core.check import check
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.resolve.common import MAX_NAMED
from letterbox_tui.core.resolve.forks import _Dag, _general, _Tree
from letterbox_tui.core.resolve.graph import tarjan
from letterbox_tui.core.resolve.index import Index
from tests.core import shapes
from tests.core.shapes import AT, letter, snapshot

SIZES = {
    "fork": 500, "cycle": 500, "cycle_with_replies": 400, "comb": 400, "settled_comb": 250,
    "duplicated_id": 1500, "open_unreadable": 500, "answered_duplicate": 600, "replies_below": 600,
    "ruled_duplicate_comb": 400, "held_over_chain": 600,
    "open_held_over_chain": 1200,
}
#: shapes whose sizes (large enough for the square to show) take more than a few seconds
SLOW = {"open_held_over_chain"}


def cpu_seconds(work, args, paused: bool) -> float:
    """The CPU seconds of one ``work(*args)``, the collector paused if ``paused``."""
    gc.collect()
    if paused:
        gc.disable()
    try:
        t = time.process_time()
        work(*args)
        return time.process_time() - t
    finally:
        gc.enable()


def peak_memory(work, *args) -> int:
    """The peak memory traced while ``work(*args)`` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        work(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def assert_linear(shape, work, small, big, smallest, bigger, paused: bool = True) -> None:
    """``work`` on ``big`` (four times ``small``) costs less than eight times the CPU time,
    and on ``bigger`` (sixteen times ``smallest``) less than thirty-two times the memory.
    The small size's time is the best of two; only when the big size's first look is over
    the bound are both looked at twice more, and the best of each taken (as the best of more
    runs would be: more looks only ever lower it). A loaded machine can stretch one look of
    a few tens of milliseconds past 8x; a size that grows as its square is 16x on every look.
    Timing first also warms what a first call loads, which tracing would otherwise count
    against the smallest size. The collector is paused while timing if ``paused``."""
    small_time = min(cpu_seconds(work, small, paused) for _ in range(2))
    big_time = cpu_seconds(work, big, paused)
    if big_time >= 8 * max(small_time, 0.01):
        for _ in range(2):
            small_time = min(small_time, cpu_seconds(work, small, paused))
            big_time = min(big_time, cpu_seconds(work, big, paused))
    bound = 8 * max(small_time, 0.01)
    assert big_time < bound, (shape, small_time, big_time)
    small_mem, big_mem = peak_memory(work, *smallest), peak_memory(work, *bigger)
    assert big_mem < 32 * small_mem, (shape, small_mem, big_mem)


@pytest.mark.parametrize("shape", [
    pytest.param(shape, marks=pytest.mark.slow) if shape in SLOW else shape for shape in sorted(SIZES)
])
def test_each_shape_grows_linearly_in_time_and_memory(shape):
    n, make = SIZES[shape], shapes.SHAPES[shape]
    assert_linear(shape, shapes.work, (make(n),), (make(4 * n),), (make(n // 8),), (make(2 * n),))


#: shapes read from a letterbox on disk (issue 27 item 9: the cold build grew faster than
#: the letters on the first three), and the letter ``show``/``current``/``answered`` ask for
#: (``{half}``: half the size, the comb's middle id held twice)
ON_DISK = {
    "cycle": (400, "c000000"), "fork": (400, "f"), "settled_comb": (150, "a000001"),
    "ruled_duplicate_comb": (300, "a{half:06d}"), "held_over_chain": (300, "many"),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(ON_DISK))
def test_each_shape_read_from_disk_grows_linearly(shape, tmp_path):
    n, letter_id = ON_DISK[shape]
    boxes = []
    for size in (n, 4 * n, n // 8, 2 * n):  # small, big, smallest, bigger
        shapes.write(shapes.SHAPES[shape](size), tmp_path / str(size))
        boxes.append((tmp_path / str(size), letter_id.format(half=size // 2)))
    # timed with the collector running, scanning included, as a reading command runs
    assert_linear(shape, shapes.scanned_work, *boxes, paused=False)


def test_a_wide_fork_names_a_bounded_number_of_letters():
    snap = shapes.fork(300)
    res = resolve(snap, AT)
    s = [x for x in snap.letters if x.id != "f"]
    ans = res.current(s[0])
    (reason,) = ans.reasons
    assert reason.code == "fork" and len(reason.letters) == MAX_NAMED and len(reason.paths) == MAX_NAMED
    assert reason.letters[:2] == ("f", "s000000")
    assert "300 letters supersede f" in reason.detail and "of 301 letters" in reason.detail
    assert "letterbox-tui check" in reason.detail
    # every letter of the fork shares the one answer
    assert all(res.current(x) is ans for x in s)
    # check lists them all
    (finding,) = [f for f in check(res) if f.code == "fork"]
    assert len(finding.letters) == 301 and len(finding.paths) == 300


def test_a_long_cycle_names_a_bounded_number_of_letters_and_shares_its_members():
    snap = shapes.cycle(200)
    res = resolve(snap, AT)
    answers = [res.current(x) for x in snap.letters]
    assert all(a is answers[0] for a in answers)
    (reason,) = answers[0].reasons
    assert reason.code == "cycle" and len(reason.letters) == MAX_NAMED
    assert "and 190 more" in reason.detail and "of 200 letters" in reason.detail
    chain = res._supersession.chains.chain_of(snap.letters[0].id)
    members = {id(m) for m in chain.cycle_members.values()}
    assert len(members) == 1  # one tuple for all 200 members, not one each
    assert res.cycles() == [tuple(sorted(x.id for x in snap.letters))]
    (finding,) = [f for f in check(res) if f.code == "cycle"]
    assert len(finding.letters) == 200


def test_a_letter_leading_into_a_cycle_says_so():
    snap = shapes.cycle(30)
    snap.letters.append(letter("lead", supersedes="c000000"))
    res = resolve(snap, AT)
    (lead,) = res.by_id("lead")
    assert "leads into a supersession cycle" in res.current(lead).reasons[0].detail
    assert "is on a supersession cycle" in res.current(snap.letters[0]).reasons[0].detail


def test_a_comb_gives_a_bounded_number_of_fork_reasons():
    snap = shapes.comb(10)
    res = resolve(snap, AT)
    (head,) = res.by_id("a000010")
    reasons = res.current(head).reasons
    assert [r.code for r in reasons] == ["fork", "fork", "fork"]
    assert reasons[0].letters == ("a000000", "a000001", "b000000")
    assert reasons[2].detail.startswith("and 8 more forks in this chain, the first: 2 letters supersede a000002")
    assert len(reasons[2].letters) <= MAX_NAMED
    assert len([f for f in check(res) if f.code == "fork"]) == 10


def test_a_settled_comb_makes_the_spine_win_and_every_side_branch_lose():
    snap = shapes.settled_comb(50)
    res = resolve(snap, AT)
    by = {x.id: x for x in snap.letters}
    assert res.current(by["a000050"]).value == "yes"
    assert res.head(by["a000000"]).id == "a000050"
    for i in range(50):
        lost = res.current(by[f"b{i:06d}"])
        assert lost.value == "no" and lost.reasons[0].letters == (f"d{i:06d}", f"r{i:06d}")
    assert all(f.settled for f in res.forks())


# --- the tree analysis of forks agrees with walking every branch --------------------

@st.composite
def forests(draw):
    """A random chain with no duplicated id (so a tree, or a tree around one cycle), with
    disputes naming letters of it and rulings upholding one letter each."""
    n = draw(st.integers(2, 14))
    ids = [f"x{i:02d}" for i in range(n)]
    targets = [draw(st.one_of(st.none(), st.integers(0, n - 1))) if i else None for i in range(n)]
    if draw(st.booleans()):
        targets[0] = draw(st.integers(0, n - 1))  # may close a cycle
    out = [letter(ids[i], supersedes=ids[t] if t is not None and t != i else "") for i, t in enumerate(targets)]
    for k in range(draw(st.integers(1, 4))):
        named = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=min(n, 8), unique=True))
        out.append(letter(f"d{k}", type="dispute", disputes=",".join(named)))
        for j in range(draw(st.sampled_from([1, 1, 1, 2, 0]))):
            upheld = draw(st.one_of(st.sampled_from(named), st.sampled_from(named), st.sampled_from(ids)))
            out.append(letter(f"r{k}{j}", type="ruling", rules_on=f"d{k}", upholds=upheld))
    return snapshot(out)


@settings(max_examples=300, deadline=None)
@given(forests())
def test_tree_forks_agree_with_the_general_walk(snap):
    index = Index(snap)
    for ids in index.components.values():
        ids = sorted(ids)
        sup = {i: index.sup_ids.get(i, ()) for i in ids}
        forks = [f for f in ids if len(sup[f]) >= 2]
        if not forks:
            continue
        on_cycle = {v for c in tarjan(ids, index.out) if len(c) > 1 or c[0] in index.out.get(c[0], ()) for v in c}
        tree = _Tree(index, ids, sup, on_cycle).analyse(forks)
        general = _general(index, forks, sup)
        assert tree[0] == general[0]  # the same forks settled, the same way
        if not on_cycle:  # in a cycle every letter's current is ``cycle`` whatever wins
            assert tree[1] == general[1] and tree[2] == general[2]


@st.composite
def tangles(draw):
    """A random chain whose ids may be held by several files with different supersedes (so
    an id may supersede several ids, and cycles may be anywhere), with disputes and rulings."""
    n = draw(st.integers(2, 12))
    ids = [f"x{i:02d}" for i in range(n)]
    out = []
    for i, lid in enumerate(ids):
        for k in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
            t = draw(st.one_of(st.none(), st.integers(0, n - 1)))
            x = letter(lid, supersedes=ids[t] if t is not None else "")
            x.path, x.name = f"beta/inbox/{lid}-{k}.md", f"{lid}-{k}.md"
            out.append(x)
    for k in range(draw(st.integers(1, 4))):
        named = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=min(n, 6), unique=True))
        out.append(letter(f"d{k}", type="dispute", disputes=",".join(named)))
        for j in range(draw(st.sampled_from([1, 1, 1, 2, 0]))):
            upheld = draw(st.one_of(st.sampled_from(named), st.sampled_from(named), st.sampled_from(ids)))
            out.append(letter(f"r{k}{j}", type="ruling", rules_on=f"d{k}", upholds=upheld))
    return snapshot(out)


@settings(max_examples=400, deadline=None)
@given(st.one_of(tangles(), forests()))
def test_dag_forks_agree_with_the_general_walk(snap):
    index = Index(snap)
    for ids in index.components.values():
        ids = sorted(ids)
        sup = {i: index.sup_ids.get(i, ()) for i in ids}
        forks = [f for f in ids if len(sup[f]) >= 2]
        if forks:
            assert _Dag(index, ids, sup).analyse(forks) == _general(index, forks, sup)


def test_nested_settled_forks_give_the_reason_of_the_outer_fork():
    # a forks into b and c, c wins; b forks again into b1 and b2, b1 wins there:
    # b2 loses twice, and the fork at a (the smaller id) gives its reason
    snap = snapshot([
        letter("a"), letter("b", supersedes="a"), letter("c", supersedes="a"),
        letter("b1", supersedes="b"), letter("b2", supersedes="b"),
        letter("d1", type="dispute", disputes="b,c"), letter("r1", type="ruling", rules_on="d1", upholds="c"),
        letter("d2", type="dispute", disputes="b1,b2"), letter("r2", type="ruling", rules_on="d2", upholds="b1"),
    ])
    res = resolve(snap, AT)
    by = {x.id: x for x in snap.letters}
    assert {i: res.current(by[i]).value for i in ("a", "b", "c", "b1", "b2")} == {
        "a": "no", "b": "no", "c": "yes", "b1": "no", "b2": "no"}
    assert res.current(by["b2"]).reasons[0].letters == ("d1", "r1")
    assert res.current(by["b1"]).reasons[0].letters == ("d1", "r1")
    assert [(f.at, f.settled, f.in_losing_branch) for f in res.forks()] == [("a", True, False), ("b", True, True)]


def test_many_replies_and_acks_are_named_up_to_the_bound():
    out = [letter("ask", type="request")]
    out += [letter(f"ask--beta--result-{i:03d}", type="result", frm="beta", to="alpha", re="ask") for i in range(30)]
    out += [letter(f"ask--beta--ack-{i:03d}", type="ack", frm="beta", to="alpha", re="ask") for i in range(30)]
    res = resolve(snapshot(out), AT)
    (ask,) = res.by_id("ask")
    (answered,) = res.answered(ask).reasons
    (accepted,) = res.accepted(ask).reasons
    for reason in (answered, accepted):
        assert len(reason.letters) == len(reason.paths) == MAX_NAMED
        assert "of 30 letters" in reason.detail and "letterbox-tui answered ask --json" in reason.detail
    assert len(res.replies(ask)) == len(res.acks(ask)) == 30  # answered ID lists them all


def test_a_chain_key_is_shared_by_its_letters_only():
    snap = shapes.comb(5)
    snap.letters += [letter("lone"), letter("x1"), letter("x2", supersedes="x1")]
    res = resolve(snap, AT)
    keys = {res.chain_key(x) for x in snap.letters if x.id[0] in "ab"}
    assert keys == {"a000000"}
    assert len({res.chain_key(x) for x in snap.letters}) == 3


def test_copies_of_one_id_share_a_bounded_duplicate_reason():
    snap = shapes.duplicated_id(100)
    res = resolve(snap, AT)
    answers = [res.answered(x) for x in snap.letters]
    assert all(a is answers[0] for a in answers)
    (reason,) = answers[0].reasons
    assert reason.code == "duplicate-id" and len(reason.paths) == MAX_NAMED
    assert "100 files hold the id same" in reason.detail and "of 100 letters" in reason.detail
    (finding,) = [f for f in check(res) if f.code == "duplicate-id"]
    assert len(finding.paths) == 100


def test_unreadable_files_that_may_be_any_reply_are_counted_not_all_named():
    snap = shapes.open_unreadable(60)
    res = resolve(snap, AT)
    (reason,) = [r for r in res.answered(snap.letters[5]).reasons]
    assert reason.code == "unreadable-file" and len(reason.paths) == MAX_NAMED
    assert reason.detail.startswith("60 unreadable files may be a terminal reply")


def test_one_id_over_a_whole_chain_settles_every_fork_and_check_names_each_forks_own_files():
    snap = shapes.held_over_chain(30)
    res = resolve(snap, AT)
    forks = res.forks()
    assert len(forks) == 29 and all(f.settled and f.winner == f"t{i + 1:06d}" for i, f in enumerate(forks))
    (many,) = {res.current(x) for x in res.by_id("many")}  # the copies share one answer
    assert many.value == "yes" and many.reasons[0].detail.startswith("fork at t000000 settled by ruling r")
    settled = [f for f in check(res) if f.code == "settled-fork"]
    assert len(settled) == 29
    # the letters superseding t000005: one copy of ``many`` and t000006, not all 30 copies
    assert settled[5].paths == ("beta/inbox/many-000005.md", "beta/inbox/t000006.md")
    (dup,) = [f for f in check(res) if f.code == "duplicate-id"]
    assert len(dup.paths) == 30


def test_a_ruled_comb_with_a_duplicated_id_settles_only_its_ruled_fork():
    snap = shapes.ruled_duplicate_comb(20)
    res = resolve(snap, AT)
    assert [(f.at, f.settled) for f in res.forks()][:2] == [("a000000", True), ("a000001", False)]
    assert len(res.forks()) == 20
    (lost,) = res.by_id("b000000")  # on the losing branch, and superseded by the copy of a000010
    assert res.current(lost).value == "no"
    (head,) = res.by_id("a000020")
    assert [r.code for r in res.current(head).reasons] == ["fork", "fork", "fork", "ambiguous-reference"]


def test_show_of_an_id_held_by_many_files_lists_its_chains_heads_once(tmp_path):
    from letterbox_tui.core.scan import scan
    from letterbox_tui.core.views.letter import show_view

    shapes.write(shapes.held_over_chain(40), tmp_path)
    res = resolve(scan(tmp_path), AT)
    asked = []
    heads = res.heads
    res.heads = lambda x: asked.append(x) or heads(x)  # every copy is a head: 40 each time
    doc = show_view(res, "many")
    assert len(doc["letters"]) == 40 and all(c["heads"] == ["many"] for c in doc["letters"])
    assert len(asked) == 1

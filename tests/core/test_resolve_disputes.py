"""Disputes, rulings and settled forks (SPEC 5); threads and reply trees."""

from __future__ import annotations

from tests.core.helpers import codes, one, resolved


def fork(box):
    """a is superseded by b and by c; c2 continues c, b2 continues b."""
    box.letter("a", type="decision")
    box.letter("b", type="decision", supersedes="a")
    box.letter("c", type="decision", supersedes="a")
    box.letter("b2", type="decision", supersedes="b")
    box.letter("c2", type="decision", supersedes="c")


def dispute(box, letter_id, *named):
    box.letter(letter_id, type="dispute", disputes=",".join(named))


def ruling(box, letter_id, on, upholds=None):
    box.letter(letter_id, type="ruling", rules_on=on, upholds=upholds)


# --- open disputes -----------------------------------------------------------------


def test_dispute_is_open_until_a_ruling_names_it(box):
    box.letter("x", type="decision")
    box.letter("y", type="decision")
    dispute(box, "d-open", "y", "x")
    dispute(box, "d-closed", "x", "y")
    ruling(box, "r", "d-closed")  # no upholds: closes, settles nothing
    res = resolved(box)
    (open_one,) = res.open_disputes()
    assert open_one.dispute.id == "d-open"
    assert [x.id for x in open_one.disputed] == ["y", "x"]  # in the dispute's order
    assert [x.id for x in res.rulings(one(res, "d-closed"))] == ["r"]
    assert res.rulings(one(res, "d-open")) == []


def test_ruling_with_malformed_rules_on_closes_nothing(box):
    box.letter("x", type="decision")
    dispute(box, "d", "x", "gone")
    ruling(box, "r", "d?")
    res = resolved(box)
    (d,) = res.open_disputes()
    assert d.dispute.id == "d" and [x.id for x in d.disputed] == ["x"]


def test_only_dispute_letters_are_disputes(box):
    box.letter("x", type="decision")
    box.letter("note", type="info", disputes="x")
    res = resolved(box)
    assert res.open_disputes() == []


# --- settled forks -----------------------------------------------------------------


def test_ruling_settles_a_fork(box):
    fork(box)
    dispute(box, "d", "b2", "c")
    ruling(box, "r", "d", upholds="b2")
    res = resolved(box)
    assert current_values(res) == {"a": "no", "b": "no", "b2": "yes", "c": "no", "c2": "no"}
    lost = res.current(one(res, "c2"))
    assert codes(lost) == ["ruled"] and lost.reasons[0].letters == ("d", "r")
    assert lost.reasons[0].paths == ("beta/inbox/r.md",)
    assert codes(res.current(one(res, "b2"))) == ["ruled"]
    assert res.head(one(res, "a")).id == "b2"
    assert [x.id for x in res.heads(one(res, "a"))] == ["b2", "c2"]
    assert res.superseded(one(res, "c2")).value == "yes"
    (f,) = res.forks()
    assert (f.at, f.settled, f.winner, f.dispute, f.rulings) == ("a", True, "b", "d", ("r",))


def test_ruling_without_upholds_settles_nothing(box):
    fork(box)
    dispute(box, "d", "b", "c")
    ruling(box, "r", "d")
    res = resolved(box)
    assert codes(res.current(one(res, "b2"))) == ["fork"]
    assert res.forks()[0].settled is False
    assert res.open_disputes() == []


def test_ruling_upholding_a_letter_the_dispute_does_not_name_settles_nothing(box):
    # SPEC 5: the upheld letter must be one of the dispute's disputes; b2 lies in one
    # branch, but the dispute names b and c only
    fork(box)
    dispute(box, "d", "b", "c")
    ruling(box, "r", "d", upholds="b2")
    res = resolved(box)
    assert codes(res.current(one(res, "b2"))) == ["fork"]
    assert codes(res.current(one(res, "c2"))) == ["fork"]
    assert res.forks()[0].settled is False
    assert res.open_disputes() == []  # the ruling still closes the dispute


def test_disagreeing_rulings_settle_nothing(box):
    fork(box)
    dispute(box, "d", "b", "c")
    ruling(box, "r1", "d", upholds="b")
    ruling(box, "r2", "d", upholds="c")
    res = resolved(box)
    assert codes(res.current(one(res, "b2"))) == ["fork"]
    assert codes(res.current(one(res, "c2"))) == ["fork"]


def test_agreeing_rulings_settle(box):
    fork(box)
    dispute(box, "d", "b", "c")
    ruling(box, "r1", "d", upholds="c")
    ruling(box, "r2", "d", upholds="c2")
    res = resolved(box)
    # Upholding c and c2 is not upholding the same letter: nothing is settled.
    assert codes(res.current(one(res, "c2"))) == ["fork"]
    ruling(box, "r2", "d", upholds="c")  # rewrite r2 to agree with r1
    res = resolved(box)
    assert current_values(res) == {"a": "no", "b": "no", "b2": "no", "c": "no", "c2": "yes"}


def test_dispute_must_name_every_branch(box):
    fork(box)
    box.letter("e", type="decision", supersedes="a")  # a third branch
    dispute(box, "d", "b", "c")
    ruling(box, "r", "d", upholds="b")
    res = resolved(box)
    assert codes(res.current(one(res, "b2"))) == ["fork"]


def test_upheld_letter_must_lie_in_one_branch(box):
    fork(box)
    dispute(box, "d", "b", "c")
    ruling(box, "r", "d", upholds="a")  # the fork point is in no branch
    res = resolved(box)
    assert codes(res.current(one(res, "b2"))) == ["fork"]


def test_unsettled_fork_inside_a_losing_branch_does_not_touch_the_winner(box):
    fork(box)
    box.letter("c3", type="decision", supersedes="c")  # c forks too, inside the loser
    dispute(box, "d", "b", "c")
    ruling(box, "r", "d", upholds="b")
    res = resolved(box)
    assert res.current(one(res, "b2")).value == "yes"
    assert res.current(one(res, "c3")).value == "no"
    forks = {f.at: f for f in res.forks()}
    assert forks["c"].settled is False and forks["c"].in_losing_branch is True


def test_settled_fork_still_doubted_by_other_reasons(box):
    fork(box)
    dispute(box, "d", "b", "c")
    ruling(box, "r", "d", upholds="b")
    (box.root / "alpha" / "archive").mkdir()
    res = resolved(box)
    assert codes(res.current(one(res, "b2"))) == ["unsupported-entry"]
    assert codes(res.current(one(res, "c2"))) == ["ruled"]  # rule 2 comes first


def current_values(res):
    return {i: res.current(one(res, i)).value for i in ("a", "b", "b2", "c", "c2")}


# --- threads and children ----------------------------------------------------------


def test_thread_includes_its_root_and_labelled_letters(box):
    box.letter("root", type="request")
    box.letter("r1", frm="beta", to="alpha", type="info", re="root", thread="root")
    box.letter("r2", frm="alpha", to="beta", type="info", re="r1", thread="root")
    box.letter("label-only", type="info", thread="no-such-letter")
    box.letter("other", type="info")
    res = resolved(box)
    assert [x.id for x in res.thread("root")] == ["r1", "r2", "root"]
    assert [x.id for x in res.thread("no-such-letter")] == ["label-only"]
    assert [x.id for x in res.children(one(res, "root"))] == ["r1"]
    assert [x.id for x in res.children(one(res, "r1"))] == ["r2"]
    assert res.children(one(res, "other")) == []
    # A thread label is not a pointer: it is never dangling.
    assert res.dangling() == []


def test_dangling_pointers_of_every_kind(box):
    box.letter("r", type="info", re="gone-1")
    dispute(box, "d", "gone-2", "r")
    ruling(box, "ru", "gone-3", upholds="gone-4")
    res = resolved(box)
    assert sorted((d.letter.id, d.field, d.target) for d in res.dangling()) == [
        ("d", "disputes", "gone-2"), ("r", "re", "gone-1"),
        ("ru", "rules_on", "gone-3"), ("ru", "upholds", "gone-4"),
    ]

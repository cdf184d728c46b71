"""Evaluating terms per row in three values (SPEC 6), against a scripted resolution.

The derived answers here are set by hand, so these tests pin the query layer's own logic
(Kleene AND, explicit ``unknown``, reasons carried) independently of the resolver.
"""

from datetime import datetime, timezone

import pytest

from letterbox_tui.core.model import NO, YES, Answer, Reason
from letterbox_tui.core.query import evaluate, parse_query, run_query
from letterbox_tui.core.resolve import StateAnswer
from letterbox_tui.core.scan import scan

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)


class Scripted:
    """A stand-in Resolution: every answer is YES/NO/state 'open' unless scripted per id."""

    def __init__(self, snapshot, **answers):
        self.snapshot = snapshot
        self.at = AT
        self.answers = answers  # name -> {id: Answer | StateAnswer}
        self.asked: list[tuple[str, str]] = []

    def _get(self, name, letter, default):
        self.asked.append((name, letter.id))
        return self.answers.get(name, {}).get(letter.id, default)

    def state(self, letter):
        return self._get("state", letter, StateAnswer("open"))

    def answered(self, letter):
        return self._get("answered", letter, NO)

    def accepted(self, letter):
        return self._get("accepted", letter, NO)

    def current(self, letter):
        return self._get("current", letter, YES)

    def superseded(self, letter):
        return self._get("superseded", letter, NO)

    def late(self, letter, at=None):
        return self._get("late", letter, NO)


def unknown(about, code="unreadable-file", who="x"):
    return Answer("unknown", (Reason(code, about, "scripted", (who,), ()),))


def ids(letters):
    return sorted(x.id for x in letters)


def run(box, terms, **answers):
    res = Scripted(scan(box.root), **answers)
    return run_query(parse_query(terms), res), res


@pytest.fixture
def mail(box):
    box.letter("r1", frm="alpha", to="beta", type="request", requires_ack="true", priority="now",
               sent="2026-03-01T10:00:00Z", deadline="2026-04-01T00:00:00Z", thread="", subject="Renewal Plan")
    box.letter("r2", frm="beta", to="alpha", type="request", requires_ack="true", re="r1", thread="r1",
               sent="2026-03-02T10:00:00+02:00", deadline="2026-05-01T12:00:00Z")
    box.letter("i3", frm="alpha", to="beta", type="info", requires_ack="false", thread="r1",
               sent="2026-03-03T00:00:00Z")
    box.letter("n4", frm="beta", to="beta", type="status", sent="2026-03-04T00:00:00")  # naive: ambiguous
    box.letter("d5", frm="alpha", to="beta", type="request", requires_ack="true",
               sent="2026-03-05T00:00:00Z", deadline="next week")  # ambiguous deadline
    return box


def test_header_equality_and_either(mail):
    result, _ = run(mail, ["from=alpha"])
    assert ids(result.matches) == ["d5", "i3", "r1"]
    result, _ = run(mail, ["type=info,status"])
    assert ids(result.matches) == ["i3", "n4"]
    result, _ = run(mail, ["re=r1"])
    assert ids(result.matches) == ["r2"]
    result, _ = run(mail, ["id=r1,n4", "priority=now"])
    assert ids(result.matches) == ["r1"]
    assert result.unknown == []


def test_thread_includes_its_root(mail):
    result, _ = run(mail, ["thread=r1"])
    assert ids(result.matches) == ["i3", "r1", "r2"]
    result, _ = run(mail, ["thread=n4"])
    assert ids(result.matches) == ["n4"]


def test_task(mail):
    assert ids(run(mail, ["task=yes"])[0].matches) == ["d5", "r1", "r2"]
    assert ids(run(mail, ["task=no"])[0].matches) == ["i3", "n4"]


def test_slug_and_subject_are_case_insensitive_substrings(mail):
    assert ids(run(mail, ["subject~=renewal"])[0].matches) == ["r1"]
    assert ids(run(mail, ["subject~=PLAN"])[0].matches) == ["r1"]
    # subject falls back to the slug (here the id itself)
    assert ids(run(mail, ["subject~=N4"])[0].matches) == ["n4"]
    assert ids(run(mail, ["slug~=R"])[0].matches) == ["r1", "r2"]


def test_since_until_are_inclusive_and_compare_instants(mail):
    assert ids(run(mail, ["since=2026-03-01T10:00:00Z", "until=2026-03-01T10:00:00Z"])[0].matches) == ["r1"]
    # r2 was sent at 08:00Z (10:00+02:00)
    assert ids(run(mail, ["since=2026-03-02T08:00:00Z", "until=2026-03-02T08:00:00Z"])[0].matches) == ["r2"]


def test_ambiguous_sent_makes_time_terms_unknown_about_match(mail):
    result, _ = run(mail, ["until=2026-12-31T00:00:00Z"])
    assert ids(result.matches) == ["d5", "i3", "r1", "r2"]
    [(letter, reasons)] = result.unknown
    assert letter.id == "n4"
    assert [(r.code, r.about) for r in reasons] == [("ambiguous-timestamp", "match")]
    assert reasons[0].letters == ("n4",) and reasons[0].paths == ("beta/inbox/n4.md",)
    # a header term that says no still excludes the row: no unknown is reported for it
    result, _ = run(mail, ["until=2026-12-31T00:00:00Z", "type=request"])
    assert result.unknown == []


def test_due_comparisons_and_missing_or_ambiguous_deadline(mail):
    assert ids(run(mail, ["due<=2026-04-01T00:00:00Z"])[0].matches) == ["r1"]
    assert ids(run(mail, ["due<2026-04-01T00:00:00Z"])[0].matches) == []
    assert ids(run(mail, ["due>=2026-04-01T00:00:00Z"])[0].matches) == ["r1", "r2"]
    assert ids(run(mail, ["due>2026-04-01T00:00:00Z"])[0].matches) == ["r2"]
    result, _ = run(mail, ["due>=2026-03-15T00:00:00Z", "due<=2026-04-15T00:00:00Z"])
    assert ids(result.matches) == ["r1"]
    # no deadline: no; ambiguous deadline: unknown
    assert [x.id for x, _ in result.unknown] == ["d5"]
    assert result.unknown[0][1][0].code == "ambiguous-timestamp"


def test_derived_answers_three_valued(mail):
    scripted = {"answered": {"r1": YES, "r2": unknown("answered")}}
    result, _ = run(mail, ["type=request", "answered=no"], **scripted)
    assert ids(result.matches) == ["d5"]
    [(letter, reasons)] = result.unknown
    assert letter.id == "r2" and reasons[0].about == "answered"
    result, _ = run(mail, ["type=request", "answered=unknown"], **scripted)
    assert ids(result.matches) == ["r2"] and result.unknown == []
    result, _ = run(mail, ["type=request", "answered=yes"], **scripted)
    assert ids(result.matches) == ["r1"] and [x.id for x, _ in result.unknown] == ["r2"]


@pytest.mark.parametrize("name", ["accepted", "current", "late"])
def test_yes_no_unknown_answers(mail, name):
    default = "yes" if name == "current" else "no"
    other = "no" if default == "yes" else "yes"
    scripted = {name: {"r1": Answer(other), "r2": unknown(name)}}
    result, _ = run(mail, [f"{name}={default}"], **scripted)
    assert ids(result.matches) == ["d5", "i3", "n4"]
    assert [(x.id, r[0].about) for x, r in result.unknown] == [("r2", name)]
    assert ids(run(mail, [f"{name}={other}"], **scripted)[0].matches) == ["r1"]
    assert ids(run(mail, [f"{name}=unknown"], **scripted)[0].matches) == ["r2"]


def test_state_terms(mail):
    scripted = {"state": {"r1": StateAnswer("closed"), "r2": StateAnswer("unknown", unknown("state").reasons)}}
    assert ids(run(mail, ["state=closed"], **scripted)[0].matches) == ["r1"]
    result, _ = run(mail, ["state=open"], **scripted)
    assert ids(result.matches) == ["d5", "i3", "n4"]
    assert [(x.id, r[0].about) for x, r in result.unknown] == [("r2", "state")]
    assert ids(run(mail, ["state=unknown"], **scripted)[0].matches) == ["r2"]
    assert len(run(mail, ["state=any"], **scripted)[0].matches) == 5
    assert len(run(mail, [], **scripted)[0].matches) == 5


def test_superseded_head_means_current_yes(mail):
    scripted = {
        "current": {"r1": NO, "r2": unknown("current", "fork")},
        "superseded": {"r1": YES, "r2": unknown("superseded", "fork")},
    }
    result, _ = run(mail, ["superseded=head"], **scripted)
    assert ids(result.matches) == ["d5", "i3", "n4"]
    assert [(x.id, r[0].about) for x, r in result.unknown] == [("r2", "current")]
    assert ids(run(mail, ["superseded=yes"], **scripted)[0].matches) == ["r1"]
    assert ids(run(mail, ["superseded=unknown"], **scripted)[0].matches) == ["r2"]


def test_kleene_and(mail):
    scripted = {"answered": {"r2": unknown("answered", who="a")}, "late": {"r2": unknown("late", who="b")}}
    # any no excludes, even with an unknown beside it
    result, _ = run(mail, ["id=r2", "answered=no", "late=yes"], **{**scripted, "late": {"r2": NO}})
    assert result.matches == [] and result.unknown == []
    # yes + unknown + unknown: unknown, with the reasons of the unknown answers involved only
    result, _ = run(mail, ["id=r2", "answered=no", "late=no"], **scripted)
    [(letter, reasons)] = result.unknown
    assert [r.about for r in reasons] == ["answered", "late"]
    # all yes: a match
    result, _ = run(mail, ["id=r1", "answered=no", "late=no"], **scripted)
    assert ids(result.matches) == ["r1"]


def test_repeated_reasons_are_listed_once(mail):
    same = unknown("current", "cycle")
    scripted = {"current": {"r1": same}}
    q = parse_query(["current=yes", "superseded=head"])
    res = Scripted(scan(mail.root), **scripted)
    out = evaluate(q, next(x for x in res.snapshot.letters if x.id == "r1"), res)
    assert out.value == "unknown" and len(out.reasons) == 1


def test_header_terms_spare_the_resolver(mail):
    result, res = run(mail, ["from=beta", "answered=no", "late=no"])
    asked = {letter_id for _, letter_id in res.asked}
    assert asked == {"r2", "n4"}


TERMS = ["type=request", "answered=no", "state=open", "until=2026-03-04T00:00:00Z", "due>=2026-01-01T00:00:00Z",
         "task=yes", "slug~=r", "late=no", "current=yes", "from=alpha,beta"]


def test_term_order_never_changes_the_result(mail):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    snapshot = scan(mail.root)
    scripted = {"answered": {"r2": unknown("answered")}, "state": {"d5": StateAnswer("closed")}}

    def outcome(terms):
        result = run_query(parse_query(terms), Scripted(snapshot, **scripted))
        return ids(result.matches), sorted((x.id, r) for x, r in result.unknown)

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.sampled_from(TERMS), unique=True, max_size=6), st.randoms())
    def check(terms, rnd):
        shuffled = list(terms)
        rnd.shuffle(shuffled)
        assert outcome(terms) == outcome(shuffled)

    check()

"""Disputes and rulings seen from the letters they concern (issue 26 item 6): written in
the disputed letters' thread, and every letter a dispute names says "disputed by ... /
ruled by ..." in ``show`` and in the app's letter pane."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.core.schema import validate
from letterbox_tui.core.views.letter import show_view
from letterbox_tui.core.write import Draft, deliver, dispute_draft, reply, ruling_draft

NOW = datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)


def task_and_result(box):
    t = deliver(box.root, Draft(sender="alpha", recipient="beta", type="request", slug="plan", body="Plan.\n",
                                requires_ack=True), now=NOW)
    r = reply(box.root, t.id, "result", seat="beta", body="Planned.", now=NOW + timedelta(minutes=1))
    return t, r


def test_a_dispute_and_its_ruling_join_the_disputed_letters_thread(box):
    t, r = task_and_result(box)  # the result's thread is the request's id
    dispute = deliver(box.root, dispute_draft(scan(box.root), [r.id, t.id], "alpha"), now=NOW + timedelta(hours=1))
    assert dispute.letter.thread == t.id
    ruling = deliver(box.root, ruling_draft(scan(box.root), dispute.id, "alpha", upholds=r.id),
                     now=NOW + timedelta(hours=2))
    assert ruling.letter.thread == t.id
    assert {x.id for x in resolve(scan(box.root), NOW).thread(t.id)} >= {t.id, r.id, dispute.id, ruling.id}


def test_a_dispute_drafted_without_a_thread_gets_one_from_the_gate(box):
    # the app's form builds its own Draft, with no thread: the gate fills it in
    t, r = task_and_result(box)
    dispute = deliver(box.root, Draft(sender="alpha", recipient="alpha", type="dispute", slug="plan",
                                      body="They disagree.\n", disputes=[r.id, t.id]), now=NOW + timedelta(hours=1))
    assert dispute.letter.thread == t.id
    ruling = deliver(box.root, Draft(sender="alpha", recipient="alpha", type="ruling", slug="plan",
                                     body="Upheld.\n", rules_on=dispute.id), now=NOW + timedelta(hours=2))
    assert ruling.letter.thread == t.id


def test_letters_in_different_threads_give_the_first_named_letters_thread(box):
    a = deliver(box.root, Draft(sender="alpha", recipient="beta", type="decision", slug="a", body="A.\n"), now=NOW)
    b = deliver(box.root, Draft(sender="beta", recipient="alpha", type="decision", slug="b", body="B.\n",
                                thread="other-label"), now=NOW)
    dispute = deliver(box.root, dispute_draft(scan(box.root), [b.id, a.id], "alpha"), now=NOW)
    assert dispute.letter.thread == "other-label"


def test_show_names_the_dispute_and_its_ruling_on_every_disputed_letter(box):
    t, r = task_and_result(box)
    dispute = deliver(box.root, dispute_draft(scan(box.root), [r.id, t.id], "alpha"), now=NOW + timedelta(hours=1))
    res = resolve(scan(box.root), NOW + timedelta(hours=1))
    for letter_id in (t.id, r.id):
        doc = show_view(res, letter_id)
        assert doc["letters"][0]["disputed_by"] == [{"dispute": dispute.id, "ruled_by": []}]
        validate("show", doc)
    ruling = deliver(box.root, ruling_draft(scan(box.root), dispute.id, "alpha", upholds=r.id),
                     now=NOW + timedelta(hours=2))
    res = resolve(scan(box.root), NOW + timedelta(hours=2))
    for letter_id in (t.id, r.id):
        [item] = show_view(res, letter_id)["letters"]
        assert item["disputed_by"] == [{"dispute": dispute.id, "ruled_by": [ruling.id]}]
    assert show_view(res, dispute.id)["letters"][0]["disputed_by"] == []

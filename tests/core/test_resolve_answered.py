"""Answered, accepted, state and late (SPEC 5), including the protocol's query behaviours."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from tests.core.helpers import codes, one, resolved

PAST = "2026-02-01T00:00:00Z"
FUTURE = "2026-09-01T00:00:00Z"


def task(box, letter_id="req", **fields):
    fields.setdefault("requires_ack", "true")
    return box.letter(letter_id, frm="alpha", to="beta", type="request", **fields)


def reply(box, letter_id, re, kind="result", frm="beta", to="alpha", **fields):
    return box.letter(letter_id, frm=frm, to=to, type=kind, re=re, **fields)


# --- answered ----------------------------------------------------------------------


def test_terminal_reply_answers_and_closes(box):
    task(box)
    reply(box, "res", "req")
    res = resolved(box)
    req = one(res, "req")
    ans = res.answered(req)
    assert ans.value == "yes" and codes(ans) == ["answered-by"]
    assert ans.reasons[0].letters == ("res",) and ans.reasons[0].paths == ("alpha/inbox/res.md",)
    assert ans.reasons[0].about == "answered"
    assert [x.id for x in res.replies(req)] == ["res"]
    assert res.state(req).value == "closed"


def test_nack_is_terminal(box):
    task(box)
    reply(box, "no-thanks", "req", kind="nack")
    res = resolved(box)
    assert res.answered(one(res, "req")).value == "yes"


def test_wrong_party_reply_is_not_an_answer(box):
    task(box)
    reply(box, "wrong", "req", frm="alpha", to="beta")  # same direction as the request
    box.seat("gamma")
    reply(box, "stranger", "req", frm="gamma", to="alpha")
    res = resolved(box)
    req = one(res, "req")
    assert res.answered(req).value == "no"
    assert res.replies(req) == []
    assert [x.id for x in res.children(req)] == ["stranger", "wrong"]
    assert res.state(req).value == "open"


def test_ack_is_not_terminal_but_accepts(box):
    task(box)
    reply(box, "ack-1", "req", kind="ack")
    box.raw("beta/inbox/req.md.ack", "acked\n")
    res = resolved(box)
    req = one(res, "req")
    assert res.answered(req).value == "no"
    assert res.state(req).value == "open"
    acc = res.accepted(req)
    assert acc.value == "yes" and codes(acc) == ["accepted-by"]
    assert acc.reasons[0].letters == ("ack-1",)
    assert acc.reasons[0].paths == ("alpha/inbox/ack-1.md", "beta/inbox/req.md.ack")
    assert [x.id for x in res.acks(req)] == ["ack-1"]


def test_accepted_by_sidecar_alone_and_not_by_a_strangers_ack(box):
    task(box, "by-sidecar")
    box.raw("beta/inbox/by-sidecar.md.ack", "acked\n")
    task(box, "by-stranger")
    reply(box, "ack-x", "by-stranger", kind="ack", frm="alpha", to="beta")
    res = resolved(box)
    assert res.accepted(one(res, "by-sidecar")).value == "yes"
    assert res.accepted(one(res, "by-stranger")).value == "no"
    assert res.accepted(one(res, "by-stranger")).reasons == ()


def test_processed_is_closed_but_not_necessarily_answered(box):
    task(box, folder="processed")
    res = resolved(box)
    req = one(res, "req")
    assert res.state(req).value == "closed"
    assert res.answered(req).value == "no"


def test_external_route_is_unknown_and_state_stays_open(box):
    box.seat("external-bridge")
    box.letter("in", frm="external-bridge", to="beta", type="request", requires_ack="true")
    box.letter("out", frm="beta", to="external-bridge", type="request", requires_ack="true")
    box.letter("res", frm="beta", to="external-bridge", type="result", re="in")
    res = resolved(box)
    for i in ("in", "out"):
        letter = one(res, i)
        ans = res.answered(letter)
        assert ans.value == "unknown" and codes(ans) == ["external-route"], i
        assert res.state(letter).value == "open"


def test_duplicate_ids_never_collapse_silently(box):
    task(box)
    task(box, folder="processed")
    reply(box, "res", "req")
    res = resolved(box)
    inbox, processed = sorted(res.by_id("req"), key=lambda x: x.folder)
    for letter in (inbox, processed):
        ans = res.answered(letter)
        assert ans.value == "unknown" and codes(ans) == ["duplicate-id"]
        assert ans.reasons[0].paths == ("beta/inbox/req.md", "beta/processed/req.md")
    assert res.state(processed).value == "closed"
    state = res.state(inbox)
    assert state.value == "unknown" and codes(state) == ["duplicate-id"]
    assert {r.about for r in state.reasons} == {"state"}


def test_duplicate_in_two_inboxes_makes_state_unknown(box):
    task(box)
    task(box, seat="alpha")
    res = resolved(box)
    for letter in res.by_id("req"):
        assert res.state(letter).value == "unknown"
        assert codes(res.state(letter)) == ["duplicate-id"]


def test_reply_to_a_superseded_version(box):
    task(box, "v1")
    reply(box, "res-1", "v1")
    task(box, "v2", supersedes="v1")
    task(box, "v3", supersedes="v2")
    task(box, "fresh")
    res = resolved(box)
    for i in ("v2", "v3"):
        ans = res.answered(one(res, i))
        assert ans.value == "unknown" and codes(ans) == ["reply-to-superseded"], i
        assert "v1" in ans.reasons[0].letters and "res-1" in ans.reasons[0].letters
        assert ans.reasons[0].paths == ("alpha/inbox/res-1.md",)
    assert res.answered(one(res, "v1")).value == "yes"
    assert res.answered(one(res, "fresh")).value == "no"
    assert res.state(one(res, "v2")).value == "unknown"


def test_reply_to_superseded_survives_a_cycle(box):
    task(box, "p", supersedes="q")
    task(box, "q", supersedes="p")
    reply(box, "res-p", "p")
    res = resolved(box)
    ans = res.answered(one(res, "q"))
    assert codes(ans) == ["reply-to-superseded"]
    assert res.answered(one(res, "p")).value == "yes"


def test_unreadable_file_with_legible_re_may_be_the_reply(box):
    task(box)
    task(box, "other")
    box.raw("alpha/inbox/broken.md", "---\nid: broken\nre: req\nnot a field\n---\n")
    res = resolved(box)
    ans = res.answered(one(res, "req"))
    assert ans.value == "unknown" and codes(ans) == ["unreadable-file"]
    assert ans.reasons[0].paths == ("alpha/inbox/broken.md",)
    assert res.answered(one(res, "other")).value == "no"
    state = res.state(one(res, "req"))
    assert state.value == "unknown" and codes(state) == ["unreadable-file"]
    assert state.reasons[0].about == "state"


def test_unreadable_file_with_legible_re_but_another_type_is_never_the_reply(box):
    # SPEC 5: a legible type other than result/nack rules it out, even with a legible re
    task(box)
    task(box, "other")
    task(box, "third")
    box.raw("alpha/inbox/an-ack.md", "---\nre: req\ntype: ack\nnot a field\n---\n")
    box.raw("alpha/inbox/a-nack.md", "---\nre: other\ntype: nack\nnot a field\n---\n")
    box.raw("alpha/inbox/no-type.md", "---\nre: third\nnot a field\n---\n")
    res = resolved(box)
    assert res.answered(one(res, "req")).value == "no"
    assert res.state(one(res, "req")).value == "open"
    assert codes(res.answered(one(res, "other"))) == ["unreadable-file"]
    assert codes(res.answered(one(res, "third"))) == ["unreadable-file"]


def test_unreadable_file_without_re_unless_its_legible_fields_rule_it_out(box):
    task(box)
    box.raw("alpha/inbox/wrong-type.md", "---\ntype: ack\nfrom: beta\nto: alpha\nbad\n---\n")
    box.raw("alpha/inbox/wrong-from.md", "---\ntype: result\nfrom: alpha\nbad\n---\n")
    box.raw("alpha/inbox/wrong-to.md", "---\nto: beta\nbad\n---\n")
    box.raw("alpha/inbox/other-re.md", "---\nre: elsewhere\nbad\n---\n")
    res = resolved(box)
    assert res.answered(one(res, "req")).value == "no"
    box.raw("alpha/inbox/blank.md", b"\xef\xbb\xbf---\nid: x\n---\n")  # nothing legible
    res = resolved(box)
    ans = res.answered(one(res, "req"))
    assert codes(ans) == ["unreadable-file"] and ans.reasons[0].paths == ("alpha/inbox/blank.md",)


def test_unreadable_file_with_matching_parties_may_be_the_reply(box):
    task(box)
    box.raw("alpha/inbox/maybe.md", "---\nfrom: beta\nto: alpha\ntype: result\nbad\n---\n")
    res = resolved(box)
    assert codes(res.answered(one(res, "req"))) == ["unreadable-file"]


def test_archive_symlink_and_fifo_make_answers_unknown(box, tmp_path):
    task(box)
    (box.root / "beta" / "archive").mkdir()
    res = resolved(box)
    assert codes(res.answered(one(res, "req"))) == ["unsupported-entry"]
    os.rmdir(box.root / "beta" / "archive")
    target = tmp_path / "outside.md"
    target.write_text("x")
    os.symlink(target, box.root / "alpha" / "inbox" / "link.md")
    res = resolved(box)
    assert codes(res.answered(one(res, "req"))) == ["unsupported-entry"]
    os.unlink(box.root / "alpha" / "inbox" / "link.md")
    os.mkfifo(box.root / "alpha" / "inbox" / "pipe.md")
    res = resolved(box)
    ans = res.answered(one(res, "req"))
    assert codes(ans) == ["unsupported-entry"] and ans.reasons[0].paths == ("alpha/inbox/pipe.md",)
    assert res.state(one(res, "req")).value == "unknown"


def test_unsupported_entry_does_not_undo_a_real_answer(box):
    task(box)
    reply(box, "res", "req")
    (box.root / "beta" / "archive").mkdir()
    res = resolved(box)
    assert res.answered(one(res, "req")).value == "yes"


def test_malformed_re_mentioning_the_letter(box):
    task(box)
    task(box, "other")
    reply(box, "odd", "req?")
    res = resolved(box)
    assert one(res, "odd").malformed == ("re",)
    ans = res.answered(one(res, "req"))
    assert ans.value == "unknown" and codes(ans) == ["malformed-pointer"]
    assert ans.reasons[0].letters == ("odd",)
    assert res.answered(one(res, "other")).value == "no"


def test_partial_scope_when_the_sender_is_outside(box):
    task(box)  # alpha -> beta, lies in beta/inbox
    box.letter("self", frm="beta", to="beta", type="request", requires_ack="true")
    res = resolved(box, ["beta"])
    ans = res.answered(one(res, "req"))
    assert ans.value == "unknown" and codes(ans) == ["outside-scope"]
    assert res.answered(one(res, "self")).value == "no"


def test_non_atomic_scan_makes_answered_unknown(box):
    task(box)
    res = resolved(box, atomic=False)
    assert codes(res.answered(one(res, "req"))) == ["non-atomic-scan"]


def test_reasons_carry_about_and_only_spec_codes(box):
    task(box, deadline=PAST)
    reply(box, "odd", "req?")
    box.raw("alpha/inbox/broken.md", "---\nre: req\nbad\n---\n")
    res = resolved(box, atomic=False)
    req = one(res, "req")
    assert codes(res.answered(req)) == ["unreadable-file", "malformed-pointer", "non-atomic-scan"]
    assert {r.about for r in res.answered(req).reasons} == {"answered"}
    assert {r.about for r in res.state(req).reasons} == {"state"}
    assert {r.about for r in res.late(req).reasons} == {"late"}


# --- late --------------------------------------------------------------------------


def test_open_task_past_its_deadline_is_late(box):
    task(box, "overdue", deadline=PAST)
    task(box, "pending", deadline=FUTURE)
    task(box, "no-deadline")
    res = resolved(box)
    assert res.late(one(res, "overdue")).value == "yes"
    assert res.late(one(res, "pending")).value == "no"
    assert res.late(one(res, "no-deadline")).value == "no"
    # The clock is a parameter.
    assert res.late(one(res, "overdue"), datetime(2026, 1, 15, tzinfo=timezone.utc)).value == "no"
    assert res.late(one(res, "pending"), datetime(2027, 1, 1, tzinfo=timezone.utc)).value == "yes"
    # Exactly at the deadline is not before it.
    assert res.late(one(res, "overdue"), datetime(2026, 2, 1, tzinfo=timezone.utc)).value == "no"


def test_answered_processed_and_non_tasks_are_never_late(box):
    task(box, "answered", deadline=PAST)
    reply(box, "res", "answered")
    task(box, "filed", deadline=PAST, folder="processed")
    box.letter("note", type="info", requires_ack="false", deadline=PAST)
    res = resolved(box)
    for i in ("answered", "filed", "note"):
        assert res.late(one(res, i)).value == "no", i


def test_ambiguous_deadline_is_unknown(box):
    task(box, deadline="2026-02-01T00:00:00")  # naive
    res = resolved(box)
    ans = res.late(one(res, "req"))
    assert ans.value == "unknown" and codes(ans) == ["ambiguous-timestamp"]
    assert ans.reasons[0].about == "late"


def test_external_route_task_is_late_unknown(box):
    box.seat("external-bridge")
    box.letter("ext", frm="beta", to="external-bridge", type="request", requires_ack="true", deadline=PAST)
    res = resolved(box)
    ans = res.late(one(res, "ext"))
    assert ans.value == "unknown" and codes(ans) == ["external-route"]


def test_state_unknown_task_is_late_unknown_only_when_overdue_or_ambiguous(box):
    task(box, "overdue", deadline=PAST)
    task(box, "pending", deadline=FUTURE)
    task(box, "vague", deadline="soon")
    task(box, "none")
    (box.root / "beta" / "archive").mkdir()
    res = resolved(box)
    for i in ("overdue", "pending", "vague", "none"):
        assert res.state(one(res, i)).value == "unknown", i
    overdue = res.late(one(res, "overdue"))
    assert overdue.value == "unknown" and codes(overdue) == ["unsupported-entry"]
    assert overdue.reasons[0].about == "late"
    vague = res.late(one(res, "vague"))
    assert vague.value == "unknown" and codes(vague) == ["ambiguous-timestamp", "unsupported-entry"]
    assert res.late(one(res, "pending")).value == "no"
    assert res.late(one(res, "none")).value == "no"


def test_an_unreadable_copy_of_the_id_is_a_duplicate(box):
    task(box)
    box.raw("beta/processed/req.md", "---\nid: req\nfrom: alpha\nbroken\n---\n")
    res = resolved(box)
    req = one(res, "req")
    ans = res.answered(req)
    assert codes(ans) == ["duplicate-id"] and ans.reasons[0].paths == ("beta/inbox/req.md", "beta/processed/req.md")
    state = res.state(req)
    assert state.value == "unknown" and codes(state) == ["duplicate-id"]
    assert "both" in state.reasons[0].detail

"""The attention codes of owed items (SPEC 7 "Attention codes", ``core.views.attention``):
each code at its boundary, several on one row, and a record that cannot be read kept as
unknown with its reason."""

from __future__ import annotations

from datetime import timedelta

import pytest

from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.core.views.attention import CODES, Rules
from letterbox_tui.core.views.owed import owed_view

from tests.core.helpers import AT

DAY = timedelta(days=1)
SEC = timedelta(seconds=1)


def z(t) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def ask(box, letter_id="ask", to="beta", **fields):
    """A task alpha sends ``to``, ten days before AT unless ``sent`` says otherwise."""
    fields.setdefault("sent", z(AT - 10 * DAY))
    return box.letter(letter_id, frm="alpha", to=to, type="request", requires_ack="true", **fields)


def codes_of(box, letter_id="ask", *, at=AT, rules=None, participants=None):
    """{code: Code} of one owed item."""
    res = resolve(scan(box.root, participants), at)
    view = owed_view(res, rules=rules or Rules())
    (item,) = [i for g in view.groups for i in g.items if i.letter.id == letter_id]
    assert [c.code for c in item.attention] == sorted((c.code for c in item.attention), key=CODES.index)
    return {c.code: c for c in item.attention}


def sidecar(box, letter_id="ask", seat="beta", **lines):
    box.raw(f"{seat}/inbox/{letter_id}.md.ack", "".join(f"{k}: {v}\n" for k, v in lines.items()))


# --- late, late-unknown, due-soon ------------------------------------------------------

def test_late_since_its_deadline(box):
    ask(box, deadline=z(AT - DAY))
    c = codes_of(box)["late"]
    assert c.since == AT - DAY and "1d overdue" in c.detail and not c.unknown


def test_late_unknown_names_its_reason(box):
    ask(box, deadline="2026-05-01T00:00:00")  # no offset: ambiguous
    c = codes_of(box)
    assert "late" not in c and "ambiguous-timestamp" in c["late-unknown"].detail


def test_due_soon_at_its_boundary(box):
    ask(box, "edge", deadline=z(AT + DAY))  # exactly the setting away: within it
    ask(box, "past-edge", deadline=z(AT + DAY + SEC))
    edge = codes_of(box, "edge")["due-soon"]
    assert edge.since == AT and "in 1d" in edge.detail  # due-soon from a day before the deadline
    assert "due-soon" not in codes_of(box, "past-edge")
    assert "due-soon" in codes_of(box, "past-edge", rules=Rules(due_soon=2 * DAY))


# --- never-acked, accepted-silent -------------------------------------------------------

def test_never_acked_until_a_sidecar_or_a_reply(box):
    ask(box, "quiet")
    c = codes_of(box, "quiet")["never-acked"]
    assert c.since == AT - 10 * DAY and "no ack" in c.detail
    ask(box, "acked")
    sidecar(box, "acked", acked_at=z(AT - DAY))
    assert "never-acked" not in codes_of(box, "acked")
    ask(box, "asked-back")  # the owing seat wrote back (a question): not never-acked
    box.letter("q", frm="beta", to="alpha", type="info", re="asked-back", sent=z(AT - DAY))
    assert "never-acked" not in codes_of(box, "asked-back")


def test_accepted_silent_at_exactly_the_silence_setting(box):
    ask(box, "at-edge")
    sidecar(box, "at-edge", acked_at=z(AT - 2 * DAY))  # exactly 2 days: not longer than it
    ask(box, "past-edge")
    sidecar(box, "past-edge", acked_at=z(AT - 2 * DAY - SEC))
    assert "accepted-silent" not in codes_of(box, "at-edge")
    c = codes_of(box, "past-edge")["accepted-silent"]
    assert c.since == AT - 2 * DAY - SEC and "ack sidecar" in c.detail and not c.unknown


def test_a_progress_note_one_second_inside_the_silence_keeps_it_quiet(box):
    ask(box, "noted")
    sidecar(box, "noted", acked_at=z(AT - 9 * DAY), progress="table 3 of 5", progress_at=z(AT - 2 * DAY + SEC))
    assert "accepted-silent" not in codes_of(box, "noted")
    ask(box, "stale-note")
    sidecar(box, "stale-note", acked_at=z(AT - 9 * DAY), progress="table 1", progress_at=z(AT - 2 * DAY - SEC))
    c = codes_of(box, "stale-note")["accepted-silent"]
    assert c.since == AT - 2 * DAY - SEC and "progress note" in c.detail
    assert "accepted-silent" not in codes_of(box, "stale-note", rules=Rules(silence=3 * DAY))


def test_an_ack_letter_and_a_reply_are_signs_of_life(box):
    ask(box)
    box.letter("ask--beta--ack", frm="beta", to="alpha", type="ack", re="ask", sent=z(AT - 5 * DAY))
    assert codes_of(box)["accepted-silent"].since == AT - 5 * DAY
    box.letter("news", frm="beta", to="alpha", type="info", re="ask", sent=z(AT - DAY))
    assert "accepted-silent" not in codes_of(box)


def test_an_unreadable_sidecar_is_unknown_with_its_reason(box):
    ask(box)
    (box.root / "beta" / "inbox" / "ask.md.ack").mkdir()  # present (accepted), cannot be read
    c = codes_of(box)
    assert "never-acked" not in c
    silent = c["accepted-silent"]
    assert silent.unknown and silent.since is None
    assert silent.to_json()["detail"].startswith("unknown: the ack sidecar beta/inbox/ask.md.ack cannot be read")


def test_a_progress_time_that_is_no_time_is_unknown(box):
    ask(box)
    sidecar(box, acked_at=z(AT - 9 * DAY), progress="half", progress_at="yesterday")
    c = codes_of(box)["accepted-silent"]
    assert c.unknown and "progress_at 'yesterday' is not a time" in c.detail


# --- the owing seat's status note ---------------------------------------------------------

@pytest.mark.parametrize("state", ["blocked", "idle"])
def test_a_status_note_older_than_the_letter_still_counts(box, state):
    ask(box, sent=z(AT - 3 * DAY))
    box.raw("beta/status.md", f"state: {state}\nsince: {z(AT - 5 * DAY)}\nnotes: waiting on quota\n")
    c = codes_of(box)[f"owner-{state}"]
    assert c.since == AT - 5 * DAY
    assert "before this letter was sent" in c.detail and "waiting on quota" in c.detail


def test_a_working_seat_and_another_seats_note_give_nothing(box):
    ask(box)
    box.raw("beta/status.md", f"state: working\nsince: {z(AT - DAY)}\n")
    box.raw("alpha/status.md", f"state: blocked\nsince: {z(AT - DAY)}\n")
    assert not {"owner-blocked", "owner-idle"} & set(codes_of(box))


def test_an_unreadable_status_note_is_unknown_for_both_codes(box):
    ask(box)
    (box.root / "beta" / "status.md").mkdir()
    c = codes_of(box)
    assert c["owner-blocked"].unknown and c["owner-idle"].unknown
    assert "beta/status.md is not a regular file" in c["owner-blocked"].detail
    box.root.joinpath("beta", "status.md").rmdir()
    box.raw("beta/status.md", "# beta\n\nBlocked, sort of.\n")  # prose names no state: no code, no guess
    assert not {"owner-blocked", "owner-idle"} & set(codes_of(box))


# --- leases -------------------------------------------------------------------------------

def lease(box, name, owner, taken):
    box.raw(f"locks/{name}/lease", f"owner={owner} session=s1 taken={z(taken)}\n")


def test_lease_silent_only_for_the_seat_holding_it(box):
    ask(box)
    lease(box, "src-main.lock", "alpha", AT - 9 * DAY)  # another seat's lease
    assert "lease-silent" not in codes_of(box)
    lease(box, "docs.lock", "beta", AT - 9 * DAY)
    c = codes_of(box)["lease-silent"]
    assert "holds lease docs" in c.detail and "nothing it wrote is on record" in c.detail
    assert c.since == AT - 9 * DAY  # it wrote nothing: silent since it took the lease


def test_lease_silent_at_exactly_the_silence_setting(box):
    ask(box)
    lease(box, "docs.lock", "beta", AT - 9 * DAY)
    box.letter("note", frm="beta", to="alpha", type="info", sent=z(AT - 2 * DAY))
    assert "lease-silent" not in codes_of(box)
    box.raw("alpha/inbox/note.md", box.root.joinpath("alpha/inbox/note.md").read_text()
            .replace(z(AT - 2 * DAY), z(AT - 2 * DAY - SEC)))
    c = codes_of(box)["lease-silent"]
    assert c.since == AT - 2 * DAY - SEC and "letter note" in c.detail


def test_lease_silent_on_a_partial_scope_is_unknown(box):
    box.seat("gamma")
    ask(box)
    lease(box, "docs.lock", "beta", AT - 9 * DAY)
    c = codes_of(box, participants=["beta"])["lease-silent"]
    assert c.unknown and "the scope is partial" in c.detail


def test_a_lease_whose_holder_cannot_be_read_may_be_the_owing_seats(box):
    ask(box)
    (box.root / "locks" / "half.lock").mkdir(parents=True)  # no lease file
    c = codes_of(box)["lease-silent"]
    assert c.unknown and "locks/half.lock" in c.detail


# --- waiting-on-human, chased ---------------------------------------------------------------

def test_waiting_on_human_from_the_settings_or_the_readers_own_seat(box):
    ask(box)
    assert "waiting-on-human" not in codes_of(box)
    assert "person's seat" in codes_of(box, rules=Rules(human_seats=frozenset({"beta"})))["waiting-on-human"].detail
    assert "your own seat" in codes_of(box, rules=Rules(own_seat="beta"))["waiting-on-human"].detail
    assert "waiting-on-human" not in codes_of(box, rules=Rules(own_seat="alpha"))


def test_chased_shows_the_last_chase(box):
    ask(box)
    box.letter("chase-1", frm="alpha", to="beta", type="info", re="ask", sent=z(AT - 4 * DAY))
    box.letter("chase-2", frm="alpha", to="beta", type="info", re="ask", sent=z(AT - DAY))
    box.letter("aside", frm="alpha", to="alpha", type="info", re="ask", sent=z(AT))  # not to the owing seat
    c = codes_of(box)["chased"]
    assert c.since == AT - DAY and "chase-2" in c.detail and "2 chases" in c.detail


# --- several codes, the settings file --------------------------------------------------------

def test_a_row_with_several_codes_most_urgent_first(box):
    ask(box, deadline=z(AT - DAY))
    box.raw("beta/status.md", f"state: idle\nsince: {z(AT - DAY)}\n")
    box.letter("chase-1", frm="alpha", to="beta", type="info", re="ask", sent=z(AT - DAY))
    got = codes_of(box, rules=Rules(human_seats=frozenset({"beta"})))
    assert list(got) == ["late", "never-acked", "waiting-on-human", "owner-idle", "chased"]
    assert all(set(c.to_json()) == {"code", "since", "detail"} for c in got.values())


def test_the_settings_file_sets_the_rules(box):
    ask(box)
    sidecar(box, acked_at=z(AT - 3 * DAY))
    box.raw("letterbox-tui.toml", 'human_seats = ["beta"]\nsilence = "4d"\ndue_soon = "12h"\n')
    res = resolve(scan(box.root), AT)
    (item,) = owed_view(res).groups[0].items  # the rules default to the letterbox's settings
    assert [c.code for c in item.attention] == ["waiting-on-human"]


def test_owed_text_orders_by_the_most_urgent_code_then_by_deadline(box):
    ask(box, "acked-early", deadline=z(AT + 5 * DAY))
    sidecar(box, "acked-early", acked_at=z(AT - 9 * DAY))  # accepted-silent
    ask(box, "unacked-later", deadline=z(AT + 9 * DAY))  # never-acked ranks first
    ask(box, "late-one", deadline=z(AT - DAY))
    ask(box, "fine", deadline=z(AT + 3 * DAY))
    sidecar(box, "fine", acked_at=z(AT - DAY))  # nothing to say: last
    res = resolve(scan(box.root), AT)
    view = owed_view(res, rules=Rules())
    assert [i.letter.id for i in view.by_urgency()[0].items] == ["late-one", "unacked-later", "acked-early", "fine"]
    assert [i.letter.id for i in view.groups[0].items] == ["late-one", "fine", "acked-early", "unacked-later"]
    # the JSON keeps SPEC 7's order (late first, then by deadline)
    assert [r["id"] for r in view.to_json()["owed"][0]["items"]] == ["late-one", "fine", "acked-early", "unacked-later"]
    assert [i.letter.id for i in view.most_urgent_first()] == ["late-one", "unacked-later", "acked-early", "fine"]
    assert [i.letter.id for i in owed_view(res, rules=Rules(), codes=("accepted-silent",)).groups[0].items] == ["acked-early"]
    assert view.counts()["never-acked"] == {"known": 2, "unknown": 0}


# --- letters the scan could not show -------------------------------------------------------

def test_never_acked_is_unknown_when_a_reply_may_be_unseen(box):
    box.seat("gamma")
    ask(box)
    c = codes_of(box, participants=["beta"])["never-acked"]  # alpha's inbox, where a reply lies, is not read
    assert c.unknown and "letters to alpha lie outside the partial scope" in c.detail
    assert not codes_of(box)["never-acked"].unknown
    box.raw("alpha/inbox/broken.md", "---\nfrom: beta\nre: ask\nbroken line\n---\n")
    c = codes_of(box)["never-acked"]
    assert c.unknown and "alpha/inbox/broken.md may be a letter from beta" in c.detail


def test_accepted_silent_is_unknown_when_a_reply_may_be_unseen(box):
    ask(box)
    sidecar(box, acked_at=z(AT - 9 * DAY))
    box.raw("alpha/inbox/broken.md", "---\nre: ask\nbroken line\n---\n")  # from anyone, beta too
    c = codes_of(box)["accepted-silent"]
    assert c.unknown and "broken.md may be a letter from beta" in c.detail and "ack sidecar" in c.detail
    box.raw("alpha/inbox/broken.md", "---\nfrom: gamma\nre: ask\nbroken line\n---\n")  # another seat's: no doubt
    assert not codes_of(box)["accepted-silent"].unknown


def test_sidecars_read_together_are_each_read_alone(box):
    """``Records.warm_sidecars``: each letter's sidecar record as ``sidecar`` reads it
    alone (a good one, a bad time, one that is a folder, none), and the codes the same."""
    from letterbox_tui.core.records import Records

    for name in ("good", "bad", "folder", "none"):
        ask(box, name)
    sidecar(box, "good", acked_at=z(AT - DAY))
    sidecar(box, "bad", acked_at=z(AT - DAY), progress_at="soon")
    (box.root / "beta/inbox/folder.md.ack").mkdir()
    res = resolve(scan(box.root), AT)
    letters = [x for x in res.snapshot.letters if x.task]
    alone, together = Records(res.snapshot), Records(res.snapshot)
    together.warm_sidecars(letters)
    assert [together._sidecars[x.path] for x in letters] == [alone.sidecar(x) for x in letters]
    assert [together.sidecar(x) is not None for x in letters] == [x.id != "none" for x in letters]
    assert together.sidecar(letters[1]).unreadable  # (scan order: bad, folder, good, none)
    assert owed_view(res, rules=Rules(), records=together) == owed_view(res, rules=Rules(), records=alone)


def test_items_of_one_code_keep_the_deadline_order_in_the_text_order(box):
    ask(box, "later", deadline=z(AT + 9 * DAY))
    ask(box, "sooner", deadline=z(AT + 5 * DAY))
    ask(box, "undated")
    ask(box, "overdue", deadline=z(AT - 2 * DAY))
    ask(box, "overdue-more", deadline=z(AT - 4 * DAY))
    res = resolve(scan(box.root), AT)
    view = owed_view(res, rules=Rules())
    # late (most overdue first), then the never-acked ones by deadline, then the undated one
    want = ["overdue-more", "overdue", "sooner", "later", "undated"]
    assert [i.letter.id for i in view.by_urgency()[0].items] == want
    assert [i.letter.id for i in view.most_urgent_first()] == want


def test_the_most_urgent_item_is_the_first_of_the_whole_order_across_seats_and_filters(box):
    """``most_urgent_item`` compares only each seat's first item of its most urgent code:
    it is still ``most_urgent_first()[0]``, ties between seats going to the earlier seat,
    in the whole view and in each filter by code."""
    box.seat("gamma")
    box.seat("delta")
    ask(box, "beta-late", to="beta", deadline=z(AT - DAY))
    ask(box, "beta-unacked", to="beta", deadline=z(AT + 9 * DAY))
    ask(box, "gamma-late-more", to="gamma", deadline=z(AT - 3 * DAY))  # the most overdue
    ask(box, "gamma-unacked", to="gamma")
    ask(box, "delta-late-same", to="delta", deadline=z(AT - 3 * DAY), sent=z(AT - 10 * DAY))  # a tie with gamma's
    ask(box, "delta-silent", to="delta", deadline=z(AT + 5 * DAY))
    sidecar(box, "delta-silent", seat="delta", acked_at=z(AT - 9 * DAY))
    res = resolve(scan(box.root), AT)
    view = owed_view(res, rules=Rules())
    assert view.most_urgent_item() is view.most_urgent_first()[0]
    for code in CODES:
        shown = view.only((code,))
        whole = shown.most_urgent_first()
        assert shown.most_urgent_item() is (whole[0] if whole else None), code
    assert owed_view(res, rules=Rules(), codes=("owner-idle",)).most_urgent_item() is None

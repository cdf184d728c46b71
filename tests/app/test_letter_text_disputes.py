"""The letter pane's Body header names the disputes and rulings about a letter (issue 26
item 6): the letter itself never says it, so every letter a dispute names shows
"Disputed by ... / ruled by ..."."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone


from letterbox_tui.app.model import AppModel
from letterbox_tui.app.widgets.letter_text import head_text
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.core.settings import load_settings
from letterbox_tui.core.write import Draft, deliver, dispute_draft, reply, ruling_draft

NOW = datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)


def header(box, letter_id: str, at: datetime) -> str:
    res = resolve(scan(box.root), at)
    model = AppModel.build(str(box.root), load_settings(box.root), res, at)
    [letter] = [x for x in res.snapshot.letters if x.id == letter_id]
    return head_text(model, letter).plain


def test_the_body_header_of_each_disputed_letter_names_its_dispute_and_ruling(box):
    t = deliver(box.root, Draft(sender="alpha", recipient="beta", type="request", slug="plan", body="Plan.\n",
                                requires_ack=True), now=NOW)
    r = reply(box.root, t.id, "result", seat="beta", body="Planned.", now=NOW)
    assert "Disputed by" not in header(box, t.id, NOW)
    d = deliver(box.root, dispute_draft(scan(box.root), [r.id, t.id], "alpha"), now=NOW + timedelta(hours=1))
    for letter_id in (t.id, r.id):
        assert f"Disputed by {d.id} / open: no ruling yet" in header(box, letter_id, NOW + timedelta(hours=1))
    g = deliver(box.root, ruling_draft(scan(box.root), d.id, "alpha", upholds=r.id), now=NOW + timedelta(hours=2))
    for letter_id in (t.id, r.id):
        assert f"Disputed by {d.id} / ruled by {g.id}" in header(box, letter_id, NOW + timedelta(hours=2))


def test_a_disputed_letter_names_its_dispute_when_the_answers_are_stored(box):
    from letterbox_tui.store import open_answers
    from letterbox_tui.store.stored import StoredAnswers

    t = deliver(box.root, Draft(sender="alpha", recipient="beta", type="request", slug="plan", body="Plan.\n",
                                requires_ack=True), now=NOW)
    r = reply(box.root, t.id, "result", seat="beta", body="Planned.", now=NOW)
    d = deliver(box.root, dispute_draft(scan(box.root), [r.id, t.id], "alpha"), now=NOW + timedelta(hours=1))
    at = NOW + timedelta(hours=1)
    open_answers(box.root, at)
    res = open_answers(box.root, at)  # unchanged since: read back from the store
    assert isinstance(res, StoredAnswers)
    model = AppModel.build(str(box.root), load_settings(box.root), res, at)
    [letter] = [x for x in res.snapshot.letters if x.id == t.id]
    assert f"Disputed by {d.id} / open: no ruling yet" in head_text(model, letter).plain

"""The letter pane's Body header names the disputes and rulings about a letter (issue 26
item 6): the letter itself never says it, so every letter a dispute names shows
"Disputed by ... / ruled by ..."."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest


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


ACCESS = "2026-11-22T090000-builder-request-access-aaaa0005"


def _index(lst, letter_id: str) -> int:
    return next(i for i, r in enumerate(lst.rows) if r.letter is not None and r.letter.id == letter_id)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_a_dispute_and_ruling_written_in_the_app_show_on_the_letters_they_concern(letterbox, size):
    """Issue 26 item 6 as a user meets it: mark a result and its request, d, send; rule
    on it with u, send. Both letters are in one thread, and the dispute and the ruling
    carry it: each letter's Body says "Disputed by ... / ruled by ...", and its Thread tab
    lists the dispute and the ruling."""
    from textual.widgets import Select, Static

    from tests.app.helpers import app_for, letters, scanned, sent_with, thread_text, until, view_built

    result = ACCESS + "--planner--result"
    app = app_for(letterbox, view="all")
    async with app.run_test(size=size) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        for letter_id in (ACCESS, result):
            lst.cursor = _index(lst, letter_id)
            await pilot.press("m")
        dispute = (await sent_with(pilot, app, "d")).written
        await scanned(pilot, app, count=2)
        await pilot.press("2")
        await view_built(pilot, app)
        lst.cursor = _index(lst, dispute)
        ruling_id = (await sent_with(pilot, app, "u", lambda form: setattr(
            form.query_one("#w-upholds", Select), "value", result))).written
        await scanned(pilot, app, count=3)
        written = {x.id: x for x in app.model.snapshot.letters}
        assert written[dispute].thread == ACCESS and written[ruling_id].thread == ACCESS
        await pilot.press("4")
        await view_built(pilot, app)
        for letter_id in (result, ACCESS):
            lst.cursor = _index(lst, letter_id)
            await pilot.press("enter")
            head = app.query_one("#letter-head", Static)
            await until(pilot, lambda: app.letter_pane.letter.id == letter_id and "Disputed by" in head.render().plain)
            assert f"Disputed by {dispute} / ruled by {ruling_id}" in " ".join(head.render().plain.split())
            app.action_show_tab("thread")
            await until(pilot, lambda: "dispute" in thread_text(app))
            shown = thread_text(app)
            assert "dispute" in shown and "ruling" in shown, shown
            app.action_show_tab("body")
            await pilot.press("q")

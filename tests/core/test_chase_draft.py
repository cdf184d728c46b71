"""``core.chase``: who is chased, and when a second chase asks first (the silence setting)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from letterbox_tui.core.chase import ChasedRecently, chase_draft
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.core.views.attention import Rules

from tests.core.helpers import AT


def z(t) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def draft_at(box, **kw):
    return chase_draft(resolve(scan(box.root), AT), "ask", "alpha", rules=Rules(), **kw)


def test_the_draft_is_an_info_letter_to_the_owing_seat(box):
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true", thread="plan")
    d = draft_at(box)
    assert (d.sender, d.recipient, d.type, d.re, d.thread, d.body) == ("alpha", "beta", "info", "ask", "plan", "status?\n")


def test_a_second_chase_asks_first_up_to_exactly_the_silence(box):
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("chase-1", frm="alpha", to="beta", type="info", re="ask", sent=z(AT - timedelta(days=2)))
    with pytest.raises(LetterboxError, match="give --again"):
        draft_at(box)  # exactly the silence setting ago: still within it
    assert draft_at(box, again=True).re == "ask"
    box.letter("chase-1", frm="alpha", to="beta", type="info", re="ask", sent=z(AT - timedelta(days=2, seconds=1)))
    assert draft_at(box).re == "ask"


def test_the_refusal_within_the_silence_names_the_chase_on_record(box):
    """The app asks first on this refusal alone: it says which chase, how long ago."""
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("chase-1", frm="alpha", to="beta", type="info", re="ask", sent=z(AT - timedelta(hours=5)))
    with pytest.raises(ChasedRecently) as caught:
        draft_at(box)
    assert (caught.value.last.id, caught.value.ago, caught.value.silence) == ("chase-1", timedelta(hours=5), Rules().silence)


def test_the_owing_seat_does_not_chase_itself(box):
    """A chase from the owing seat would never count as one (``chased`` counts chases from
    another seat): refused, not written and then invisible."""
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true")
    with pytest.raises(LetterboxError, match="beta owes ask: a seat does not chase itself"):
        chase_draft(resolve(scan(box.root), AT), "ask", "beta", rules=Rules())

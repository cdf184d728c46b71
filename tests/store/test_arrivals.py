"""Letters arriving one by one into one inbox (issue 28, item 13's case): after every
arrival, in an order that interleaves asks, replies and superseders, the answers read back
from the store equal the answers computed from the letters."""

from __future__ import annotations

import random

from tests.conftest import make_box
from tests.store.test_differential import same


def test_every_arrival_into_one_inbox_is_answered_as_computed(tmp_path, monkeypatch):
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))  # every file counts as settled
    box = make_box(tmp_path / "box", "alpha", "beta")
    arrivals = []
    for i in range(5):
        arrivals.append(dict(letter_id=f"ask-{i}", frm="alpha", to="beta", type="request", requires_ack="true"))
        arrivals.append(dict(letter_id=f"ask-{i}--beta--ack", frm="beta", to="alpha", type="ack",
                             re=f"ask-{i}", seat="beta"))
        arrivals.append(dict(letter_id=f"plan-{i}", frm="alpha", to="beta", type="decision",
                             supersedes=f"plan-{i - 1}" if i else None))
    random.Random(28).shuffle(arrivals)
    for one in arrivals:
        box.letter(one.pop("letter_id"), **one)  # all into beta/inbox
        same(box.root)

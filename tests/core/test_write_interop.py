"""What the protocol's strict tools need from everything we write (issue 23, bugs 1-3):
every id-valued header at most 128 characters; one terminal reply per seat and letter,
even after a writer died between publishing and moving; no lock leftovers."""

from __future__ import annotations

import os
import signal
from datetime import datetime, timedelta, timezone

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.scan import scan
from letterbox_tui.core.write import Draft, deliver, dispute_draft, reply, supersede_draft
from letterbox_tui.core.write import lifecycle

NOW = datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)
LATER = NOW + timedelta(hours=1)


def draft(**kw):
    fields = dict(sender="alpha", recipient="beta", type="request", slug="plan", body="Plan it.\n")
    fields.update(kw)
    return Draft(**fields)


def label(n: int) -> str:
    """A thread label of id shape, ``n`` characters long."""
    return ("t" * n)[:n]


# --- bug 1: every header we write is at most 128 characters ---------------------------


def test_a_thread_label_of_129_characters_is_refused_and_nothing_is_written(box):
    before = box.tree_bytes()
    with pytest.raises(LetterboxError, match="thread.*128"):
        deliver(box.root, draft(thread=label(129)), now=NOW)
    assert box.tree_bytes() == before


def test_a_thread_label_of_128_characters_is_written(box):
    p = deliver(box.root, draft(thread=label(128)), now=NOW)
    assert p.letter.thread == label(128)


def test_a_reply_does_not_copy_a_thread_over_128_characters(box):
    # another edition (or an older writer) wrote a task whose thread label is 200 long
    box.letter("2026-11-29T100000-alpha-request-plan-0123abcd", type="request", requires_ack="true",
               thread=label(200))
    before = box.tree_bytes()
    for kind in ("ack", "result", "info"):
        with pytest.raises(LetterboxError, match="thread.*128"):
            reply(box.root, "2026-11-29T100000-alpha-request-plan-0123abcd", kind, seat="beta", body="x", now=LATER)
        assert box.tree_bytes() == before


def test_a_pointer_to_an_id_over_128_characters_is_refused(box):
    long_id = "2026-11-29T100000-alpha-info-" + "x" * 150 + "-0123abcd"
    box.letter(long_id, seat="alpha", frm="beta", to="alpha")
    box.letter("2026-11-29T100001-alpha-info-short-0123abcd", seat="alpha", frm="beta", to="alpha")
    before = box.tree_bytes()
    with pytest.raises(LetterboxError, match="re.*128"):
        deliver(box.root, draft(re=long_id), now=NOW)
    with pytest.raises(LetterboxError, match="supersedes.*128"):
        deliver(box.root, draft(supersedes=long_id), now=NOW)
    with pytest.raises(LetterboxError, match="disputes.*128"):
        deliver(box.root, draft(type="dispute", recipient="alpha",
                                disputes=[long_id, "2026-11-29T100001-alpha-info-short-0123abcd"]), now=NOW)
    assert box.tree_bytes() == before


def test_a_supersession_does_not_copy_a_long_thread(box):
    box.letter("2026-11-29T100000-alpha-info-plan-0123abcd", thread=label(140))
    before = box.tree_bytes()
    d = supersede_draft(scan(box.root), "2026-11-29T100000-alpha-info-plan-0123abcd", "alpha", "New plan.\n")
    with pytest.raises(LetterboxError, match="thread.*128"):
        deliver(box.root, d, now=NOW)
    assert box.tree_bytes() == before

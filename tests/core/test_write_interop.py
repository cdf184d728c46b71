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


# --- bug 2: one terminal reply per seat and letter ------------------------------------


def task(box, **kw):
    return deliver(box.root, draft(requires_ack=True, **kw), now=NOW)


def unmove(box, letter_id: str) -> None:
    """What a kill -9 between publishing a reply and moving the letter leaves: the reply
    published, the letter still in its holder's inbox."""
    os.rename(box.root / "beta/processed" / f"{letter_id}.md", box.root / "beta/inbox" / f"{letter_id}.md")


@pytest.mark.parametrize("first, second", [("result", "nack"), ("nack", "result"), ("result", "ack")])
def test_a_second_terminal_reply_after_a_killed_move_converges_and_is_refused(box, first, second):
    t = task(box)
    reply(box.root, t.id, first, seat="beta", body="Done.", now=NOW)
    unmove(box, t.id)
    with pytest.raises(LetterboxError, match="already closed"):
        reply(box.root, t.id, second, seat="beta", body="Other.", now=LATER)
    replies = sorted(p.name for p in (box.root / "alpha/inbox").iterdir() if "--beta--" in p.name)
    assert replies == [f"{t.id}--beta--{first}.md"]  # nothing new written
    # the move is finished: the letter is closed in its holder's processed/
    assert not (box.root / "beta/inbox" / f"{t.id}.md").exists()
    assert (box.root / "beta/processed" / f"{t.id}.md").is_file()


def test_the_same_reply_again_after_a_killed_move_finishes_the_move(box):
    t = task(box)
    reply(box.root, t.id, "result", seat="beta", body="Done.", now=NOW)
    unmove(box, t.id)
    again = reply(box.root, t.id, "result", seat="beta", body="Done.", now=LATER)
    assert not again.created
    assert (box.root / "beta/processed" / f"{t.id}.md").is_file()


def test_a_different_result_after_a_killed_move_converges_and_is_refused(box):
    t = task(box)
    reply(box.root, t.id, "result", seat="beta", body="Done.", now=NOW)
    unmove(box, t.id)
    with pytest.raises(LetterboxError, match="already closed"):
        reply(box.root, t.id, "result", seat="beta", body="Something else.", now=LATER)
    assert (box.root / "beta/processed" / f"{t.id}.md").is_file()


def test_an_earlier_terminal_reply_under_another_name_is_found(box):
    # a terminal reply by beta to the task whose file name is not the derived one
    t = task(box)
    box.letter("2026-11-29T150000-beta-result-plan-0badc0de", frm="beta", to="alpha", type="result", re=t.id)
    with pytest.raises(LetterboxError, match="already closed"):
        reply(box.root, t.id, "nack", seat="beta", body="No.", now=LATER)
    assert not (box.root / "alpha/inbox" / f"{t.id}--beta--nack.md").exists()
    assert (box.root / "beta/processed" / f"{t.id}.md").is_file()


# --- bug 3: no lock-breaking guard is ever left behind --------------------------------


def test_a_signal_right_after_the_guard_is_made_leaves_no_guard(box, monkeypatch):
    t = task(box)
    lock_dir = box.root / "beta/inbox" / f"{t.path.name}.lifecycle.lock"
    lock_dir.mkdir()  # a dead writer's lock: no pid, old
    past = datetime.now(timezone.utc).timestamp() - 60
    os.utime(lock_dir, (past, past))
    real_mkdir = os.mkdir

    def mkdir(path, *args, **kw):
        real_mkdir(path, *args, **kw)
        if str(path).endswith(".break"):
            os.kill(os.getpid(), signal.SIGINT)  # handled at the next bytecode: before any try

    monkeypatch.setattr(lifecycle.os, "mkdir", mkdir)
    with pytest.raises(KeyboardInterrupt):
        reply(box.root, t.id, "ack", seat="beta", body="On it.", now=LATER)
    monkeypatch.setattr(lifecycle.os, "mkdir", real_mkdir)
    assert sorted(p.name for p in (box.root / "beta/inbox").iterdir() if "lock" in p.name) == []


def test_a_guard_a_killed_breaker_left_goes_with_the_next_reply(box):
    t = task(box)
    guard = box.root / "beta/inbox" / f".{t.path.name}.lifecycle.lock.break"
    guard.mkdir()
    past = datetime.now(timezone.utc).timestamp() - 60
    os.utime(guard, (past, past))
    reply(box.root, t.id, "ack", seat="beta", body="On it.", now=LATER)
    assert not guard.exists()

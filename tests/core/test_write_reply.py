"""Replies and filing through the gate: the protocol's order and the replier's own state."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pytest

from letterbox_tui.core.write import replies as replies_mod
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.scan import scan
from letterbox_tui.core.write import Draft, deliver, file_letter, reply

NOW = datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)
LATER = NOW + timedelta(hours=3)


def task(box, **kw):
    fields = dict(sender="alpha", recipient="beta", type="request", slug="plan", body="Plan it.\n",
                  requires_ack=True)
    fields.update(kw)
    return deliver(box.root, Draft(**fields), now=NOW)


def names(box, rel):
    return sorted(p.name for p in (box.root / rel).iterdir())


def test_ack_publishes_into_sender_inbox_then_stamps_the_sidecar(box):
    t = task(box)
    r = reply(box.root, t.id, "ack", seat="beta", body="On it.", now=LATER)
    assert r.id == f"{t.id}--beta--ack" and r.created
    assert r.path == box.root / "alpha/inbox" / f"{t.id}--beta--ack.md"
    f = dict(r.letter.fields)
    assert (f["from"], f["to"], f["type"], f["re"], f["thread"]) == ("beta", "alpha", "ack", t.id, t.id)
    assert f["sent"] == "2026-11-29T17:05:12Z" and f["requires_ack"] == "false"
    assert names(box, "beta/inbox") == [t.path.name, t.path.name + ".ack"]
    sidecar = (box.root / "beta/inbox" / (t.path.name + ".ack")).read_text()
    assert f"ack_id: {r.id}\n" in sidecar and "by: beta\n" in sidecar
    snap = scan(box.root)
    assert snap.has_sidecar(next(x for x in snap.letters if x.id == t.id))


@pytest.mark.parametrize("kind", ["result", "nack"])
def test_terminal_reply_moves_own_letter_and_clears_the_sidecar(box, kind):
    t = task(box)
    original = t.path.read_bytes()
    reply(box.root, t.id, "ack", seat="beta", body="On it.", now=NOW)
    r = reply(box.root, t.id, kind, seat="beta", body="Done.", now=LATER)
    assert (box.root / "alpha/inbox" / f"{t.id}--beta--{kind}.md").is_file()
    assert names(box, "beta/inbox") == []
    assert names(box, "beta/processed") == [t.path.name]
    assert (box.root / "beta/processed" / t.path.name).read_bytes() == original
    assert r.letter.type == kind and r.letter.re == t.id


def test_reply_thread_is_parent_thread_else_parent_id(box):
    root = task(box, slug="root")
    child = task(box, slug="child", thread=root.id)
    assert reply(box.root, child.id, "ack", seat="beta", body="ok", now=NOW).letter.thread == root.id


def test_retry_of_the_same_reply_converges_without_rewriting(box, monkeypatch):
    t = task(box)
    real_move = replies_mod.move_to_processed

    def crash(*a, **kw):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(replies_mod, "move_to_processed", crash)
    with pytest.raises(LetterboxError, match="run the same reply again"):
        reply(box.root, t.id, "result", seat="beta", body="Done.", now=NOW)
    published = box.root / "alpha/inbox" / f"{t.id}--beta--result.md"
    frozen = (published.read_bytes(), published.stat().st_mtime_ns)
    assert names(box, "beta/inbox") == [t.path.name]  # reply first, local state not yet
    monkeypatch.setattr(replies_mod, "move_to_processed", real_move)
    again = reply(box.root, t.id, "result", seat="beta", body="Done.", now=LATER)
    assert not again.created
    assert (published.read_bytes(), published.stat().st_mtime_ns) == frozen
    assert names(box, "beta/processed") == [t.path.name] and names(box, "beta/inbox") == []
    third = reply(box.root, t.id, "result", seat="beta", body="Done.", now=LATER)
    assert not third.created and "already closed" in third.notes[0]
    assert (published.read_bytes(), published.stat().st_mtime_ns) == frozen


def test_retry_with_a_different_body_is_refused(box):
    t = task(box)
    reply(box.root, t.id, "ack", seat="beta", body="On it.", now=NOW)
    before = box.tree_bytes()
    with pytest.raises(LetterboxError, match="different reply"):
        reply(box.root, t.id, "ack", seat="beta", body="Something else.", now=LATER)
    assert box.tree_bytes() == before


def test_info_reply_is_a_plain_letter_with_re(box):
    box.seat("gamma")
    t = task(box)
    r = reply(box.root, t.id, "info", seat="gamma", body="FYI: see also X.", now=NOW)
    assert r.letter.type == "info" and r.letter.re == t.id and r.letter.thread == t.id
    assert r.letter.sender == "gamma" and r.letter.recipient == "alpha"
    assert r.id.startswith("2026-11-29T140512-gamma-info-plan-")
    assert names(box, "beta/inbox") == [t.path.name]


REFUSED = {
    "not the recipient": lambda box, t: reply(box.root, t.id, "result", seat="alpha", body="x", now=NOW),
    "unknown kind": lambda box, t: reply(box.root, t.id, "done", seat="beta", body="x", now=NOW),
    "empty body": lambda box, t: reply(box.root, t.id, "ack", seat="beta", body="  \n", now=NOW),
    "no such letter": lambda box, t: reply(box.root, "nope", "ack", seat="beta", body="x", now=NOW),
    "ack to a non-task": lambda box, t: reply(box.root, "fyi", "ack", seat="beta", body="x", now=NOW),
    "missing requires_ack": lambda box, t: reply(box.root, "bare", "result", seat="beta", body="x", now=NOW),
    "duplicated id": lambda box, t: reply(box.root, "twice", "result", seat="beta", body="x", now=NOW),
    "closed without reply": lambda box, t: reply(box.root, "closed", "result", seat="beta", body="x", now=NOW),
    "reply id too long": lambda box, t: reply(box.root, "x" * 120, "ack", seat="beta", body="x", now=NOW),
    "file a task": lambda box, t: file_letter(box.root, t.id, seat="beta"),
    "file missing requires_ack": lambda box, t: file_letter(box.root, "bare", seat="beta"),
    "file another seat's letter": lambda box, t: file_letter(box.root, "fyi", seat="alpha"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_reply_and_file_refusals_write_nothing(box, case):
    t = task(box)
    box.letter("fyi", frm="alpha", to="beta", requires_ack="false")
    box.letter("bare", frm="alpha", to="beta", type="request", requires_ack=None)
    box.letter("twice", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("twice", frm="alpha", to="beta", type="request", requires_ack="true", folder="processed")
    box.letter("closed", frm="alpha", to="beta", type="request", requires_ack="true", folder="processed")
    box.letter("x" * 120, frm="alpha", to="beta", type="request", requires_ack="true")
    before = box.tree_bytes()
    with pytest.raises(LetterboxError) as info:
        REFUSED[case](box, t)
    assert "\n" not in str(info.value)
    assert box.tree_bytes() == before


def test_file_moves_own_non_task_and_is_idempotent(box):
    box.letter("fyi", frm="alpha", to="beta", requires_ack="false")
    path, moved = file_letter(box.root, "fyi", seat="beta")
    assert moved and path == box.root / "beta/processed/fyi.md"
    assert names(box, "beta/inbox") == [] and names(box, "beta/processed") == ["fyi.md"]
    before = box.tree_bytes()
    assert file_letter(box.root, "fyi", seat="beta") == (path, False)
    assert box.tree_bytes() == before


def test_move_never_overwrites_a_different_file(box):
    box.letter("fyi", frm="alpha", to="beta", requires_ack="false")
    box.raw("beta/processed/fyi.md", "---\nid: other\nfrom: a\nto: b\ntype: info\n---\n")
    before = box.tree_bytes()
    with pytest.raises(LetterboxError, match="not overwriting"):
        replies_mod.move_to_processed(box.root, "beta", "fyi.md")
    assert box.tree_bytes() == before


def test_nothing_is_written_into_another_seats_processed(box):
    box.seat("gamma")
    t = task(box)
    reply(box.root, t.id, "ack", seat="beta", body="ok", now=NOW)
    reply(box.root, t.id, "result", seat="beta", body="done", now=NOW)
    reply(box.root, f"{t.id}--beta--result", "info", seat="gamma", body="noted", now=NOW)
    assert names(box, "alpha/processed") == [] and names(box, "gamma/processed") == []
    assert os.listdir(box.root / "gamma/inbox") == []


def test_one_seat_writing_to_itself(box):
    """The ordinary case: a seat's own task, acknowledged and closed by itself."""
    t = task(box, sender="alpha", recipient="alpha")
    reply(box.root, t.id, "ack", seat="alpha", body="noted", now=NOW)
    assert names(box, "alpha/inbox") == sorted([t.path.name, t.path.name + ".ack", f"{t.id}--alpha--ack.md"])
    reply(box.root, t.id, "result", seat="alpha", body="done", now=LATER)
    assert names(box, "alpha/inbox") == sorted([f"{t.id}--alpha--ack.md", f"{t.id}--alpha--result.md"])
    assert names(box, "alpha/processed") == [t.path.name]
    from letterbox_tui.core.resolve import resolve

    res = resolve(scan(box.root), LATER)
    (closed,) = res.by_id(t.id)
    assert res.answered(closed).yes and res.state(closed).value == "closed"


def test_unreadable_settings_stop_replies_and_filing(box):
    t = task(box)
    box.letter("fyi", frm="alpha", to="beta", requires_ack="false")
    box.raw("letterbox-tui.toml", "[time]\nid_time_is_utc = 3\n")
    before = box.tree_bytes()
    with pytest.raises(LetterboxError, match="settings"):
        reply(box.root, t.id, "ack", seat="beta", body="ok", now=NOW)
    with pytest.raises(LetterboxError, match="settings"):
        file_letter(box.root, "fyi", seat="beta")
    assert box.tree_bytes() == before

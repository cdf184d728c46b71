"""The views both faces show (``core.views``), each from a resolution at one clock."""

from __future__ import annotations

import os
from datetime import timedelta

from letterbox_tui.core.views import (
    exists_view, mailbox_letters, newest_first, oldest_first, owed_view, problems_view, read_body,
    read_letter, scope_reasons, seat_mailboxes, status_line, time_key, truth_view,
)
from letterbox_tui.core.query import parse_query, run_query
from tests.core.helpers import AT, one, resolved

TASK = {"type": "request", "requires_ack": "true"}


def test_owed_items_say_how_each_stands_at_the_clock(box):
    box.letter("late-1", deadline="2026-05-30T00:00:00Z", **TASK)
    box.letter("soon-1", deadline="2026-06-01T12:00:00Z", **TASK)
    box.letter("vague-1", deadline="2026-06-03T00:00:00", **TASK)  # no offset: ambiguous
    box.letter("open-1", **TASK)
    box.seat("gamma")
    box.letter("other-1", to="gamma", seat="gamma", deadline="2026-05-31T00:00:00Z", **TASK)
    view = owed_view(resolved(box))
    assert [g.seat for g in view.groups] == ["beta", "gamma"]
    beta = view.groups[0]
    assert [(i.letter.id, i.standing) for i in beta.items] == [
        ("late-1", "late"), ("soon-1", "due"), ("vague-1", "uncertain"), ("open-1", "no-deadline")]
    assert beta.items[0].delta == timedelta(days=2) and beta.items[1].delta == timedelta(hours=12)
    assert beta.items[2].codes == ("ambiguous-timestamp",)
    assert (beta.late, beta.uncertain, view.late, view.total, view.any_late) == (1, 1, 2, 5, True)
    doc = view.to_json()
    assert doc["at"] == "2026-06-01T00:00:00Z"
    assert [r["id"] for r in doc["owed"][0]["items"]] == ["late-1", "soon-1", "vague-1", "open-1"]


def test_exists_is_no_only_on_a_complete_scope_with_no_unknown_row(box):
    box.letter("a-1", type="dispute")
    res = resolved(box)
    def verdict(*terms):
        return exists_view(run_query(parse_query(list(terms)), res), res.snapshot)
    assert verdict("type=dispute").value == "yes"
    assert verdict("type=ruling").value == "no"
    box.raw("beta/inbox/broken.md", "---\nid: b-1\nfrom alpha\n---\n")
    res = resolved(box)
    v = exists_view(run_query(parse_query(["type=ruling"]), res), res.snapshot)
    assert v.value == "unknown" and [r.code for r in v.reasons] == ["unreadable-file"]
    assert v.to_json()["reasons"][0]["paths"] == ["beta/inbox/broken.md"]
    assert [r.code for r in scope_reasons(resolved(box, ["alpha"]).snapshot)] == ["outside-scope"]
    assert [r.code for r in scope_reasons(resolved(box, atomic=False).snapshot)] == ["unreadable-file", "non-atomic-scan"]


def test_problems_view_holds_checks_findings_problems_first(box):
    box.letter("x-1", name="wrong-name.md")
    box.raw("beta/inbox/broken.md", "---\nid: b-1\nfrom alpha\n---\n")
    view = problems_view(resolved(box))
    assert [f.code for f in view.findings] == ["unreadable-file", "id-filename-mismatch"]
    assert (view.problems, view.warnings) == (1, 1)
    assert view.to_json()["findings"][0]["severity"] == "problem"


def test_truth_lists_decisions_in_force_and_chains_in_doubt(box):
    box.letter("d-1", type="decision", sent="2026-01-01T00:00:00Z")
    box.letter("d-2", type="decision", supersedes="d-1", sent="2026-01-02T00:00:00Z")
    box.letter("f-1", type="decision", sent="2026-01-03T00:00:00Z")
    box.letter("f-2", type="info", supersedes="f-1", sent="2026-01-04T00:00:00Z")
    box.letter("f-3", type="info", supersedes="f-1", sent="2026-01-05T00:00:00Z")
    view = truth_view(resolved(box))
    assert [i.letter.id for i in view.decisions] == ["d-2"]
    assert sorted(i.letter.id for i in view.doubt) == ["f-2", "f-3"]
    assert all("fork" in i.codes for i in view.doubt)


def test_mailboxes_count_each_seats_folders_and_sent(box):
    box.letter("a-1", frm="alpha", to="beta")
    box.letter("a-2", frm="alpha", to="beta", folder="processed")
    box.letter("b-1", frm="beta", to="alpha")
    box.raw("beta/status.md", "---\n# Status\n\nbusy with \x1b]0;x\x07 things\n")
    boxes = {m.seat: m for m in seat_mailboxes(resolved(box).snapshot)}
    assert boxes["beta"].counts == {"inbox": 1, "processed": 1, "sent": 1}
    assert boxes["alpha"].counts == {"inbox": 1, "processed": 0, "sent": 2}
    assert boxes["beta"].status == "busy with \x1b]0;x\x07 things"  # raw: each face sanitizes
    assert sorted(x.id for x in mailbox_letters(resolved(box).snapshot, "alpha", "sent")) == ["a-1", "a-2"]
    assert [x.id for x in mailbox_letters(resolved(box).snapshot, "beta", "processed")] == ["a-2"]
    assert status_line(str(box.root), None) is None


def test_one_time_order(box):
    box.letter("b-1", sent="2026-01-02T00:00:00Z")
    box.letter("a-1", sent="2026-01-02T00:00:00Z")
    box.letter("c-1", sent="2026-01-01T00:00:00Z")
    box.letter("z-1", sent="")
    box.letter("y-1", sent="2026-01-03T00:00:00")  # naive: no time
    letters = resolved(box).snapshot.letters
    assert [x.id for x in oldest_first(letters)] == ["c-1", "a-1", "b-1", "y-1", "z-1"]
    assert [x.id for x in newest_first(letters)] == ["b-1", "a-1", "c-1", "y-1", "z-1"]
    assert sorted(letters, key=time_key) == oldest_first(letters)


def test_reading_a_body_never_follows_a_symlink_or_blocks(tmp_path):
    root = tmp_path / "r"
    (root / "a" / "inbox").mkdir(parents=True)
    secret = tmp_path / "secret.md"
    secret.write_text("---\nid: s\n---\nsecret\n")
    os.symlink(secret, root / "a" / "inbox" / "link.md")
    body, truncated, err = read_body(str(root), "a/inbox/link.md", 1000)
    assert body == "" and err
    os.mkfifo(root / "a" / "inbox" / "fifo.md")
    assert read_body(str(root), "a/inbox/fifo.md", 1000) == ("", False, "not a regular file")
    os.symlink(root / "a" / "inbox", root / "a" / "linked")
    (root / "a" / "inbox" / "x.md").write_text("---\nid: x\n---\nbody\n")
    assert read_body(str(root), "a/linked/x.md", 1000)[2]  # a symlinked folder is refused too
    (root / "a" / "inbox" / "big.md").write_bytes(b"---\nid: b\n---\n" + b"x" * 5000 + b"\xff")
    body, truncated, err = read_body(str(root), "a/inbox/big.md", 1000)
    assert truncated and body == "x" * 1000 and not err
    body, truncated, err = read_body(str(root), "a/inbox/big.md", 10_000)
    assert not truncated and body.endswith("\ufffd")  # bad UTF-8 is replaced, never raised


def test_the_body_starts_where_the_header_parser_says(box):
    box.raw("beta/inbox/x.md", "---\nid: x\n---\nhello\n---\nmore")
    box.raw("beta/inbox/y.md", "---\r\nid: y\r\n---\r\nhi")
    box.raw("beta/inbox/z.md", "no header")
    root = str(box.root)
    assert read_body(root, "beta/inbox/x.md", 100) == ("hello\n---\nmore", False, "")
    assert read_body(root, "beta/inbox/y.md", 100) == ("hi", False, "")
    assert read_body(root, "beta/inbox/z.md", 100) == ("", False, "the header no longer closes")


def test_read_letter_says_when_the_file_changed_since_the_scan(box):
    box.letter("a-1", body="first\n")
    res = resolved(box)
    letter = one(res, "a-1")
    f = read_letter(str(box.root), letter)
    assert (f.body, f.changed, f.error, len(f.sha256)) == ("first\n", False, None, 64)
    (box.root / "beta/inbox/a-1.md").write_text((box.root / "beta/inbox/a-1.md").read_text() + "more\n")
    assert read_letter(str(box.root), letter).changed is True
    assert read_letter(str(box.root), letter, 3).body_truncated
    assert AT  # the clock the views were resolved at


def test_the_package_names_are_the_views_not_their_modules():
    import importlib
    import types

    import letterbox_tui.core.views as views

    for sub in ("attention", "chain", "disputes", "exists", "letterfile", "mailboxes", "order", "owed", "problems",
                "thread", "truth"):
        importlib.import_module(f"letterbox_tui.core.views.{sub}")
    for name in views.__all__:
        assert not isinstance(getattr(views, name), types.ModuleType), name

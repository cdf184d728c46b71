"""Reading the protocol's own files (SPEC 3, issue 13 points 5-6): the ack sidecar's
progress lines and the leases under ``locks/``. Fixtures written by hand from the
protocol's description of them: ``ack_id/acked_at/by`` then ``progress/progress_at`` lines;
``owner=S [session=X] taken=T``."""

from __future__ import annotations

import os
import threading
from datetime import datetime, timezone

import pytest

from letterbox_tui.core.leases import read_leases
from letterbox_tui.core.scan import scan
from letterbox_tui.core.sidecar import Progress, age, progress_of

NOW = datetime(2026, 11, 29, 16, 0, 0, tzinfo=timezone.utc)
TASK = "2026-11-29T140512-alpha-request-plan-3f9a1c07"


@pytest.fixture
def accepted(box):
    box.letter(TASK, frm="alpha", to="beta", type="request", requires_ack="true")
    return box


def sidecar(box, text: str | bytes) -> None:
    box.raw(f"beta/inbox/{TASK}.md.ack", text)


def letter(box):
    (x,) = scan(box.root).letters
    return x


def test_progress_lines_are_read_from_the_sidecar(accepted):
    sidecar(accepted, f"ack_id: {TASK}--beta--ack\nacked_at: 2026-11-29T14:10:00Z\nby: beta session=s1\n"
                      "progress: drafted 3 of 5 sections\nprogress_at: 2026-11-29T14:00:00Z\n")
    snap = scan(accepted.root)
    p = progress_of(str(accepted.root), snap.letters[0], snap)
    assert p == Progress("drafted 3 of 5 sections", "2026-11-29T14:00:00Z")
    assert p.to_json() == {"note": "drafted 3 of 5 sections", "at": "2026-11-29T14:00:00Z"}
    assert p.line(NOW) == "in progress: drafted 3 of 5 sections, 2h ago"


def test_a_sidecar_without_progress_or_with_an_empty_one_has_none(accepted):
    sidecar(accepted, "ack_id: x\nacked_at: 2026-11-29T14:10:00Z\nby: beta\n")
    assert progress_of(str(accepted.root), letter(accepted)) is None
    sidecar(accepted, "ack_id: x\nprogress:\nprogress_at: 2026-11-29T14:00:00Z\n")
    assert progress_of(str(accepted.root), letter(accepted)) is None


def test_the_first_progress_line_counts_and_a_bad_time_is_shown_as_written(accepted):
    sidecar(accepted, "progress: first\nprogress: second\nprogress_at: yesterday\n")
    p = progress_of(str(accepted.root), letter(accepted))
    assert p is not None and p.note == "first" and p.at_time is None
    assert p.line(NOW) == "in progress: first, at yesterday"


def test_the_sidecars_lines_end_at_newlines_only(accepted):
    """As the protocol's line tools read it: a U+2028, a next-line or a form feed is inside
    the note (``str.splitlines`` would cut it there), and CRLF ends a line as LF does."""
    sidecar(accepted, "ack_id: x\r\nprogress: one\u2028two\x85three\x0cfour\r\nprogress_at: 2026-11-29T14:00:00Z\r\n")
    p = progress_of(str(accepted.root), letter(accepted))
    assert p == Progress("one\u2028two\x85three\x0cfour", "2026-11-29T14:00:00Z")


def test_a_status_note_and_a_lease_are_read_by_the_same_lines():
    from letterbox_tui.core.grammar import lines
    from letterbox_tui.core.leases import parse_lease
    from letterbox_tui.core.records import parse_status

    assert lines("a\r\nb\u2028c\rd\n") == ["a", "b\u2028c\rd", ""]
    assert parse_status("state: blocked\r\nnotes: on\u2028review\n") == ("blocked", "", "on\u2028review")
    _, problems = parse_lease("owner=beta taken=2026-11-29T14:00:00Z\u2028\n", ["beta"])
    assert "the lease has more than one line" not in problems


def test_no_sidecar_means_no_progress_and_nothing_is_opened(accepted, monkeypatch):
    snap = scan(accepted.root)
    opened = []
    import letterbox_tui.core.sidecar as mod

    monkeypatch.setattr(mod, "read_file", lambda *a, **k: opened.append(a) or None)
    assert progress_of(str(accepted.root), snap.letters[0], snap) is None and opened == []


def test_a_symlinked_sidecar_is_never_followed(accepted, tmp_path):
    outside = tmp_path / "outside"
    outside.write_text("progress: from outside\n")
    os.symlink(outside, accepted.root / "beta" / "inbox" / f"{TASK}.md.ack")
    assert progress_of(str(accepted.root), letter(accepted)) is None


def test_a_fifo_sidecar_never_blocks(accepted):
    os.mkfifo(accepted.root / "beta" / "inbox" / f"{TASK}.md.ack")
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("p", progress_of(str(accepted.root), letter(accepted))),
                         daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive() and out["p"] is None


def test_a_huge_sidecar_is_read_only_so_far_and_a_long_note_is_cut(accepted):
    sidecar(accepted, b"progress: " + b"n" * 5000 + b"\n" + b"x" * (1 << 20))
    p = progress_of(str(accepted.root), letter(accepted))
    assert p is not None and len(p.note) == 1001 and p.note.endswith("…")


def test_a_hostile_note_is_returned_as_written_for_the_faces_to_sanitize(accepted):
    sidecar(accepted, "progress: \x1b[31mred [bold]x[/bold]\n")
    p = progress_of(str(accepted.root), letter(accepted))
    assert p is not None and p.note == "\x1b[31mred [bold]x[/bold]"


def test_age_is_shown_as_the_protocol_shows_it():
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert [age(base.replace(hour=h, minute=m), base) for h, m in ((0, 5), (3, 0), (0, 0))] == ["5m", "3h", "0m"]
    assert age(datetime(2026, 1, 4, tzinfo=timezone.utc), base) == "3d"
    assert age(base, datetime(2026, 1, 4, tzinfo=timezone.utc)) == "0m"  # never negative


# --- leases ---------------------------------------------------------------------------------


def lease(box, name: str, text: str | None) -> None:
    d = box.root / "locks" / name
    d.mkdir(parents=True)
    if text is not None:
        (d / "lease").write_text(text)


def test_leases_are_listed_with_owner_session_and_since(box):
    lease(box, "src-slash-auth.ts.lock", "owner=alpha session=s-1 taken=2026-11-29T14:00:00Z\n")
    lease(box, "docs--plan.md.lock", "owner=beta taken=2026-11-29T15:00:00Z\n")
    leases, more = read_leases(str(box.root), ["alpha", "beta"])
    assert more == 0
    assert [(x.name, x.target, x.owner, x.session, x.taken, x.problems) for x in leases] == [
        ("docs--plan.md.lock", "docs-plan.md", "beta", None, "2026-11-29T15:00:00Z", ()),
        ("src-slash-auth.ts.lock", "src/auth.ts", "alpha", "s-1", "2026-11-29T14:00:00Z", ()),
    ]


@pytest.mark.parametrize("text, problem", [
    (None, "no lease file"),
    ("owner=gamma taken=2026-11-29T14:00:00Z\n", "owner gamma is not a seat"),
    ("taken=2026-11-29T14:00:00Z\n", "no owner"),
    ("owner=alpha taken=soon\n", "not a time"),
    ("owner=alpha\n", "no taken time"),
    ("owner=alpha owner=beta taken=2026-11-29T14:00:00Z\n", "given twice"),
    ("garbage\x00\xff words\n", "not key=value"),
    ("", "no owner"),
])
def test_a_lease_that_is_not_well_formed_is_a_problem_shown_never_a_crash(box, text, problem):
    lease(box, "x.lock", text)
    (x,), _ = read_leases(str(box.root), ["alpha", "beta"])
    assert any(problem in p for p in x.problems), x.problems


def test_odd_entries_under_locks_are_problems_and_never_followed(box, tmp_path):
    (box.root / "locks").mkdir()
    (box.root / "locks" / "a-file").write_text("owner=alpha\n")
    os.symlink(tmp_path, box.root / "locks" / "b-link.lock")
    (box.root / "locks" / "c.lock").mkdir()
    os.mkfifo(box.root / "locks" / "c.lock" / "lease")
    leases, _ = read_leases(str(box.root), ["alpha"])
    assert [(x.name, x.problems[0].split(" (")[0]) for x in leases] == [
        ("a-file", "not a lease directory"), ("b-link.lock", "a symlink, not a lease directory"),
        ("c.lock", "its lease is not a regular file"),
    ]


def test_reading_leases_never_takes_or_breaks_one(box):
    lease(box, "held.lock", "owner=alpha taken=2026-11-29T14:00:00Z\n")
    lease(box, "broken.lock", None)
    before = box.tree_bytes()
    read_leases(str(box.root), ["alpha", "beta"])
    assert box.tree_bytes() == before


def test_no_locks_folder_means_no_leases(box):
    assert read_leases(str(box.root), ["alpha"]) == ([], 0)


@pytest.mark.parametrize("text", [
    None,  # no sidecar
    "ack_id: x\nacked_at: 2026-11-29T14:10:00Z\nby: beta\n",
    "ack_id: x\nprogress:\nprogress_at: 2026-11-29T14:00:00Z\n",
    "progress: first\nprogress: second\nprogress_at: yesterday\n",
    "acked_at: 2026-11-29T14:10:00Z\nprogress: drafted 3 of 5\nprogress_at: 2026-11-29T14:00:00Z\n",
    b"progress: " + b"n" * 5000 + b"\n" + b"x" * (1 << 20),
    b"progress: \xff\xfe odd bytes\n",
])
def test_the_records_give_the_progress_note_progress_of_reads_and_open_the_file_once(accepted, text, monkeypatch):
    """The owed view's records (``core.records``) keep the progress note of the sidecar they
    read for the attention codes: the same note ``progress_of`` reads, the file opened once."""
    from letterbox_tui.core import records as records_mod
    from letterbox_tui.core.records import Records

    if text is not None:
        sidecar(accepted, text)
    snap = scan(accepted.root)
    x = snap.letters[0]
    want = progress_of(str(accepted.root), x, snap)
    opened = []
    real = records_mod.read_file
    monkeypatch.setattr(records_mod, "read_file", lambda root, rel, **k: opened.append(rel) or real(root, rel, **k))
    records = Records(snap)
    records.sidecar(x)  # (what the attention codes read)
    assert records.progress(x) == want
    assert records.progress(x) == want
    assert opened == ([] if text is None else [f"beta/inbox/{TASK}.md.ack"])


def test_an_unreadable_sidecar_gives_the_records_no_progress_note(accepted, tmp_path):
    from letterbox_tui.core.records import Records

    outside = tmp_path / "outside"
    outside.write_text("progress: from outside\n")
    os.symlink(outside, accepted.root / "beta" / "inbox" / f"{TASK}.md.ack")
    snap = scan(accepted.root)
    records = Records(snap)
    assert records.progress(snap.letters[0]) is None
    assert records.sidecar(snap.letters[0]).unreadable

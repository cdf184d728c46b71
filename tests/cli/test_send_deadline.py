"""``send --deadline +1d`` (issue 26): the command line takes the relative deadlines the
app's forms take, read by the one parser (the query language's times) in the write gate,
and writes them as UTC."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from letterbox_tui.core.grammar import parse_time
from letterbox_tui.core.write import Draft, deliver
from tests.cli.test_write_commands import letters, run


def test_send_takes_a_relative_deadline(capsys, monkeypatch, box):
    before = datetime.now(timezone.utc).replace(microsecond=0)
    code, out, err = run(capsys, monkeypatch, "--root", str(box.root), "send", "--as", "alpha", "--to", "beta",
                         "--type", "request", "--slug", "soon", "--ack", "--deadline", "+1d", stdin="Soon.\n")
    after = datetime.now(timezone.utc)
    assert code == 0 and err == ""
    letter = letters(box)[out.strip()]
    assert letter.deadline.endswith("Z")
    assert before + timedelta(days=1) <= parse_time(letter.deadline) <= after + timedelta(days=1)


def test_the_gate_reads_relative_deadlines_against_its_clock(box):
    now = datetime(2026, 11, 29, 15, 0, 0, 250000, tzinfo=timezone.utc)
    for typed, written in (("+2d", "2026-12-01T15:00:00Z"), ("+36h", "2026-12-01T03:00:00Z"),
                           ("-90m", "2026-11-29T13:30:00Z")):
        made = deliver(box.root, Draft(sender="alpha", recipient="beta", type="info", slug="t", body="x\n",
                                       deadline=typed), now=now)
        assert letters(box)[made.id].deadline == written


def test_a_deadline_neither_absolute_nor_relative_is_refused(capsys, monkeypatch, box):
    code, out, err = run(capsys, monkeypatch, "--root", str(box.root), "send", "--as", "alpha", "--to", "beta",
                         "--type", "info", "--slug", "x", "--deadline", "tomorrow", stdin="x\n")
    assert code == 2 and out == "" and "+2d" in err and len(err.strip().splitlines()) == 1

"""``progress`` and ``leases`` (issue 13 points 5-6), and progress notes where they are
shown: ``show``, ``answered --json``, ``owed``. Writing ``progress`` the protocol's way: own
inbox, ack sidecar present, one line, temporary and rename; refused otherwise."""

from __future__ import annotations

import io
import json
import sys

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core.write import Draft, deliver, reply


def run(capsys, monkeypatch, box, *argv: str, stdin: str = ""):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = main(["--root", str(box.root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def task(box):
    return deliver(box.root, Draft("alpha", "beta", "request", "plan", "Plan it.\n", requires_ack=True)).id


def sidecar(box, task):
    return box.root / "beta" / "inbox" / f"{task}.md.ack"


def test_progress_is_written_into_the_sidecar_keeping_its_other_lines(capsys, monkeypatch, box, task):
    reply(box.root, task, "ack", seat="beta", body="On it.\n")
    before = sidecar(box, task).read_text()
    code, out, err = run(capsys, monkeypatch, box, "progress", task, "--as", "beta", "drafted", "3", "of", "5")
    assert code == 0 and out == f"progress: {task}\n", err
    text = sidecar(box, task).read_text()
    assert text.startswith(before)  # ack_id, acked_at, by kept
    assert "progress: drafted 3 of 5\n" in text and "\nprogress_at: " in text
    code, *_ = run(capsys, monkeypatch, box, "progress", task, "--as", "beta", "drafted", "4")
    text = sidecar(box, task).read_text()
    assert text.count("progress:") == 1 and "progress: drafted 4\n" in text
    assert not [p for p in (box.root / "beta" / "inbox").iterdir() if p.name.startswith(".")]
    assert not list(box.root.rglob("*.lifecycle.lock"))


def test_progress_keeps_the_sidecars_other_lines_byte_for_byte(capsys, monkeypatch, box, task):
    """Lines another tool wrote stay as written: a CRLF line, a lone CR inside a line."""
    reply(box.root, task, "ack", seat="beta", body="On it.\n")
    path = sidecar(box, task)
    path.write_bytes(path.read_bytes() + b"note: kept\r\nodd: a\rb\n")
    before = path.read_bytes()
    code, *_ = run(capsys, monkeypatch, box, "progress", task, "--as", "beta", "halfway")
    assert code == 0
    assert path.read_bytes().startswith(before)


def test_progress_is_shown_by_show_answered_and_owed(capsys, monkeypatch, box, task):
    reply(box.root, task, "ack", seat="beta", body="On it.\n")
    run(capsys, monkeypatch, box, "progress", task, "--as", "beta", "halfway")
    code, out, _ = run(capsys, monkeypatch, box, "answered", task, "--json")
    progress = json.loads(out)["progress"]
    assert progress["note"] == "halfway" and progress["at"].endswith("Z")
    code, out, _ = run(capsys, monkeypatch, box, "show", task, "--json")
    assert json.loads(out)["letters"][0]["progress"] == progress
    code, out, _ = run(capsys, monkeypatch, box, "show", task)
    assert "in progress: halfway, 0m ago" in out
    code, out, _ = run(capsys, monkeypatch, box, "owed")
    assert "in progress: halfway" in out
    code, out, _ = run(capsys, monkeypatch, box, "answered", task)
    assert "in progress: halfway" in out


def test_no_progress_is_null(capsys, monkeypatch, box, task):
    code, out, _ = run(capsys, monkeypatch, box, "answered", task, "--json")
    assert json.loads(out)["progress"] is None


REFUSALS = {
    "no sidecar": (lambda box, t: None, ["beta", "progress needs the ack sidecar"]),
    "not my letter": (lambda box, t: reply(box.root, t, "ack", seat="beta", body="ok\n"),
                      ["alpha", "own inbox"]),
    "closed": (lambda box, t: reply(box.root, t, "result", seat="beta", body="done\n"),
               ["beta", "cannot progress a filed or closed letter"]),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_progress_refusals_write_nothing(capsys, monkeypatch, box, task, case):
    setup, (seat, match) = REFUSALS[case]
    setup(box, task)
    before = box.tree_bytes()
    code, out, err = run(capsys, monkeypatch, box, "progress", task, "--as", seat, "note")
    assert code == 2 and out == "" and err.count("\n") == 1 and match in err, err
    assert box.tree_bytes() == before


@pytest.mark.parametrize("note", ["line one\nline two", "\x1b[31m", "   "])
def test_a_progress_note_is_one_clean_line(capsys, monkeypatch, box, task, note):
    reply(box.root, task, "ack", seat="beta", body="ok\n")
    before = box.tree_bytes()
    code, _, err = run(capsys, monkeypatch, box, "progress", task, "--as", "beta", note)
    assert code == 2 and err.count("\n") == 1
    assert box.tree_bytes() == before


def test_leases_lists_who_holds_what_and_shows_problems(capsys, monkeypatch, box):
    d = box.root / "locks" / "src-slash-auth.ts.lock"
    d.mkdir(parents=True)
    (d / "lease").write_text("owner=alpha session=s-1 taken=2026-11-29T14:00:00Z\n")
    (box.root / "locks" / "orphan.lock").mkdir()
    e = box.root / "locks" / "stranger.lock"
    e.mkdir()
    (e / "lease").write_text("owner=mallory taken=2026-11-29T14:00:00Z\n")
    before = box.tree_bytes()
    code, out, _ = run(capsys, monkeypatch, box, "leases", "--json")
    doc = json.loads(out)
    assert code == 0 and box.tree_bytes() == before
    by_name = {x["name"]: x for x in doc["leases"]}
    assert by_name["src-slash-auth.ts.lock"] == {
        "name": "src-slash-auth.ts.lock", "path": "locks/src-slash-auth.ts.lock", "target": "src/auth.ts",
        "owner": "alpha", "session": "s-1", "taken": "2026-11-29T14:00:00Z", "problems": []}
    assert by_name["orphan.lock"]["problems"][0].startswith("no lease file")
    assert by_name["stranger.lock"]["problems"] == ["owner mallory is not a seat"]
    code, out, _ = run(capsys, monkeypatch, box, "leases")
    assert code == 0 and "src/auth.ts" in out and "3 leases, 2 with problems" in out
    for name in ("orphan.lock", "stranger.lock"):
        (box.root / "locks" / name / "lease").unlink(missing_ok=True)
        (box.root / "locks" / name).rmdir()
    code, out, _ = run(capsys, monkeypatch, box, "leases")
    assert "1 lease, 0 with problems;" in out  # (it said "1 leases")

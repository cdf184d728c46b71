"""The writing commands (SPEC 7): init, send, reply, file, supersede, dispute, rule, review,
demo. Refusals: exit 2, one line on stderr, nothing on stdout, nothing written."""

from __future__ import annotations

import io
import subprocess
import sys
import types
from pathlib import Path

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core.scan import scan


def run(capsys, monkeypatch, *argv: str, stdin: str = ""):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cli(capsys, monkeypatch, box):
    def call(*argv: str, stdin: str = ""):
        return run(capsys, monkeypatch, "--root", str(box.root), *argv, stdin=stdin)

    return call


def letters(box):
    return {x.id: x for x in scan(box.root).letters}


def test_send_prints_the_new_id_and_writes_the_letter(cli, box):
    code, out, err = cli("send", "--as", "alpha", "--to", "beta", "--type", "request", "--slug", "renewal-plan",
                         "--ack", "--deadline", "2026-12-01T17:00:00Z", "--subject", "Renewal plan",
                         stdin="Please draft the renewal plan.\n")
    assert code == 0 and err == ""
    new_id = out.strip()
    assert out == new_id + "\n"
    letter = letters(box)[new_id]
    assert letter.path == f"beta/inbox/{new_id}.md"
    assert (letter.type, letter.priority, letter.requires_ack, letter.deadline, letter.subject) == (
        "request", "next", "true", "2026-12-01T17:00:00Z", "Renewal plan")
    assert letter.sent.endswith("Z") and not letter.flags


SEND_REFUSALS = {
    "unknown --as": (["--as", "gamma", "--to", "beta", "--type", "info", "--slug", "x"], "body"),
    "unknown --to": (["--as", "alpha", "--to", "gamma", "--type", "info", "--slug", "x"], "body"),
    "ack type": (["--as", "alpha", "--to", "beta", "--type", "ack", "--slug", "x"], "body"),
    "nack type": (["--as", "alpha", "--to", "beta", "--type", "nack", "--slug", "x"], "body"),
    "result type": (["--as", "alpha", "--to", "beta", "--type", "result", "--slug", "x"], "body"),
    "bad slug": (["--as", "alpha", "--to", "beta", "--type", "info", "--slug", "Not_A_Slug"], "body"),
    "empty body": (["--as", "alpha", "--to", "beta", "--type", "info", "--slug", "x"], ""),
    "whitespace body": (["--as", "alpha", "--to", "beta", "--type", "info", "--slug", "x"], " \n \n"),
    "absent pointer": (["--as", "alpha", "--to", "beta", "--type", "info", "--slug", "x", "--supersedes", "gone"],
                       "body"),
    "duplicated pointer": (["--as", "alpha", "--to", "beta", "--type", "info", "--slug", "x", "--re", "twice"],
                           "body"),
    "deadline without offset": (["--as", "alpha", "--to", "beta", "--type", "request", "--slug", "x", "--ack",
                                 "--deadline", "2026-12-01T17:00:00"], "body"),
    "bad priority": (["--as", "alpha", "--to", "beta", "--type", "info", "--slug", "x", "--priority", "asap"],
                     "body"),
    "missing --as": (["--to", "beta", "--type", "info", "--slug", "x"], "body"),
}


@pytest.mark.parametrize("case", sorted(SEND_REFUSALS))
def test_send_refusals(cli, box, case):
    box.letter("twice", frm="alpha", to="beta")
    box.letter("twice", frm="alpha", to="alpha", seat="alpha")
    argv, body = SEND_REFUSALS[case]
    before = box.tree_bytes()
    code, out, err = cli("send", *argv, stdin=body)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("letterbox-tui: ") and "Traceback" not in err
    assert box.tree_bytes() == before


def test_reply_and_file_through_the_command_line(cli, box):
    _, out, _ = cli("send", "--as", "alpha", "--to", "beta", "--type", "request", "--slug", "plan", "--ack",
                    stdin="Plan it.\n")
    task = out.strip()
    before = box.tree_bytes()
    code, out, err = cli("reply", task, "ack", "--as", "beta", "--slug", "mine", stdin="On it.\n")
    assert code == 2 and "--slug is for info replies" in err and box.tree_bytes() == before  # not ignored
    code, out, _ = cli("reply", task, "ack", "--as", "beta", stdin="On it.\n")
    assert code == 0 and out.strip() == f"{task}--beta--ack"
    assert (box.root / "beta/inbox" / f"{task}.md.ack").is_file()
    code, out, _ = cli("reply", task, "result", "--as", "beta", stdin="Done.\n")
    assert code == 0 and out.strip() == f"{task}--beta--result"
    assert (box.root / "beta/processed" / f"{task}.md").is_file()
    assert not (box.root / "beta/inbox" / f"{task}.md.ack").exists()
    code, out, err = cli("reply", task, "result", "--as", "beta", stdin="Done.\n")  # a retry converges
    assert code == 0 and "already" in err
    before = box.tree_bytes()
    code, out, err = cli("reply", task, "nack", "--as", "alpha", stdin="no\n")
    assert code == 2 and out == "" and box.tree_bytes() == before
    _, out, _ = cli("send", "--as", "alpha", "--to", "beta", "--type", "info", "--slug", "fyi", stdin="FYI\n")
    fyi = out.strip()
    code, out, _ = cli("file", fyi, "--as", "beta")
    assert code == 0 and out.startswith("filed:") and (box.root / "beta/processed" / f"{fyi}.md").is_file()


def test_superseding_a_superseded_letter_says_it_makes_a_fork(cli, box):
    """The letter is published (forks are the protocol's to hold), and stderr says that the
    old letter now has two successors and how a fork is settled; the first supersede says
    nothing."""
    _, out, _ = cli("send", "--as", "alpha", "--to", "beta", "--type", "decision", "--slug", "plan", stdin="v1\n")
    old = out.strip()
    code, out, err = cli("supersede", old, "--as", "alpha", stdin="v2\n")
    assert code == 0 and err == ""
    second = out.strip()
    code, out, err = cli("supersede", old, "--as", "alpha", stdin="v2 again\n")
    third = out.strip()
    assert code == 0 and letters(box)[third].supersedes == old
    assert err.count("\n") == 1 and f"{old} was already superseded by {second}" in err and "fork" in err


def test_supersede_takes_its_defaults_from_the_old_letter(cli, box):
    _, out, _ = cli("send", "--as", "alpha", "--to", "beta", "--type", "request", "--slug", "renewal-plan",
                    "--ack", "--priority", "now", "--deadline", "2026-12-01T17:00:00Z", stdin="v1\n")
    old = out.strip()
    code, out, _ = cli("supersede", old, "--as", "alpha", stdin="v2: a correction\n")
    assert code == 0
    new = letters(box)[out.strip()]
    assert new.supersedes == old and new.recipient == "beta" and new.type == "request"
    assert "-alpha-request-renewal-plan-" in new.id
    assert (new.requires_ack, new.priority, new.deadline, new.thread) == ("true", "now", "2026-12-01T17:00:00Z", old)
    code, out, _ = cli("supersede", new.id, "--as", "alpha", "--no-ack", "--type", "info", "--slug", "plan-v3",
                       stdin="v3\n")
    third = letters(box)[out.strip()]
    assert (third.type, third.requires_ack, third.supersedes) == ("info", "false", new.id)
    before = box.tree_bytes()
    assert cli("supersede", "nope", "--as", "alpha", stdin="x\n")[0] == 2
    assert box.tree_bytes() == before


def test_dispute_rule_and_notify(cli, box):
    box.seat("gamma")
    box.letter("plan-a", frm="alpha", to="gamma", type="decision")
    box.letter("plan-b", frm="beta", to="gamma", type="decision")
    code, out, _ = cli("dispute", "plan-a", "plan-b", "--as", "gamma", "--notify")
    assert code == 0
    dispute_id, *notes = out.split()
    got = letters(box)
    dispute = got[dispute_id]
    assert (dispute.type, dispute.sender, dispute.recipient, dispute.disputes) == (
        "dispute", "gamma", "gamma", ("plan-a", "plan-b"))
    assert sorted(got[n].recipient for n in notes) == ["alpha", "beta"]
    assert all(got[n].type == "info" and got[n].re == dispute_id for n in notes)
    before = box.tree_bytes()
    assert cli("dispute", "plan-a", "--as", "gamma")[0] == 2
    assert cli("rule", "plan-a", "--as", "gamma")[0] == 2  # not a dispute
    assert cli("rule", dispute_id, "--as", "gamma", "--upholds", "elsewhere")[0] == 2
    assert box.tree_bytes() == before
    code, out, _ = cli("rule", dispute_id, "--as", "gamma", "--upholds", "plan-b",
                       stdin="plan-b: it was agreed on Monday.\n")
    ruling = letters(box)[out.strip()]
    assert (ruling.type, ruling.rules_on, ruling.upholds, ruling.recipient) == ("ruling", dispute_id, "plan-b", "gamma")
    # the same upholding again says nothing; another upholding is written and said to unsettle
    code, out, err = cli("rule", dispute_id, "--as", "gamma", "--upholds", "plan-b", stdin="Again.\n")
    assert code == 0 and err == ""
    code, out, err = cli("rule", dispute_id, "--as", "gamma", "--upholds", "plan-a", stdin="No: plan-a.\n")
    assert code == 0 and letters(box)[out.strip()].upholds == "plan-a"
    assert err.count("\n") == 1 and ruling.id in err and "settle no fork" in err


def test_review_records_what_is_owed_and_late(cli, box):
    box.letter("late-one", frm="alpha", to="beta", type="request", requires_ack="true",
               deadline="2026-11-01T00:00:00Z", sent="2026-10-20T00:00:00Z")
    box.letter("due-later", frm="alpha", to="beta", type="request", requires_ack="true",
               deadline="2026-12-20T00:00:00Z", sent="2026-10-20T00:00:00Z")
    box.letter("done", frm="alpha", to="beta", type="request", requires_ack="true", folder="processed")
    code, out, _ = cli("review", "--as", "alpha", "--at", "2026-11-29T09:00:00Z")
    assert code == 0
    review = letters(box)[out.strip()]
    assert (review.type, review.sender, review.recipient, review.task) == ("review", "alpha", "alpha", False)
    assert review.path.startswith("alpha/inbox/")
    body = (box.root / review.path).read_text().split("---\n", 2)[2]
    assert "- late-one (late)\n" in body and "- due-later\n" in body and "done" not in body
    assert "Owed: 2; late: 1" in body
    assert "\nAttention: late 1, never-acked 2.\n" in body  # the counts per code it saw
    assert cli("review", "--as", "alpha", "--at", "yesterday")[0] == 2


def test_init_command(capsys, monkeypatch, tmp_path):
    code, out, _ = run(capsys, monkeypatch, "init", str(tmp_path / "lb"), "--seats", "alpha,beta")
    assert code == 0 and "alpha, beta" in out
    assert all((tmp_path / "lb" / rel).is_dir() for rel in ("locks", "alpha/inbox", "beta/processed"))
    code, out, _ = run(capsys, monkeypatch, "init", str(tmp_path / "lb"), "--seats", "alpha,beta")
    assert code == 0 and "already in place" in out
    code, out, err = run(capsys, monkeypatch, "init", str(tmp_path / "other"), "--seats", "alpha,Bad")
    assert code == 2 and out == "" and not (tmp_path / "other").exists()
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, monkeypatch, "init", "--seats", "solo")
    assert code == 0 and (tmp_path / ".letterbox/solo/inbox").is_dir()


def test_demo_no_open_prints_what_it_wrote(capsys, monkeypatch, tmp_path):
    target = tmp_path / "demo"
    code, out, _ = run(capsys, monkeypatch, "demo", str(target), "--no-open")
    assert code == 0
    assert "wrote a demo letterbox" in out and f"letterbox-tui --root {target} owed" in out
    assert "query state=open answered=no type=request" in out
    assert scan(target).scope.letters > 30
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    code, out, err = run(capsys, monkeypatch, "demo", str(tmp_path / "other"), "--no-open")
    assert code == 2 and "not empty" in err


def test_the_demo_holds_an_unsupported_entry_and_says_how_to_settle_it(capsys, monkeypatch, tmp_path):
    """SPEC 7: the demo's archive folder makes the scope incomplete; its summary names the
    folder and the command that removes it, after which the late work is late again."""
    import json
    import shlex
    import shutil

    target = tmp_path / "demo"
    code, out, _ = run(capsys, monkeypatch, "demo", str(target), "--no-open")
    assert code == 0 and "researcher/archive/" in out
    (remove,) = [line.strip() for line in out.splitlines() if line.strip().startswith("rm -r ")]
    code, out, _ = run(capsys, monkeypatch, "--root", str(target), "check", "--json")
    scope = json.loads(out)["scope"]
    assert scope["unsupported"] == [{"path": "researcher/archive", "reason": "archive folders are not read"}]
    assert not scope["complete"]
    code, out, _ = run(capsys, monkeypatch, "--root", str(target), "owed")
    assert code == 3 and "researcher owes 2 (0 late, 2 uncertain)" in out and "unsupported-entry" in out
    shutil.rmtree(shlex.split(remove)[2])
    code, out, _ = run(capsys, monkeypatch, "--root", str(target), "owed")
    assert code == 3 and "researcher owes 2 (1 late, 1 uncertain)" in out and "unsupported-entry" not in out


def test_demo_opens_the_app(capsys, monkeypatch, tmp_path):
    calls = []
    fake = types.ModuleType("letterbox_tui.app")
    fake.run_app = lambda **kw: calls.append(kw) or 0
    monkeypatch.setitem(sys.modules, "letterbox_tui.app", fake)
    code, _, _ = run(capsys, monkeypatch, "demo", str(tmp_path / "d"))
    assert code == 0 and calls and calls[0]["root"] == str(tmp_path / "d")


def test_send_end_to_end_in_a_real_process(box):
    """stdin bytes, the printed id and the exit code, as a script sees them."""
    proc = subprocess.run(
        [sys.executable, "-m", "letterbox_tui", "--root", str(box.root), "send", "--as", "alpha", "--to", "beta",
         "--type", "info", "--slug", "hello"],
        input="Grüße — a UTF-8 body\n".encode(), capture_output=True, cwd=Path(__file__).parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    new_id = proc.stdout.decode().strip()
    assert (box.root / "beta/inbox" / f"{new_id}.md").read_bytes().endswith("Grüße — a UTF-8 body\n".encode())


def test_writing_refuses_a_partial_scope(cli, box):
    before = box.tree_bytes()
    code, out, err = cli("--participant", "alpha", "send", "--as", "alpha", "--to", "beta", "--type", "info",
                         "--slug", "x", stdin="body\n")
    assert code == 2 and "--participant" in err and box.tree_bytes() == before


def test_init_with_an_empty_dir_is_refused_and_creates_nothing(tmp_path, monkeypatch, capsys):
    """``init "$DIR"`` with DIR unset: not a letterbox made where LETTERBOX_DIR or ./.letterbox
    points instead."""
    import os

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LETTERBOX_DIR", str(tmp_path / "elsewhere"))
    code = main(["init", "", "--seats", "a,b"])
    err = capsys.readouterr().err
    assert code == 2 and "DIR is empty" in err
    assert os.listdir(tmp_path) == []


def test_init_inside_another_letterbox_is_refused_and_creates_nothing(tmp_path, monkeypatch, capsys):
    """A letterbox made in another's inbox (or anywhere in its tree) is read there as an
    entry the layout does not hold: the outer one's scope becomes incomplete. Refused."""
    code, _, _ = run(capsys, monkeypatch, "init", str(tmp_path / "lb"), "--seats", "alpha,beta")
    assert code == 0
    for inner in (tmp_path / "lb" / "alpha" / "inbox" / "nested", tmp_path / "lb" / "gamma" / "x"):
        code, out, err = run(capsys, monkeypatch, "init", str(inner), "--seats", "solo")
        assert code == 2 and out == "" and "lies inside the letterbox" in err and str(tmp_path / "lb") in err
        assert not inner.exists() and len(err.splitlines()) == 1
    code, _, _ = run(capsys, monkeypatch, "init", str(tmp_path / "beside"), "--seats", "solo")
    assert code == 0

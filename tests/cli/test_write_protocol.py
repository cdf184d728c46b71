"""The protocol's v0.5 writer rules and environment (issue 13 points 2-4; issue 18 item 12):
delegate letters are tasks, ``--thread`` is a free label, ``LETTERBOX_SESSION`` is written
as ``session``, ``--as`` defaults to ``LETTERBOX_AGENT``, long ids are read, task ids leave
room for their replies. Refusals: exit 2, one line, nothing written."""

from __future__ import annotations

import io
import os
import sys

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core.scan import scan
from letterbox_tui.core.write import reply


def run(capsys, monkeypatch, box, *argv: str, stdin: str = "Body.\n"):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = main(["--root", str(box.root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, monkeypatch, box, *argv: str, match: str) -> None:
    before = box.tree_bytes()
    code, out, err = run(capsys, monkeypatch, box, *argv)
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and match in err, err
    assert box.tree_bytes() == before


def header(box, letter_id: str, seat: str = "beta") -> list[str]:
    text = (box.root / seat / "inbox" / f"{letter_id}.md").read_text()
    return text.split("---\n")[1].splitlines()


SEND = ("send", "--as", "alpha", "--to", "beta", "--slug", "plan")


def test_a_delegate_without_ack_is_refused_as_the_protocol_refuses_it(capsys, monkeypatch, box):
    refused(capsys, monkeypatch, box, *SEND, "--type", "delegate", match="delegate letters require --ack")
    code, out, _ = run(capsys, monkeypatch, box, *SEND, "--type", "delegate", "--ack")
    assert code == 0 and "requires_ack: true" in header(box, out.strip())


def test_thread_is_a_free_label_of_id_shape(capsys, monkeypatch, box):
    code, out, err = run(capsys, monkeypatch, box, *SEND, "--type", "info", "--thread", "q4-renewal")
    assert code == 0, err
    (letter,) = scan(box.root).letters
    assert letter.thread == "q4-renewal" and letter.malformed == ()
    refused(capsys, monkeypatch, box, *SEND, "--type", "info", "--thread", "not a label", match="thread")


def test_letterbox_session_is_written_after_deadline_and_on_replies_and_the_sidecar(capsys, monkeypatch, box):
    monkeypatch.setenv("LETTERBOX_SESSION", "s-42:a.b")
    code, out, _ = run(capsys, monkeypatch, box, *SEND, "--type", "request", "--ack")
    task = out.strip()
    lines = header(box, task)
    assert lines[lines.index("deadline:") + 1] == "session: s-42:a.b"
    code, _, _ = run(capsys, monkeypatch, box, "reply", task, "ack", "--as", "beta")
    assert code == 0
    assert "session: s-42:a.b" in header(box, f"{task}--beta--ack", seat="alpha")
    sidecar = (box.root / "beta" / "inbox" / f"{task}.md.ack").read_text()
    assert "by: beta session=s-42:a.b\n" in sidecar


@pytest.mark.parametrize("value", ["has space", "x" * 65, "semi;colon"])
def test_an_invalid_letterbox_session_is_refused(capsys, monkeypatch, box, value):
    monkeypatch.setenv("LETTERBOX_SESSION", value)
    refused(capsys, monkeypatch, box, *SEND, "--type", "info", match="LETTERBOX_SESSION")


def test_no_session_field_without_letterbox_session(capsys, monkeypatch, box):
    monkeypatch.setenv("LETTERBOX_SESSION", "")
    code, out, _ = run(capsys, monkeypatch, box, *SEND, "--type", "info")
    assert code == 0 and not any(x.startswith("session:") for x in header(box, out.strip()))


def test_as_defaults_to_letterbox_agent_for_every_writing_command(capsys, monkeypatch, box):
    monkeypatch.setenv("LETTERBOX_AGENT", "alpha")
    code, out, _ = run(capsys, monkeypatch, box, "send", "--to", "beta", "--type", "request", "--slug", "a", "--ack")
    task = out.strip()
    assert code == 0 and scan(box.root).letters[0].sender == "alpha"
    monkeypatch.setenv("LETTERBOX_AGENT", "beta")
    assert run(capsys, monkeypatch, box, "reply", task, "result")[0] == 0
    code, out, _ = run(capsys, monkeypatch, box, "send", "--to", "beta", "--type", "info", "--slug", "b")
    assert run(capsys, monkeypatch, box, "file", out.strip())[0] == 0
    assert run(capsys, monkeypatch, box, "review")[0] == 0
    # --as still wins
    code, out, _ = run(capsys, monkeypatch, box, "send", "--as", "alpha", "--to", "beta", "--type", "info",
                       "--slug", "c")
    assert code == 0 and out.strip().split("-")[3] == "alpha"


def test_without_as_or_letterbox_agent_the_writer_is_asked_for(capsys, monkeypatch, box):
    refused(capsys, monkeypatch, box, "send", "--to", "beta", "--type", "info", "--slug", "x", match="LETTERBOX_AGENT")
    monkeypatch.setenv("LETTERBOX_AGENT", "Not A Seat")
    refused(capsys, monkeypatch, box, "send", "--to", "beta", "--type", "info", "--slug", "x",
            match="LETTERBOX_AGENT")


def test_a_task_whose_replies_would_exceed_128_characters_is_refused_at_send(capsys, monkeypatch, box):
    # "<stamp 17>-alpha-request-<slug>-<8 hex>" + "--beta--result" is 55 + the slug: 73 fit
    refused(capsys, monkeypatch, box, *SEND[:-1], "x" * 74, "--type", "request", "--ack", match="replies")
    code, out, _ = run(capsys, monkeypatch, box, *SEND[:-1], "x" * 73, "--type", "request", "--ack")
    task = out.strip()
    assert code == 0 and len(f"{task}--beta--result") == 128
    assert run(capsys, monkeypatch, box, "reply", task, "result", "--as", "beta")[0] == 0
    # a non-task with the longer slug is fine (it is filed, never owed a reply)
    assert run(capsys, monkeypatch, box, *SEND[:-1], "x" * 74, "--type", "info")[0] == 0


def test_a_200_character_id_written_by_another_edition_is_read_and_answered(capsys, monkeypatch, box):
    long_id = "2026-11-29T140512-alpha-request-" + "l" * 159 + "-0badc0de"
    assert len(long_id) == 200
    box.letter(long_id, frm="alpha", to="beta", type="request", requires_ack="true")
    snap = scan(box.root)
    assert [x.id for x in snap.letters] == [long_id] and snap.scope.complete
    code, out, _ = run(capsys, monkeypatch, box, "show", long_id)
    assert code == 0 and long_id in out
    # a pointer to it is not written: the protocol's strict reader (128) would then refuse
    # the whole letterbox for a letter of ours (issue 23)
    refused(capsys, monkeypatch, box, "send", "--as", "beta", "--to", "alpha", "--type", "info",
            "--slug", "about", "--re", long_id, match="re: 200 characters")
    # but its ownership replies would be over 128: refused in one line, nothing written
    refused(capsys, monkeypatch, box, "reply", long_id, "ack", "--as", "beta", match="at most 128")
    with pytest.raises(Exception):
        reply(box.root, long_id, "result", seat="beta", body="Done.\n")


def test_regular_files_at_the_root_are_not_warnings_but_other_directories_are(capsys, monkeypatch, box):
    for name in ("cmux-agents.tsv", "env.sh", "AGENT-LETTERBOX.md", "notes"):
        box.raw(name, "written by the protocol's set-up\n")
    (box.root / "Not-A-Seat").mkdir()
    snap = scan(box.root)
    assert snap.ignored == ["Not-A-Seat"]
    code, out, _ = run(capsys, monkeypatch, box, "check", "--json")
    import json

    findings = json.loads(out)["findings"]
    assert [f["paths"] for f in findings if f["code"] == "ignored-entry"] == [["Not-A-Seat"]]


@pytest.mark.parametrize("command", ["send", "reply"])
def test_a_failure_after_publishing_says_so_prints_the_id_on_stderr_and_exits_4(box, command):
    import subprocess

    from letterbox_tui.core.write import Draft, deliver

    task = deliver(box.root, Draft("alpha", "beta", "request", "plan", "Plan it.\n", requires_ack=True)).id
    argv = (["send", "--as", "alpha", "--to", "beta", "--type", "info", "--slug", "full"] if command == "send"
            else ["reply", task, "result", "--as", "beta"])
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "letterbox_tui", "--root", str(box.root), *argv],
                           input=b"Body.\n", stdout=full, stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 4, err
    assert err.count("\n") == 1 and "published" in err and "Traceback" not in err
    published = [x.id for x in scan(box.root).letters if x.id != task]
    assert len(published) == 1 and published[0] in err



def test_a_reply_published_whose_own_folders_fail_exits_4_not_2(capsys, monkeypatch, box):
    from letterbox_tui.core.write import Draft, deliver, replies

    task = deliver(box.root, Draft("alpha", "beta", "request", "plan", "Plan it.\n", requires_ack=True)).id

    def broken(*a, **kw):
        raise OSError(5, "Input/output error")

    real = replies.move_to_processed
    monkeypatch.setattr(replies, "move_to_processed", broken)
    code, out, err = run(capsys, monkeypatch, box, "reply", task, "result", "--as", "beta")
    assert code == 4 and out == "" and err.count("\n") == 1
    assert f"{task}--beta--result is published" in err and "run the same reply again" in err
    monkeypatch.setattr(replies, "move_to_processed", real)
    code, out, _ = run(capsys, monkeypatch, box, "reply", task, "result", "--as", "beta")
    assert code == 0 and out.strip() == f"{task}--beta--result"


def test_the_longest_id_the_protocols_writer_makes_is_read_but_cannot_be_locked_so_is_not_filed(
        capsys, monkeypatch, box):
    """The cmux writer publishes through a temporary `.<id>.tmp.XXXXXX`, so its ids stop at 243
    characters (255 bytes a name). Such a letter is read. Its lifecycle lock
    `<id>.md.lifecycle.lock` cannot exist above 237 characters (the name would pass 255 bytes),
    so `file` refuses in one line and writes nothing; at 237 the lock fits and it is filed."""
    longest = "2026-11-29T140512-alpha-info-" + "i" * 205 + "-0badc0de"
    fits = "2026-11-29T140513-alpha-info-" + "j" * 199 + "-0badc0df"
    assert (len(longest), len(fits)) == (243, 237)
    for letter_id in (longest, fits):
        box.letter(letter_id, frm="alpha", to="beta", type="info", requires_ack="false")
    snap = scan(box.root)
    assert sorted(x.id for x in snap.letters) == sorted([longest, fits]) and snap.scope.complete
    refused(capsys, monkeypatch, box, "file", longest, "--as", "beta", match="lifecycle lock")
    code, out, err = run(capsys, monkeypatch, box, "file", fits, "--as", "beta")
    assert code == 0, err
    assert (box.root / "beta" / "processed" / f"{fits}.md").is_file()
    assert not list((box.root / "beta" / "inbox").glob("*.lifecycle.lock"))


def test_send_thread_over_128_characters_exits_2_and_writes_nothing(capsys, monkeypatch, box):
    refused(capsys, monkeypatch, box, *SEND, "--type", "info", "--thread", "t" * 129, match="thread: 129 characters")
    code, out, err = run(capsys, monkeypatch, box, *SEND, "--type", "info", "--thread", "t" * 128)
    assert code == 0, err


def test_the_killed_move_reproduction_is_refused_and_check_reports_a_second_reply(capsys, monkeypatch, box):
    # issue 23 bug 2: reply result, the move undone (a kill -9 between the two), reply nack
    code, out, _ = run(capsys, monkeypatch, box, *SEND, "--type", "request", "--ack")
    task = out.strip()
    assert run(capsys, monkeypatch, box, "reply", task, "result", "--as", "beta")[0] == 0
    os.rename(box.root / "beta/processed" / f"{task}.md", box.root / "beta/inbox" / f"{task}.md")
    code, out, err = run(capsys, monkeypatch, box, "reply", task, "nack", "--as", "beta")
    assert code == 2 and out == "" and "already closed" in err and err.count("\n") == 1
    assert not (box.root / "alpha/inbox" / f"{task}--beta--nack.md").exists()
    assert (box.root / "beta/processed" / f"{task}.md").is_file()
    assert run(capsys, monkeypatch, box, "check")[0] == 0
    # a second terminal reply written by another tool is reported as a problem
    box.letter(f"{task}--beta--nack", frm="beta", to="alpha", type="nack", re=task)
    code, out, _ = run(capsys, monkeypatch, box, "check")
    assert code == 1 and "conflicting-replies" in out


#: each protocol edition's set-up files naming this machine's panes, sockets and paths
#: (cmux, tmux, zellij, herdr editions' ``setup``: registry and title-pattern files, env.sh)
MACHINE_LOCAL = ["env.sh"] + [f"{m}-{kind}.tsv" for m in ("cmux", "tmux", "zellij", "herdr")
                              for kind in ("agents", "patterns")]


def test_init_git_ignores_every_editions_machine_local_files(tmp_path, capsys):
    import subprocess

    from letterbox_tui.core.sync import MACHINE_FILES, find_repo, shareable

    root = tmp_path / "mail"
    assert main(["init", str(root), "--seats", "alpha,beta", "--git"]) == 0
    capsys.readouterr()
    for name in MACHINE_LOCAL:
        (root / name).write_text("alpha\tpane:3\n")
    (root / "AGENT-LETTERBOX.md").write_text("# startup rule\n")  # shared instructions
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert status.splitlines() == ["?? AGENT-LETTERBOX.md"], status
    repo = find_repo(str(root))
    assert [n for n in MACHINE_LOCAL if shareable(repo, n)] == [] and set(MACHINE_LOCAL) <= MACHINE_FILES


def test_init_git_again_adds_what_an_older_gitignore_lacks(tmp_path, capsys):
    root = tmp_path / "mail"
    root.mkdir()
    (root / ".gitignore").write_text("# by an older letterbox-tui\n*.lifecycle.lock/\n/env.sh\n/cmux-agents.tsv\n")
    assert main(["init", str(root), "--seats", "alpha", "--git"]) == 0
    capsys.readouterr()
    text = (root / ".gitignore").read_text()
    assert text.startswith("# by an older letterbox-tui\n*.lifecycle.lock/\n/env.sh\n/cmux-agents.tsv\n")
    assert all(f"/{n}\n" in text for n in MACHINE_LOCAL) and text.count("/cmux-agents.tsv\n") == 1

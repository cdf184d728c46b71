"""``dispute`` and ``rule`` from the command line write ``thread:``, and ``show`` says on
each disputed letter which dispute names it and which rulings settled it (issue 26)."""

from __future__ import annotations

import io
import sys

from letterbox_tui.cli import main


def run(capsys, monkeypatch, box, *argv: str, stdin: str = "Body.\n"):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = main(["--root", str(box.root), *argv])
    out, err = capsys.readouterr()
    return code, out.strip(), err


def test_show_says_disputed_by_and_ruled_by_on_each_disputed_letter(capsys, monkeypatch, box):
    code, task, _ = run(capsys, monkeypatch, box, "send", "--as", "alpha", "--to", "beta", "--type", "request",
                        "--slug", "plan", "--ack")
    code, result, _ = run(capsys, monkeypatch, box, "reply", task, "result", "--as", "beta")
    code, dispute, err = run(capsys, monkeypatch, box, "dispute", result, task, "--as", "alpha", stdin="")
    assert code == 0, err
    header = (box.root / "alpha/inbox" / f"{dispute}.md").read_text().split("---\n")[1]
    assert f"thread: {task}\n" in header
    for letter_id in (task, result):
        code, out, _ = run(capsys, monkeypatch, box, "show", letter_id)
        assert f"disputed by {dispute} / open: no ruling yet" in " ".join(out.split())
    code, ruling, err = run(capsys, monkeypatch, box, "rule", dispute, "--as", "alpha", "--upholds", result, stdin="")
    assert code == 0, err
    assert f"thread: {task}\n" in (box.root / "alpha/inbox" / f"{ruling}.md").read_text()
    for letter_id in (task, result):
        code, out, _ = run(capsys, monkeypatch, box, "show", letter_id)
        assert f"disputed by {dispute} / ruled by {ruling}" in " ".join(out.split())

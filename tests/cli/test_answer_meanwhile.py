"""An answer from the derived index is made while the proof that the letterbox is
unchanged still runs (``cli.indexed._answer_meanwhile``), and shown only once the proof
holds: a letterbox that changes meanwhile gets the answer a from-scratch run gives after
the change, never the held one; a terminal is answered only after the proof."""

from __future__ import annotations

import json
import os

import pytest

from letterbox_tui.cli import indexed, main
from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.speed import memo


@pytest.fixture
def box(tmp_path, monkeypatch):
    monkeypatch.setattr(memo, "RACY_NS", 0)  # files written a moment ago count as settled
    root = tmp_path / "box"
    write_demo(root)
    return root


def _letter(root, seat="builder"):
    return sorted((root / seat / "inbox").glob("*.md"))[0]


def _ask(capsys, root, argv, scratch=False, monkeypatch=None):
    if scratch:
        monkeypatch.setenv("LETTERBOX_TUI_NO_CACHE", "1")
    code = main(["--root", str(root), *argv])
    if scratch:
        monkeypatch.delenv("LETTERBOX_TUI_NO_CACHE")
    out, err = capsys.readouterr()
    return code, out, err


def _bare(out: str):
    data = json.loads(out)
    data["scope"].pop("scanned_at", None)
    return data


def _agree(got, want) -> None:
    """(code, out, err) of a run and of a from-scratch run: the same answer."""
    assert got[0] == want[0]
    if want[1]:
        assert got[1].count("\n") == 1 and _bare(got[1]) == _bare(want[1])
    else:
        assert got[1:] == want[1:]


def _watch(monkeypatch, events, change=None):
    """Record when the proof is waited for and when the answer is made; ``change()``
    once, the first time an answer is made (the proof then still runs)."""
    real_holds = memo.Proof.holds
    real_one = indexed._one

    def holds(self):
        got = real_holds(self)
        events.append(("holds", got))
        return got

    def one(command, s, args):
        events.append(("answer", s.proof is not None))
        if change is not None and not any(e == "changed" for e in events):
            change()
            events.append("changed")
        return real_one(command, s, args)

    monkeypatch.setattr(memo.Proof, "holds", holds)
    monkeypatch.setattr(indexed, "_one", one)


@pytest.mark.parametrize("pure", [False, True])
def test_the_answer_is_made_while_the_proof_runs_and_shown_after(box, capsys, monkeypatch, pure):
    if pure:
        monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    lid = _letter(box).name[:-3]
    argv = ["answered", lid, "--json"]
    _ask(capsys, box, argv)  # builds the index
    events: list = []
    _watch(monkeypatch, events)
    got = _ask(capsys, box, argv)
    assert events[:2] == [("answer", True), ("holds", True)]  # made first, the proof then waited for
    _agree(got, _ask(capsys, box, argv, True, monkeypatch))


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("how", ["removed", "added"])
def test_a_letterbox_changed_during_the_proof_gets_the_answer_after_the_change(box, capsys, monkeypatch, pure, how):
    if pure:
        monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    path = _letter(box)
    lid = path.name[:-3]
    for argv in (["show", lid, "--json"], ["answered", lid, "--json"]):
        _ask(capsys, box, argv)  # the index, fresh
    text = path.read_bytes()

    def change():
        if how == "removed":  # the letter asked about goes while its answer is being made
            path.unlink()
        else:  # a copy under another name: its id is now in two files
            (path.parent / ("copy-" + path.name)).write_bytes(text)

    events: list = []
    _watch(monkeypatch, events, change)
    got = _ask(capsys, box, ["show", lid, "--json"])
    assert ("holds", False) in events  # the held answer was dropped ...
    _agree(got, _ask(capsys, box, ["show", lid, "--json"], True, monkeypatch))  # ... the one after the change shown


def test_an_in_place_edit_during_a_pure_proof_is_seen(box, capsys, monkeypatch):
    """Without the accelerator every file is stat-ed when the proof is waited for: an edit
    made while the answer is being made is always seen."""
    monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    path = _letter(box)
    lid = path.name[:-3]
    argv = ["show", lid, "--json"]
    _ask(capsys, box, argv)
    events: list = []
    _watch(monkeypatch, events, lambda: path.write_bytes(path.read_bytes().replace(b"priority: ", b"priority:  ", 1)))
    got = _ask(capsys, box, argv)
    assert ("holds", False) in events
    _agree(got, _ask(capsys, box, argv, True, monkeypatch))


def test_a_terminal_is_answered_only_after_the_proof(box, capsys, monkeypatch):
    lid = _letter(box).name[:-3]
    _ask(capsys, box, ["answered", lid])
    events: list = []
    _watch(monkeypatch, events)
    monkeypatch.setattr(type(os.sys.stdout), "isatty", lambda self: True)
    code, out, _ = _ask(capsys, box, ["answered", lid])
    assert code in (0, 3) and out
    assert events[:2] == [("holds", True), ("answer", False)]


def test_a_bad_term_is_one_line_and_exit_2_with_the_proof_running(box, capsys, monkeypatch):
    """The terms are parsed once the proof runs (``_guarded``'s ``prepare``): a bad one still
    ends the command with one line and exit 2, and the proof is stopped, not waited for."""
    _ask(capsys, box, ["query", "type=request", "--json"])  # the index, fresh
    events: list = []
    _watch(monkeypatch, events)
    real_init = memo.Proof.__init__
    monkeypatch.setattr(memo.Proof, "__init__", lambda self, *a: events.append("start") or real_init(self, *a))
    for argv in (["query", "nonsense~~=x", "--json"], ["exists", "late=maybe", "--json"], ["query", "since=soon"]):
        events.clear()
        code, out, err = _ask(capsys, box, argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, argv
        assert "start" in events and not any(type(e) is tuple and e[0] == "holds" for e in events), (argv, events)

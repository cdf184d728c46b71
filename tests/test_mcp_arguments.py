"""The MCP tools' arguments and the text of their results, in process (``mcp.answer``): a
tool called without what it needs is refused in one line, as the command line refuses it,
and the JSON text a result carries escapes what a letter may hide in it."""

from __future__ import annotations

import pytest

from letterbox_tui import mcp
from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.errors import LetterboxError


@pytest.fixture
def resident(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "box"
    write_demo(root)
    resident = mcp.Resident(str(root))
    yield resident
    resident.close()


@pytest.mark.parametrize("name", ["show", "current", "answered", "thread"])
def test_a_tool_called_without_its_id_is_refused_in_one_line(resident, name):
    with pytest.raises(LetterboxError) as caught:
        mcp.call(resident, name, {})
    message = str(caught.value)
    assert message == f"{name}: the argument 'id' is required (a letter: its id, display id, token or path)"
    doc, _meta = mcp.call(resident, "check", {})  # and the server goes on answering
    assert doc["findings"]


def test_the_json_text_of_a_result_escapes_what_a_header_hides(resident):
    """A subject with a bidi override, a C1 control and an invisible mark: the result's
    JSON text (what a client shows or hands a model) escapes them as the command line's
    ``--json`` does, and still says the same document."""
    import json
    from pathlib import Path

    letter_id = "2026-11-29T100000-planner-info-hostile-0000cccc"
    Path(resident.root, "builder", "inbox", f"{letter_id}.md").write_text(
        f"---\nid: {letter_id}\nfrom: planner\nto: builder\ntype: info\nrequires_ack: false\n"
        "sent: 2026-11-29T10:00:00Z\nsubject: see \u202egnp.exe\u0085 \u200bx\n---\nbody\n")
    for name, arguments in [("query", {"terms": ["slug~=hostile"]}), ("show", {"id": letter_id})]:
        doc, _meta, text = mcp.answer(resident, name, arguments)
        assert "\u202egnp.exe\u0085 \u200bx" in json.dumps(doc, ensure_ascii=False)  # the data as written
        assert not any(c in text for c in "\u202e\u0085\u200b"), name
        assert "see \\u202egnp.exe\\u0085 \\u200bx" in text and json.loads(text) == doc


def test_inbox_is_a_tool_answering_what_the_command_line_answers(resident, capsys, monkeypatch):
    """SPEC 7: one tool per reading command; ``inbox`` answers its ``--json`` document."""
    import json

    from letterbox_tui.cli import main
    from tests.test_mcp import unclocked

    monkeypatch.delenv("LETTERBOX_CHECK_STALE_DAYS", raising=False)
    at = "2026-11-29T12:00:00Z"
    for arguments, argv in [({"seat": "builder", "at": at}, ["inbox", "builder", "--at", at]),
                            ({"seat": "builder", "at": at, "recent": True}, ["inbox", "builder", "--at", at, "--recent"])]:
        doc, _meta = mcp.call(resident, "inbox", arguments)
        code = main(["--root", resident.root, *argv, "--json"])
        assert code == 3  # the demo's scope is incomplete
        assert unclocked(doc) == unclocked(json.loads(capsys.readouterr().out))
    assert doc["counts"]["hidden"] > 0
    with pytest.raises(LetterboxError, match="inbox: the argument 'seat' is required"):
        mcp.call(resident, "inbox", {})
    monkeypatch.setenv("LETTERBOX_CHECK_STALE_DAYS", "two")
    with pytest.raises(LetterboxError, match="LETTERBOX_CHECK_STALE_DAYS 'two': expected a whole number of days"):
        mcp.call(resident, "inbox", {"seat": "builder"})


@pytest.mark.parametrize("name, arguments", [("show", {"id": "6513270e", "body": "no"}),
                                             ("inbox", {"seat": "builder", "recent": "false"}),
                                             ("show", {"id": "6513270e", "body": 1})])
def test_a_yes_or_no_argument_takes_true_or_false_only(resident, name, arguments):
    """``body: "no"`` read as truthy gave the body; it is refused as other mistyped arguments are."""
    key = next(k for k in arguments if k not in ("id", "seat"))
    with pytest.raises(LetterboxError, match=f"^{key}: true or false, not "):
        mcp.call(resident, name, arguments)


def test_owed_takes_the_commands_attention_and_as_options(resident, capsys):
    """Issue 25: each tool takes its command's options; ``owed --attention CODE`` (repeatable)
    and ``--as S`` are ``attention`` (a list) and ``as``, answering what the command answers."""
    import json

    from letterbox_tui.cli import main
    from tests.test_mcp import unclocked

    at = "2026-11-29T12:00:00Z"
    cases = [({"at": at, "attention": ["never-acked"]}, ["--attention", "never-acked"]),
             ({"at": at, "attention": ["owner-blocked", "late"], "seat": "researcher"},
              ["--attention", "owner-blocked", "--attention", "late", "--seat", "researcher"]),
             ({"at": at, "as": "simon"}, ["--as", "simon"]),
             ({"at": at, "as": "simon", "attention": ["waiting-on-human"], "limit": 1},
              ["--as", "simon", "--attention", "waiting-on-human", "--limit", "1"])]
    for arguments, argv in cases:
        doc, _meta = mcp.call(resident, "owed", arguments)
        main(["--root", resident.root, "owed", "--at", at, *argv, "--json"])
        assert unclocked(doc) == unclocked(json.loads(capsys.readouterr().out)), arguments
    doc, _meta = mcp.call(resident, "owed", {"at": at, "as": "simon", "attention": ["waiting-on-human"]})
    assert [g["seat"] for g in doc["owed"]] == ["simon"]
    with pytest.raises(LetterboxError, match="^attention 'sleepy': one of late, late-unknown"):
        mcp.call(resident, "owed", {"attention": ["sleepy"]})
    with pytest.raises(LetterboxError, match="^no seat 'nobody' in "):
        mcp.call(resident, "owed", {"as": "nobody"})
    with pytest.raises(LetterboxError, match="^attention: a list of attention codes"):
        mcp.call(resident, "owed", {"attention": "late"})


@pytest.mark.parametrize("body, cut", [("\x1b" * 70_000, True),  # over the cap as written
                                       ("\x85" * 30_000, True),  # under it as written, over it sanitized
                                       ("\x1b[31mred\u202e\n" * 10, False)])
def test_a_sanitized_body_is_still_at_most_the_cap(resident, body, cut):
    """``show`` with ``body: true`` gives at most 64 KiB of body (README): the placeholders a
    sanitized body holds are longer than the characters they replace, so the cap is the
    sanitized text's, and ``body_truncated`` says when it cut."""
    from pathlib import Path

    letter_id = "2026-11-29T100000-planner-info-long-0000cccc"
    Path(resident.root, "builder", "inbox", f"{letter_id}.md").write_text(
        f"---\nid: {letter_id}\nfrom: planner\nto: builder\ntype: info\nrequires_ack: false\n"
        f"sent: 2026-11-29T10:00:00Z\n---\n{body}")
    doc, _meta = mcp.call(resident, "show", {"id": letter_id, "body": True})
    (item,) = doc["letters"]
    assert len(item["body"].encode()) <= mcp.BODY_LIMIT
    assert item["body_truncated"] is cut
    assert not any(c in item["body"] for c in "\x1b\x85\u202e")
    if not cut:
        assert item["body"].count("red") == 10


def test_a_letterbox_gone_is_the_command_lines_one_line_refusal(tmp_path, monkeypatch, capsys):
    """Issue 25: an unreadable letterbox gives a tool error with the command line's exit-2
    text; the server answers again once it is back."""
    import shutil

    from letterbox_tui.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "box"
    write_demo(root)
    resident = mcp.Resident(str(root), source="--root")  # as ``letterbox-tui --root DIR mcp`` makes it
    try:
        assert mcp.call(resident, "leases", {})[0]["scope"]["letters"] > 0
        shutil.move(root, tmp_path / "away")
        for name, arguments in [("query", {"terms": []}), ("owed", {"participant": ["builder"]})]:
            with pytest.raises(LetterboxError) as caught:
                mcp.call(resident, name, arguments)
            assert main(["--root", str(root), name]) == 2
            assert f"letterbox-tui: {caught.value}\n" == capsys.readouterr().err
        shutil.move(tmp_path / "away", root)
        assert mcp.call(resident, "query", {"terms": []})[0]["scope"]["letters"] > 0
    finally:
        resident.close()


def test_an_at_that_is_no_time_is_refused_as_the_command_line_refuses_it(resident, capsys):
    from letterbox_tui.cli import main

    with pytest.raises(LetterboxError) as caught:
        mcp.call(resident, "owed", {"at": "soonish"})
    assert main(["--root", resident.root, "owed", "--at", "soonish"]) == 2
    assert capsys.readouterr().err == f"letterbox-tui: --{caught.value}\n"  # (the argument is at, the option --at)

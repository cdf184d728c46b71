"""References as the protocol resolves them (SPEC 7 "References", issue 23 parity item 2):
a full id, a display id, a unique token or a path, in every command that takes an ID; an
ambiguous reference exits 2 naming the candidates; ``thread`` also takes a free label."""

from __future__ import annotations

import hashlib
import os

import pytest

from letterbox_tui.core.references import display_id, token
from tests.cli.helpers import cli, cli_json

ASK = "2026-11-29T140512-alpha-request-renewal-plan-3f9a1c07"
NOTE = "2026-11-30T090000-alpha-info-renewal-note-77aa0011"


@pytest.fixture
def refbox(box):
    box.letter(ASK, type="request", requires_ack="true")
    box.letter(NOTE, thread=ASK)
    return box


def test_token_and_display_id_follow_the_protocol():
    assert token(ASK) == "3f9a1c07"
    assert display_id(ASK) == "2026-11-29T140512 · 3f9a1c07"
    reply = f"{ASK}--beta--result"  # no hex tail: the token is the id's SHA-256 prefix
    assert token(reply) == hashlib.sha256(reply.encode()).hexdigest()[:8]
    assert display_id("plain-id") == "unknown · " + hashlib.sha256(b"plain-id").hexdigest()[:8]


@pytest.mark.parametrize("command", ["show", "current", "answered"])
@pytest.mark.parametrize("form", ["id", "display", "token", "path", "relative"])
def test_every_reference_form_reads_the_letter(refbox, capsys, command, form, monkeypatch):
    ref = {"id": ASK, "display": display_id(ASK), "token": "3f9a1c07",
           "path": str(refbox.root / "beta" / "inbox" / f"{ASK}.md"), "relative": f"beta/inbox/{ASK}.md"}[form]
    if form == "relative":
        monkeypatch.chdir(refbox.root.parent)  # not a path from here: taken relative to the root
    code, doc = cli_json(capsys, refbox, command, ref)
    assert code == 0
    assert doc["id"] == ASK or doc["letters"][0]["id"] == ASK


def test_thread_takes_a_reference_and_a_free_label(refbox, capsys):
    refbox.letter("2026-12-01T000000-alpha-info-other-1234abcd", thread="renewal-work")
    refbox.letter("2026-12-01T000001-alpha-info-more-5678abcd", thread="renewal-work")
    code, doc = cli_json(capsys, refbox, "thread", "77aa0011")
    assert code == 0 and doc["thread"] == ASK
    code, doc = cli_json(capsys, refbox, "thread", "renewal-work")
    assert code == 0 and doc["thread"] == "renewal-work" and doc["root"] is None
    assert sorted(n["id"] for n in doc["tree"]) == ["2026-12-01T000000-alpha-info-other-1234abcd",
                                                    "2026-12-01T000001-alpha-info-more-5678abcd"]
    code, out, err = cli(capsys, refbox, "thread", "no-such-label")
    assert code == 2 and "no letter no-such-label in scope" in err


def test_an_ambiguous_token_exits_2_naming_the_candidates(box, capsys):
    a = "2026-01-01T000000-alpha-info-one-abcd1234"
    b = "2026-01-02T000000-alpha-info-two-abcd1234"
    box.letter(a)
    box.letter(b)
    for ref in ("abcd1234", "beta/inbox/../inbox/" + a + ".md"):
        code, out, err = cli(capsys, box, "show", ref)
        if ref == "abcd1234":
            assert code == 2 and out == ""
            assert "ambiguous reference abcd1234" in err and a in err and b in err
        else:  # a path is never ambiguous
            assert code == 0 and a in out
    code, out, err = cli(capsys, box, "show", "2026-01-02T000000 · abcd1234")  # the display id tells them apart
    assert code == 0 and b in out


def test_an_ambiguous_reference_is_named_sanitized(box, capsys):
    # candidates are ids ([A-Za-z0-9_.:-]); what can carry a control character is what was typed
    code, out, err = cli(capsys, box, "show", "\x1b[31mred")
    assert code == 2 and "\x1b" not in err and "no letter" in err


def test_a_path_outside_the_root_is_refused(refbox, capsys, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text((refbox.root / "beta" / "inbox" / f"{ASK}.md").read_text())
    code, out, err = cli(capsys, refbox, "show", str(outside))
    assert code == 2 and "is not under the letterbox" in err


def test_an_unreadable_file_is_not_a_letter(refbox, capsys):
    refbox.raw("beta/inbox/broken.md", "---\nid: broken\n")
    code, out, err = cli(capsys, refbox, "show", "beta/inbox/broken.md")
    assert code == 2 and "no letter beta/inbox/broken.md in scope" in err


@pytest.mark.parametrize("form", ["display", "token", "path"])
def test_reply_file_progress_take_references(box, capsys, monkeypatch, form):
    monkeypatch.setenv("LETTERBOX_AGENT", "beta")
    box.letter(ASK, type="request", requires_ack="true")
    box.letter(NOTE)
    ask = {"display": display_id(ASK), "token": "3f9a1c07", "path": f"{box.root}/beta/inbox/{ASK}.md"}[form]
    note = {"display": display_id(NOTE), "token": "77aa0011", "path": f"{box.root}/beta/inbox/{NOTE}.md"}[form]
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("on it\n"))
    code, out, err = cli(capsys, box, "reply", ask, "ack")
    assert code == 0, err
    assert (box.root / "alpha" / "inbox" / f"{ASK}--beta--ack.md").exists()
    code, out, err = cli(capsys, box, "progress", ask, "half", "done")
    assert code == 0 and out == f"progress: {ASK}\n", err  # said by its full id
    assert "progress: half done" in (box.root / "beta" / "inbox" / f"{ASK}.md.ack").read_text()
    code, out, err = cli(capsys, box, "file", note)
    assert code == 0 and out == f"filed: {NOTE} -> beta/processed/{NOTE}.md\n", err
    assert (box.root / "beta" / "processed" / f"{NOTE}.md").exists()


@pytest.mark.parametrize("kind", ["result", "nack"])
def test_file_of_a_result_named_by_its_path_asks_for_read(box, capsys, monkeypatch, kind):
    """A script that files ``beta/inbox/*.md`` would put a result away unseen. As the
    protocol's ``file`` does, a result or nack named by its path is filed only with
    ``--read`` (exit 2, nothing moved, without it); by id or token, as before."""
    monkeypatch.setenv("LETTERBOX_AGENT", "beta")
    answer = f"{ASK}--alpha--{kind}"
    box.letter(answer, type=kind, re=ASK)
    box.letter(NOTE)
    path = f"beta/inbox/{answer}.md"
    before = box.tree_bytes()
    code, out, err = cli(capsys, box, "file", path)
    assert (code, out) == (2, "") and f"is a {kind} named by its path" in err and "--read" in err
    assert err.count("\n") == 1 and box.tree_bytes() == before
    code, out, err = cli(capsys, box, "file", f"beta/inbox/{NOTE}.md")  # an info letter: no question
    assert code == 0, err
    code, out, err = cli(capsys, box, "file", path, "--read")
    assert code == 0 and out == f"filed: {answer} -> beta/processed/{answer}.md\n", err
    other = f"2026-11-30T100000-alpha-{kind}-second-12345678"
    box.letter(other, type=kind, re=ASK)
    code, out, err = cli(capsys, box, "file", other)  # by its id: named, not globbed
    assert code == 0, err


def test_reply_refuses_an_ambiguous_token_and_writes_nothing(box, capsys, monkeypatch):
    monkeypatch.setenv("LETTERBOX_AGENT", "beta")
    box.letter("2026-01-01T000000-alpha-request-one-abcd1234", type="request", requires_ack="true")
    box.letter("2026-01-02T000000-alpha-request-two-abcd1234", type="request", requires_ack="true")
    before = box.tree_bytes()
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("done\n"))
    code, out, err = cli(capsys, box, "reply", "abcd1234", "result")
    assert code == 2 and "ambiguous reference abcd1234" in err
    assert box.tree_bytes() == before


def test_a_full_id_wins_over_another_letters_token(box, capsys):
    box.letter("deadbeef")  # an id that is also the token of the next one
    box.letter("2026-01-01T000000-alpha-info-x-deadbeef")
    code, doc = cli_json(capsys, box, "current", "deadbeef")
    assert code == 0 and doc["id"] == "deadbeef"
    assert os.path.exists(box.root / "beta" / "inbox" / "deadbeef.md")


def test_supersede_dispute_rule_chase_and_pointers_take_references(box, capsys, monkeypatch):
    """``supersede``, ``dispute``, ``rule`` (and ``--upholds``), ``chase`` and the ``--re``
    and ``--supersedes`` of ``send`` take a token as ``reply`` does, and write the full id
    (they said "no letter 3f9a1c07" of a letter ``show 3f9a1c07`` reads)."""
    import io

    from letterbox_tui.core.header import parse_header

    def headers(out: str) -> dict[str, str]:
        letter_id = out.strip()
        return dict(parse_header((box.root / "beta" / "inbox" / f"{letter_id}.md").read_bytes()).fields)

    other = "2026-11-29T150000-alpha-decision-renewal-other-5e6f7a8b"
    box.letter(ASK, type="request", requires_ack="true")
    box.letter(other, type="decision")
    code, out, err = cli(capsys, box, "chase", "3f9a1c07", "--as", "alpha")
    assert code == 0, err
    assert headers(out)["re"] == ASK
    monkeypatch.setattr("sys.stdin", io.StringIO("v2\n"))
    code, out, err = cli(capsys, box, "supersede", "3f9a1c07", "--as", "alpha")
    assert code == 0, err
    assert headers(out)["supersedes"] == ASK
    for option, key in (("--re", "re"), ("--supersedes", "supersedes")):
        monkeypatch.setattr("sys.stdin", io.StringIO("note\n"))
        code, out, err = cli(capsys, box, "send", "--as", "alpha", "--to", "beta", "--type", "info",
                             "--slug", "note", option, display_id(other))
        assert code == 0, err
        assert headers(out)[key] == other
    code, out, err = cli(capsys, box, "dispute", "3f9a1c07", "5e6f7a8b", "--as", "beta", "--to", "beta")
    assert code == 0, err
    dispute = out.strip()
    assert headers(out)["disputes"] == f"{ASK}, {other}"
    code, out, err = cli(capsys, box, "rule", token(dispute), "--as", "beta", "--to", "beta", "--upholds", "5e6f7a8b")
    assert code == 0, err
    assert headers(out)["rules_on"] == dispute and headers(out)["upholds"] == other


@pytest.mark.parametrize("form", ["display", "token"])
def test_a_reply_refused_names_the_letter_its_reference_found(box, capsys, monkeypatch, form):
    """Refused for a letter a token named, the reply says which letter: 'only beta may ack
    3f9a1c07' leaves a script with only the token it gave."""
    box.letter(ASK, type="request", requires_ack="true")
    box.letter(NOTE)
    ask = {"display": display_id(ASK), "token": "3f9a1c07"}[form]
    note = {"display": display_id(NOTE), "token": "77aa0011"}[form]
    for argv, said in [((ask, "ack", "--as", "alpha"), f"only 'beta', its recipient, may ack {ASK}"),
                       ((note, "ack", "--as", "beta"), f"ack is only for tasks; {NOTE} is not one")]:
        monkeypatch.setattr("sys.stdin", __import__("io").StringIO("on it\n"))
        code, out, err = cli(capsys, box, "reply", *argv)
        assert code == 2 and said in err, err


@pytest.mark.parametrize("form", ["display", "token", "path"])
def test_show_json_gives_the_letters_id_not_the_reference(refbox, capsys, form):
    """As current and answered do: ``show TOKEN --json | jq .id`` is the letter's id."""
    ref = {"display": display_id(ASK), "token": "3f9a1c07", "path": f"beta/inbox/{ASK}.md"}[form]
    code, doc = cli_json(capsys, refbox, "show", ref)
    assert code == 0 and doc["id"] == ASK

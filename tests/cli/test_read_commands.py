"""show, current, answered, thread, owed, disputes, check, digest (SPEC 7): exact JSON,
text output and exit codes."""

import hashlib
import json

import pytest

from tests.cli.helpers import SCOPE_KEYS, cli, cli_json



# --- show -------------------------------------------------------------------------

def test_show_json(capsys, box):
    path = box.letter("ask-1", frm="alpha", to="beta", type="request", requires_ack="true",
                      body="Please renew.\n\x1b]0;pwned\x07[bold]x[/bold]\n")
    box.raw("beta/inbox/ask-1.md.ack", "")
    code, data = cli_json(capsys, box, "show", "ask-1")
    assert code == 0
    assert list(data) == ["id", "letters", "scope"]
    [item] = data["letters"]
    assert list(item) == ["id", "headers", "answers", "head", "heads", "progress", "disputed_by", "provenance", "body",
                          "body_truncated"]
    assert item["headers"]["requires_ack"] == "true" and list(item["headers"])[0] == "id"
    assert list(item["answers"]) == ["state", "answered", "accepted", "current", "superseded", "late"]
    assert item["answers"]["accepted"]["value"] == "yes"
    assert item["answers"]["accepted"]["reasons"][0]["code"] == "accepted-by"
    prov = item["provenance"]
    assert prov["path"] == "beta/inbox/ask-1.md"
    assert prov["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert prov["size"] == path.stat().st_size and prov["changed_since_scan"] is False
    assert prov["legacy"] == []
    assert item["body"] == "Please renew.\n\x1b]0;pwned\x07[bold]x[/bold]\n"
    assert item["body_truncated"] is False
    assert (item["head"], item["heads"]) == ("ask-1", ["ask-1"])


def test_show_text_sanitizes_the_body(capsys, box):
    box.letter("ask-1", subject="[@click=app.quit]quit[/]",
               body="line one\n\x1b[31mred\x1b[0m \x9b2J \u202eevil [bold]x[/bold]\r\nend\tcol\n")
    code, out, _ = cli(capsys, box, "show", "ask-1")
    assert code == 0
    assert "[@click=app.quit]quit[/]" in out
    assert "\u241b[31mred\u241b[0m" in out  # ESC shown as a visible placeholder
    assert "[bold]x[/bold]" in out
    for bad in ("\x1b", "\x9b", "\u202e", "\r", "\t"):
        assert bad not in out
    assert "sha256" in out and "complete" in out


def test_show_bounds_the_body(capsys, box, monkeypatch):
    import letterbox_tui.cli.read as read

    monkeypatch.setattr(read, "BODY_MAX", 10)
    box.letter("big-1", body="0123456789ABCDEF\n")
    _, data = cli_json(capsys, box, "show", "big-1")
    assert data["letters"][0]["body"] == "0123456789"
    assert data["letters"][0]["body_truncated"] is True


def test_show_every_copy_of_a_duplicated_id(capsys, box):
    box.letter("dup-1", body="first\n")
    box.letter("dup-1", seat="alpha", folder="processed", body="second\n")
    code, data = cli_json(capsys, box, "show", "dup-1")
    assert [x["provenance"]["path"] for x in data["letters"]] == ["alpha/processed/dup-1.md", "beta/inbox/dup-1.md"]
    assert [x["body"] for x in data["letters"]] == ["second\n", "first\n"]
    assert data["letters"][0]["answers"]["answered"]["value"] == "unknown"
    code, out, _ = cli(capsys, box, "show", "dup-1")
    assert "2 files hold this id" in out


@pytest.mark.parametrize("command", ["show", "current", "answered", "thread"])
def test_unknown_id_exits_2(capsys, box, command):
    box.letter("a-1")
    code, out, err = cli(capsys, box, command, "nope-1")
    assert code == 2 and out == ""
    assert "no letter nope-1 in scope (complete scope)" in err
    box.raw("beta/inbox/bad.md", "junk")
    code, out, err = cli(capsys, box, command, "nope-1")
    assert code == 2 and "no letter nope-1 in scope (incomplete scope" in err
    code, out, err = cli(capsys, box, command, "")  # an empty reference is shown as one
    assert code == 2 and "no letter '' in scope (incomplete scope" in err and err.count("\n") == 1


# --- current, answered, thread ----------------------------------------------------

def test_current_json(capsys, box):
    box.letter("v-1")
    box.letter("v-2", supersedes="v-1")
    code, data = cli_json(capsys, box, "current", "v-1")
    assert code == 0
    assert list(data) == ["id", "current", "head", "heads", "chain", "reasons", "scope"]
    assert (data["id"], data["current"], data["head"], data["heads"]) == ("v-1", "no", "v-2", ["v-2"])
    assert data["chain"] == ["v-1", "v-2"]
    assert list(data["scope"]) == SCOPE_KEYS


def test_current_of_a_fork_is_unknown_with_reasons(capsys, box):
    box.letter("f-1")
    box.letter("f-2", supersedes="f-1")
    box.letter("f-3", supersedes="f-1")
    code, data = cli_json(capsys, box, "current", "f-2")
    assert (data["current"], data["head"]) == ("unknown", None)
    assert sorted(data["heads"]) == ["f-2", "f-3"]
    assert data["reasons"][0]["code"] == "fork" and data["reasons"][0]["about"] == "current"
    code, out, _ = cli(capsys, box, "current", "f-2")
    assert "current: unknown" in out and "fork (current)" in out


def test_answered_json(capsys, box):
    box.letter("ask-1", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("ask-1--beta--ack", frm="beta", to="alpha", type="ack", re="ask-1")
    box.letter("ask-1--beta--result", frm="beta", to="alpha", type="result", re="ask-1")
    box.letter("ask-1--gamma--result", frm="gamma", to="alpha", type="result", re="ask-1")  # not the addressee
    code, data = cli_json(capsys, box, "answered", "ask-1")
    assert code == 0
    assert list(data) == ["id", "answered", "replies", "acks", "progress", "reasons", "scope"]
    assert data["progress"] is None  # no ack sidecar
    assert data["answered"] == "yes"
    assert [r["id"] for r in data["replies"]] == ["ask-1--beta--result"]
    assert [r["id"] for r in data["acks"]] == ["ask-1--beta--ack"]
    assert data["replies"][0]["re"] == "ask-1" and "reasons" in data["replies"][0]
    assert data["reasons"][0]["code"] == "answered-by"


def test_thread_json_tree(capsys, box):
    box.letter("root-1", sent="2026-01-01T00:00:00Z")
    box.letter("a-2", re="root-1", thread="root-1", sent="2026-01-02T00:00:00Z")
    box.letter("b-3", re="a-2", thread="root-1", sent="2026-01-03T00:00:00Z")
    box.letter("c-4", re="root-1", thread="root-1", sent="2026-01-04T00:00:00Z")
    box.letter("orphan-5", re="missing-9", thread="root-1", sent="2026-01-05T00:00:00Z")
    box.letter("other-6", re="root-1", thread="elsewhere")  # another thread: not in the tree
    code, data = cli_json(capsys, box, "thread", "b-3")
    assert code == 0
    assert list(data) == ["thread", "root", "tree", "scope"]
    assert (data["thread"], data["root"]) == ("root-1", "root-1")
    assert data["tree"] == [
        {"id": "root-1", "children": [
            {"id": "a-2", "children": [{"id": "b-3", "children": []}]},
            {"id": "c-4", "children": []},
        ]},
        {"id": "orphan-5", "children": []},
    ]
    code, out, _ = cli(capsys, box, "thread", "root-1")
    assert "thread root-1" in out and "b-3" in out and "orphan-5" in out and "other-6" not in out


def test_thread_with_an_absent_root_and_a_reply_loop(capsys, box):
    box.letter("x-1", re="x-2", thread="gone-0")
    box.letter("x-2", re="x-1", thread="gone-0")
    _, data = cli_json(capsys, box, "thread", "x-1")
    assert data["root"] is None
    assert data["tree"] == [{"id": "x-1", "children": [{"id": "x-2", "children": []}]}]


# --- owed -------------------------------------------------------------------------

@pytest.fixture
def owing(box):
    box.seat("gamma")
    box.letter("late-old", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-01-01T00:00:00Z")
    box.letter("late-new", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-02-01T00:00:00Z")
    box.letter("due-later", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-09-01T00:00:00Z")
    box.letter("no-deadline", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("gamma-owes", frm="alpha", to="gamma", type="request", requires_ack="true")
    box.letter("not-a-task", frm="alpha", to="beta", type="info")
    box.letter("closed-1", frm="alpha", to="beta", type="request", requires_ack="true", folder="processed")
    box.letter("answered-1", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("answered-1--beta--result", frm="beta", to="alpha", type="result", re="answered-1")
    box.letter("old-v1", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("new-v2", frm="alpha", to="beta", type="request", requires_ack="true", supersedes="old-v1",
               deadline="2026-08-01T00:00:00Z")
    return box


def test_owed_json_order_and_grouping(capsys, owing):
    code, data = cli_json(capsys, owing, "owed", "--at", "2026-03-01T00:00:00Z")
    assert code == 0
    assert list(data) == ["at", "owed", "scope"]
    assert data["at"] == "2026-03-01T00:00:00Z"
    assert [g["seat"] for g in data["owed"]] == ["beta", "gamma"]
    beta = data["owed"][0]
    assert list(beta) == ["seat", "items"]
    assert [r["id"] for r in beta["items"]] == ["late-old", "late-new", "new-v2", "due-later", "no-deadline"]
    assert [r["late"] for r in beta["items"]] == ["yes", "yes", "no", "no", "no"]
    assert [r["id"] for r in data["owed"][1]["items"]] == ["gamma-owes"]


def test_owed_seat_filter_and_fail_late(capsys, owing):
    _, data = cli_json(capsys, owing, "owed", "--seat", "gamma", "--at", "2026-03-01T00:00:00Z")
    assert [g["seat"] for g in data["owed"]] == ["gamma"]
    code, _ = cli_json(capsys, owing, "owed", "--fail-late", "--at", "2026-03-01T00:00:00Z")
    assert code == 1
    code, _ = cli_json(capsys, owing, "owed", "--fail-late", "--at", "2025-03-01T00:00:00Z")
    assert code == 0
    code, _ = cli_json(capsys, owing, "owed", "--seat", "gamma", "--fail-late", "--at", "2026-03-01T00:00:00Z")
    assert code == 0
    code, out, _ = cli(capsys, owing, "owed", "--at", "2026-03-01T00:00:00Z")
    assert "beta owes 5 (2 late)" in out and "6 owed" in out and "complete" in out


@pytest.mark.parametrize("bad", ["2026-03-01T00:00:00", "tomorrow", "2026-03-01T00:00:00-00:00"])
def test_owed_at_needs_an_offset(capsys, owing, bad):
    code, out, err = cli(capsys, owing, "owed", "--at", bad)
    assert code == 2 and out == "" and "--at" in err


def test_owed_unknown_seat_exits_2(capsys, owing):
    code, _, err = cli(capsys, owing, "owed", "--seat", "nobody")
    assert code == 2 and "nobody" in err


def test_fail_late_ignores_an_item_whose_late_is_unknown(capsys, box):
    # SPEC 7: exit 1 only for an item whose late is yes; an ambiguous deadline is unknown
    box.letter("vague", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-01-01T00:00:00")
    code, data = cli_json(capsys, box, "owed", "--fail-late", "--at", "2026-03-01T00:00:00Z")
    assert [r["late"] for r in data["owed"][0]["items"]] == ["unknown"]
    assert code == 0
    box.letter("overdue", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-01-01T00:00:00Z")
    code, _ = cli_json(capsys, box, "owed", "--fail-late", "--at", "2026-03-01T00:00:00Z")
    assert code == 1


def test_fail_late_ignores_late_unknown_from_a_possible_reply(capsys, box):
    # overdue, but an unreadable file may be its reply: late is unknown, scope incomplete
    box.letter("ask", frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-01-01T00:00:00Z")
    box.raw("alpha/inbox/broken.md", "---\nre: ask\nbroken line\n---\n")
    code, data = cli_json(capsys, box, "owed", "--fail-late", "--at", "2026-03-01T00:00:00Z")
    assert [r["late"] for r in data["owed"][0]["items"]] == ["unknown"]
    assert code == 3


def test_fail_late_outranks_incomplete(capsys, owing):
    # unreadable, but its legible type rules it out as a reply: lateness stays known
    owing.raw("beta/inbox/bad.md", "---\nid: bad\ntype: info\nbroken line\n---\n")
    code, _ = cli_json(capsys, owing, "owed", "--fail-late", "--at", "2026-03-01T00:00:00Z")
    assert code == 1
    code, _ = cli_json(capsys, owing, "owed", "--at", "2026-03-01T00:00:00Z")
    assert code == 3


# --- disputes, check, digest ------------------------------------------------------

@pytest.fixture
def disputed(box):
    box.letter("plan-a", frm="alpha", to="beta", type="decision")
    box.letter("plan-b", frm="beta", to="alpha", type="decision")
    box.letter("d-1", frm="alpha", to="alpha", type="dispute", disputes="plan-a,plan-b")
    box.letter("x-1", frm="alpha", to="beta", type="decision")
    box.letter("x-2", frm="beta", to="alpha", type="decision")
    box.letter("d-2", frm="alpha", to="alpha", type="dispute", disputes="x-1,x-2")
    box.letter("r-2", frm="alpha", to="alpha", type="ruling", rules_on="d-2", upholds="x-1")
    return box


def test_disputes_json(capsys, disputed):
    code, data = cli_json(capsys, disputed, "disputes")
    assert code == 0
    assert list(data) == ["disputes", "scope"]
    [d] = data["disputes"]
    assert list(d) == ["dispute", "disputed"]
    assert d["dispute"]["id"] == "d-1" and d["dispute"]["type"] == "dispute"
    assert [r["id"] for r in d["disputed"]] == ["plan-a", "plan-b"]
    code, out, _ = cli(capsys, disputed, "disputes")
    assert "dispute d-1" in out and "plan-b" in out and "d-2" not in out and "1 open dispute" in out


def test_check_json_and_exit_codes(capsys, box):
    box.letter("a-1", requires_ack=None)
    code, data = cli_json(capsys, box, "check")
    assert code == 0
    assert list(data) == ["findings", "scope"]
    [f] = data["findings"]
    assert f == {"code": "missing-requires-ack", "severity": "warning", "detail": f["detail"],
                 "letters": ["a-1"], "paths": ["beta/inbox/a-1.md"]}
    code, out, _ = cli(capsys, box, "check")
    assert "0 problems, 1 warning; scope complete" in out  # (it said "1 warnings")
    code, _ = cli_json(capsys, box, "--participant", "beta", "check")
    assert code == 3  # only warnings, but a partial scope
    box.letter("a-1", seat="alpha")
    code, data = cli_json(capsys, box, "--participant", "beta", "check")
    assert code == 3  # the duplicate lies outside the scope
    code, data = cli_json(capsys, box, "check")
    assert code == 1 and data["findings"][0]["code"] == "duplicate-id"
    code, out, _ = cli(capsys, box, "check")
    assert code == 1 and "duplicate-id" in out and "problem" in out


def test_check_text_is_sanitized(capsys, box):
    box.letter("a-1", supersedes="[bold]x\u202e y")
    code, out, _ = cli(capsys, box, "check")
    assert code == 1
    assert "malformed-pointer" in out and "[bold]x<U+202E> y" in out


def test_digest(capsys, disputed):
    disputed.letter("task-1", frm="beta", to="alpha", type="request", requires_ack="true",
                    deadline="2026-01-01T00:00:00Z")
    disputed.letter("task-2", frm="beta", to="external-bridge", type="request", requires_ack="true", seat="alpha")
    code, data = cli_json(capsys, disputed, "digest", "--at", "2026-03-01T00:00:00Z")
    assert code == 0
    assert list(data) == ["at", "seat", "decisions", "disputes", "owed", "late", "attention", "uncertain", "scope"]
    assert [d["id"] for d in data["decisions"]] == ["plan-a", "plan-b", "x-1", "x-2"]
    assert all(set(d) >= {"id", "path"} for d in data["decisions"])
    assert [d["id"] for d in data["disputes"]] == ["d-1"]
    assert [d["id"] for d in data["disputes"][0]["disputed"]] == ["plan-a", "plan-b"]
    assert data["late"] == ["task-1"]
    assert [(u["id"], u["answer"]) for u in data["uncertain"]] == [("task-2", "answered"), ("task-2", "late")]
    assert data["uncertain"][0]["reasons"][0]["code"] == "external-route"
    assert [(g["seat"], [i["id"] for i in g["items"]]) for g in data["owed"]] == [
        ("alpha", ["task-1"]), ("external-bridge", ["task-2"])]
    assert [c["code"] for c in data["owed"][0]["items"][0]["attention"]] == ["late", "never-acked"]
    counts = data["attention"]["counts"]
    assert counts["late"] == {"known": 1, "unknown": 0} and counts["late-unknown"] == {"known": 1, "unknown": 0}
    assert counts["never-acked"] == {"known": 2, "unknown": 0} and counts["chased"] == {"known": 0, "unknown": 0}
    assert [(u["id"], u["seat"]) for u in data["attention"]["urgent"]] == [("task-1", "alpha"), ("task-2", "external-bridge")]
    assert all("body" not in json.dumps(d) for d in data["decisions"])
    code, out, _ = cli(capsys, disputed, "digest", "--at", "2026-03-01T00:00:00Z")
    for letter_id in ("plan-a", "d-1", "task-1", "task-2"):
        assert letter_id in out
    assert "LATE task-1" in out
    assert "most urgent (2): late 1, late-unknown 1, never-acked 2" in out
    # the letters uncertain, a line each (its two unknown answers on it), counted as such
    # (it said "uncertain (2)" over one line; the --write file said "Uncertain (1)")
    assert "uncertain (1)\n  task-2  answered, late unknown: external-route" in out


def test_digest_text_says_which_urgent_codes_are_unknown(capsys, box):
    """Issue 24: unknown stays unknown. The digest's most urgent lines mark a code whose
    record cannot be read, as its --write file does (a reply to the task may be unseen)."""
    box.letter("task", frm="alpha", to="beta", type="request", requires_ack="true", sent="2026-02-01T00:00:00Z")
    box.raw("alpha/inbox/broken.md", "---\nfrom: beta\nre: task\nbroken line\n---\n")
    _, data = cli_json(capsys, box, "digest", "--at", "2026-03-01T00:00:00Z")
    (urgent,) = data["attention"]["urgent"]
    assert [c["detail"].startswith("unknown: ") for c in urgent["attention"] if c["code"] == "never-acked"] == [True]
    _, out, _ = cli(capsys, box, "digest", "--at", "2026-03-01T00:00:00Z")
    assert "  task  beta owes alpha: never-acked unknown\n" in out


def test_digest_lists_the_ten_most_urgent_items_most_overdue_first(capsys, box):
    """Issue 24: the counts per code, and the ten most urgent items with their citations."""
    for n in range(12):  # task-0 the most overdue
        box.letter(f"task-{n}", frm="alpha", to="beta", type="request", requires_ack="true",
                   deadline=f"2026-02-{n + 1:02d}T00:00:00Z")
    _, data = cli_json(capsys, box, "digest", "--at", "2026-03-01T00:00:00Z")
    urgent = data["attention"]["urgent"]
    assert [u["id"] for u in urgent] == [f"task-{n}" for n in range(10)]
    assert all(u["path"] == f"beta/inbox/{u['id']}.md" for u in urgent)
    assert data["attention"]["counts"]["late"] == {"known": 12, "unknown": 0}
    _, out, _ = cli(capsys, box, "digest", "--at", "2026-03-01T00:00:00Z")
    assert "most urgent (10): late 12, never-acked 12\n" in out and "  task-9  beta owes alpha" in out
    assert "  task-10  beta owes alpha: " not in out


def test_digest_seat_filter(capsys, disputed):
    disputed.seat("gamma")
    disputed.letter("g-1", frm="gamma", to="gamma", type="decision")
    _, data = cli_json(capsys, disputed, "digest", "--seat", "gamma")
    assert [d["id"] for d in data["decisions"]] == ["g-1"]
    assert data["disputes"] == []


def test_show_says_when_the_file_changed_after_the_scan(capsys, box, monkeypatch):
    import letterbox_tui.cli.read as read

    path = box.letter("a-1", body="old body\n")
    real = read.answers

    def then_edit(args, at):
        loaded = real(args, at)
        path.write_bytes(path.read_bytes() + b"appended\n")
        return loaded

    monkeypatch.setattr(read, "answers", then_edit)
    _, data = cli_json(capsys, box, "show", "a-1")
    prov = data["letters"][0]["provenance"]
    assert prov["changed_since_scan"] is True
    assert prov["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert data["letters"][0]["body"] == "old body\nappended\n"


def test_show_refuses_a_file_swapped_for_a_symlink(capsys, box, monkeypatch, tmp_path):
    import letterbox_tui.cli.read as read

    path = box.letter("a-1")
    secret = tmp_path / "secret.md"
    secret.write_text("---\nid: a-1\n---\nsecret\n")
    real = read.answers

    def then_swap(args, at):
        loaded = real(args, at)
        path.unlink()
        path.symlink_to(secret)
        return loaded

    monkeypatch.setattr(read, "answers", then_swap)
    code, data = cli_json(capsys, box, "show", "a-1")
    item = data["letters"][0]
    assert item["body"] is None and item["provenance"]["sha256"] is None
    assert "cannot read" in item["provenance"]["error"]


def test_current_names_a_duplicated_id_once(capsys, box):
    box.letter("dup-1")
    box.letter("dup-1", seat="alpha", folder="processed")
    box.letter("v-2", supersedes="dup-1")
    _, data = cli_json(capsys, box, "current", "v-2")
    assert data["chain"] == ["dup-1", "v-2"]
    assert data["current"] == "unknown"
    assert "ambiguous-reference" in [r["code"] for r in data["reasons"]]


def test_owed_text_names_the_reason_of_every_unknown(capsys, box):
    box.letter("ask-ext", frm="external-bridge", to="beta", type="request", requires_ack="true", seat="beta")
    box.letter("ask-ok", frm="alpha", to="beta", type="request", requires_ack="true")
    (box.root / "external-bridge" / "inbox").mkdir(parents=True)
    (box.root / "external-bridge" / "processed").mkdir(parents=True)
    code, out, _ = cli(capsys, box, "owed", "--at", "2026-01-02T00:00:00Z")
    assert code == 0
    assert "ask-ext: external-route (answered" in out
    assert "ask-ok:" not in out  # a plain yes/no row carries no reason line


def test_show_hashes_a_bounded_prefix_of_a_huge_letter_and_says_so(capsys, box, monkeypatch):
    """A sparse 50 GB letter: show hashes its first bytes only (as the app bounds its hash),
    at once, and says the hash covers a prefix (issue 18 item 14)."""
    import time

    from letterbox_tui.core.views import letter as letter_view

    monkeypatch.setattr(letter_view, "HASH_LIMIT", 4 << 20)
    path = box.letter("big-1", body="hello\n")
    data = path.read_bytes()
    with open(path, "r+b") as fh:
        fh.truncate(50 << 30)
    t = time.monotonic()
    code, doc = cli_json(capsys, box, "show", "big-1")
    assert time.monotonic() - t < 20
    prov = doc["letters"][0]["provenance"]
    with open(path, "rb") as fh:
        expected = hashlib.sha256(fh.read(4 << 20)).hexdigest()
    assert prov["sha256"] == expected and prov["sha256_bytes"] == 4 << 20 < prov["size"] == 50 << 30
    assert doc["letters"][0]["body"].startswith("hello") and data
    code, out, _ = cli(capsys, box, "show", "big-1")
    assert f"of its first {4 << 20} bytes only" in out


def test_show_of_an_ordinary_letter_hashes_it_whole(capsys, box):
    path = box.letter("small-1", body="hello\n")
    _, doc = cli_json(capsys, box, "show", "small-1")
    prov = doc["letters"][0]["provenance"]
    assert prov["sha256_bytes"] == prov["size"] == path.stat().st_size


def test_owed_says_each_seat_s_uncertain_items_beside_its_late(capsys, owing):
    """With an unsupported entry (an ``archive/``) every answer may be a reply: "beta owes
    5 (0 late)" read as none late when two are past their deadline and late is unknown.
    Each seat's line says its uncertain items as the app's heading does."""
    code, out, _ = cli(capsys, owing, "owed", "--at", "2026-03-01T00:00:00Z")
    assert "beta owes 5 (2 late)" in out and "gamma owes 1 (0 late)" in out  # (nothing uncertain)
    (owing.root / "gamma" / "archive").mkdir()
    code, out, _ = cli(capsys, owing, "owed", "--at", "2026-03-01T00:00:00Z")
    assert code == 3 and "beta owes 5 (0 late, 5 uncertain)" in out and "gamma owes 1 (0 late, 1 uncertain)" in out


def test_exists_says_a_reason_shared_by_many_letters_once(capsys, owing):
    """In a partial scope every unknown row has the same reason: ``exists`` printed
    "outside-scope (answered): ... delivered to alpha, outside it" once per letter, the
    same line over and over. It says it once, with how many letters it is about."""
    code, out, _ = cli(capsys, owing, "exists", "type=request", "answered=no", "at=2026-03-01T00:00:00Z",
                       "--participant", "beta")
    lines = [line for line in out.splitlines() if line.startswith("  ")]
    assert code == 3 and len(lines) == len(set(lines)), out
    shared = [line for line in lines if "delivered to alpha" in line]
    assert len(shared) == 1 and shared[0].endswith(" letters)"), out
    _, doc = cli_json(capsys, owing, "exists", "type=request", "answered=no", "at=2026-03-01T00:00:00Z",
                      "--participant", "beta")
    n = sum(1 for r in doc["reasons"] if "delivered to alpha" in r["detail"])
    assert n > 1 and shared[0].endswith(f"({n} letters)")


def test_no_open_disputes_is_said_only_of_a_complete_scope(capsys, box):
    """As an empty owed: "no open disputes" is said as proof only when every file was read;
    else it is so among the letters read, and what was not read is said."""
    code, out, _ = cli(capsys, box, "disputes")
    assert code == 0 and "no open disputes" in out.splitlines()
    box.raw("beta/inbox/broken.md", "---\nid: broken\nbroken line\n---\n")
    code, out, _ = cli(capsys, box, "disputes")
    assert code == 3 and "no open disputes among the letters read; 1 file unread (see check)" in out
    assert "no open disputes" not in out.splitlines()
    code, out, _ = cli(capsys, box, "--participant", "beta", "disputes")
    assert "no open disputes among the letters read; 1 file unread (see check); only beta was read" in out

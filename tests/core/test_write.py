"""The one write gate (SPEC 4): round trip, strictness, refusals, publication."""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from letterbox_tui.core import write as write_mod
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.model import Letter
from letterbox_tui.core.scan import scan
from letterbox_tui.core.write import Draft, deliver, init_letterbox

NOW = datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)
PROTOCOL_ORDER = ("id", "sent", "from", "to", "type", "re", "thread", "supersedes", "priority",
                  "requires_ack", "deadline", "disputes", "rules_on", "upholds", "subject")
SENT_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
RELATION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def tokens(*values: str):
    it = iter(values)
    return lambda: next(it)


def draft(**kw) -> Draft:
    base = dict(sender="alpha", recipient="beta", type="info", slug="topic", body="Hello.\n")
    base.update(kw)
    return Draft(**base)


def strict_fields(path: Path) -> list[tuple[str, str]]:
    """The protocol's strict-v1 reading rules, written out independently: canonical name,
    exactly two delimiters around flat ``key: value`` lines, no repeated key, valid
    relation ids, provenance present, and (for new publications) ``sent`` in UTC."""
    text = path.read_bytes().decode("utf-8")
    lines = text.split("\n")
    assert lines[0] == "---"
    end = lines.index("---", 1)
    fields: list[tuple[str, str]] = []
    for line in lines[1:end]:
        assert line.strip(), "no blank header lines"
        assert all(ord(c) >= 32 and ord(c) != 127 for c in line)
        key, sep, value = line.partition(":")
        assert sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", key)
        assert key not in dict(fields)
        fields.append((key, value.strip()))
    f = dict(fields)
    assert RELATION_ID.fullmatch(f["id"]) and path.name == f["id"] + ".md"
    assert f["from"] and f["to"] and f["type"]
    for key in ("re", "thread", "supersedes"):
        assert not f.get(key) or RELATION_ID.fullmatch(f[key])
    assert SENT_RE.fullmatch(f["sent"])
    assert f["requires_ack"] in ("true", "false")
    return fields


def test_round_trip_every_header_back_as_written(box):
    first = deliver(box.root, draft(type="request", slug="plan", requires_ack=True), now=NOW)
    second = deliver(box.root, draft(type="decision", slug="plan", body="v2", sender="beta", recipient="alpha"),
                     now=NOW)
    full = deliver(
        box.root,
        draft(type="request", slug="renewal-plan", priority="now", requires_ack=True,
              deadline="2026-12-01T18:00:00+01:00", thread=first.id, re=first.id, supersedes=first.id,
              subject="Renewal plan, second draft"),
        now=NOW, token=tokens("0123abcd"),
    )
    assert full.id == "2026-11-29T140512-alpha-request-renewal-plan-0123abcd"
    snap = scan(box.root)
    by_id = {letter.id: letter for letter in snap.letters}
    got = by_id[full.id]
    assert got.path == f"beta/inbox/{full.id}.md"
    assert list(got.fields) == [
        ("id", full.id), ("sent", "2026-11-29T14:05:12Z"), ("from", "alpha"), ("to", "beta"),
        ("type", "request"), ("re", first.id), ("thread", first.id), ("supersedes", first.id),
        ("priority", "now"), ("requires_ack", "true"), ("deadline", "2026-12-01T17:00:00Z"),
        ("subject", "Renewal plan, second draft"),
    ]
    assert got.sent_at == NOW and got.deadline_at == datetime(2026, 12, 1, 17, tzinfo=timezone.utc)
    assert got.flags == () and got.malformed == ()
    assert (box.root / got.path).read_bytes().endswith(b"---\nHello.\n")
    assert by_id[second.id].recipient == "alpha"
    assert snap.scope.complete and snap.scope.letters == 3


def test_every_letter_written_is_strict_and_in_protocol_order(box):
    box.seat("gamma")
    a = deliver(box.root, draft(slug="a", body="one"), now=NOW)
    b = deliver(box.root, draft(slug="b", body="two", sender="gamma"), now=NOW)
    d = deliver(box.root, draft(type="dispute", slug="a", recipient="alpha", disputes=[a.id, b.id]), now=NOW)
    r = deliver(box.root, draft(type="ruling", slug="a", sender="gamma", recipient="alpha", rules_on=d.id,
                                upholds=b.id, subject="b holds"), now=NOW)
    task = deliver(box.root, draft(type="request", slug="task", requires_ack=True), now=NOW)
    rep = write_mod.reply(box.root, task.id, "result", seat="beta", body="done", now=NOW)
    for published in (a, b, d, r, rep):
        fields = strict_fields(published.path)
        keys = [k for k, _ in fields]
        assert keys == sorted(keys, key=PROTOCOL_ORDER.index), keys
        assert keys[:6] == ["id", "sent", "from", "to", "type", "re"]
    assert dict(strict_fields(d.path))["disputes"] == f"{a.id}, {b.id}"
    snap = scan(box.root)
    assert snap.scope.complete and not snap.unreadable
    assert all(isinstance(x, Letter) and not x.flags and not x.malformed for x in snap.letters)


def test_id_and_sent_share_one_utc_moment(box):
    local = datetime(2026, 11, 29, 23, 59, 59, 750000).astimezone()  # aware, local offset
    published = deliver(box.root, draft(), now=local)
    utc = local.astimezone(timezone.utc)
    assert published.id.startswith(utc.strftime("%Y-%m-%dT%H%M%S") + "-alpha-info-topic-")
    assert published.letter.sent == utc.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert re.fullmatch(r".*-[0-9a-f]{8}", published.id)


def test_collision_picks_a_new_suffix_and_never_overwrites(box):
    first = deliver(box.root, draft(body="first"), now=NOW, token=tokens("aaaaaaaa"))
    before = first.path.read_bytes()
    second = deliver(box.root, draft(body="second"), now=NOW, token=tokens("aaaaaaaa", "aaaaaaaa", "bbbbbbbb"))
    assert second.id.endswith("-bbbbbbbb")
    assert first.path.read_bytes() == before
    assert sorted(p.name for p in (box.root / "beta/inbox").iterdir()) == sorted([first.path.name, second.path.name])


# --- refusals: one line, nothing written --------------------------------------------------

def _populated(box):
    box.letter("dup", frm="alpha", to="beta")
    box.letter("dup", frm="alpha", to="alpha", seat="alpha")
    box.letter("known", frm="alpha", to="beta", type="decision")
    box.letter("not-a-dispute", frm="alpha", to="beta", type="info")
    box.letter("disp", frm="alpha", to="alpha", type="dispute", disputes="known, not-a-dispute")


BAD_DRAFTS = {
    "unknown recipient": dict(recipient="gamma"),
    "unknown sender": dict(sender="gamma"),
    "invalid seat name": dict(recipient="Beta"),
    "locks is no seat": dict(recipient="locks"),
    "ack via send": dict(type="ack"),
    "nack via send": dict(type="nack"),
    "result via send": dict(type="result"),
    "unknown type": dict(type="memo"),
    "uppercase slug": dict(slug="Topic"),
    "leading dash slug": dict(slug="-topic"),
    "empty slug": dict(slug=""),
    "slug with space": dict(slug="a b"),
    "empty body": dict(body=""),
    "whitespace body": dict(body=" \n\t\n"),
    "deadline without offset": dict(deadline="2026-12-01T17:00:00"),
    "deadline offset unknown": dict(deadline="2026-12-01T17:00:00-00:00"),
    "deadline date only": dict(deadline="2026-12-01"),
    "deadline garbage": dict(deadline="tomorrow"),
    "deadline injection": dict(deadline="2026-12-01T17:00:00Z\nsupersedes: forged"),
    "absent pointer": dict(re="nowhere"),
    "absent supersedes": dict(supersedes="nowhere"),
    "duplicated pointer": dict(supersedes="dup"),
    "malformed pointer": dict(re="bad id"),
    "pointer injection": dict(re="known\nfrom: mallory"),
    "pointer too long": dict(supersedes="x" * 129),
    "subject newline": dict(subject="one\ntwo"),
    "subject escape": dict(subject="red \x1b[31m"),
    "subject bidi": dict(subject="abc\u202edef"),
    "subject too long": dict(subject="s" * 201),
    "subject padded": dict(subject=" padded"),
    "bad priority": dict(priority="urgent"),
    "id over 128": dict(slug="x" * 100),
    "dispute of one": dict(type="dispute", disputes=["known"]),
    "dispute twice the same": dict(type="dispute", disputes=["known", "known"]),
    "disputes on non-dispute": dict(disputes=["known", "not-a-dispute"]),
    "ruling without rules_on": dict(type="ruling"),
    "ruling on a non-dispute": dict(type="ruling", rules_on="known"),
    "upholds outside the dispute": dict(type="ruling", rules_on="disp", upholds="dup"),
    "upholds without ruling": dict(upholds="known"),
}


@pytest.mark.parametrize("case", sorted(BAD_DRAFTS))
def test_refusal_writes_nothing(box, case):
    _populated(box)
    before = box.tree_bytes()
    with pytest.raises(LetterboxError) as info:
        deliver(box.root, draft(**BAD_DRAFTS[case]), now=NOW)
    assert "\n" not in str(info.value) and str(info.value)
    assert box.tree_bytes() == before


def test_valid_counterparts_of_the_refusals_are_accepted(box):
    """Each refusal above is specific: the nearest valid input goes through."""
    _populated(box)
    box.letter("threaded", frm="alpha", to="beta", thread="known")
    for kw in (dict(re="known"), dict(supersedes="known"), dict(thread="known"),
               dict(deadline="2026-12-01T17:00:00-05:00"), dict(subject="Renewal, v2 — ok"),
               dict(type="dispute", disputes=["known", "not-a-dispute"]),
               dict(type="ruling", rules_on="disp", upholds="known"), dict(type="ruling", rules_on="disp"),
               dict(slug="x" * 60), dict(type="decision"), dict(priority="whenever")):
        deliver(box.root, draft(**kw), now=NOW)


def test_unreadable_settings_stop_writing(box):
    box.raw("letterbox-tui.toml", "[time\nid_time_is_utc = maybe\n")
    before = box.tree_bytes()
    with pytest.raises(LetterboxError, match="settings"):
        deliver(box.root, draft(), now=NOW)
    assert box.tree_bytes() == before


def test_symlinked_inbox_is_refused(box, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (box.root / "gamma").mkdir()
    (box.root / "gamma" / "inbox").symlink_to(elsewhere)
    with pytest.raises(LetterboxError):
        deliver(box.root, draft(recipient="gamma"), now=NOW)
    assert list(elsewhere.iterdir()) == []


# --- crash safety --------------------------------------------------------------------------

def test_failed_link_leaves_no_letter_and_no_temporary(box, monkeypatch):
    def broken_link(*a, **kw):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "link", broken_link)
    with pytest.raises(LetterboxError, match="cannot publish"):
        deliver(box.root, draft(), now=NOW)
    assert list((box.root / "beta/inbox").iterdir()) == []


def test_writer_killed_between_temporary_and_final_name(box):
    """A child process dies right before the exclusive create: the hidden temporary it
    leaves is never a letter, and the next writer is unaffected."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.link = lambda *a, **kw: os._exit(9)
            deliver(box.root, draft(body="lost"), now=NOW)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 9
    left = list((box.root / "beta/inbox").iterdir())
    assert len(left) == 1 and left[0].name.startswith(".") and left[0].read_bytes().endswith(b"lost\n")
    snap = scan(box.root)
    assert snap.letters == [] and snap.unreadable == [] and snap.scope.files == 0 and snap.scope.complete
    ok = deliver(box.root, draft(body="kept"), now=NOW)
    assert [x.id for x in scan(box.root).letters] == [ok.id]


# --- init --------------------------------------------------------------------------------

def test_init_creates_and_is_idempotent(tmp_path):
    root = tmp_path / "new"
    created = init_letterbox(root, ["alpha", "beta"])
    assert set(created) == {"locks", "alpha/inbox", "alpha/processed", "beta/inbox", "beta/processed"}
    (root / "alpha/inbox/kept.md").write_text("---\nid: kept\n---\n")
    assert init_letterbox(root, ["alpha", "gamma"]) == ["gamma/inbox", "gamma/processed"]
    assert (root / "alpha/inbox/kept.md").read_text() == "---\nid: kept\n---\n"
    deliver(root, draft(sender="gamma", recipient="alpha"), now=NOW)


@pytest.mark.parametrize("seats", [["Alpha"], ["locks"], ["ok", "bad/seat"], [""], ["1st"]])
def test_init_refuses_invalid_seats_and_creates_nothing(tmp_path, seats):
    with pytest.raises(LetterboxError):
        init_letterbox(tmp_path / "new", seats)
    assert not (tmp_path / "new").exists()


def test_init_refuses_a_file_where_a_folder_goes(tmp_path):
    root = tmp_path / "box"
    root.mkdir()
    (root / "alpha").write_text("not a seat")
    with pytest.raises(LetterboxError):
        init_letterbox(root, ["alpha"])
    assert sorted(p.name for p in root.iterdir()) == ["alpha"]


# --- any input: a letter that reads back exactly, or a refusal that writes nothing ---------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_values = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["ok", " padded", "a\nb", "x\x1b[31m", "é", "[b]markup[/b]", "\u202e", "a\tb", "z" * 300, "---"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(subject=_values, slug=_values, body=_values, deadline=_values)
def test_any_input_reads_back_as_written_or_is_refused(tmp_path_factory, subject, slug, body, deadline):
    root = tmp_path_factory.mktemp("prop")
    init_letterbox(root, ["alpha", "beta"])
    try:
        published = deliver(root, draft(subject=subject, slug=slug, body=body, deadline=deadline), now=NOW)
    except LetterboxError as exc:
        assert "\n" not in str(exc)
        assert list((root / "beta/inbox").iterdir()) == []
        return
    snap = scan(root)
    (letter,) = snap.letters
    assert snap.scope.complete and letter.flags == () and letter.id == published.id
    assert letter.subject == subject and slug in letter.id
    assert (letter.deadline_at is None) == (deadline == "")
    assert (root / letter.path).read_bytes().split(b"\n---\n", 1)[1].rstrip(b"\n") == body.encode().rstrip(b"\n")


def test_absent_optional_values_may_be_none_and_disputes_a_string(box):
    box.letter("one", type="decision")
    box.letter("two", type="decision")
    d = Draft("alpha", "alpha", "dispute", "pair", "They disagree.", deadline=None, thread=None, re=None,
              subject=None, disputes="one, two")
    published = deliver(box.root, d, now=NOW)
    assert published.letter.disputes == ("one", "two") and published.letter.re == ""
    assert d.disputes == "one, two"  # the caller's draft is not changed

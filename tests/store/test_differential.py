"""The store's answers equal the resolver's, by construction and here by test: for every
letter's answers, every query key, every view and every single-letter document, on the demo,
on generated letterboxes and on hypothesis-made ones, after each kind of change."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from letterbox_tui.core import views
from letterbox_tui.core.check import check
from letterbox_tui.core.demo import DEMO_NOW, write_demo
from letterbox_tui.core.digest import digest
from letterbox_tui.core.lazy import KeptLetters
from letterbox_tui.core.model import letters_with_id, letters_with_thread
from letterbox_tui.core.query import parse_query, run_query
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.rows import row
from letterbox_tui.core.scan import scan
from letterbox_tui.core.views.letter import answered_view, current_view, show_view
from letterbox_tui.store import open_answers
from letterbox_tui.store.stored import StoredAnswers
from tests.conftest import make_box

AT = DEMO_NOW + timedelta(hours=3)

#: one term of every key and value the query language has (SPEC 6)
TERMS = [
    *(f"state={v}" for v in ("open", "closed", "any", "unknown")),
    *(f"{k}={v}" for k in ("answered", "accepted", "current", "late") for v in ("yes", "no", "unknown")),
    *(f"superseded={v}" for v in ("yes", "no", "head", "unknown")),
    "task=yes", "task=no", "type=request,result", "priority=now",
    "since=2026-11-20T00:00:00Z", "until=2026-11-25T00:00:00Z", "due<=2026-11-30T00:00:00Z",
    "due>2026-11-28T00:00:00Z", "slug~=plan", "subject~=a",
]


def computed(root):
    return resolve(scan(root), AT)


def stored(root):
    """The answers read back from the store (written first by a call that computed them)."""
    open_answers(root, AT)
    answers = open_answers(root, AT)
    assert isinstance(answers, StoredAnswers), "the store was not used on an unchanged letterbox"
    return answers


def documents(res):
    """Every answer and document the faces show, as plain data."""
    letters = res.snapshot.letters
    out = {
        "rows": [row(x, res) for x in letters],
        "late-later": [res.late(x, AT + timedelta(days=30)).value for x in letters],
        "owed": views.owed_view(res).to_json(),
        "disputes": views.disputes_view(res).to_json(),
        "truth": [[(i.letter.path, i.current) for i in part] for part in _truth_parts(res)],
        "check": [f.to_json() for f in check(res)],
        "digest": digest(res),
    }
    for term in TERMS:
        result = run_query(parse_query([term], AT), res)
        out[term] = ([row(x, res) for x in result.matches], [row(x, res, why) for x, why in result.unknown])
    for x in letters:
        out[f"show {x.id}"] = show_view(res, x.id, 0)
        out[f"current {x.id}"] = current_view(res, x.id)
        out[f"answered {x.id}"] = answered_view(res, x.id)
        out[f"thread {x.thread_id}"] = views.thread_view(res, x.thread_id).to_json()
    return out


#: the structural questions asked of one letter (lists of letters, but chain_ids, chain_key)
PER_LETTER = ("chain", "chain_ids", "chain_key", "heads", "superseders", "replies", "acks", "children",
              "disputes_of", "rulings")


def structure(res):
    """Every structural answer, per letter, per id, per thread and over the whole scan, as
    plain data (letters by path: ids are not unique)."""
    def paths(letters):
        return [x.path for x in letters]

    snap = res.snapshot
    out = {}
    for x in snap.letters:
        for name in PER_LETTER:
            got = getattr(res, name)(x)
            out[f"{name} {x.path}"] = got if name in ("chain_ids", "chain_key") else paths(got)
    ids = {x.id for x in snap.letters} | {u.legible.get("id", "") for u in snap.unreadable} | {"no-such-id", ""}
    for i in sorted(ids):
        out[f"by_id {i}"] = paths(res.by_id(i))
        out[f"holders {i}"] = res.holders(i)
    for t in sorted({x.thread_id for x in snap.letters} | {"no-such-thread"}):
        out[f"thread {t}"] = paths(res.thread(t))
    out["forks"] = res.forks()
    out["cycles"] = res.cycles()
    out["dangling"] = [(d.letter.path, d.field, d.target) for d in res.dangling()]
    out["open_disputes"] = [(o.dispute.path, paths(o.disputed)) for o in res.open_disputes()]
    return out


def _truth_parts(res):
    view = views.truth_view(res)
    return view.decisions, view.others, view.doubt


def _unclocked(doc):
    """The document without the scan's own time (each scan has its own)."""
    if isinstance(doc, dict):
        return {k: _unclocked(v) for k, v in doc.items() if k != "scanned_at"}
    if isinstance(doc, (list, tuple)):
        return [_unclocked(v) for v in doc]
    return doc


def same(root):
    """The store's answers, structure and documents equal the resolver's, and none of them
    needed the resolver; so do the letters found by id and thread (``lookups``)."""
    lookups(root)
    res, kept = computed(root), stored(root)
    want, got = _unclocked(documents(res)), _unclocked(documents(kept))
    for key in want:
        assert got[key] == want[key], key
    want, got = structure(res), structure(kept)
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == want[key], key
    assert kept._resolution is None, "an unchanged letterbox was resolved again"


def lookups(root):
    """Letters found by id and by thread, and the queries that name them, before any other
    letter is asked for: the same as looking at every letter. When the store vouched for
    every folder (settled files) the letters are found without decoding the others."""
    want = computed(root)
    got = stored(root)
    letters = got.snapshot.letters
    everyone = want.snapshot.letters
    ids = sorted({x.id for x in everyone} | {x.re for x in everyone if x.re} | {"no-such-letter"})
    threads = sorted({x.thread_id for x in everyone} | {"no-such-thread"})
    for i in ids:
        assert [x.path for x in letters_with_id(letters, i)] == [x.path for x in everyone if x.id == i], i
        result = run_query(parse_query([f"id={i}"], AT), got)
        assert [row(x, got) for x in result.matches] == [row(x, want) for x in everyone if x.id == i], i
    for t in threads:
        assert [x.path for x in letters_with_thread(letters, t)] == [x.path for x in everyone if x.thread_id == t], t
        result = run_query(parse_query([f"thread={t},no-such-thread"], AT), got)
        assert [x.path for x in result.matches] == [x.path for x in everyone if x.thread_id == t], t
    for key, attr in (("from", "sender"), ("to", "recipient"), ("type", "type")):
        values = sorted({getattr(x, attr) for x in everyone} - {""})
        for chosen in ([v] for v in values[:4]):
            terms = [f"{key}={','.join(chosen + ['nobody'])}", "state=any"]
            if key != "type":
                terms.append("type=request,result,decision,info,ack")
            result = run_query(parse_query(terms, AT), got)
            want_result = run_query(parse_query(terms, AT), want)
            assert [x.path for x in result.matches] == [x.path for x in want_result.matches], terms
            assert [x.path for x, _ in result.unknown] == [x.path for x, _ in want_result.unknown], terms


def test_a_lookup_decodes_only_the_letters_it_finds(tmp_path, monkeypatch):
    """On a settled, unchanged letterbox an id or thread lookup, and a query naming one,
    decode the letters found and the heads their rows name, and no other letter."""
    from tests.gen_letterbox import generate

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    generate(tmp_path / "gen", 300, seed=5)
    everyone = computed(tmp_path / "gen").snapshot.letters
    target = next(x for x in everyone if x.thread and x.thread != x.id)
    got = stored(tmp_path / "gen")
    letters = got.snapshot.letters
    assert isinstance(letters, KeptLetters) and letters.pending == len(everyone)
    result = run_query(parse_query([f"id={target.id}"], AT), got)
    assert [x.path for x in result.matches] == [x.path for x in everyone if x.id == target.id]
    rows = [row(x, got) for x in result.matches]
    heads = {r["head"] for r in rows} - {None, target.id}
    assert len(everyone) - letters.pending <= len(result.matches) + len(heads)
    members = letters_with_thread(letters, target.thread)
    assert [x.path for x in members] == [x.path for x in everyone if x.thread_id == target.thread]
    assert letters.pending >= len(everyone) - len(result.matches) - len(heads) - len(members) > 0


@pytest.mark.parametrize("first", [False, True])
def test_a_changed_id_time_setting_is_answered_as_the_letters_are(tmp_path, monkeypatch, first):
    """The store keeps headers as parsed, and ``[time] id_time_is_utc`` changes how: once it
    is turned on (or off) the store's answers equal the resolver's at once, for settled
    letters and a folder the store vouches for alike (it kept 'missing-sent' alone)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    box = make_box(tmp_path / "box", "alpha", "beta")
    letter_id = "2026-11-20T100000-alpha-info-hi-1111aaaa"
    box.raw(f"beta/inbox/{letter_id}.md",
            f"---\nid: {letter_id}\nfrom: alpha\nto: beta\ntype: info\nrequires_ack: false\n---\nhi\n")

    def setting(on):
        box.raw("letterbox-tui.toml", f"[time]\nid_time_is_utc = {'true' if on else 'false'}\n")

    def legacy(res):
        return [row(x, res)["legacy"] for x in res.snapshot.letters]

    setting(first)
    stored(box.root)
    setting(not first)
    want = resolve(scan(box.root, id_time_is_utc=not first), AT)
    assert legacy(open_answers(box.root, AT)) == legacy(want) == [
        ["missing-sent", "time-from-id"] if not first else ["missing-sent"]]
    assert legacy(stored(box.root)) == legacy(want)


def test_header_fields_are_found_by_the_store_in_kept_folders_and_read_ones(tmp_path, monkeypatch):
    """With one folder changed (read by the scan) and the others kept, a header-field
    lookup and count takes the kept folders' columns from the store and looks at the read
    folder's letters: the same letters, in the same order, as looking at every letter; and
    it decodes none of the kept letters that do not match."""
    from tests.gen_letterbox import generate

    from letterbox_tui.core.lazy import count_by, deadlines, with_field

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    generate(tmp_path / "gen", 300, seed=5)
    stored(tmp_path / "gen")
    some = next(p for p in sorted((tmp_path / "gen").glob("*/inbox/*.md")))
    (some.parent / "zz-new.md").write_text(
        "---\nid: zz-new\nfrom: somebody-new\nto: planner\ntype: info\nrequires_ack: false\n"
        "deadline: 2031-01-01T00:00:00+01:00\nsent: 2026-11-20T00:00:00Z\n---\nbody\n")
    for _ in range(2):  # just after the change (the folder read), then with the store written after it
        letters = open_answers(tmp_path / "gen", AT).snapshot.letters
        everyone = computed(tmp_path / "gen").snapshot.letters
        assert isinstance(letters, KeptLetters)
        pending = letters.pending
        times = deadlines(letters)
        assert times == sorted({x.deadline_at for x in everyone if x.deadline_at is not None})
        assert len(times) > 3 and letters.pending == pending  # from the store's column: none decoded
        for field, attr in (("from", "sender"), ("to", "recipient"), ("type", "type"), ("deadline", "deadline")):
            values = sorted({getattr(x, attr) for x in everyone})[:2] + ["somebody-new"]
            want = [x.path for x in everyone if getattr(x, attr) in values]
            pending = letters.pending
            assert [x.path for x in with_field(letters, field, values)] == want
            assert pending - letters.pending <= len(want)
            counts: dict[str, int] = {}
            for x in everyone:
                counts[getattr(x, attr)] = counts.get(getattr(x, attr), 0) + 1
            assert count_by(letters, field) == counts
            assert letters.distinct(field) == set(counts)


def test_a_query_and_its_rows_decode_no_reasons_they_do_not_show(tmp_path, monkeypatch):
    """The evaluator asks an answer its value, and its reasons only when it is unknown; a
    row shows the reasons of its unknown answers: the reasons of the others stay as kept."""
    from tests.gen_letterbox import generate

    from letterbox_tui.store.records import KeptAnswer

    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    generate(tmp_path / "gen", 300, seed=5)
    want = computed(tmp_path / "gen")
    got = stored(tmp_path / "gen")
    terms = ["answered=no", "type=request"]
    result = run_query(parse_query(terms, AT), got)
    rows = [row(x, got) for x in result.matches] + [row(x, got, why) for x, why in result.unknown]
    expected = run_query(parse_query(terms, AT), want)
    assert rows == [row(x, want) for x in expected.matches] + [row(x, want, why) for x, why in expected.unknown]
    untouched = [a for x in got.snapshot.letters if x.type == "request"
                 for a in (got.answered(x), got.accepted(x)) if isinstance(a, KeptAnswer) and a.value != "unknown"]
    assert untouched and all(type(a._why) is bytes for a in untouched)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "box"
    write_demo(root)
    return root


@pytest.fixture(params=["just-written", "settled"])
def settledness(request, monkeypatch):
    """Files just written are read again to be vouched for (their stat may yet hide a change
    within a clock tick); settled ones are taken from the store on their stat alone. The
    tests' files are all just written: "settled" makes the store treat them as old."""
    if request.param == "settled":
        monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    return request.param


def test_the_demo(demo, monkeypatch, tmp_path, settledness):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    same(demo)


def test_a_generated_letterbox(tmp_path, settledness):
    from tests.gen_letterbox import generate

    generate(tmp_path / "gen", 600, seed=3)
    same(tmp_path / "gen")


def _edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite a header value keeping the file's size and mtime (its ctime moves)."""
    assert len(old) == len(new)
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(old.encode(), new.encode(), 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_settled_unchanged_letterbox_reads_no_header(tmp_path, monkeypatch, settledness):
    box = make_box(tmp_path / "box", "alpha", "beta")
    box.letter("ask-1", frm="alpha", to="beta", type="request", requires_ack="true")
    open_answers(box.root, AT)
    import letterbox_tui.store as store

    made = []
    real = store._HeaderCache.__init__
    monkeypatch.setattr(store._HeaderCache, "__init__", lambda self, *a: (made.append(self), real(self, *a))[1])
    answers = open_answers(box.root, AT)
    assert isinstance(answers, StoredAnswers)
    cache = made[-1]
    if settledness == "settled":  # vouched for folder by folder: no letter even decoded
        assert cache.kept == 1 and not cache.hit and not cache.new
        letters = answers.snapshot.letters
        assert isinstance(letters, KeptLetters) and letters.pending == 1
        assert [x.id for x in letters] == ["ask-1"] and letters.pending == 0
    else:
        assert cache.same == {"beta/inbox/ask-1.md"} and not cache.hit


def test_a_folder_vouched_for_lists_its_sidecars_and_refuses_odd_entries(tmp_path, monkeypatch):
    """A folder taken from the store on its stats alone gives the sidecars and orphans a
    walk gives (a sidecar's letter sorts before it, maybe not just before); a FIFO, a
    directory or a symlink named like a letter makes it a folder looked at file by file."""
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    box = make_box(tmp_path / "box", "alpha", "beta")
    for name in ("a-1", "a-1.md.a", "b-2"):
        box.letter(name, frm="alpha", to="beta")
    for name in ("a-1.md.ack", "gone-3.md.ack", "b-2.md.ack", ".b-2.md.ack"):
        (box.root / "beta/inbox" / name).write_text("")
    box.letter("h-1", frm="alpha", to="beta", name=".h-1.md")  # a writer's temporary
    box.letter("d-1", frm="alpha", to="beta", name="-d-1.md")
    import letterbox_tui.store as store

    made = []
    real = store._HeaderCache.__init__
    monkeypatch.setattr(store._HeaderCache, "__init__", lambda self, *a: (made.append(self), real(self, *a))[1])

    def same_scan():
        open_answers(box.root, AT)
        got, want = open_answers(box.root, AT).snapshot, scan(box.root)
        for attr in ("sidecars", "orphan_sidecars", "unsupported", "unreadable"):
            assert getattr(got, attr) == getattr(want, attr), attr
        assert [x.path for x in got.letters] == [x.path for x in want.letters]
        return got

    got = same_scan()
    assert made[-1].kept == 4 and isinstance(got.letters, KeptLetters)  # every folder vouched for
    assert [x.name for x in got.letters][:2] == ["-d-1.md", "a-1.md"]
    assert got.sidecars == {"beta/inbox/a-1.md.ack", "beta/inbox/b-2.md.ack"}
    assert got.orphan_sidecars == ["beta/inbox/gone-3.md.ack"]
    os.mkfifo(box.root / "beta/inbox/pipe.md")
    (box.root / "alpha/inbox/dir.md").mkdir()
    os.symlink(box.root / "beta/inbox/b-2.md", box.root / "alpha/processed/link.md")
    got = same_scan()
    assert {u.path for u in got.unsupported} >= {"beta/inbox/pipe.md", "alpha/inbox/dir.md", "alpha/processed/link.md"}
    assert made[-1].kept == 0


def test_after_each_kind_of_change(tmp_path, settledness):
    box = make_box(tmp_path / "box", "alpha", "beta")
    box.letter("ask-1", frm="alpha", to="beta", type="request", requires_ack="true",
               deadline="2026-11-30T00:00:00Z")
    box.letter("ask-2", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("v1", frm="alpha", to="beta", type="decision")
    same(box.root)
    # add: a reply answers ask-1
    box.letter("ask-1--beta--result", frm="beta", to="alpha", type="result", re="ask-1", seat="alpha")
    same(box.root)
    # edit in place, size and mtime restored: the reply now answers ask-2
    _edit_in_place(box.root / "alpha/inbox/ask-1--beta--result.md", "re: ask-1", "re: ask-2")
    same(box.root)
    # a superseder, then a second one (a fork)
    box.letter("v2", frm="alpha", to="beta", type="decision", supersedes="v1")
    box.letter("v3", frm="alpha", to="beta", type="decision", supersedes="v1")
    same(box.root)
    # delete
    (box.root / "beta/inbox/v3.md").unlink()
    same(box.root)
    # rename: into processed/
    os.rename(box.root / "beta/inbox/ask-2.md", box.root / "beta/processed/ask-2.md")
    same(box.root)
    # a sidecar appears (accepted)
    (box.root / "beta/inbox/ask-1.md.ack").write_text("")
    same(box.root)
    # an unreadable file that may be a reply
    box.raw("alpha/inbox/broken.md", "---\nre: ask-1\ntype: result\nnot a header line\n---\n")
    same(box.root)
    # a whole-tree touch changes no answer
    for path in box.root.rglob("*.md"):
        os.utime(path)
    same(box.root)


_ids = st.sampled_from(["a1", "a2", "a3", "a4", "a5"])


@st.composite
def letterboxes(draw):
    letters = []
    for n in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["request", "result", "nack", "ack", "decision", "dispute", "ruling", "info"]))
        fields = {"requires_ack": draw(st.sampled_from(["true", "false", None]))}
        if draw(st.booleans()):
            fields["re"] = draw(_ids)
        if draw(st.booleans()):
            fields["supersedes"] = draw(st.sampled_from(["a1", "a2", "a3", "bad id!"]))
        if kind == "dispute":
            fields["disputes"] = ",".join(draw(st.lists(_ids, min_size=2, max_size=3)))
        if kind == "ruling":
            fields["rules_on"] = draw(_ids)
            fields["upholds"] = draw(_ids)
        if draw(st.booleans()):
            fields["deadline"] = draw(st.sampled_from(["2026-11-30T00:00:00Z", "2026-12-30T00:00:00Z", "soon"]))
        frm, to = draw(st.sampled_from([("alpha", "beta"), ("beta", "alpha"), ("alpha", "external-bridge")]))
        folder = draw(st.sampled_from(["inbox", "inbox", "processed"]))
        letters.append((draw(_ids), kind, frm, to, folder, fields, n))
    return letters


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(letterboxes())
def test_hypothesis_letterboxes(tmp_path_factory, settledness, letters):
    root = tmp_path_factory.mktemp("hyp")
    box = make_box(root, "alpha", "beta", "external-bridge")
    for letter_id, kind, frm, to, folder, fields, n in letters:
        box.letter(letter_id, frm=frm, to=to, type=kind, folder=folder, name=f"{letter_id}-{n}.md"
                   if n else None, **fields)
    same(root)


def test_arrivals_rewrite_only_the_answers_that_changed(tmp_path, monkeypatch):
    """A few letters arriving into one inbox: the store's answers equal the resolver's, and
    only the rows of files and letters that changed are written."""
    from letterbox_tui.store import db

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))  # the files count as settled
    root = tmp_path / "box"
    write_demo(root)
    open_answers(root, AT)
    changes: list[int] = []
    write = db.Store._write

    def counted(self, conn, *args, **kwargs):  # on the connection that writes
        before = conn.total_changes
        try:
            return write(self, conn, *args, **kwargs)
        finally:
            changes.append(conn.total_changes - before)

    monkeypatch.setattr(db.Store, "_write", counted)
    letters = len(scan(root).letters)
    for n in range(3):
        (root / "planner" / "inbox" / f"zz-arrival-{n}.md").write_text(
            f"---\nid: zz-arrival-{n}\nfrom: builder\nto: planner\ntype: info\nrequires_ack: false\n"
            f"sent: 2026-11-20T00:00:0{n}Z\n---\nbody\n")
        changes.clear()
        open_answers(root, AT)
        assert changes and changes[0] < letters // 2, (changes, letters)
        got = open_answers(root, AT)
        assert isinstance(got, StoredAnswers)
        fresh = resolve(scan(root), AT)
        for letter in fresh.snapshot.letters:
            for name in ("state", "answered", "accepted", "current", "superseded"):
                assert getattr(got, name)(letter) == getattr(fresh, name)(letter), (letter.path, name)
            heads = got.head(letter), fresh.head(letter)
            paths = [h.path if h is not None else None for h in heads]
            assert paths[0] == paths[1], (letter.path, "head")


def test_the_documents_of_an_unchanged_letterbox_need_no_resolve(demo, monkeypatch):
    """show, current, answered, thread, disputes, check, digest and owed (its attention
    asks each task's children) are built from the kept answers alone."""
    from letterbox_tui.core import documents as docs

    open_answers(demo, AT)
    kept = open_answers(demo, AT)
    assert isinstance(kept, StoredAnswers)
    want = computed(demo)

    def refused(*args, **kwargs):
        raise AssertionError("an unchanged letterbox was resolved again")

    monkeypatch.setattr("letterbox_tui.store.stored.resolve", refused)
    monkeypatch.setattr("letterbox_tui.store.resolve", refused)
    made = []
    for res in (want, kept):
        out = {}
        for x in res.snapshot.letters:
            out[f"show {x.path}"] = docs.show_document(res, x.id, 0)
            out[f"current {x.path}"] = docs.current_document(res, x.id)
            out[f"answered {x.path}"] = docs.answered_document(res, x.id)
            out[f"thread {x.path}"] = docs.thread_document(res, x.id)
        out["disputes"] = docs.disputes_document(res)
        out["check"] = docs.check_document(res)
        out["digest"] = docs.digest_document(res)
        out["owed"] = docs.owed_document(res)
        made.append(_unclocked(out))
    assert made[1] == made[0]
    attention = [c for g in made[1]["owed"]["owed"] for i in g["items"] for c in i["attention"]]
    assert attention and made[1]["disputes"]["disputes"], "the demo no longer asks what these need"

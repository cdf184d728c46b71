"""After a change, only the letters it can reach are resolved again (``core.resolve.depends``)
and the rest kept: every answer, every list over the whole scan and every index equals what
a full resolve of the letters gives, and the store written so equals one built from scratch."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.store import open_answers
from letterbox_tui.store.db import store_path
from letterbox_tui.store.stored import StoredAnswers
from tests.conftest import make_box
from tests.store.test_differential import AT, _unclocked, documents, same, structure

_ids = st.sampled_from(["a1", "a2", "a3", "a4", "a5", "a6"])
_pointer = st.one_of(_ids, st.sampled_from(["gone-1", "bad id!", "a1 a2 !"]))
_kinds = st.sampled_from(["request", "result", "nack", "ack", "decision", "dispute", "ruling", "info"])
_parties = st.sampled_from([("alpha", "beta"), ("beta", "alpha"), ("alpha", "alpha"), ("alpha", "external-bridge")])


@st.composite
def letters(draw):
    """One letter: (id, type, from, to, folder, fields); links of every kind the resolver reads."""
    kind = draw(_kinds)
    fields = {"requires_ack": draw(st.sampled_from(["true", "false", None]))}
    if draw(st.booleans()):
        fields["re"] = draw(_pointer)
    if draw(st.integers(0, 2)) == 0:
        fields["supersedes"] = draw(_pointer)
    if draw(st.integers(0, 2)) == 0:
        fields["thread"] = draw(st.sampled_from(["t1", "t2", "a1"]))
    if kind == "dispute":
        fields["disputes"] = ",".join(draw(st.lists(st.one_of(_ids, st.just("gone-2")), min_size=2, max_size=3)))
    if kind == "ruling":
        fields["rules_on"] = draw(_ids)
        if draw(st.booleans()):
            fields["upholds"] = draw(_ids)
    if draw(st.booleans()):
        fields["deadline"] = draw(st.sampled_from(["2026-11-30T00:00:00Z", "2026-12-30T00:00:00Z", "soon"]))
    frm, to = draw(_parties)
    folder = draw(st.sampled_from(["inbox", "inbox", "processed"]))
    return draw(_ids), kind, frm, to, folder, fields


_change = st.one_of(
    st.tuples(st.just("add"), letters()),
    st.tuples(st.just("edit"), st.integers(0, 20), letters()),
    st.tuples(st.just("delete"), st.integers(0, 20)),
    st.tuples(st.just("move"), st.integers(0, 20)),
    st.tuples(st.just("sidecar"), st.integers(0, 20)),
)


def _write(box, n: int, spec, seat: str | None = None, folder: str | None = None, name: str | None = None):
    letter_id, kind, frm, to, own_folder, fields = spec
    return box.letter(letter_id, frm=frm, to=to, type=kind, seat=seat, folder=folder or own_folder,
                      name=name or (f"{letter_id}-{n}.md" if n % 3 else None), **fields)


def _apply(box, files: list, change) -> None:
    """One change to the letterbox: a letter added, rewritten in place, deleted, moved to
    processed/ (as its seat closes it), or its sidecar added or removed."""
    what = change[0]
    if what == "add":
        made = _write(box, len(files) + 100, change[1])
        if made not in files:  # a letter written over one of the same name is one file
            files.append(made)
        return
    if not files:
        return
    path = files[change[1] % len(files)]
    if what == "edit":
        spec = change[2]
        seat, folder = path.parent.parent.name, path.parent.name
        made = _write(box, 0, spec, seat=seat, folder=folder, name=".edit.md")  # a temporary: never a letter
        text = made.read_bytes()
        made.unlink()
        path.write_bytes(text)
    elif what == "delete":
        path.unlink()
        files.remove(path)
        sidecar = path.with_name(path.name + ".ack")
        if sidecar.exists():
            sidecar.unlink()
    elif what == "move":
        target = path.parent.parent / "processed" / path.name
        if path.parent.name == "inbox" and not target.exists():
            os.rename(path, target)
            files[files.index(path)] = target
            sidecar = path.with_name(path.name + ".ack")
            if sidecar.exists():
                sidecar.unlink()
    elif what == "folder-goes":  # a seat's whole folder (its letters, sidecars) removed
        folder = path.parent
        shutil.rmtree(folder)
        files[:] = [f for f in files if f.parent != folder]
    elif what == "sidecar" and path.parent.name == "inbox":
        sidecar = path.with_name(path.name + ".ack")
        if sidecar.exists():
            sidecar.unlink()
        else:
            sidecar.write_text("progress: half\n")


def _tables(cache: str, root) -> dict:
    """The store's answers rows, indexes and the letter keeping the whole scan's structure."""
    conn = sqlite3.connect(store_path(os.path.realpath(root)).replace(os.environ["XDG_CACHE_HOME"], cache, 1))
    try:
        answers = dict(conn.execute("SELECT path, record FROM answers"))
        indexes = {name: json.loads(value) for name, value in conn.execute("SELECT name, value FROM indexes")}
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('first', 'files', 'folders', 'indexed')"))
    finally:
        conn.close()
    meta["folders"] = json.loads(meta["folders"])
    return {"answers": answers, "indexes": indexes, "meta": meta}


def _resolved_again(monkeypatch) -> list[int]:
    """Each time a change is resolved in part: how many letters are."""
    import letterbox_tui.store as store

    parts: list[int] = []
    real = store.reach

    def counted(*args):
        found = real(*args)
        parts.append(len(found[0]))
        return found

    monkeypatch.setattr(store, "reach", counted)
    return parts


def check_change(box, files, changes, monkeypatch, tmp_path) -> None:
    """Keep the store of the letterbox before ``changes``, apply them, and compare the
    answers given after them and the store written with a full resolve and a store built
    from scratch."""
    cache = os.environ["XDG_CACHE_HOME"]
    open_answers(box.root, AT)
    for change in changes:
        _apply(box, files, change)
    got = open_answers(box.root, AT)  # resolved in part (or, when that cannot be bounded, whole)
    want = resolve(scan(box.root), AT)
    assert _unclocked(documents(got)) == _unclocked(documents(want))
    assert structure(got) == structure(want)
    kept = _tables(cache, box.root)
    fresh = str(tmp_path / f"fresh-{len(os.listdir(tmp_path))}")
    monkeypatch.setenv("XDG_CACHE_HOME", fresh)
    open_answers(box.root, AT)
    built = _tables(fresh, box.root)
    monkeypatch.setenv("XDG_CACHE_HOME", cache)
    assert kept["answers"].keys() == built["answers"].keys()
    for path, record in built["answers"].items():
        assert kept["answers"][path] == record, path
    assert kept["indexes"] == built["indexes"]
    assert kept["meta"] == built["meta"]
    same(box.root)  # and the store written answers as the letters do


@pytest.fixture(params=["just-written", "settled"])
def settledness(request, monkeypatch):
    if request.param == "settled":
        monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))
    return request.param


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(letters(), min_size=0, max_size=8), st.lists(_change, min_size=1, max_size=2))
def test_any_change_to_a_random_letterbox(tmp_path_factory, monkeypatch, settledness, specs, changes):
    root = tmp_path_factory.mktemp("inc")
    box = make_box(root / "box", "alpha", "beta", "external-bridge")
    # two specs of one id and folder write one file: it is listed once
    files = list(dict.fromkeys(_write(box, n, spec) for n, spec in enumerate(specs)))
    check_change(box, files, changes, monkeypatch, root)


#: letterboxes of every link the resolver follows, and a change to each
CASES = {
    "a reply arrives": (
        [("a1", "request", "alpha", "beta", "inbox", {"requires_ack": "true"}),
         ("a2", "info", "alpha", "beta", "inbox", {})],
        [("add", ("a3", "result", "beta", "alpha", "inbox", {"re": "a1"}))]),
    "a second superseder makes a fork, a ruling settles it": (
        [("a1", "decision", "alpha", "beta", "inbox", {}),
         ("a2", "decision", "alpha", "beta", "inbox", {"supersedes": "a1"}),
         ("a4", "dispute", "alpha", "beta", "inbox", {"disputes": "a2,a3"})],
        [("add", ("a3", "decision", "alpha", "beta", "inbox", {"supersedes": "a1"})),
         ("add", ("a5", "ruling", "alpha", "beta", "inbox", {"rules_on": "a4", "upholds": "a3"}))]),
    "a cycle closes": (
        [("a1", "decision", "alpha", "beta", "inbox", {"supersedes": "a2"}),
         ("a6", "info", "beta", "alpha", "inbox", {})],
        [("add", ("a2", "decision", "alpha", "beta", "inbox", {"supersedes": "a1"}))]),
    "a malformed supersedes in a thread": (
        [("a1", "decision", "alpha", "beta", "inbox", {"thread": "t1"}),
         ("a2", "decision", "alpha", "beta", "inbox", {"thread": "t1", "supersedes": "a1"})],
        [("add", ("a3", "decision", "alpha", "beta", "inbox", {"thread": "t1", "supersedes": "bad id!"}))]),
    "a malformed re and supersedes mention letters": (
        [("a1", "request", "alpha", "beta", "inbox", {"requires_ack": "true"}),
         ("a2", "decision", "alpha", "beta", "inbox", {"thread": "t2"})],
        [("add", ("a3", "result", "beta", "alpha", "inbox", {"re": "a1 a2 !"})),
         ("add", ("a4", "decision", "alpha", "beta", "inbox", {"supersedes": "a2 !"}))]),
    "a duplicate id, then the first copy goes": (
        [("a1", "request", "alpha", "beta", "inbox", {"requires_ack": "true"}),
         ("a2", "result", "beta", "alpha", "inbox", {"re": "a1"})],
        [("add", ("a1", "request", "alpha", "beta", "processed", {"requires_ack": "true"})),
         ("delete", 0)]),
    "a dangling pointer is met": (
        [("a1", "info", "alpha", "beta", "inbox", {"re": "a2"}),
         ("a3", "dispute", "alpha", "beta", "inbox", {"disputes": "a2,a4"})],
        [("add", ("a2", "info", "beta", "alpha", "inbox", {}))]),
    "a task is closed and its sidecar comes": (
        [("a1", "request", "alpha", "beta", "inbox", {"requires_ack": "true"}),
         ("a2", "request", "alpha", "beta", "inbox", {"requires_ack": "true"})],
        [("sidecar", 1), ("move", 0)]),
    "a letter is rewritten to point elsewhere": (
        [("a1", "request", "alpha", "beta", "inbox", {"requires_ack": "true"}),
         ("a2", "request", "alpha", "beta", "inbox", {"requires_ack": "true"}),
         ("a3", "result", "beta", "alpha", "inbox", {"re": "a1"})],
        [("edit", 2, ("a3", "result", "beta", "alpha", "inbox", {"re": "a2"}))]),
    "the first letter goes": (
        [("a1", "decision", "alpha", "beta", "inbox", {"supersedes": "a2"}),
         ("a2", "decision", "alpha", "beta", "inbox", {}),
         ("a3", "decision", "alpha", "beta", "inbox", {"supersedes": "a2"})],
        [("delete", 1)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_kind_of_link(case, tmp_path, monkeypatch, settledness):
    specs, changes = CASES[case]
    box = make_box(tmp_path / "box", "alpha", "beta", "external-bridge")
    files = [_write(box, n, spec) for n, spec in enumerate(specs)]
    parts = _resolved_again(monkeypatch)
    check_change(box, files, changes, monkeypatch, tmp_path)
    assert parts, "the change was resolved whole"


def test_a_folder_that_goes_takes_its_letters_out_of_the_store(tmp_path, monkeypatch, settledness):
    """A seat's folder removed whole, with a letter another answers by: the store written
    after holds neither its files nor its index rows (as one built anew)."""
    box = make_box(tmp_path / "box", "alpha", "beta", "external-bridge")
    files = [_write(box, n, spec) for n, spec in enumerate([
        ("a1", "request", "alpha", "beta", "processed", {"requires_ack": "true", "thread": "t1"}),
        ("a2", "result", "beta", "alpha", "inbox", {"re": "a1"})])]
    check_change(box, files, [("folder-goes", 0)], monkeypatch, tmp_path)


def test_a_change_reaches_only_its_cluster(tmp_path, monkeypatch):
    """Among many unrelated letters, a reply resolves again only the letters its request
    links: the others' rows are kept, not rewritten."""
    box = make_box(tmp_path / "box", "alpha", "beta")
    files = [box.letter(f"q{n}", frm="alpha", to="beta", type="request", requires_ack="true") for n in range(40)]
    open_answers(box.root, AT)
    parts = _resolved_again(monkeypatch)
    check_change(box, files, [("add", ("a1", "result", "beta", "alpha", "inbox", {"re": "q7"}))], monkeypatch,
                 tmp_path)
    assert parts[0] == 2, parts  # the reply and q7; then the fresh store's full resolve
    assert isinstance(open_answers(box.root, AT), StoredAnswers)

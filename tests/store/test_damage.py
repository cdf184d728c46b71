"""A store that is damaged, foreign, old, locked or cannot be made never changes or stops an
answer: one notice line, and the answer from the letters."""

from __future__ import annotations

import os
import sqlite3
import stat
from datetime import timedelta

import pytest

from letterbox_tui.core.demo import DEMO_NOW, write_demo
from letterbox_tui.core.query import parse_query, run_query
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.rows import row
from letterbox_tui.core.scan import scan
from letterbox_tui.core.views import owed_view
from letterbox_tui.store import open_answers
from letterbox_tui.store.db import FORMAT, index_checksum, store_path
from letterbox_tui.store.stored import StoredAnswers

AT = DEMO_NOW + timedelta(hours=3)


def answer(res):
    """What a face shows: every row with its answers, and the owed view."""
    result = run_query(parse_query(["state=any"], AT), res)
    doc = {"rows": [row(x, res) for x in result.matches], "owed": owed_view(res).to_json()}
    doc["owed"]["scope"].pop("scanned_at")
    return doc


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "box"
    write_demo(root)
    return root.resolve()


@pytest.fixture(scope="module")
def truth(demo):
    return answer(resolve(scan(demo), AT))


def asked(root, notices=None):
    said = [] if notices is None else notices
    return open_answers(root, AT, notice=said.append)


def test_an_unchanged_letterbox_is_answered_from_the_store(demo):
    asked(demo)
    assert isinstance(asked(demo), StoredAnswers)


@pytest.mark.slow  # 9-13 s on two cores: hundreds of flips, each a store opened and checked
def test_byte_flips_anywhere_never_change_an_answer(demo, truth, tmp_path):
    notices: list[str] = []
    asked(demo), asked(demo)
    path = store_path(str(demo))
    good = open(path, "rb").read()
    size = len(good)
    positions = sorted({(i * 7919) % size for i in range(240)} | set(range(0, size, max(1, size // 200))))
    assert len(positions) >= 200
    for pos in positions:
        for suffix in ("-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)
        damaged = bytearray(good)
        damaged[pos] ^= 0x5A
        with open(path, "wb") as f:
            f.write(damaged)
        said: list[str] = []
        got = answer(asked(demo, said))
        assert got == truth, f"a flip at byte {pos} of {size} changed the answer"
        assert len(said) <= 1, said
        notices += said
    assert notices, "no flip was ever noticed"


def test_a_truncated_store(demo, truth):
    asked(demo), asked(demo)
    path = store_path(str(demo))
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert len(said) == 1 and "store" in said[0]
    assert isinstance(asked(demo), StoredAnswers)  # rebuilt


@pytest.mark.parametrize("damage", [
    "UPDATE answers SET crc = crc + 1 WHERE rowid = (SELECT max(rowid) FROM answers)",
    "UPDATE answers SET record = CAST('open' AS BLOB), crc = 0 WHERE rowid = (SELECT min(rowid) FROM answers)",
    "UPDATE answers SET path = path || 'x' WHERE rowid = (SELECT min(rowid) FROM answers)",
])
def test_a_damaged_answer_found_when_read(demo, truth, damage):
    """An answers record is checked when first read, not when the store is opened: the
    damage is found while the answer is made, said once, and the rest is computed."""
    asked(demo), asked(demo)
    path = store_path(str(demo))
    con = sqlite3.connect(path)
    con.execute(damage)
    con.commit()
    con.close()
    said: list[str] = []
    got = asked(demo, said)
    assert isinstance(got, StoredAnswers)  # the damage is found on reading, not opening
    assert answer(got) == truth
    assert len(said) == 1 and "damaged" in said[0], said
    assert not os.path.exists(path)  # the next command builds it anew
    assert answer(asked(demo)) == truth


def _set_meta(path, key, value):
    import zlib

    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = ?, crc = ? WHERE key = ?", (value, zlib.crc32(f"{key}={value}".encode()), key))
    con.commit()
    con.close()


@pytest.mark.parametrize("key, value, said_word", [
    ("format", "letterbox-tui-store-0", "old format"),
    ("format", "something-else", "foreign"),
    ("root", "/elsewhere", "another letterbox"),
])
def test_a_foreign_or_old_store_is_rebuilt(demo, truth, key, value, said_word):
    asked(demo), asked(demo)
    _set_meta(store_path(str(demo)), key, value)
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert len(said) == 1 and said_word in said[0], said
    assert isinstance(asked(demo), StoredAnswers)


def test_a_foreign_database(demo, truth):
    path = store_path(str(demo))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert len(said) == 1 and "foreign" in said[0]


def test_a_held_write_lock(demo, truth, tmp_path):
    asked(demo), asked(demo)
    (demo / "alpha").exists()
    # a change, so the answer is resolved again (the part it reaches: the rest is kept);
    # another process holds the store's lock, so it is not written
    new = demo / "planner" / "inbox" / "zz-held-lock.md"
    new.write_text("---\nid: zz-held-lock\nfrom: builder\nto: planner\ntype: info\n"
                   "requires_ack: false\nsent: 2026-11-20T00:00:00Z\n---\nbody\n")
    try:
        con = sqlite3.connect(store_path(str(demo)), timeout=0, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        said: list[str] = []
        got = asked(demo, said)
        assert answer(got) == answer(resolve(scan(demo), AT))
        con.execute("ROLLBACK")
        con.close()
    finally:
        new.unlink()


def test_a_store_of_another_version_is_rebuilt_silently(demo, truth):
    asked(demo), asked(demo)
    _set_meta(store_path(str(demo)), "code", "0" * 32)
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert said == []
    assert isinstance(asked(demo), StoredAnswers)


def test_two_versions_side_by_side_each_keep_their_store_and_a_third_removes_the_oldest(
        demo, truth, monkeypatch):
    """An app and an MCP server installed apart (two versions) answer from their own stores
    turn about, neither rebuilding the other's; a third version's first store removes the
    least recently used of the others."""
    import time

    from letterbox_tui.store import db

    def version(code):
        monkeypatch.setattr(db, "_CODE", code * 32)
        return store_path(str(demo))

    paths = {}
    for code in "ab":  # each version's first question builds its store
        paths[code] = version(code)
        assert answer(asked(demo)) == truth
    for code in "abab":  # then each answers from its own
        version(code)
        said: list[str] = []
        found = asked(demo, said)
        assert isinstance(found, StoredAnswers) and said == [] and answer(found) == truth
    assert all(os.path.exists(p) for p in paths.values())
    older = time.time_ns() - 10**9
    for tail in ("", "-wal"):  # "a" used less recently than "b"
        if os.path.exists(paths["a"] + tail):
            os.utime(paths["a"] + tail, ns=(older, older))
    paths["c"] = version("c")
    assert answer(asked(demo)) == truth
    assert not os.path.exists(paths["a"]) and not os.path.exists(paths["a"] + "-wal")
    assert os.path.exists(paths["b"]) and os.path.exists(paths["c"])
    version("b")
    assert isinstance(asked(demo), StoredAnswers)


# --- where the store may live ------------------------------------------------------------

def _cache(monkeypatch, where):
    monkeypatch.setenv("XDG_CACHE_HOME", str(where))


def test_a_read_only_cache_directory(demo, truth, tmp_path, monkeypatch):
    if os.geteuid() == 0:
        pytest.skip("root writes into a read-only directory")
    cache = tmp_path / "ro"
    cache.mkdir()
    cache.chmod(0o500)
    _cache(monkeypatch, cache)
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert len(said) == 1


def test_a_cache_path_that_is_a_file(demo, truth, tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x")
    _cache(monkeypatch, tmp_path / "file")
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert len(said) == 1 and "unusable" in said[0]


def test_a_symlink_loop_in_the_cache_path(demo, truth, tmp_path, monkeypatch):
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    _cache(monkeypatch, tmp_path / "loop")
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert len(said) == 1


def test_the_store_itself_a_symlink_is_not_followed(demo, truth, tmp_path, monkeypatch):
    _cache(monkeypatch, tmp_path / "c")
    target = tmp_path / "elsewhere"
    target.write_text("mine")
    path = store_path(str(demo))
    os.makedirs(os.path.dirname(path))
    os.symlink(target, path)
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert target.read_text() == "mine"


@pytest.mark.parametrize("inside", ["root", "seat"])
def test_a_cache_inside_the_letterbox_is_refused(demo, truth, monkeypatch, inside):
    where = demo if inside == "root" else demo / "planner"
    before = sorted(p.name for p in where.iterdir())
    _cache(monkeypatch, where)
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert len(said) == 1 and "inside the letterbox" in said[0]
    assert sorted(p.name for p in where.iterdir()) == before


def test_a_bind_mount_path_to_the_letterbox_is_inside(demo, truth, tmp_path, monkeypatch):
    link = tmp_path / "link"
    os.symlink(demo, link)
    _cache(monkeypatch, link / "cache")
    said: list[str] = []
    assert answer(asked(demo, said)) == truth
    assert not (demo / "cache").exists()
    assert len(said) == 1


def test_files_are_private_whatever_the_umask(demo, tmp_path, monkeypatch):
    _cache(monkeypatch, tmp_path / "c")
    old = os.umask(0)
    try:
        asked(demo), asked(demo)
    finally:
        os.umask(old)
    path = store_path(str(demo))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert FORMAT


# --- a store that cannot be written: given up once, tried again later -----------------------

def _full_disk(monkeypatch):
    """Every write of the store meets a full disk (SQLite's own limit on the file's pages,
    so the failure is SQLite's real one); returns the list of writes tried."""
    from letterbox_tui.store import db

    tried: list[int] = []
    write = db.Store._write

    def full(self, conn, *args, **kwargs):  # on the connection that writes
        tried.append(1)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return write(self, conn, *args, **kwargs)

    monkeypatch.setattr(db.Store, "_write", full)
    return tried


def _arrive(root, n, tag):
    for i in range(n):
        (root / "planner" / "inbox" / f"zz-{tag}-{i}.md").write_text(
            f"---\nid: zz-{tag}-{i}\nfrom: builder\nto: planner\ntype: info\nrequires_ack: false\n"
            f"sent: 2026-11-20T00:00:00Z\nsubject: {'s' * 1500}\n---\nbody\n")


def test_a_store_that_cannot_be_written_is_given_up_once(tmp_path, monkeypatch):
    from letterbox_tui.store import db

    _cache(monkeypatch, tmp_path / "cache")
    root = tmp_path / "box"
    write_demo(root)
    asked(root)
    tried = _full_disk(monkeypatch)
    _arrive(root, 30, "a")
    said: list[str] = []
    assert answer(asked(root, said)) == answer(resolve(scan(root), AT))
    assert tried == [1] and len(said) == 1 and "could not be written" in said[0], said
    marker = store_path(str(root.resolve())) + ".unwritable"
    assert os.path.exists(marker) and stat.S_IMODE(os.stat(marker).st_mode) == 0o600

    # later commands do not try again, and say so in one line
    _arrive(root, 1, "b")
    said = []
    assert answer(asked(root, said)) == answer(resolve(scan(root), AT))
    assert tried == [1] and len(said) == 1 and "not written" in said[0] and "tried again after" in said[0], said

    # when the time has passed (or more space is free) it is tried again; once written, forgotten
    monkeypatch.undo()  # the disk has room again
    _cache(monkeypatch, tmp_path / "cache")
    monkeypatch.setattr(db, "RETRY_AFTER_S", 0.0)
    said = []
    assert answer(asked(root, said)) == answer(resolve(scan(root), AT))
    assert said == [] and not os.path.exists(marker)
    assert isinstance(asked(root), StoredAnswers)


def test_more_free_space_tries_the_write_again(tmp_path, monkeypatch):
    from letterbox_tui.store import db

    _cache(monkeypatch, tmp_path / "cache")
    root = tmp_path / "box"
    write_demo(root)
    asked(root)
    tried = _full_disk(monkeypatch)
    _arrive(root, 30, "a")
    asked(root)
    assert tried == [1]
    free = db._free_bytes(str(tmp_path / "cache"))
    monkeypatch.setattr(db, "_free_bytes", lambda folder: free + 2 * db.RETRY_FREE_BYTES)
    _arrive(root, 1, "b")
    asked(root)
    assert tried == [1, 1]


def _keepers(root):
    """The path of a letter keeping the children of its id, and of the scan's first letter
    (which keeps the scan's forks, cycles, dangling pointers and open disputes)."""
    res = resolve(scan(root), AT)
    letters = res.snapshot.letters
    asked_about = next(x for x in letters if res.children(x))
    return min(res.by_id(asked_about.id), key=lambda x: x.path).path, letters[0].path


def _replaced(kept: dict, key: str, value: str | None) -> str:
    """``kept`` as JSON text with ``key`` (``a.b``: ``b`` of ``a``) given the JSON text
    ``value`` (None: dropped)."""
    import json

    outer, _, inner = key.partition(".")
    if inner:
        value = _replaced(kept[outer], inner, value)
    parts = [f"{json.dumps(k)}:{json.dumps(v)}" for k, v in kept.items() if k != outer]
    if value is not None:
        parts.append(f"{json.dumps(outer)}:{value}")
    return "{" + ",".join(parts) + "}"


@pytest.mark.parametrize("whose,key,value", [
    ("children", "c", '["nobody/inbox/nothing.md"]'),
    ("children", "c", "[1]"),
    ("children", "c", '"not a list"'),
    ("children", "c", "[not json"),
    ("children", "unknown", "1"),
    ("scan", "w", None),
    ("scan", "w", "[]"),
    ("scan", "w.forks", '[["a"]]'),
    ("scan", "w.dangling", '[["nobody/inbox/nothing.md","re","x"]]'),
    ("scan", "w.dangling", None),
    ("scan", "w.open", "[[2,[]]]"),
])
def test_a_damaged_structure_found_when_read(demo, whose, key, value):
    """A letter's kept structure that names a file the scan has not, or has another shape
    (its checksum in order), is found when asked: one notice, and the resolver's answers
    over the same scan."""
    import json

    from tests.store.test_differential import structure

    from letterbox_tui.store.records import answers_checksum

    asked(demo), asked(demo)
    path = store_path(str(demo))
    target = _keepers(demo)[0 if whose == "children" else 1]
    con = sqlite3.connect(path)
    (record,) = con.execute("SELECT record FROM answers WHERE path = ?", (target,)).fetchone()
    head, kept = record.rsplit(b"\x1f", 1)
    record = head + b"\x1f" + _replaced(json.loads(kept), key, value).encode()
    con.execute("UPDATE answers SET record = ?, crc = ? WHERE path = ?",
                (record, answers_checksum(target, record), target))
    con.commit()
    con.close()
    said: list[str] = []
    got = asked(demo, said)
    assert isinstance(got, StoredAnswers)
    want = structure(resolve(scan(demo), AT))
    assert structure(got) == want
    assert len(said) == 1 and "damaged" in said[0], said
    assert not os.path.exists(path)  # the next command builds it anew
    assert structure(asked(demo)) == want


@pytest.mark.parametrize("reasons", [b"[not json", b'[["too","few"]]', b'{"a":1}'])
def test_damaged_reasons_found_when_first_read(demo, reasons):
    """A kept answer's reasons are decoded when first read: reasons of another shape (their
    checksum in order) found then are said once, and the resolver's are given instead."""
    from letterbox_tui.store.records import ANSWERS, answers_checksum

    asked(demo), asked(demo)
    path = store_path(str(demo))
    con = sqlite3.connect(path)
    target = None
    for where, record in con.execute("SELECT path, record FROM answers ORDER BY path"):
        parts = record.split(b"\x1f")
        at = next((i for i in range(len(ANSWERS)) if i and parts[len(ANSWERS) + 1 + i]), None)
        if at is not None:
            target, name = where, ANSWERS[at]
            parts[len(ANSWERS) + 1 + at] = reasons
            record = b"\x1f".join(parts)
            con.execute("UPDATE answers SET record = ?, crc = ? WHERE path = ?",
                        (record, answers_checksum(where, record), where))
            break
    con.commit()
    con.close()
    assert target is not None
    said: list[str] = []
    got = asked(demo, said)
    want = resolve(scan(demo), AT)
    letter = next(x for x in got.snapshot.letters if x.path == target)
    kept = getattr(got, name)(letter)
    assert kept.value == getattr(want, name)(letter).value and not said  # the value, from the store
    assert kept.reasons == getattr(want, name)(letter).reasons  # the reasons, from the letters
    assert len(said) == 1 and "damaged" in said[0], said
    assert not os.path.exists(path)


def test_a_store_that_miscounts_its_files_after_a_change(demo, truth):
    """The rows of every file are first read when the store is written (a change reads only
    the folders it touched): a count that does not match is found there, said once, and
    the store rebuilt; the answer is the letters'."""
    asked(demo), asked(demo)
    _set_meta(store_path(str(demo)), "files", "1")
    new = demo / "planner" / "inbox" / "zz-miscounted.md"
    new.write_text("---\nid: zz-miscounted\nfrom: builder\nto: planner\ntype: info\n"
                   "requires_ack: false\nsent: 2026-11-20T00:00:00Z\n---\nbody\n")
    try:
        said: list[str] = []
        assert answer(asked(demo, said)) == answer(resolve(scan(demo), AT))
        assert len(said) == 1 and "store" in said[0], said
        assert answer(asked(demo)) == answer(resolve(scan(demo), AT))
        assert isinstance(asked(demo), StoredAnswers)  # rebuilt
    finally:
        new.unlink()


@pytest.mark.parametrize("damage", ["gone", "one more"])
def test_an_index_row_missing_or_foreign_is_not_trusted(demo, damage):
    """Each folder's index rows are checked against the folders the generation says it
    indexed: a row gone (or one more) is said once, and the letter is found by looking at
    every letter, never missed."""
    asked(demo), asked(demo)
    alias = next(x for x in scan(demo).letters if x.name != x.id + ".md" and x.seat == "planner"
                 and x.folder == "processed")
    path = store_path(str(demo))
    con = sqlite3.connect(path)
    if damage == "gone":
        con.execute("DELETE FROM indexes WHERE name = 'aliases:planner/processed/'")
    else:  # a row of its own checksum, for a folder the generation did not index
        value = b"{}"
        con.execute("INSERT INTO indexes (name, value, crc) VALUES (?, ?, ?)",
                    ("aliases:nobody/inbox/", value, index_checksum("aliases:nobody/inbox/", value)))
    con.commit()
    con.close()
    said: list[str] = []
    got = asked(demo, said)
    assert isinstance(got, StoredAnswers)
    assert [x.path for x in got.by_id(alias.id)] == [alias.path]
    assert len(said) == 1 and "damaged" in said[0] and "every folder" in said[0], said
    assert not os.path.exists(path)  # the next command builds it anew


def test_a_header_column_naming_no_value_is_not_used(demo, monkeypatch):
    """A folder's header row whose checksum holds but whose codes name no value (written so
    by a bug, say) is not used: a lookup by sender looks at the letters themselves."""
    import json

    from letterbox_tui.core.lazy import with_field

    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))  # every folder settled: vouched for
    if os.path.exists(store_path(str(demo))):  # (written by another test, with the folders unsettled)
        os.unlink(store_path(str(demo)))
    asked(demo), asked(demo)
    path = store_path(str(demo))
    con = sqlite3.connect(path)
    name, value = con.execute("SELECT name, value FROM indexes WHERE name = 'headers:planner/inbox/'").fetchone()
    headers = json.loads(value)
    headers["from"] = [len(headers["values"])] * len(headers["from"])
    value = json.dumps(headers).encode()
    con.execute("UPDATE indexes SET value = ?, crc = ? WHERE name = ?", (value, index_checksum(name, value), name))
    con.commit()
    con.close()
    letters = asked(demo).snapshot.letters
    everyone = scan(demo).letters
    sender = next(x.sender for x in everyone if x.path.startswith("planner/inbox/"))
    want = [x.path for x in everyone if x.sender == sender]
    assert [x.path for x in with_field(letters, "from", [sender])] == want

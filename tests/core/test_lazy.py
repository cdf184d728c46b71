"""``KeptLetters``: a sequence of letters decoded from a source when touched, in scan order,
found by path, id and thread without decoding the others."""

from __future__ import annotations

import threading

import pytest

from letterbox_tui.core.lazy import KeptLetters
from letterbox_tui.core.model import Letter, letter_at, letters_with_id, letters_with_thread


class Source:
    """Letters made from their path; counts what it was asked to decode."""

    def __init__(self, aliases=None, threads=None, damaged=False):
        self.decoded: list[str] = []
        self.aliases = aliases or {}
        self.threads = threads or {}
        self.damaged = damaged
        self.lock = threading.Lock()

    def _letter(self, pending):
        path, size, mtime_ns, inode, ctime_ns = pending
        seat, folder, name = path.split("/")
        with self.lock:
            self.decoded.append(path)
        letter_id = {v: k for k, vs in self.aliases.items() for v in vs}.get(path, name[:-3])
        thread = next((t for t, ps in self.threads.items() if path in ps), "")
        return Letter(letter_id, thread=thread, seat=seat, folder=folder, path=path, name=name, size=size,
                      mtime_ns=mtime_ns, inode=inode, ctime_ns=ctime_ns)

    def decode(self, pending):
        return self._letter(pending)

    def decode_folder(self, prefix, pending, of):
        assert len(pending) <= of
        return [self._letter(p) for p in pending]

    def paths_with(self, index, value):
        if self.damaged:
            return None
        return list((self.aliases if index == "aliases" else self.threads).get(value, []))

    def column(self, name):
        return None


def kept(source, folders=None):
    folders = folders or [("a/inbox/", ["x1.md", "x2.md", "x3.md"]), ("a/processed/", []), ("b/inbox/", ["y1.md", "y2.md"])]
    return KeptLetters([(prefix, names, [n for j in range(len(names)) for n in (j, j + 1, j + 2, j + 3)])
                        for prefix, names in folders], source)


def test_it_is_a_list_of_letters_in_scan_order_decoded_when_touched():
    source = Source()
    letters = kept(source)
    assert len(letters) == 5 and letters.pending == 5 and not source.decoded
    assert letters[3].path == "b/inbox/y1.md" and source.decoded == ["b/inbox/y1.md"]
    assert letters[-1].path == "b/inbox/y2.md" and letters[-1] is letters[4]
    assert (letters[1].size, letters[1].mtime_ns, letters[1].inode, letters[1].ctime_ns) == (1, 2, 3, 4)
    assert [x.path for x in letters] == ["a/inbox/x1.md", "a/inbox/x2.md", "a/inbox/x3.md", "b/inbox/y1.md",
                                         "b/inbox/y2.md"]
    assert letters.pending == 0 and sorted(source.decoded) == sorted(set(source.decoded))  # each once
    assert [x.path for x in letters[1:3]] == ["a/inbox/x2.md", "a/inbox/x3.md"]
    assert letters == list(letters) and letters[0] in letters
    with pytest.raises(IndexError):
        letters[5]


def test_found_by_path_id_and_thread_decoding_only_those():
    source = Source(aliases={"odd": ["b/inbox/y2.md"]}, threads={"x1": ["b/inbox/y1.md"]})
    letters = kept(source)
    assert letters.position("a/inbox/x2.md") == 1 and letters.position("a/inbox/nope.md") == -1
    assert letters.position("c/inbox/x1.md") == -1
    assert letter_at(letters, "b/inbox/y1.md").path == "b/inbox/y1.md"
    assert [x.path for x in letters_with_id(letters, "odd")] == ["b/inbox/y2.md"]
    assert letters_with_id(letters, "y2") == []  # its file's name is not its id
    assert [x.path for x in letters_with_thread(letters, "x1")] == ["a/inbox/x1.md", "b/inbox/y1.md"]
    assert set(source.decoded) == {"b/inbox/y1.md", "b/inbox/y2.md", "a/inbox/x1.md"}
    assert letters.pending == 2


def test_an_index_that_cannot_be_used_looks_at_every_letter():
    letters = kept(Source(damaged=True))
    assert [x.path for x in letters_with_id(letters, "x2")] == ["a/inbox/x2.md"]
    assert letters.pending == 0


def test_ids_found_together_are_each_ids_letters_found_alone():
    """``letters_with_ids`` answers for each id what ``letters_with_id`` answers alone
    (aliases, same-named files in two folders, an id held by none), decoding only those."""
    folders = [("a/inbox/", ["x1.md", "x2.md", "x3.md"]), ("b/inbox/", ["x1.md", "y2.md"]), ("c/inbox/", ["x1.md"])]
    ids = ["x1", "odd", "y2", "x3", "none", "x1"]
    alone = kept(Source(aliases={"odd": ["b/inbox/y2.md", "a/inbox/x3.md"]}), folders)
    want = {i: [x.path for x in letters_with_id(alone, i)] for i in ids}
    assert want["x1"] == ["a/inbox/x1.md", "b/inbox/x1.md", "c/inbox/x1.md"] and want["odd"] == ["a/inbox/x3.md", "b/inbox/y2.md"]
    source = Source(aliases={"odd": ["b/inbox/y2.md", "a/inbox/x3.md"]})
    letters = kept(source, folders)
    got = letters.letters_with_ids(ids)
    assert list(got) == ["x1", "odd", "y2", "x3", "none"]
    assert {i: [x.path for x in found] for i, found in got.items()} == want
    assert "a/inbox/x2.md" not in source.decoded and letters.pending == 1
    alone, damaged = kept(Source(damaged=True), folders), kept(Source(damaged=True), folders)
    assert {i: [x.path for x in found] for i, found in damaged.letters_with_ids(ids).items()} == {
        i: [x.path for x in letters_with_id(alone, i)] for i in ids}  # no index: every letter looked at


def test_many_decodes_a_folder_together_and_keeps_the_order_asked():
    names = [f"n{i:03}.md" for i in range(100)]
    source = Source()
    letters = kept(source, [("s/inbox/", names)])
    got = letters.many([50, 3, 99, 3])
    assert [x.name for x in got] == ["n050.md", "n003.md", "n099.md", "n003.md"]
    assert letters.pending == 97


def test_threads_decode_each_letter_once():
    names = [f"n{i:04}.md" for i in range(2000)]
    source = Source()
    letters = kept(source, [("s/inbox/", names)])
    barrier = threading.Barrier(4)

    def ask(step):
        barrier.wait()
        for i in range(step, 2000, 3):
            letters[i]
        list(letters)

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert letters.pending == 0 and len(source.decoded) == len(set(source.decoded)) == 2000
    assert all(x is not None for x in letters)


def test_plain_lists_are_looked_through():
    xs = [Letter("a", path="s/inbox/a.md", name="a.md"), Letter("b", thread="a", path="s/inbox/b.md", name="b.md")]
    assert letter_at(xs, "s/inbox/b.md") is xs[1] and letter_at(xs, "nope") is None
    assert letters_with_id(xs, "b") == [xs[1]]
    assert letters_with_thread(xs, "a") == xs


def test_ids_are_found_the_same_by_searching_the_folders_and_through_the_map(monkeypatch):
    from letterbox_tui.core import lazy

    monkeypatch.setattr(lazy, "_SEARCHED", 3)
    folders = [("a/inbox/", ["x1.md", "x2.md", "y1.md"]), ("a/processed/", []), ("b/inbox/", ["x2.md", "z.md"])]
    letters = kept(Source(aliases={"odd": ["b/inbox/z.md"]}), folders)
    asked = ["x2", "odd", "y1", "x2", "odd", "y1", "nope", "z"]
    got = [[x.path for x in letters_with_id(letters, i)] for i in asked]
    assert letters._names is not None  # the later ones went through the map
    assert got[:3] == got[3:6] == [["a/inbox/x2.md", "b/inbox/x2.md"], ["b/inbox/z.md"], ["a/inbox/y1.md"]]
    assert got[6:] == [[], []]  # z.md holds the id "odd"


def test_many_ids_asked_together_are_found_as_each_alone(monkeypatch):
    from letterbox_tui.core import lazy

    monkeypatch.setattr(lazy, "_SEARCHED", 2)  # more ids than this at once: through the map
    folders = [("a/inbox/", ["x1.md", "x2.md", "y1.md"]), ("a/processed/", []), ("b/inbox/", ["x2.md", "z.md"])]
    asked = ["x2", "odd", "y1", "nope", "z", "x1"]
    alone = kept(Source(aliases={"odd": ["b/inbox/z.md"]}), folders)
    each = {i: [x.path for x in letters_with_id(alone, i)] for i in asked}
    letters = kept(Source(aliases={"odd": ["b/inbox/z.md"]}), folders)
    together = {i: [x.path for x in held] for i, held in letters.letters_with_ids(asked).items()}
    assert letters._names is not None  # made at once, no folder searched name by name
    assert together == each
    assert together["x2"] == ["a/inbox/x2.md", "b/inbox/x2.md"] and together["odd"] == ["b/inbox/z.md"]
    assert together["z"] == [] and together["nope"] == []

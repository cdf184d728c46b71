"""The lookups of a scan's letters by path, id and thread (``core.model``) answer what a
walk over the letters would, and ask a sequence that has its own lookups of it."""

from __future__ import annotations

from letterbox_tui.core.model import letter_at, letters_with_id, letters_with_thread
from letterbox_tui.core.scan import scan
from tests.conftest import make_box


def _letters(tmp_path, name="box"):
    box = make_box(tmp_path / name, "alpha", "beta")
    box.letter("a1", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("a1", frm="alpha", to="beta", type="request", requires_ack="true", folder="processed")
    box.letter("a2", frm="beta", to="alpha", type="result", re="a1", thread="a1", seat="alpha")
    box.letter("a3", frm="beta", to="alpha", type="info", thread="label", seat="alpha")
    return scan(box.root).letters


def test_the_lookups_answer_what_a_walk_would(tmp_path):
    letters = _letters(tmp_path)
    for x in letters:
        assert letter_at(letters, x.path) is x
        assert letters_with_id(letters, x.id) == [y for y in letters if y.id == x.id]
        assert letters_with_thread(letters, x.thread_id) == [y for y in letters if y.thread_id == x.thread_id]
    assert len(letters_with_id(letters, "a1")) == 2
    assert [x.id for x in letters_with_thread(letters, "a1")].count("a2") == 1
    assert letter_at(letters, "alpha/inbox/none.md") is None
    assert letters_with_id(letters, "none") == [] and letters_with_thread(letters, "none") == []


def test_another_list_is_indexed_anew(tmp_path):
    first = _letters(tmp_path, "one")
    assert letters_with_id(first, "a3")
    second = [x for x in first if x.id != "a3"]
    assert letters_with_id(second, "a3") == []
    assert letters_with_id(first, "a3")  # and back
    first.pop()  # a list that changed length is not answered from its old index
    assert letters_with_id(first, first[-1].id) == [x for x in first if x.id == first[-1].id]


def test_a_sequence_with_its_own_lookups_is_asked(tmp_path):
    letters = _letters(tmp_path)

    class Lazy(list):
        asked: list[str] = []

        def letter_at(self, path):
            self.asked.append(path)
            return None

        def letters_with_id(self, letter_id):
            self.asked.append(letter_id)
            return ()

        def letters_with_thread(self, thread_id):
            self.asked.append(thread_id)
            return ()

    lazy = Lazy(letters)
    assert letter_at(lazy, letters[0].path) is None
    assert letters_with_id(lazy, "a1") == [] and letters_with_thread(lazy, "label") == []
    assert lazy.asked == [letters[0].path, "a1", "label"]

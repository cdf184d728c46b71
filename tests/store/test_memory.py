"""Stored answers hold each letter's answers once: the store's rows are let go when the
answers are returned, and a record is let go once it is decoded."""

from __future__ import annotations

import gc
import weakref
from datetime import timedelta

from letterbox_tui.core.demo import DEMO_NOW, write_demo
from letterbox_tui.store import open_answers
from letterbox_tui.store.db import Store
from letterbox_tui.store.stored import StoredAnswers

AT = DEMO_NOW + timedelta(hours=3)


def test_stored_answers_keep_no_store_and_no_record_twice(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "box"
    write_demo(root)
    open_answers(root, AT)
    opened: list[weakref.ref] = []
    plain_open = Store.open.__func__

    def open_seen(cls, root, notice, *rest):
        store = plain_open(cls, root, notice, *rest)
        opened.append(weakref.ref(store))
        return store

    monkeypatch.setattr(Store, "open", classmethod(open_seen))
    got = open_answers(root, AT)
    assert isinstance(got, StoredAnswers)
    gc.collect()
    assert opened and opened[-1]() is None, "the answers keep the store (and its rows) alive"
    letters = got.snapshot.letters
    for letter in letters:
        got.state(letter), got.accepted(letter)
    assert not got._kept, "a decoded record is still kept beside its answers"

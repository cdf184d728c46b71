"""``open_answers(write=...)``: a resident process is given the store's writing to run
after the answers are in use; until it has run the store is as it was."""

from __future__ import annotations

from datetime import timedelta

from letterbox_tui.core.demo import DEMO_NOW, write_demo
from letterbox_tui.core.resolve import Resolution
from letterbox_tui.store import open_answers
from letterbox_tui.store.stored import StoredAnswers

AT = DEMO_NOW + timedelta(hours=3)


def test_the_writing_is_handed_over_and_kept_once_run(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "box"
    write_demo(root)
    jobs = []
    first = open_answers(root, AT, write=jobs.append)
    assert isinstance(first, Resolution) and len(jobs) == 1
    assert isinstance(open_answers(root, AT, write=jobs.append), Resolution)  # not written yet
    for job in jobs:
        job()
    kept = open_answers(root, AT, write=jobs.append)
    assert isinstance(kept, StoredAnswers) and len(jobs) == 2  # nothing more to write
    assert [kept.state(x).value for x in kept.snapshot.letters] == [first.state(x).value for x in first.snapshot.letters]

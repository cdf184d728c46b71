"""The index's state kept beside its generation as a file a reader maps (``index_state``):
the same state as the meta's row, read from the file when it is whole, from the row when the
file is missing, cut short or not the one the meta names; a refresh leaves exactly the file
its meta names, and dropping the index removes it."""

from __future__ import annotations

import json
import os

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.settings import load_settings
from letterbox_tui.core.speed import index_state, memo
from letterbox_tui.core.speed.index import Index, drop


@pytest.fixture
def settled(monkeypatch):
    monkeypatch.setattr(memo, "RACY_NS", 0)


def _built(tmp_path, capsys):
    root = tmp_path / "box"
    write_demo(root)
    main(["--root", str(root), "query", "type=request", "--json"])
    capsys.readouterr()
    ix = Index(str(root), load_settings(root).id_time_is_utc)
    assert ix.open() and ix.why_not() is None
    return root, ix


def _flat(state) -> tuple:
    dirs, folders = state
    return dirs, tuple((rel, bytes(names), n, bytes(stats)) for rel, names, n, stats in folders)


def _row_state(ix: Index):
    (blob,) = ix.db.execute("SELECT v FROM meta WHERE k = 'state'").fetchone()
    return memo.state_of(blob)


def test_the_state_file_holds_the_meta_s_state_and_is_what_a_reader_maps(tmp_path, capsys, settled, monkeypatch):
    root, ix = _built(tmp_path, capsys)
    assert "state" not in ix.meta and "sidecars" not in ix.meta  # (read when wanted, not at open)
    assert ix._sidecars() and set(ix._sidecars()) == set(ix.snapshot("1", {}, "x").sidecars)
    files = index_state.others(ix.file)
    assert [os.path.basename(f) for f in files] == [ix.meta["state_file"]]
    assert os.path.getsize(files[0]) == ix.meta["state_size"]
    want = _flat(_row_state(ix))
    maps = []
    real = index_state.mapped
    monkeypatch.setattr(index_state, "mapped", lambda *a: maps.append(r := real(*a)) or r)
    assert _flat(ix.state()) == want
    assert maps and maps[0] is not None  # read from the file
    ix.close()


@pytest.mark.parametrize("spoil", ["missing", "short", "foreign", "named elsewhere"])
def test_a_state_file_that_is_not_whole_is_passed_over_for_the_row(tmp_path, capsys, settled, spoil):
    root, ix = _built(tmp_path, capsys)
    want = _flat(_row_state(ix))
    (path,) = index_state.others(ix.file)
    if spoil == "missing":
        os.unlink(path)
    elif spoil == "short":
        with open(path, "r+b") as fh:
            fh.truncate(ix.meta["state_size"] // 2)
    elif spoil == "foreign":
        ix.meta["state_file"] = "../" + os.path.basename(path)
    else:
        ix.meta["state_file"] = os.path.basename(path) + "x"
    assert index_state.mapped(ix.file, ix.meta["state_file"], ix.meta["state_size"]) is None
    assert _flat(ix.state()) == want
    ix.close()
    if spoil in ("missing", "short"):  # and a question is still answered from the index, rightly
        argv = ["--root", str(root), "query", "type=request", "until=2026-12-01T00:00:00Z", "--json"]
        main(argv)
        got = capsys.readouterr()
        os.environ["LETTERBOX_TUI_NO_CACHE"] = "1"
        try:
            main(argv)
        finally:
            del os.environ["LETTERBOX_TUI_NO_CACHE"]
        scratch = capsys.readouterr()
        a, b = json.loads(got.out), json.loads(scratch.out)
        assert a["matches"] == b["matches"] and a["unknown"] == b["unknown"] and got.err == ""


def test_a_refresh_leaves_the_one_state_file_its_meta_names_and_drop_removes_it(tmp_path, capsys, settled):
    root, ix = _built(tmp_path, capsys)
    old = ix.meta["state_file"]
    gen = ix.file
    ix.close()
    letter = sorted(root.glob("*/inbox/*.md"))[0]
    letter.rename(letter.parent.parent / "processed" / letter.name)
    main(["--root", str(root), "query", "type=request", "--json"])  # (refreshed)
    capsys.readouterr()
    ix = Index(str(root), load_settings(root).id_time_is_utc)
    assert ix.open() and ix.file == gen
    assert ix.meta["state_file"] != old
    assert [os.path.basename(f) for f in index_state.others(gen)] == [ix.meta["state_file"]]
    assert _flat(ix.state()) == _flat(_row_state(ix))
    ix.close()
    drop(ix.path)
    assert index_state.others(gen) == [] and not os.path.exists(gen)

"""``bench --dir DIR`` deletes only what it generated (issue 18 item 10): a letterbox it
did not make is refused with exit 2 and left as it was, whatever marker it holds."""

from __future__ import annotations

import json
import os

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core.speed import benchgen


def tree(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def bench(capsys, where, letters: int = 40) -> tuple[int, str]:
    code = main(["bench", "--letters", str(letters), "--no-app", "--dir", str(where), "--repeat", "1"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("marker", [
    {"letters": 100, "seed": 1, "version": 1},  # what older versions wrote: any JSON object counted
    {},
    "crafted",  # the exact keys of today's marker, but not for files this letterbox holds
])
def test_a_letterbox_it_did_not_make_is_refused_and_kept(capsys, box, marker):
    box.letter("a-1")
    box.letter("a-2", frm="beta", to="alpha")
    if marker == "crafted":
        text = benchgen._marker_text(100, 1, "0" * 32, 2)
        (box.root / benchgen.MANIFEST).write_text("f alpha/inbox/a-2.md\nf beta/inbox/a-1.md\n")
    else:
        text = json.dumps(marker)
    (box.root / benchgen.MARKER).write_text(text)
    before = tree(box.root)
    code, err = bench(capsys, box.root)
    assert code == 2 and err.count("\n") == 1 and "not an empty directory or a bench letterbox" in err
    assert tree(box.root) == before


def test_its_own_letterbox_is_replaced_but_nothing_else_is_deleted(capsys, tmp_path):
    where = benchgen.generate(tmp_path / "b", 30, seed=1)
    assert benchgen.marker(where) is not None
    mine = where / "planner" / "inbox" / "my-own-notes.md"
    mine.write_text("not the bench's\n")
    (where / "extra").mkdir()
    (where / "extra" / "keep.txt").write_text("keep")
    code, err = bench(capsys, where, letters=31)  # another size: the old one goes first
    assert code == 2 and "bench did not make" in err
    assert mine.read_text() == "not the bench's\n" and (where / "extra" / "keep.txt").read_text() == "keep"
    left = sorted(str(p.relative_to(where)) for p in where.rglob("*"))
    assert left == ["extra", "extra/keep.txt", "planner", "planner/inbox", "planner/inbox/my-own-notes.md"]


def test_removing_never_follows_a_folder_swapped_for_a_symlink(tmp_path):
    where = benchgen.generate(tmp_path / "b", 30, seed=1)
    elsewhere = tmp_path / "elsewhere"
    (where / "builder").rename(elsewhere)  # the seat's real folder moved away ...
    os.symlink(elsewhere, where / "builder")  # ... and a symlink in its place
    before = tree(elsewhere)
    assert before
    left = benchgen.remove(where)
    assert left == ["builder"] and tree(elsewhere) == before  # not one file through the link


def test_a_fresh_directory_is_generated_and_reused(tmp_path):
    where = benchgen.generate(tmp_path / "b", 25, seed=2)
    assert benchgen.is_current(where, 25, 2) and not benchgen.is_current(where, 26, 2)
    m = benchgen.marker(where)
    dirs, files = benchgen.manifest(where, m)
    assert len(files) == m["files"] and "planner/inbox" in dirs
    assert benchgen.remove(where) == []  # all of it, and only it


def test_a_damaged_manifest_deletes_nothing(tmp_path):
    where = benchgen.generate(tmp_path / "b", 25, seed=2)
    with open(where / benchgen.MANIFEST, "a") as fh:
        fh.write("f ../../outside.txt\n")
    before = tree(where)
    with pytest.raises(ValueError):
        benchgen.remove(where)
    assert tree(where) == before

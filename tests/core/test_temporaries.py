"""Writers' hidden temporaries left by a kill (issue 18): a writer removes its own stale ones
(over a day old) in the folders it writes to; ``check`` lists the rest as warnings."""

from __future__ import annotations

import json
import os
import time

from letterbox_tui.cli import main
from letterbox_tui.core.write import Draft, deliver

DAY = 24 * 3600


def aged(path, seconds):
    t = time.time() - seconds
    os.utime(path, (t, t), follow_symlinks=False)
    return path


def test_a_writer_removes_its_own_stale_temporaries_and_nothing_else(box, tmp_path):
    inbox = box.root / "beta" / "inbox"
    ours_old = aged(box.raw("beta/inbox/.x.md.tmp.0123456789ab", "half a letter"), DAY + 60)
    ours_new = box.raw("beta/inbox/.y.md.tmp.ba9876543210", "being written")
    theirs_old = aged(box.raw("beta/inbox/.z.tmp.AbC123", "the protocol's"), DAY + 60)
    outside = tmp_path / "outside"
    outside.write_text("keep me")
    link = inbox / ".l.md.tmp.aaaaaaaaaaaa"
    os.symlink(outside, link)
    aged(link, DAY + 60)
    other_folder = aged(box.raw("alpha/inbox/.w.md.tmp.0123456789ab", "elsewhere"), DAY + 60)
    deliver(box.root, Draft("alpha", "beta", "info", "hello", "Hi.\n"))
    assert not ours_old.exists()
    assert ours_new.exists() and theirs_old.exists() and link.is_symlink() and outside.read_text() == "keep me"
    assert other_folder.exists()  # only folders it writes to


def test_check_lists_stale_temporaries_as_warnings(box, capsys):
    aged(box.raw("beta/inbox/.z.tmp.AbC123", "the protocol's"), DAY + 60)
    aged(box.raw("alpha/processed/.q.md.tmp.0123456789ab", "ours"), DAY + 60)
    box.raw("beta/inbox/.fresh.md.tmp.0123456789ab", "being written now")
    code = main(["--root", str(box.root), "check", "--json"])
    doc = json.loads(capsys.readouterr().out)
    found = [f for f in doc["findings"] if f["code"] == "stale-temporary"]
    assert code == 0  # a warning, not a problem
    assert sorted(p for f in found for p in f["paths"]) == ["alpha/processed/.q.md.tmp.0123456789ab",
                                                           "beta/inbox/.z.tmp.AbC123"]
    assert all(f["severity"] == "warning" for f in found)
    assert (box.root / "beta/inbox/.z.tmp.AbC123").exists()  # check never removes anything

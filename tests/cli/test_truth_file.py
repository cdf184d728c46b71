"""``digest --write PATH`` / ``--check PATH`` (SPEC 7) and ``review --check --every``:
the current-truth file an agent loads at start-up, rewritten only when its letters change."""

from __future__ import annotations

import os
import re

import frontmatter
import pytest

from letterbox_tui.core import truth_file
from tests.cli.helpers import cli, cli_json

AT = "2026-06-01T00:00:00Z"
PAST = "2026-05-01T00:00:00Z"
FUTURE = "2026-09-01T00:00:00Z"


@pytest.fixture
def team(box):
    """alpha asks beta for two things (one late), alpha's decision is in force."""
    box.letter("ask-late", frm="alpha", to="beta", type="request", requires_ack="true", deadline=PAST)
    box.letter("ask-later", frm="alpha", to="beta", type="request", requires_ack="true", deadline=FUTURE)
    box.letter("plan", frm="alpha", to="beta", type="decision", subject="ship on friday")
    return box


def write(capsys, box, path, *more):
    return cli(capsys, box, "digest", "--at", AT, "--write", str(path), *more)


def body_lines(path):
    return frontmatter.loads(path.read_text()).content.splitlines()


def test_round_trip_front_matter_and_every_cited_id_exists(capsys, team, tmp_path):
    path = tmp_path / "out" / "MEMORY-letters.md"
    path.parent.mkdir()
    code, out, err = write(capsys, team, path)
    assert code == 0, err
    assert out.strip() == f"{path}: written"
    post = frontmatter.loads(path.read_text())
    meta = post.metadata
    assert meta["generator"] == "letterbox-tui" and meta["version"]
    assert meta["root"] == str(team.root) and meta["seat"] is None
    assert meta["scope"] == {"complete": True, "letters": 3, "unreadable": 0, "unsupported": 0, "partial": False}
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", meta["source"])
    assert meta["generated_at"].endswith("Z")
    cited = re.findall(r"^- (?:LATE )?`([^`]+)`", post.content, re.M)
    # the owed tasks twice: among the most urgent, and owed
    assert sorted(cited) == ["ask-late", "ask-late", "ask-later", "ask-later", "plan"]
    assert "## Most urgent (2)" in post.content
    assert "Owed items by attention code: late 1, never-acked 2." in post.content
    assert "- `ask-later` ask-later: beta owes alpha; never-acked · `beta/inbox/ask-later.md`" in post.content
    _, listed = cli_json(capsys, team, "query")
    ids = {r["id"] for r in listed["matches"]}
    assert set(cited) <= ids
    # every line cites its letter's path too, and no body is copied
    assert "`beta/inbox/ask-late.md`" in post.content and "body" not in post.content
    assert any(line.startswith("- LATE `ask-late`") for line in post.content.splitlines())


def test_unchanged_letterbox_leaves_bytes_and_mtime(capsys, team, tmp_path):
    path = tmp_path / "truth.md"
    write(capsys, team, path)
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    os.utime(path, ns=(1, 1))  # an mtime a rewrite could not keep
    code, out, _ = write(capsys, team, path)
    assert code == 0 and "unchanged" in out
    assert path.read_bytes() == before[0] and os.stat(path).st_mtime_ns == 1
    code, out, _ = cli(capsys, team, "digest", "--at", AT, "--check", str(path))
    assert code == 0 and out.strip() == f"{path}: current"


def test_a_letter_the_digest_does_not_show_leaves_source(capsys, team, tmp_path):
    path = tmp_path / "truth.md"
    write(capsys, team, path)
    source = frontmatter.loads(path.read_text())["source"]
    os.utime(path, ns=(1, 1))
    team.letter("chatter", frm="beta", to="alpha", type="info")  # answers nothing, decides nothing
    code, out, _ = write(capsys, team, path)
    assert "unchanged" in out and os.stat(path).st_mtime_ns == 1
    assert frontmatter.loads(path.read_text())["source"] == source


def test_an_answer_that_changes_makes_check_exit_1_and_rewrites_only_its_lines(capsys, team, tmp_path):
    path = tmp_path / "truth.md"
    write(capsys, team, path)
    old = body_lines(path)
    team.letter("done", frm="beta", to="alpha", type="result", re="ask-later")
    code, out, err = cli(capsys, team, "digest", "--at", AT, "--check", str(path))
    assert code == 1, err
    assert out.strip() == f"{path}: stale: 1 letter no longer cited"
    code, out, _ = write(capsys, team, path)
    assert code == 0 and "rewritten" in out
    new = body_lines(path)
    gone = [line for line in old if line not in new]
    added = [line for line in new if line not in old]
    # only the answered task's lines left; the headings' counts changed with them
    assert [line for line in gone if line.startswith("- ")] == [x for x in old if "`ask-later`" in x]
    assert len([line for line in gone if line.startswith("- ")]) == 2  # most urgent, and owed
    assert [line for line in added if line.startswith("- ")] == []
    assert [line for line in added if line.startswith("## ")] == ["## Most urgent (1)", "## Owed and late (1, 1 late)"]
    assert "Owed items by attention code: late 1, never-acked 1." in added
    code, out, _ = cli(capsys, team, "digest", "--at", AT, "--check", str(path))
    assert code == 0


def test_check_counts_added_and_changed(capsys, team, tmp_path):
    path = tmp_path / "truth.md"
    write(capsys, team, path)
    team.letter("ask-new", frm="alpha", to="beta", type="request", requires_ack="true", deadline=FUTURE)
    # time passing makes ask-later late: its answer changed
    code, out, _ = cli(capsys, team, "digest", "--at", "2026-10-01T00:00:00Z", "--check", str(path))
    assert code == 1
    assert "1 letter added" in out and "1 answer changed" in out
    code, doc = cli_json(capsys, team, "digest", "--at", AT, "--check", str(path))
    assert code == 1 and doc["status"] == "stale" and doc["path"] == str(path) and "scope" in doc


def test_max_lines_says_what_it_left_out(capsys, team, tmp_path):
    path = tmp_path / "truth.md"
    write(capsys, team, path, "--max-lines", "1")
    lines = [x for x in body_lines(path) if x.startswith("- ")]
    assert len([x for x in lines if x.startswith("- `") or x.startswith("- LATE")]) == 1
    assert "- … 2 more left out (--max-lines 1); `letterbox-tui digest` lists all" in lines
    assert frontmatter.loads(path.read_text())["cited"] == 5
    code, _, err = write(capsys, team, path, "--max-lines", "-1")
    assert code == 2 and "--max-lines" in err


def test_hostile_subject_is_neither_markup_nor_control(capsys, box, tmp_path):
    box.letter("plan", frm="alpha", to="beta", type="decision", subject="[x](http://evil) *now* <b>\u202e")
    path = tmp_path / "truth.md"
    write(capsys, box, path)
    text = path.read_text()
    assert "\u202e" not in text
    assert r"\[x\](http://evil) \*now\* \<b\>" in text


def _refused(capsys, box, path, *, why):
    before = box.tree_bytes()
    code, out, err = write(capsys, box, path)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and why in err
    assert box.tree_bytes() == before


def test_refuses_a_path_inside_the_letterbox(capsys, team):
    _refused(capsys, team, team.root / "MEMORY.md", why="inside the letterbox")
    _refused(capsys, team, team.root / "beta" / "inbox" / "x.md", why="inside the letterbox")


def test_refuses_a_directory_symlink_fifo_and_a_users_own_file(capsys, team, tmp_path):
    (tmp_path / "adir").mkdir()
    _refused(capsys, team, tmp_path / "adir", why="a directory")
    own = tmp_path / "notes.md"
    own.write_text("---\ntitle: my notes\n---\nmine\n")
    _refused(capsys, team, own, why="not a letterbox-tui digest")
    assert own.read_text() == "---\ntitle: my notes\n---\nmine\n"
    plain = tmp_path / "plain.md"
    plain.write_text("just text, no front matter\n")
    _refused(capsys, team, plain, why="not a letterbox-tui digest")
    real = tmp_path / "real.md"
    write(capsys, team, real)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    _refused(capsys, team, link, why="symlink")
    assert link.is_symlink()
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    _refused(capsys, team, fifo, why="not a regular file")
    code, _, err = cli(capsys, team, "digest", "--check", str(tmp_path / "missing.md"))
    assert code == 2 and "no such file" in err
    code, _, err = cli(capsys, team, "digest", "--check", str(own))
    assert code == 2 and "not a letterbox-tui digest" in err


def test_a_crash_before_the_rename_leaves_the_old_file(capsys, team, tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    path = tmp_path / "out" / "truth.md"
    write(capsys, team, path)
    old = path.read_bytes()
    team.letter("ask-new", frm="alpha", to="beta", type="request", requires_ack="true", deadline=FUTURE)

    def crash(*_a, **_k):
        raise KeyboardInterrupt  # the process dies between the temporary file and the rename

    monkeypatch.setattr(truth_file.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        truth_file.write_atomically(path, "new text\n")
    assert path.read_bytes() == old
    assert sorted(os.listdir(path.parent)) == ["truth.md"]  # the temporary is gone too


# --- review --check ------------------------------------------------------------------

def test_review_check_at_the_boundary(capsys, box):
    box.letter("rev", frm="alpha", to="alpha", type="review", sent="2026-05-31T09:00:00Z")
    box.letter("rev-old", frm="alpha", to="alpha", type="review", sent="2026-05-01T09:00:00Z")
    code, out, _ = cli(capsys, box, "review", "--check", "--every", "1d", "--as", "alpha", "--at", "2026-06-01T09:00:00Z")
    assert code == 0 and "in time" in out and "2026-05-31T09:00:00Z" in out
    code, out, _ = cli(capsys, box, "review", "--check", "--every", "1d", "--as", "alpha", "--at", "2026-06-01T09:00:01Z")
    assert code == 1 and "a review is due" in out and "2026-05-31T09:00:00Z" in out
    code, doc = cli_json(capsys, box, "review", "--check", "--every", "24h", "--as", "alpha", "--at", "2026-06-01T09:00:01Z")
    assert code == 1 and doc["due"] is True and doc["last"]["id"] == "rev"


def test_review_check_in_time_over_an_incomplete_scope_exits_3(capsys, box):
    """SPEC 7: 3 when the scope is incomplete, as digest --check gives for a current file:
    a later review may lie in the file that could not be read (the text says so)."""
    box.letter("rev", frm="alpha", to="alpha", type="review", sent="2026-05-31T09:00:00Z")
    box.raw("alpha/inbox/broken.md", "---\nid: broken\n")
    code, out, _ = cli(capsys, box, "review", "--check", "--every", "1d", "--as", "alpha", "--at", "2026-06-01T09:00:00Z")
    assert code == 3 and "in time" in out
    code, doc = cli_json(capsys, box, "review", "--check", "--every", "1d", "--as", "alpha", "--at", "2026-06-01T09:00:00Z")
    assert code == 3 and doc["due"] is False and doc["scope"]["complete"] is False
    code, out, _ = cli(capsys, box, "review", "--check", "--every", "1d", "--as", "alpha", "--at", "2026-06-01T09:00:01Z")
    assert code == 1  # due: 1, the first that applies


def test_review_check_without_a_review_and_bad_input(capsys, box):
    before = box.tree_bytes()
    code, out, _ = cli(capsys, box, "review", "--check", "--every", "1d", "--as", "beta")
    assert code == 1 and "no review by beta" in out
    for argv, why in (
        (["--every", "1x"], "--every"),
        (["--every", "0d"], "a count of 1 or more"),  # (it said "expected a count and a unit" of 0d)
        ([], "needs --every"),
        (["--every", "1d", "--at", "yesterday-ish"], "--at"),
    ):
        code, _, err = cli(capsys, box, "review", "--check", "--as", "alpha", *argv)
        assert code == 2 and why in err, err
    code, _, err = cli(capsys, box, "review", "--check", "--every", "1d", "--as", "nobody")
    assert code == 2 and "no seat" in err
    code, _, err = cli(capsys, box, "review", "--every", "1d", "--as", "alpha")
    assert code == 2 and "--check" in err
    assert box.tree_bytes() == before


def test_a_changed_letterbox_or_file_is_never_answered_unchanged(capsys, team, tmp_path):
    path = tmp_path / "truth.md"
    write(capsys, team, path)
    # a new letter that changes an answer: the file rewritten
    team.letter("done", frm="beta", to="alpha", type="result", re="ask-later")
    code, out, _ = write(capsys, team, path)
    assert "rewritten" in out
    # nothing changed since that rewrite
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    assert "unchanged" in write(capsys, team, path)[1]
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before
    # the file replaced by the user's own: refused, and kept
    path.write_text("my own notes\n")
    code, _, err = write(capsys, team, path)
    assert code == 2 and "not a letterbox-tui digest" in err
    assert path.read_text() == "my own notes\n"


# --- the folder checked is the folder written (issue 28, item 9) ----------------------


@pytest.fixture
def bound(team, tmp_path):
    """The letterbox bind-mounted at another path (as root); skipped where mounting is not
    allowed. Unmounted again whatever the test did."""
    import subprocess

    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(["mount", "--bind", str(team.root), str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("mount --bind is not allowed here")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_bind_mount_of_the_letterbox_is_inside_it(capsys, team, bound):
    # the same folders under another path: realpath never meets the letterbox's own path
    _refused(capsys, team, bound / "beta" / "inbox" / "MEMORY.md", why="inside the letterbox")
    _refused(capsys, team, bound / "MEMORY.md", why="inside the letterbox")
    os.makedirs(team.root / "beta" / "inbox" / "deep")
    try:
        _refused(capsys, team, bound / "beta" / "inbox" / "deep" / "MEMORY.md", why="inside the letterbox")
    finally:
        os.rmdir(team.root / "beta" / "inbox" / "deep")


def _swap_into_the_letterbox(out, team):
    """Another user's move: the checked folder goes away and its name now leads into an
    inbox."""
    out.rename(out.with_name("out-moved"))
    out.symlink_to(team.root / "beta" / "inbox", target_is_directory=True)


@pytest.mark.parametrize("when", ["after the check", "before the rename"])
def test_a_folder_swapped_after_the_check_never_receives_the_digest(capsys, team, tmp_path, monkeypatch, when):
    out = tmp_path / "out"
    out.mkdir()
    path = out / "MEMORY.md"
    before = team.tree_bytes()
    if when == "after the check":
        real = truth_file.render

        def swapping(*a, **k):
            _swap_into_the_letterbox(out, team)
            return real(*a, **k)

        monkeypatch.setattr(truth_file, "render", swapping)
    else:
        real_replace = os.replace

        def swapping(*a, **k):
            _swap_into_the_letterbox(out, team)
            return real_replace(*a, **k)

        monkeypatch.setattr(os, "replace", swapping)
    code, _, err = write(capsys, team, path)
    monkeypatch.undo()
    assert team.tree_bytes() == before  # nothing in the inbox, not even a hidden temporary
    moved = tmp_path / "out-moved"
    assert code == 0, err
    assert os.listdir(moved) == ["MEMORY.md"]  # the digest is in the folder that was checked
    assert frontmatter.loads((moved / "MEMORY.md").read_text()).metadata["generator"] == "letterbox-tui"


def test_a_failed_write_leaves_nothing_behind(capsys, team, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()

    def full(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    code, out_text, err = write(capsys, team, out / "MEMORY.md")
    monkeypatch.undo()
    assert code == 2 and out_text == "" and "No space left" in err
    assert os.listdir(out) == []

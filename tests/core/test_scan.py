"""The scanner (SPEC 2 and the scope of SPEC 5): what is a letter, what is unsupported,
how the scope counts, and what a scan does when files change under it."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.model import Letter
from letterbox_tui.core.scan import scan
from tests.core.helpers import on_open, once_on_open, scan_within

SCOPE_KEYS = [
    "root", "participants", "files", "letters", "legacy", "unreadable", "unsupported", "partial", "atomic",
    "complete", "sync", "scanned_at",
]


def ids(snap) -> list[str]:
    return sorted(letter.id for letter in snap.letters)


def unsupported(snap) -> dict[str, str]:
    return {u.path: u.reason for u in snap.unsupported}


# --- the layout ---------------------------------------------------------------------------


def test_empty_letterbox_is_complete(box):
    snap = scan(box.root, now=datetime(2026, 11, 29, 14, 0, tzinfo=timezone.utc))
    assert snap.seats == ["alpha", "beta"]
    scope = snap.scope.to_json()
    assert list(scope) == SCOPE_KEYS
    assert scope == {
        "root": os.path.realpath(box.root), "participants": ["alpha", "beta"], "files": 0, "letters": 0,
        "legacy": 0, "unreadable": [], "unsupported": [], "partial": False, "atomic": True, "complete": True,
        "sync": None, "scanned_at": "2026-11-29T14:00:00Z",
    }


def test_scanned_at_is_utc_with_Z(box):
    from datetime import timedelta

    snap = scan(box.root, now=datetime(2026, 11, 29, 16, 0, tzinfo=timezone(timedelta(hours=2))))
    assert snap.scope.scanned_at == "2026-11-29T14:00:00Z"


def test_letters_in_inbox_and_processed(box):
    box.letter("a-1", to="beta")
    box.letter("b-2", to="alpha", frm="beta", folder="processed")
    snap = scan(box.root)
    where = {letter.id: (letter.seat, letter.folder, letter.path) for letter in snap.letters}
    assert where == {"a-1": ("beta", "inbox", "beta/inbox/a-1.md"), "b-2": ("alpha", "processed", "alpha/processed/b-2.md")}
    assert snap.scope.complete


def test_seat_names(box):
    for name in ["gamma", "d-1", "z9", "a"]:
        box.seat(name)
    for name in ["Upper", "9lives", "_x", "with_underscore", "dot.ted", "-dash"]:
        (box.root / name / "inbox").mkdir(parents=True)
        box.letter(f"hidden-{len(name)}", seat=name)
    snap = scan(box.root)
    assert snap.seats == ["a", "alpha", "beta", "d-1", "gamma", "z9"]
    assert snap.ignored == ["-dash", "9lives", "Upper", "_x", "dot.ted", "with_underscore"]
    assert snap.letters == []
    assert snap.scope.complete  # ignored names are warnings, not scope problems


def test_locks_is_not_a_seat_and_never_read(box):
    box.letter("lock-1", seat="locks")
    (box.root / "locks" / "processed").mkdir()
    snap = scan(box.root)
    assert "locks" not in snap.seats and "locks" not in snap.ignored and snap.letters == []


def test_root_files_are_skipped_and_only_non_seat_directories_listed(box):
    """SPEC 2: the protocol's set-up writes regular files at the root; they are neither
    letters nor warnings. Directories that are not seats are ignored and listed."""
    box.raw("README.md", "hi")
    box.raw("cmux-agents.tsv", "x")
    box.raw("notes", "a file with a seat-shaped name")
    box.raw("letterbox-tui.toml", "")
    box.raw(".hidden", "")
    (box.root / "Archive").mkdir()
    snap = scan(box.root)
    assert snap.ignored == ["Archive"]
    assert snap.seats == ["alpha", "beta"] and snap.scope.complete


def test_only_direct_md_files_are_letters(box):
    box.letter("a-1")
    box.raw("beta/inbox/notes.txt", "---\nid: t-1\nfrom: a\nto: b\ntype: info\n---\n")
    box.raw("beta/inbox/upper.MD", "---\nid: u-1\nfrom: a\nto: b\ntype: info\n---\n")
    box.letter("n-1", name="deep/n-1.md")
    box.letter("n-2", name="deep/deeper/n-2.md")
    box.letter("o-1", folder="outbox")
    box.letter("s-1", name="../s-1.md")  # lands in the seat folder itself
    snap = scan(box.root)
    assert ids(snap) == ["a-1"]
    assert snap.scope.files == 1 and snap.scope.complete


def test_hidden_names_are_writers_temporaries(box):
    box.letter("a-1")
    box.letter("t-1", name=".t-1.md")
    box.letter("t-2", name=".tmp.XXXX")
    box.raw("beta/inbox/.a-1.md.ack", "")
    snap = scan(box.root)
    assert ids(snap) == ["a-1"] and snap.scope.files == 1
    assert snap.sidecars == frozenset() and snap.orphan_sidecars == []
    box.letter("d-1", name="-d-1.md")  # "-" sorts just before ".", "0" just after "/"
    box.letter("z-1", name="0z-1.md")
    box.letter("t-3", name="..md")
    snap = scan(box.root)
    assert [x.name for x in snap.letters] == ["-d-1.md", "0z-1.md", "a-1.md"] and snap.scope.files == 3


def test_status_notes_recorded_not_letters(box):
    box.raw("alpha/status.md", "---\nid: st-1\nfrom: a\nto: b\ntype: status\n---\n")
    box.raw("beta/status.md", "busy")
    snap = scan(box.root)
    assert snap.status_notes == {"alpha": "alpha/status.md", "beta": "beta/status.md"}
    assert snap.letters == [] and snap.scope.files == 0


def test_status_note_that_is_a_symlink_is_not_recorded(box, tmp_path):
    (tmp_path / "elsewhere.md").write_text("x")
    os.symlink(tmp_path / "elsewhere.md", box.root / "alpha" / "status.md")
    assert scan(box.root).status_notes == {}


def test_sidecars_and_orphans(box):
    box.letter("a-1")
    box.raw("beta/inbox/a-1.md.ack", "acked_at: 2026-01-01T00:00:00Z\n")
    box.raw("beta/inbox/gone-9.md.ack", "")
    box.raw("beta/processed/a-1.md.ack", "")  # the letter is not beside it
    snap = scan(box.root)
    assert snap.sidecars == frozenset({"beta/inbox/a-1.md.ack"})
    assert snap.orphan_sidecars == ["beta/inbox/gone-9.md.ack", "beta/processed/a-1.md.ack"]
    assert snap.has_sidecar(snap.letters[0])
    assert snap.scope.files == 1 and snap.scope.complete


# --- unsupported entries ----------------------------------------------------------------------


def test_archive_is_unsupported_but_the_seat_is_still_read(box):
    box.letter("a-1")
    box.letter("old-1", folder="archive")
    snap = scan(box.root)
    assert ids(snap) == ["a-1"]
    assert unsupported(snap) == {"beta/archive": "archive folders are not read"}
    assert not snap.scope.complete
    assert snap.scope.to_json()["unsupported"] == [{"path": "beta/archive", "reason": "archive folders are not read"}]


@pytest.mark.parametrize("missing", ["inbox", "processed"])
def test_seat_missing_a_folder_is_unsupported(box, missing):
    box.letter("a-1", to="alpha")
    shutil.rmtree(box.root / "beta" / missing)
    box.letter("b-1", to="beta", folder="inbox" if missing == "processed" else "processed")
    snap = scan(box.root)
    assert ids(snap) == ["a-1", "b-1"]
    assert unsupported(snap) == {f"beta/{missing}": f"seat has no {missing}/"}
    assert not snap.scope.complete


def test_folder_that_is_a_file_is_unsupported(box):
    shutil.rmtree(box.root / "beta" / "inbox")
    box.raw("beta/inbox", "not a folder")
    assert unsupported(scan(box.root)) == {"beta/inbox": "inbox is not a directory"}


def test_symlinked_seat_is_unsupported_and_not_followed(box, tmp_path):
    other = tmp_path / "other"
    (other / "inbox").mkdir(parents=True)
    (other / "processed").mkdir()
    (other / "inbox" / "far-1.md").write_text("---\nid: far-1\nfrom: a\nto: b\ntype: info\n---\n")
    os.symlink(other, box.root / "gamma")
    snap = scan(box.root)
    assert "gamma" in snap.seats
    assert unsupported(snap) == {"gamma": "symlinked seat"}
    assert snap.letters == [] and snap.scope.files == 0 and not snap.scope.complete


@pytest.mark.parametrize("folder", ["inbox", "processed"])
def test_symlinked_folder_is_unsupported_and_not_followed(box, tmp_path, folder):
    target = tmp_path / "t"
    target.mkdir()
    (target / "far-1.md").write_text("---\nid: far-1\nfrom: a\nto: b\ntype: info\n---\n")
    shutil.rmtree(box.root / "beta" / folder)
    os.symlink(target, box.root / "beta" / folder)
    snap = scan(box.root)
    assert snap.letters == []
    assert unsupported(snap) == {f"beta/{folder}": "symlinked folder"}


def test_symlinked_letter_is_unsupported_and_its_target_never_read(box, tmp_path):
    marker = "zz-marker-never-read-9d1e"
    (tmp_path / "target.md").write_text(f"---\nid: {marker}\nfrom: a\nto: b\ntype: info\nsubject: {marker}\n---\n")
    os.symlink(tmp_path / "target.md", box.root / "beta" / "inbox" / "link.md")
    box.letter("a-1")
    box.letter("real-2")
    os.symlink("real-2.md", box.root / "beta" / "inbox" / "rel-link.md")  # even inside the box
    snap = scan(box.root)
    assert ids(snap) == ["a-1", "real-2"]
    assert unsupported(snap) == {"beta/inbox/link.md": "symlink", "beta/inbox/rel-link.md": "symlink"}
    assert snap.scope.files == 4 and snap.scope.letters == 2
    everything = repr(snap.scope.to_json()) + repr(snap) + repr([(u.error, u.legible, u.illegible) for u in snap.unreadable])
    assert marker not in everything


def test_fifo_is_unsupported_and_never_blocks(box):
    os.mkfifo(box.root / "beta" / "inbox" / "pipe.md")
    box.letter("a-1")
    snap = scan_within(box.root)
    assert ids(snap) == ["a-1"]
    assert unsupported(snap) == {"beta/inbox/pipe.md": "fifo"}
    assert snap.scope.files == 2 and not snap.scope.complete


def test_socket_is_unsupported(box):
    path = box.root / "beta" / "inbox" / "s.md"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
    except OSError as exc:  # path too long for AF_UNIX on some systems
        pytest.skip(f"cannot bind a unix socket here: {exc}")
    try:
        snap = scan_within(box.root)
    finally:
        sock.close()
    assert unsupported(snap) == {"beta/inbox/s.md": "socket"}


def test_device_is_unsupported(box):
    path = box.root / "beta" / "inbox" / "dev.md"
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # like /dev/null
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node: {exc}")
    snap = scan_within(box.root)
    assert unsupported(snap) == {"beta/inbox/dev.md": "device"}


def test_directory_named_md_is_unsupported(box):
    (box.root / "beta" / "inbox" / "dir.md").mkdir()
    snap = scan(box.root)
    assert unsupported(snap) == {"beta/inbox/dir.md": "directory"}
    assert snap.scope.files == 1


def deny(monkeypatch, names: set[str]):
    """Simulate permission-denied opens (tests run as root, where chmod does not stop reads)."""
    real_open = os.open

    def guarded(path, flags, mode=0o777, *, dir_fd=None):
        if os.fsdecode(os.path.basename(os.fsdecode(path))) in names:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", guarded)


def test_permission_denied_letter_is_unsupported(box, monkeypatch):
    box.letter("a-1")
    box.letter("secret-1")
    deny(monkeypatch, {"secret-1.md"})
    snap = scan(box.root)
    assert ids(snap) == ["a-1"]
    assert unsupported(snap) == {"beta/inbox/secret-1.md": "permission denied"}
    assert snap.scope.files == 2 and not snap.scope.complete


def test_permission_denied_folder_and_seat(box, monkeypatch):
    box.letter("a-1", to="alpha")
    box.letter("b-1", to="beta", folder="processed")
    box.seat("gamma")
    box.letter("g-1", to="gamma")
    deny(monkeypatch, {"processed", "gamma"})
    snap = scan(box.root)
    assert ids(snap) == ["a-1"]
    assert unsupported(snap) == {
        "alpha/processed": "permission denied", "beta/processed": "permission denied", "gamma": "permission denied",
    }


# --- counting -----------------------------------------------------------------------------------


def test_scope_counts_files_letters_and_legacy_exactly(box):
    box.letter("a-1")  # readable
    box.letter("a-1", to="alpha")  # a duplicate id: counted each time
    box.letter("al-1", name="al-1-0123abcd.md")  # legacy alias
    box.letter("mm-1", name="other.md")  # legacy mismatch
    box.raw("beta/inbox/bad.md", "no header")  # unreadable
    os.mkfifo(box.root / "beta" / "inbox" / "f.md")  # unsupported
    box.raw("beta/inbox/a-1.md.ack", "")  # a sidecar is not a file of the count
    box.raw("beta/inbox/x.txt", "")  # not *.md
    box.letter("t-1", name=".t-1.md")  # temporary
    scope = scan(box.root).scope
    assert (scope.files, scope.letters, scope.legacy) == (6, 4, 2)
    assert scope.unreadable == [{"path": "beta/inbox/bad.md", "error": "first line is not '---'"}]
    assert scope.unsupported == [{"path": "beta/inbox/f.md", "reason": "fifo"}]
    assert not scope.complete and scope.atomic and not scope.partial


@pytest.mark.parametrize("cause", ["unreadable", "unsupported", "partial", "non-atomic"])
def test_each_cause_makes_the_scope_incomplete(box, cause, monkeypatch):
    box.letter("a-1")
    kw: dict[str, object] = {}
    if cause == "unreadable":
        box.raw("beta/inbox/bad.md", "x")
    elif cause == "unsupported":
        box.letter("z-1", folder="archive")
    elif cause == "partial":
        kw["participants"] = ["beta"]
    else:
        churn(monkeypatch, box.root)
    scope = scan(box.root, **kw).scope
    assert not scope.complete and scope.to_json()["complete"] is False
    assert len(scope.why_incomplete()) == 1


# --- participants -------------------------------------------------------------------------------


def test_participants_make_a_partial_scope(box):
    box.seat("gamma")
    box.letter("a-1", to="alpha")
    box.letter("b-1", to="beta")
    box.letter("g-1", to="gamma")
    box.letter("z-1", to="gamma", folder="archive")  # outside the scope: not listed
    snap = scan(box.root, ["gamma", "alpha", "alpha"])
    assert ids(snap) == ["a-1", "g-1"]
    assert snap.scope.participants == ["alpha", "gamma"]
    assert snap.scope.partial and not snap.scope.complete
    assert snap.scope.unsupported == [{"path": "gamma/archive", "reason": "archive folders are not read"}]
    assert snap.seats == ["alpha", "beta", "gamma"]


def test_participants_outside_do_not_list_their_symlinks(box, tmp_path):
    os.symlink(tmp_path, box.root / "gamma")
    snap = scan(box.root, ["alpha"])
    assert snap.unsupported == []


@pytest.mark.parametrize("name", ["nobody", "locks", "Alpha", "../beta", "alpha/inbox", ""])
def test_unknown_participant_is_an_error(box, name):
    with pytest.raises(LetterboxError) as err:
        scan(box.root, [name])
    assert "\n" not in str(err.value) and "seat" in str(err.value)


def test_not_a_directory_root_is_an_error(tmp_path):
    with pytest.raises(LetterboxError):
        scan(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(LetterboxError):
        scan(tmp_path / "file")


def test_root_through_a_symlink_is_resolved(box, tmp_path):
    box.letter("a-1")
    os.symlink(box.root, tmp_path / "link")
    snap = scan(tmp_path / "link")
    assert ids(snap) == ["a-1"] and snap.scope.root == os.path.realpath(box.root)


def test_what_each_seat_and_folder_adds_comes_in_seat_then_folder_order(tmp_path):
    """The next folder is listed before the last one is built into letters; what they
    add is still in the order of a plain walk: seat by seat, its own entries first, then
    inbox, then processed, each as listed then as read."""
    from tests.conftest import make_box

    box = make_box(tmp_path / "box", "alpha", "beta", "gamma")
    (box.root / "alpha/archive").mkdir()
    os.symlink("/etc/passwd", box.root / "alpha/inbox/a-link.md")
    os.mkfifo(box.root / "alpha/processed/a-pipe.md")
    (box.root / "alpha/processed/orphan-a.md.ack").write_bytes(b"")
    shutil.rmtree(box.root / "beta/inbox")
    (box.root / "beta/processed/b-dir.md").mkdir()
    (box.root / "beta/processed/orphan-b.md.ack").write_bytes(b"")
    (box.root / "gamma/inbox/g-dir.md").mkdir()
    shutil.rmtree(box.root / "gamma/processed")
    for seat in ("alpha", "beta", "gamma"):
        for i in range(3):
            box.letter(f"{seat}-{i}", to=seat, folder="processed" if seat == "beta" else "inbox")
    snap = scan(box.root)
    assert [u.path for u in snap.unsupported] == [
        "alpha/archive", "alpha/inbox/a-link.md", "alpha/processed/a-pipe.md",
        "beta/inbox", "beta/processed/b-dir.md",
        "gamma/inbox/g-dir.md", "gamma/processed",
    ]
    assert snap.orphan_sidecars == ["alpha/processed/orphan-a.md.ack", "beta/processed/orphan-b.md.ack"]
    assert [x.id for x in snap.letters] == [f"{s}-{i}" for s in ("alpha", "beta", "gamma") for i in range(3)]


# --- changes during a scan ------------------------------------------------------------------------


def count_attempts(monkeypatch):
    """Count the scan's passes (``letterbox_tui.core.scan`` the module, not the function)."""
    mod = sys.modules["letterbox_tui.core.scan"]
    calls = {"n": 0}
    real = mod._Scan.run

    def run(self):
        calls["n"] += 1
        return real(self)

    monkeypatch.setattr(mod._Scan, "run", run)
    return calls


def test_letter_moved_inbox_to_processed_mid_scan_is_seen_once(box, monkeypatch):
    box.letter("a-0")
    box.letter("b-moved")

    def change():
        os.rename(box.root / "beta/inbox/b-moved.md", box.root / "beta/processed/b-moved.md")

    moved = once_on_open(monkeypatch, "a-0.md", change)
    attempts = count_attempts(monkeypatch)
    snap = scan(box.root)
    assert moved["done"]
    assert sorted((x.id, x.folder) for x in snap.letters) == [("a-0", "inbox"), ("b-moved", "processed")]
    assert snap.scope.atomic and snap.scope.files == 2
    assert attempts["n"] == 2


def test_letter_moved_processed_to_inbox_after_inbox_was_read_is_not_lost(box, monkeypatch):
    box.letter("p-1", folder="processed")

    def change():
        os.rename(box.root / "beta/processed/p-1.md", box.root / "beta/inbox/p-1.md")

    once_on_open(monkeypatch, "processed", change)
    snap = scan(box.root, ["beta"])
    assert [(x.id, x.folder) for x in snap.letters] == [("p-1", "inbox")]
    assert snap.scope.atomic


def test_letter_moved_after_its_folder_was_listed_without_rescan_is_not_atomic(box, monkeypatch):
    box.letter("a-0")
    box.letter("b-moved")

    def change():
        os.rename(box.root / "beta/inbox/b-moved.md", box.root / "beta/processed/b-moved.md")

    once_on_open(monkeypatch, "a-0.md", change)
    snap = scan(box.root, max_attempts=1)
    assert not snap.scope.atomic and not snap.scope.complete
    assert "files changed during the scan" in snap.scope.why_incomplete()
    assert [x.id for x in snap.letters].count("b-moved") <= 1


def churn(monkeypatch, root: Path):
    """Move a letter between inbox and processed whenever c-1 is read: never holds still."""
    (root / "beta/inbox/c-1.md").write_text("---\nid: c-1\nfrom: a\nto: b\ntype: info\n---\n")
    (root / "beta/inbox/c-2.md").write_text("---\nid: c-2\nfrom: a\nto: b\ntype: info\n---\n")

    def hook(name):
        if name == "c-1.md":
            a, b = root / "beta/inbox/c-2.md", root / "beta/processed/c-2.md"
            if a.exists():
                os.rename(a, b)
            elif b.exists():
                os.rename(b, a)

    on_open(monkeypatch, hook)


def test_a_box_that_keeps_changing_ends_non_atomic(box, monkeypatch):
    churn(monkeypatch, box.root)
    attempts = count_attempts(monkeypatch)
    snap = scan(box.root)
    assert attempts["n"] == 3
    assert snap.scope.atomic is False and snap.scope.to_json()["atomic"] is False
    assert not snap.scope.complete


def test_hidden_temporary_appearing_mid_scan_keeps_the_scan_atomic(box, monkeypatch):
    box.letter("a-1")
    box.letter("b-2")

    def hook(name):
        if name == "a-1.md":
            (box.root / "beta/inbox/.b-3.md.tmp").write_bytes(b"---\nid: b-3\n")
            (box.root / "alpha/inbox/.tmp-xyz").write_bytes(b"")

    on_open(monkeypatch, hook)
    attempts = count_attempts(monkeypatch)
    snap = scan(box.root)
    assert snap.scope.atomic and attempts["n"] == 1
    assert ids(snap) == ["a-1", "b-2"]


def test_letter_appearing_mid_scan_triggers_a_rescan(box, monkeypatch):
    box.letter("a-1")

    def change():
        box.letter("z-new", to="alpha")

    once_on_open(monkeypatch, "a-1.md", change)
    attempts = count_attempts(monkeypatch)
    snap = scan(box.root)
    assert ids(snap) == ["a-1", "z-new"] and snap.scope.atomic and attempts["n"] == 2


# A directory whose times are older than the racy window when the scan begins is not
# listed again if it still stats the same afterwards. The window is shortened here (the
# real one is 3 s) and the box left to settle past it.
SETTLE_NS = 150_000_000


def settle(monkeypatch, root: Path) -> list[str]:
    """Shorten the racy window, wait it out, and return the list of folders the stability
    check lists again (filled as the scan runs)."""
    import time

    mod = sys.modules["letterbox_tui.core.scan"]
    monkeypatch.setattr(mod, "RACY_NS", SETTLE_NS)
    time.sleep(2 * SETTLE_NS / 1e9)
    relisted: list[str] = []
    real = mod.listing  # core.relist.listing, as the scan calls it

    def listing(root_fd, rel):
        relisted.append(rel)
        return real(root_fd, rel)

    monkeypatch.setattr(mod, "listing", listing)
    return relisted


def test_settled_folders_still_stat_the_same_so_no_listing_again(box, monkeypatch):
    box.letter("a-1")
    box.letter("b-2", folder="processed")
    relisted = settle(monkeypatch, box.root)
    attempts = count_attempts(monkeypatch)
    snap = scan(box.root)
    assert ids(snap) == ["a-1", "b-2"] and snap.scope.atomic and attempts["n"] == 1
    assert relisted == []


def test_a_folder_changed_just_before_the_scan_is_listed_again(box, monkeypatch):
    box.letter("a-1")
    relisted = settle(monkeypatch, box.root)
    box.letter("b-2")  # beta/inbox changed inside the window
    snap = scan(box.root)
    assert ids(snap) == ["a-1", "b-2"] and snap.scope.atomic
    assert relisted == ["beta/inbox"]


def test_letter_appearing_in_a_settled_folder_mid_scan_triggers_a_rescan(box, monkeypatch):
    box.letter("a-1")
    box.letter("b-2")
    settle(monkeypatch, box.root)
    once_on_open(monkeypatch, "a-1.md", lambda: box.letter("z-new", to="alpha"))
    attempts = count_attempts(monkeypatch)
    snap = scan(box.root)
    assert ids(snap) == ["a-1", "b-2", "z-new"] and snap.scope.atomic and attempts["n"] == 2


def test_letter_moved_between_settled_folders_mid_scan_is_not_atomic_without_rescan(box, monkeypatch):
    box.letter("a-0")
    box.letter("b-moved")
    settle(monkeypatch, box.root)

    def change():
        os.rename(box.root / "beta/inbox/b-moved.md", box.root / "beta/processed/b-moved.md")

    once_on_open(monkeypatch, "a-0.md", change)
    snap = scan(box.root, max_attempts=1)
    assert not snap.scope.atomic


def test_settled_seat_swapped_for_another_directory_mid_scan_is_a_change(box, monkeypatch):
    box.letter("b-1")
    settle(monkeypatch, box.root)

    def change():  # the same name, another directory (another inode), same letters
        shutil.copytree(box.root / "beta", box.root / "beta.new")
        shutil.rmtree(box.root / "beta")
        os.rename(box.root / "beta.new", box.root / "beta")

    once_on_open(monkeypatch, "b-1.md", change)
    snap = scan(box.root, max_attempts=1)
    assert not snap.scope.atomic


def test_letter_vanishing_mid_scan_triggers_a_rescan(box, monkeypatch):
    box.letter("a-1")
    box.letter("b-2")

    def change():
        os.unlink(box.root / "beta/inbox/b-2.md")

    once_on_open(monkeypatch, "a-1.md", change)
    snap = scan(box.root)
    assert ids(snap) == ["a-1"] and snap.scope.atomic and snap.scope.files == 1


def test_sidecar_appearing_mid_scan_is_a_change(box, monkeypatch):
    box.letter("a-1")

    def change():
        (box.root / "beta/inbox/a-1.md.ack").write_text("")

    once_on_open(monkeypatch, "a-1.md", change)
    snap = scan(box.root)
    assert snap.sidecars == frozenset({"beta/inbox/a-1.md.ack"}) and snap.scope.atomic


def test_archive_appearing_mid_scan_is_a_change(box, monkeypatch):
    box.letter("a-1")

    def change():
        (box.root / "alpha/archive").mkdir()

    once_on_open(monkeypatch, "a-1.md", change)
    attempts = count_attempts(monkeypatch)
    snap = scan(box.root)
    assert attempts["n"] == 2
    assert unsupported(snap) == {"alpha/archive": "archive folders are not read"}


def test_folder_swapped_for_a_symlink_mid_scan_is_never_followed(box, tmp_path, monkeypatch):
    marker = "zz-outside-letter-51b7"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"{marker}.md").write_text(f"---\nid: {marker}\nfrom: a\nto: b\ntype: info\n---\n")
    box.letter("a-1", to="alpha")

    def change():
        shutil.rmtree(box.root / "beta/inbox")
        os.symlink(outside, box.root / "beta/inbox")

    once_on_open(monkeypatch, "a-1.md", change)
    snap = scan(box.root)
    assert marker not in repr(snap.scope.to_json()) + repr(snap.letters)
    assert unsupported(snap) == {"beta/inbox": "symlinked folder"}
    assert snap.scope.atomic  # the rescan settled on the new layout


def test_scan_never_writes(box, monkeypatch):
    box.letter("a-1")
    box.raw("beta/inbox/bad.md", "x")
    box.raw("letterbox-tui.toml", "[time]\nid_time_is_utc = true\n")
    before = box.tree_bytes()
    real_open = os.open
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def read_only(path, flags, mode=0o777, *, dir_fd=None):
        if flags & write_flags:
            raise AssertionError(f"scan opened {path!r} for writing")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", read_only)
    scan(box.root)
    assert box.tree_bytes() == before


def test_cache_hits_are_used_and_misses_put(box):
    box.letter("a-1")
    box.letter("b-2")

    class Cache:
        def __init__(self):
            self.items = {}

        def get(self, path, size, mtime_ns, inode, ctime_ns):
            item = self.items.get(path)
            if item is not None and (item.size, item.mtime_ns, item.inode) == (size, mtime_ns, inode):
                return item
            return None

        def put_many(self, items, data, ctimes):
            assert len(items) == len(data) == len(ctimes)
            for item, d, ctime_ns in zip(items, data, ctimes):
                assert d.startswith(b"---")  # the header bytes the scanner read
                assert ctime_ns == os.stat(box.root / item.path).st_ctime_ns
                self.items[item.path] = item

    cache = Cache()
    first = scan(box.root, cache=cache)
    assert sorted(cache.items) == ["beta/inbox/a-1.md", "beta/inbox/b-2.md"]
    second = scan(box.root, cache=cache)
    assert [id(x) for x in second.letters] == [id(cache.items[x.path]) for x in second.letters]
    assert ids(first) == ids(second)
    assert all(isinstance(x, Letter) for x in second.letters)


def test_a_single_participant_given_as_a_string(box):
    box.letter("a-1", to="alpha")
    box.letter("b-1", to="beta")
    snap = scan(box.root, "alpha")
    assert ids(snap) == ["a-1"] and snap.scope.participants == ["alpha"]


def test_nul_byte_in_the_root_is_an_error_not_a_valueerror():
    with pytest.raises(LetterboxError) as err:
        scan("bad\x00root", id_time_is_utc=False)
    assert "\x00" not in str(err.value)
    with pytest.raises(LetterboxError):
        scan("bad\x00root")


def test_why_incomplete_names_every_cause_in_plain_words():
    from letterbox_tui.core.model import Scope

    scope = Scope(
        root="/r", participants=["alpha"], unreadable=[{"path": "a", "error": "e"}] * 2,
        unsupported=[{"path": "b", "reason": "fifo"}], partial=True, atomic=False,
    )
    assert scope.why_incomplete() == [
        "2 unreadable files", "1 unsupported entry", "partial scope (alpha only)", "files changed during the scan",
    ]
    assert not scope.complete and Scope(root="/r", participants=[]).why_incomplete() == []


def test_answer_values_are_checked():
    from letterbox_tui.core.model import Answer, Reason

    assert Answer("unknown", (Reason("cycle", "current"),)).unknown
    with pytest.raises(ValueError):
        Answer("maybe")  # type: ignore[arg-type]
    assert list(Reason("fork", "current", "d", ("a",), ("p",)).to_json()) == ["code", "about", "detail", "letters", "paths"]


def test_each_file_s_stat_identity_is_kept(box):
    """What a store needs to know a file again: its device (one per folder), inode, size
    and times, as ``os.stat`` gives them when it was read."""
    box.letter("a-1")
    box.raw("beta/inbox/broken.md", "---\nid: broken\nfrom alpha\n---\n")
    snap = scan(box.root)
    for item in [*snap.letters, *snap.unreadable]:
        st = os.stat(box.root / item.path)
        assert (item.size, item.mtime_ns, item.inode, item.ctime_ns) == (
            st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns), item.path
    assert snap.devices == {rel: os.stat(box.root / rel).st_dev
                            for rel in ("alpha/inbox", "alpha/processed", "beta/inbox", "beta/processed")}

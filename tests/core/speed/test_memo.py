"""The answer memo (core.speed.memo): an answer is replayed only while every directory and letter
file stats exactly as the scan that made it saw them, and the clock is inside its window."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone

import pytest

from letterbox_tui.core.speed import memo as memo_mod
from letterbox_tui.core.speed.memo import Memo, forget, unchanged, window
from letterbox_tui.core.scan import scan

ALWAYS = (-memo_mod._NO_END, memo_mod._NO_END)


@pytest.fixture(autouse=True)
def _trust_fresh_files(monkeypatch):
    """Files written by a test are milliseconds old: trust them, except in the racy test."""
    monkeypatch.setattr(memo_mod, "RACY_NS", 0)


def output_of(snap) -> bytes:
    """A command's JSON output as the CLI prints it on a pipe: the scope last."""
    obj = {"matches": sorted(x.id for x in snap.letters), "scope": snap.scope.to_json()}
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def settle() -> None:
    """Let the file-system clock move on: a change from here on gets a later timestamp."""
    time.sleep(0.05)


def recorded(box, key: str = "k", participants=None, win=ALWAYS):
    snap = scan(box.root, participants)
    memo = Memo(str(box.root), False, participants)
    out = output_of(snap)
    assert memo.record(key, snap, out, 0, win)
    settle()
    return memo, out


@pytest.fixture
def mail(box):
    box.letter("2026-01-01T000000-alpha-request-ask-aaaaaaaa", type="request", requires_ack="true")
    box.letter("2026-01-01T000100-beta-info-note-bbbbbbbb", frm="beta", to="alpha", type="info")
    box.letter("2026-01-01T000200-alpha-info-done-cccccccc", folder="processed")
    return box


ASK = "beta/inbox/2026-01-01T000000-alpha-request-ask-aaaaaaaa.md"


def test_an_unchanged_letterbox_replays_the_exact_output(mail):
    memo, out = recorded(mail)
    hit = memo.replay("k")
    assert hit is not None
    data, code, at, size = hit
    assert data == out and code == 0
    scanned = json.loads(out)["scope"]["scanned_at"]
    assert data[at : at + size] == json.dumps(scanned).encode()


def _edit(root):
    (root / ASK).write_text((root / ASK).read_text() + "more body\n")


def _same_size_mtime_restored(root):
    p = root / ASK
    st = p.stat()
    data = p.read_bytes()
    p.write_bytes(data.replace(b"body", b"BODY"))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_size == st.st_size and p.stat().st_mtime_ns == st.st_mtime_ns


def _add(root):
    (root / "beta/inbox/2026-01-02T000000-alpha-info-new-dddddddd.md").write_text(
        "---\nid: 2026-01-02T000000-alpha-info-new-dddddddd\nfrom: alpha\nto: beta\ntype: info\n---\n"
    )


def _move(root):
    os.rename(root / ASK, root / ASK.replace("/inbox/", "/processed/"))


def _replace_by_symlink(root):
    target = root / "elsewhere.md"
    target.write_bytes((root / ASK).read_bytes())
    os.unlink(root / ASK)
    os.symlink(target, root / ASK)


CHANGES = {
    "edited letter": _edit,
    "same size, mtime restored": _same_size_mtime_restored,
    "letter added": _add,
    "letter deleted": lambda root: os.unlink(root / ASK),
    "letter moved to processed": _move,
    "letter replaced by a symlink": _replace_by_symlink,
    "sidecar added": lambda root: (root / (ASK + ".ack")).write_text(""),
    "other file in a folder": lambda root: (root / "beta/inbox/notes.txt").write_text("x"),
    "status note added": lambda root: (root / "beta/status.md").write_text("busy\n"),
    "archive folder added": lambda root: (root / "beta/archive").mkdir(),
    "seat added": lambda root: (root / "gamma/inbox").mkdir(parents=True),
    "settings-level file at the root": lambda root: (root / "README").write_text("x"),
    "letter made unreadable by chmod": lambda root: os.chmod(root / ASK, 0o000),
    "folder chmod": lambda root: os.chmod(root / "beta/inbox", 0o711),
    "folder mtime touched": lambda root: os.utime(root / "beta/inbox", ns=(1, 1)),
}


@pytest.mark.parametrize("reader", ["accelerated", "pure"])
@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_any_change_is_never_replayed(mail, change, reader, monkeypatch):
    if reader == "pure":
        monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    memo, _ = recorded(mail)
    CHANGES[change](mail.root)
    assert memo.replay("k") is None


def test_the_clock_window_bounds_a_replay(mail):
    memo, _ = recorded(mail, win=(1_000, 2_000))
    assert memo.replay("k", clock_ns=1_001) is not None
    assert memo.replay("k", clock_ns=2_000) is not None
    assert memo.replay("k", clock_ns=1_000) is None
    assert memo.replay("k", clock_ns=2_001) is None


def test_the_window_lies_between_the_deadlines_around_the_clock(box):
    t0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
    for i, days in enumerate((1, 3, 5)):
        deadline = (t0 + timedelta(days=days)).isoformat().replace("+00:00", "Z")
        box.letter(f"2026-01-01T00000{i}-alpha-request-t{i}-0000000{i}", type="request", deadline=deadline)
    letters = scan(box.root).letters
    ns = lambda days: memo_mod._ns(t0 + timedelta(days=days))  # noqa: E731
    assert window(letters, t0 + timedelta(days=2), fixed=False) == (ns(1), ns(3))
    # at a deadline, the letter is not yet late (deadline < clock): the window ends there
    assert window(letters, t0 + timedelta(days=3), fixed=False) == (ns(1), ns(3))
    assert window(letters, t0 + timedelta(days=9), fixed=False) == (ns(5), memo_mod._NO_END)
    assert window(letters, t0, fixed=False) == (-memo_mod._NO_END, ns(1))
    assert window(letters, t0, fixed=True) == ALWAYS


def test_a_racy_letterbox_is_not_recorded(mail, monkeypatch):
    monkeypatch.setattr(memo_mod, "RACY_NS", 3_000_000_000)
    snap = scan(mail.root)
    memo = Memo(str(mail.root), False, None)
    assert not memo.record("k", snap, output_of(snap), 0, ALWAYS)
    assert not os.path.exists(memo.state_path())


def test_a_non_atomic_scan_is_not_recorded(mail):
    snap = scan(mail.root)
    snap.scope.atomic = False
    assert not Memo(str(mail.root), False, None).record("k", snap, output_of(snap), 0, ALWAYS)


def test_a_scan_with_an_unsupported_entry_is_not_recorded(mail):
    os.mkfifo(mail.root / "beta/inbox/pipe.md")
    snap = scan(mail.root)
    assert snap.unsupported
    assert not Memo(str(mail.root), False, None).record("k", snap, output_of(snap), 0, ALWAYS)


def test_an_output_without_a_scope_last_is_not_recorded(mail):
    snap = scan(mail.root)
    assert not Memo(str(mail.root), False, None).record("k", snap, b'{"a":1}\n', 0, ALWAYS)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "other magic"])
@pytest.mark.parametrize("which", ["state", "answer"])
def test_damaged_memo_files_are_ignored(mail, which, damage):
    memo, _ = recorded(mail)
    path = memo.state_path() if which == "state" else next(
        os.path.join(memo.dir, n) for n in os.listdir(memo.dir) if n.endswith(".answer")
    )
    data = open(path, "rb").read()
    new = {"truncated": data[: len(data) // 2], "garbage": data[:8] + os.urandom(64), "empty": b"",
           "other magic": b"XXXXXXXX" + data[8:]}[damage]
    with open(path, "wb") as fh:
        fh.write(new)
    assert memo.replay("k") is None


def test_another_key_or_scope_is_not_replayed(mail):
    memo, _ = recorded(mail, key="k")
    assert memo.replay("other") is None
    assert Memo(str(mail.root), False, ["alpha"]).replay("k") is None
    assert Memo(str(mail.root), True, None).replay("k") is None


def test_answers_of_an_older_state_are_dropped(mail):
    memo, _ = recorded(mail, key="a")
    _add(mail.root)
    settle()
    memo, _ = recorded(mail, key="b")
    answers = [n for n in os.listdir(memo.dir) if n.endswith(".answer")]
    assert len(answers) == 1 and answers[0].endswith("-b.answer")
    assert memo.replay("a") is None and memo.replay("b") is not None


def test_answers_per_state_are_capped(mail, monkeypatch):
    monkeypatch.setattr(memo_mod, "MAX_ANSWERS", 3)
    snap = scan(mail.root)
    memo = Memo(str(mail.root), False, None)
    for i in range(6):
        assert memo.record(f"k{i}", snap, output_of(snap), 0, ALWAYS)
    assert len([n for n in os.listdir(memo.dir) if n.endswith(".answer")]) == 3


def test_forget_removes_every_memo_of_the_root(mail):
    recorded(mail, key="a")
    recorded(mail, key="b", participants=["alpha"])
    memo_dir = Memo(str(mail.root), False, None).dir
    assert len(os.listdir(memo_dir)) >= 4
    forget(str(mail.root))
    assert not [n for n in os.listdir(memo_dir) if n.endswith((".state", ".answer"))]


@pytest.mark.usefixtures("pure_python_scan")
def test_the_forked_check_agrees_with_the_single_one(box, monkeypatch):
    names = []
    for i in range(40):
        seat, folder = ("beta", "inbox") if i % 2 else ("alpha", "processed")
        lid = f"2026-01-01T0000{i:02d}-alpha-info-n{i}-{i:08x}"
        box.letter(lid, to="beta", seat=seat, folder=folder)
        names.append(f"{seat}/{folder}/{lid}.md")
    memo, _ = recorded(box)
    token, dirs, folders = memo_mod._load_state(memo.state_path())
    for threshold in (1, 10**9):
        monkeypatch.setattr(memo_mod, "FORK_FILES", threshold)
        assert unchanged(memo.root, dirs, folders, time.time_ns())
    # a change in the first half, then in the second: both seen, forked or not
    for rel in (sorted(names)[0], sorted(names)[-1]):
        p = box.root / rel
        p.write_text(p.read_text() + "x")
        for threshold in (1, 10**9):
            monkeypatch.setattr(memo_mod, "FORK_FILES", threshold)
            assert not unchanged(memo.root, dirs, folders, time.time_ns())
        token, dirs, folders = memo_mod._load_state(recorded(box)[0].state_path())


def test_no_memo_inside_the_letterbox(mail, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(mail.root / "cache"))
    snap = scan(mail.root)
    memo = Memo(str(mail.root), False, None)
    assert memo.disabled
    assert not memo.record("k", snap, output_of(snap), 0, ALWAYS)
    assert not (mail.root / "cache").exists()


def test_recording_and_replaying_never_touch_the_letterbox(mail):
    before = mail.tree_bytes()
    memo, _ = recorded(mail)
    assert memo.replay("k") is not None
    assert mail.tree_bytes() == before


def test_a_snapshot_missing_an_item_is_not_recorded(mail):
    snap = scan(mail.root)
    snap.letters.pop()
    assert not Memo(str(mail.root), False, None).record("k", snap, output_of(snap), 0, ALWAYS)


def test_clock_nanoseconds_are_exact_before_and_after_the_epoch():
    for text in ("1969-12-31T23:59:58.5Z", "2026-03-01T12:00:00.000001+02:00", "1970-01-01T00:00:00Z"):
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        seconds = (when - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()
        assert memo_mod._ns(when) == round(seconds * 1_000_000) * 1000


@pytest.mark.parametrize("pure", [False, True])
def test_a_flipped_byte_in_the_flat_files_is_never_replayed(mail, monkeypatch, pure):
    """The state's names and records and the answer's output are used as read (views of
    the file, checked while the proof runs): one byte changed anywhere is no replay, and
    one notice says the file is damaged."""
    from letterbox_tui.core.speed.files import take_notices

    if pure:
        monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    memo, out = recorded(mail)
    assert bytes(memo.replay("k")[0]) == out
    state = memo.state_path()
    answer = next(os.path.join(memo.dir, n) for n in os.listdir(memo.dir) if n.endswith("-k.answer"))
    for path, where in ((state, -40), (state, -3), (answer, -10)):  # a record, a name's end, the output
        data = bytearray(open(path, "rb").read())
        good = bytes(data)
        data[where] ^= 0x01
        open(path, "wb").write(bytes(data))
        take_notices()
        assert memo.replay("k") is None, (path, where)
        assert any("checksum mismatch: damaged" in n for n in take_notices()), (path, where)
        open(path, "wb").write(good)
        assert bytes(memo.replay("k")[0]) == out


def test_a_state_blob_reads_back_as_the_state_it_was_made_of(mail):
    """The flat blob the memo and the derived index keep (``memo_state``) gives back the
    state ``recordable`` made (its names and records as views); a state pickled whole, as
    older indexes kept it, is read too; a damaged or truncated blob is no state."""
    import pickle

    from letterbox_tui.core.speed.memo_state import state_blob, state_of

    state = memo_mod.recordable(scan(mail.root))
    assert state is not None
    dirs, folders = state_of(state_blob(state))
    assert dirs == state[0]
    assert [(r, bytes(j).rstrip(b"\0"), n, bytes(s)) for r, j, n, s in folders] == list(state[1])
    assert state_of(pickle.dumps(state, protocol=5)) == state
    blob = state_blob(state)
    for bad in (blob[: len(blob) // 2], blob[:-1], b"", b"\x00" * 40, pickle.dumps({"a": 1})):
        assert state_of(bad) is None


def test_a_framed_file_mapped_reads_as_it_reads(tmp_path):
    """``files.read_framed(mapped=True)`` (the memo's files, mapped): the same payload as a
    read, and a damaged or cut-short file is refused all the same."""
    from letterbox_tui.core.speed import files

    path = str(tmp_path / "f")
    parts = [os.urandom(1000), b"", os.urandom(70_000)]
    files.write_framed(path, b"LBXTEST1", 3, parts)
    read = files.read_framed(path, b"LBXTEST1", 3, "test")
    mapped = files.read_framed(path, b"LBXTEST1", 3, "test", mapped=True)
    assert bytes(mapped) == bytes(read) == b"".join(parts)
    payload, crc = files.read_framed_unchecked(path, b"LBXTEST1", 3, "test", mapped=True)
    assert bytes(payload) == b"".join(parts)
    with open(path, "r+b") as fh:
        fh.seek(-5, os.SEEK_END)
        fh.write(b"\0\1\2\3\4")
    assert files.read_framed(path, b"LBXTEST1", 3, "test", mapped=True) is None
    with open(path, "r+b") as fh:
        fh.truncate(600)
    assert files.read_framed(path, b"LBXTEST1", 3, "test", mapped=True) is None
    open(path, "wb").close()
    assert files.read_framed(path, b"LBXTEST1", 3, "test", mapped=True) is None
    files.take_notices()

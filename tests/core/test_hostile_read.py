"""Hostile letterboxes: every case must end in a precise outcome, never a crash or a hang.

Letter text and file names are hostile data. Each case below builds one hostile input in a
fresh letterbox, scans it with a time limit, checks the precise outcome, and checks the
invariants every snapshot must keep (JSON-safe, UTF-8-encodable, counts that add up).
"""

from __future__ import annotations

import builtins
import json
import os
import shutil
import socket
import stat
import sys
import threading

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.header import MAX_HEADER
from letterbox_tui.core.model import Letter, Unreadable
from letterbox_tui.core.scan import scan
from tests.core.helpers import on_open, once_on_open, scan_within

HEAD = "---\nid: {id}\nfrom: alpha\nto: beta\ntype: info\nrequires_ack: false\nsent: 2026-01-01T00:00:00Z\n"


def letter_bytes(letter_id: str = "h-1", extra: bytes = b"", body: bytes = b"body\n") -> bytes:
    return HEAD.format(id=letter_id).encode() + extra + b"---\n" + body


def guarded_scan(root, seconds: float = 20.0, **kw):
    """Scan with a hang guard, then check the scope's invariants."""
    snap = scan_within(root, seconds, **kw)
    check_invariants(snap)
    return snap


def check_invariants(snap) -> None:
    scope = snap.scope.to_json()
    text = json.dumps(scope, ensure_ascii=False)
    text.encode("utf-8")  # no lone surrogates from undecodable names
    json.dumps(
        {
            "letters": [[x.id, x.path, x.fields, x.flags, x.malformed] for x in snap.letters],
            "unreadable": [[u.path, u.error, u.legible, u.illegible] for u in snap.unreadable],
            "ignored": snap.ignored, "orphans": snap.orphan_sidecars, "sidecars": sorted(snap.sidecars),
        },
        ensure_ascii=False,
    ).encode("utf-8")
    assert scope["letters"] == len(snap.letters)
    assert len(scope["unreadable"]) == len(snap.unreadable)
    assert len(scope["unsupported"]) == len(snap.unsupported)
    if scope["atomic"]:
        md_unsupported = sum(1 for u in snap.unsupported if u.path.count("/") == 2 and u.path.endswith(".md"))
        assert scope["files"] == len(snap.letters) + len(snap.unreadable) + md_unsupported
    assert all(isinstance(x, Letter) for x in snap.letters)
    assert all(isinstance(u, Unreadable) and u.error for u in snap.unreadable)


def only(snap):
    items = snap.letters + snap.unreadable
    assert len(items) == 1, (items, snap.unsupported)
    return items[0]


# --- hostile contents: one file each --------------------------------------------------------------


def sized_header(total: int) -> bytes:
    head = HEAD.format(id="h-1").encode()
    pad_total = total - len(head) - 4
    lines = []
    while pad_total > 0:
        size = min(pad_total, 3000)
        if 0 < pad_total - size < 8:
            size -= 8
        lines.append(b"p: " + b"q" * (size - 4) + b"\n" if not lines else b"p" + str(len(lines)).encode() + b": " + b"q" * (size - 4 - len(str(len(lines)))) + b"\n")
        pad_total -= size
    data = head + b"".join(lines) + b"---\n"
    assert len(data) == total
    return data


CONTENT_CASES: list[tuple[str, bytes, str]] = [
    # (case, file bytes, expected: "letter" or a substring of the unreadable error)
    ("empty-file", b"", "empty file"),
    ("only-open", b"---\n", "no closing"),
    ("only-delimiters", b"---\n---\n", "no 'id'"),
    ("no-close", HEAD.format(id="h-1").encode() + b"body\n" * 50, "no closing"),
    ("no-close-huge", HEAD.format(id="h-1").encode() + b"k: v\n" * 20000, "32768"),
    ("header-40k", sized_header(40000) + b"body\n", "32768"),
    ("header-32768", sized_header(MAX_HEADER) + b"body\n", "letter"),
    ("header-32769", sized_header(MAX_HEADER + 1) + b"body\n", "32768"),
    ("line-4097", letter_bytes(extra=b"s: " + b"x" * 4093 + b"\n"), "4096"),
    ("line-4096", letter_bytes(extra=b"s: " + b"x" * 4092 + b"\n"), "letter"),
    ("line-1mib", letter_bytes(extra=b"s: " + b"x" * (1 << 20) + b"\n"), "4096"),
    ("nul-in-header", letter_bytes(extra=b"s: a\x00b\n"), "control"),
    ("nul-in-key", letter_bytes(extra=b"s\x00: a\n"), "control"),
    ("del-in-header", letter_bytes(extra=b"s: a\x7fb\n"), "control"),
    ("escape-sequence", letter_bytes(extra=b"subject: \x1b]0;pwned\x07\x1b[2J\n"), "control"),
    ("tab-value", letter_bytes(extra=b"subject:\tx\n"), "control"),
    ("nul-in-body", letter_bytes(body=b"\x00" * 5000), "letter"),
    ("bad-utf8-header", letter_bytes(extra=b"subject: \xff\xfe\n"), "UTF-8"),
    ("cp1252-quotes", letter_bytes(extra=b"subject: \x93hi\x94\n"), "UTF-8"),
    ("surrogate-utf8", letter_bytes(extra=b"subject: \xed\xa0\x80\n"), "UTF-8"),
    ("overlong-utf8", letter_bytes(extra=b"subject: \xc0\xaf\n"), "UTF-8"),
    ("bad-utf8-body", letter_bytes(body=b"\xff\xfe\xfd\n"), "letter"),
    ("utf8-bom", b"\xef\xbb\xbf" + letter_bytes(), "byte-order mark"),
    ("utf16-bom", b"\xff\xfe" + letter_bytes().decode().encode("utf-16-le"), "first line"),
    ("utf16-no-bom", letter_bytes().decode().encode("utf-16-be"), "first line"),
    ("crlf-all", letter_bytes().replace(b"\n", b"\r\n"), "letter"),
    ("crlf-mixed", b"---\r\nid: h-1\nfrom: alpha\r\nto: beta\ntype: info\r\n---\nbody\r\n", "letter"),
    ("lone-cr", b"---\nid: h-1\rfrom: alpha\nto: beta\ntype: info\n---\n", "carriage return"),
    ("cr-only-endings", letter_bytes().replace(b"\n", b"\r"), "first line"),
    ("duplicate-key-same", letter_bytes(extra=b"re: x-1\nre: x-1\n"), "repeats"),
    ("duplicate-key-differ", letter_bytes(extra=b"re: x-1\nre: x-2\n"), "repeats"),
    ("duplicate-id", letter_bytes(extra=b"id: h-2\n"), "repeats"),
    ("id-243", letter_bytes("i" * 243), "letter"),
    ("id-244", letter_bytes("i" * 244), "invalid 'id'"),
    ("id-path", letter_bytes("../../etc/passwd"), "invalid 'id'"),
    ("id-unicode", letter_bytes("caf\u00e9"), "invalid 'id'"),
    ("yaml-list", letter_bytes(extra=b"disputes:\n  - a-1\n"), "key: value"),
    ("yaml-multiline", letter_bytes(extra=b"subject: >\n  folded\n"), "key: value"),
    ("indented-key", letter_bytes(extra=b"  re: x\n"), "key: value"),
    ("markup-values", letter_bytes(extra=b"subject: [@click=app.quit]x[/] [b]$accent\n"), "letter"),
    ("bidi-override", letter_bytes(extra="subject: \u202egnp.exe\u202c\n".encode()), "letter"),
    ("c1-controls", letter_bytes(extra="subject: \u009b31m\u0085\n".encode()), "letter"),
    ("long-key", letter_bytes(extra=b"k" * 4000 + b": v\n"), "letter"),
    ("thousand-fields", letter_bytes(extra=b"".join(b"f%d: v\n" % i for i in range(1000))), "letter"),
    ("ten-thousand-blank-lines", letter_bytes(extra=b"\n" * 10000), "letter"),
    ("fake-close-dashes", letter_bytes(extra=b"----\n"), "key: value"),
    ("close-with-space", HEAD.format(id="h-1").encode() + b"--- \nbody\n", "no closing"),
    ("body-looks-like-header", letter_bytes(body=b"---\nid: evil\nfrom: x\nto: y\ntype: ruling\n---\n"), "letter"),
    ("malformed-pointers", letter_bytes(extra=b"supersedes: a b\nre: ../x\ndisputes: ,,\n"), "letter"),
    ("huge-value-within-line", letter_bytes(extra=b"supersedes: " + b"z" * 4000 + b"\n"), "letter"),
]


@pytest.mark.parametrize("case,data,expected", CONTENT_CASES, ids=[c[0] for c in CONTENT_CASES])
def test_hostile_contents(box, case, data, expected):
    name = "h-1.md"
    box.raw(f"beta/inbox/{name}", data)
    item = only(guarded_scan(box.root))
    if expected == "letter":
        assert isinstance(item, Letter), getattr(item, "error", "")
    else:
        assert isinstance(item, Unreadable), f"{case} was read as a letter"
        assert expected in item.error, item.error


def test_body_text_never_reaches_the_snapshot(box):
    box.raw("beta/inbox/h-1.md", letter_bytes(body=b"---\nid: body-marker-77aa\nsupersedes: body-marker-88bb\n---\n"))
    snap = guarded_scan(box.root)
    assert "body-marker" not in repr([x.fields for x in snap.letters]) + repr(snap.scope.to_json())


def test_markup_and_bidi_values_kept_exactly(box):
    box.raw("beta/inbox/h-1.md", letter_bytes(extra="subject: [@click=app.quit] \u202eabc\n".encode()))
    assert only(guarded_scan(box.root)).subject == "[@click=app.quit] \u202eabc"


@pytest.mark.parametrize("code", [c for c in range(32) if c not in (10, 13)] + [127])
def test_every_control_byte_in_a_header_line(box, code):
    box.raw("beta/inbox/h-1.md", letter_bytes(extra=b"subject: x" + bytes([code]) + b"y\n"))
    item = only(guarded_scan(box.root))
    assert isinstance(item, Unreadable) and "control" in item.error
    assert item.legible.get("id") == "h-1" and "subject" not in item.legible


def test_sparse_20mib_file_of_nuls(box):
    path = box.root / "beta" / "inbox" / "h-1.md"
    with open(path, "wb") as fh:
        fh.truncate(20 << 20)
    item = only(guarded_scan(box.root))
    assert isinstance(item, Unreadable) and item.error == "first line is not '---'"
    assert len(item.illegible) <= MAX_HEADER  # only a bounded prefix is kept


def test_sparse_20mib_body_after_a_good_header(box, monkeypatch):
    path = box.raw("beta/inbox/h-1.md", letter_bytes(body=b""))
    with open(path, "r+b") as fh:
        fh.truncate(20 << 20)
    got = []
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: got.append(n) or real_read(fd, n))
    item = only(guarded_scan(box.root))
    assert isinstance(item, Letter) and item.size == 20 << 20
    assert got == [4096]


def test_20mib_single_line_without_newline(box):
    path = box.raw("beta/inbox/h-1.md", b"---\nsubject: ")
    with open(path, "ab") as fh:
        fh.write(b"x" * (20 << 20))
    item = only(guarded_scan(box.root))
    assert isinstance(item, Unreadable) and "4096" in item.error  # met before the 32 KiB limit
    assert item.legible == {}


# --- hostile names ----------------------------------------------------------------------------------


def bytes_path(box, *parts: bytes) -> bytes:
    return os.path.join(os.fsencode(box.root), *parts)


def test_letter_name_not_utf8(box):
    fd = os.open(bytes_path(box, b"beta", b"inbox", b"caf\xe9-\xff.md"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, letter_bytes())
    os.close(fd)
    box.raw("beta/inbox/ok-1.md", letter_bytes("ok-1"))
    snap = guarded_scan(box.root)
    assert [x.id for x in snap.letters] == ["ok-1"]
    assert snap.scope.unsupported == [{"path": "beta/inbox/caf\\xe9-\\xff.md", "reason": "file name is not UTF-8"}]
    assert snap.scope.files == 2 and not snap.scope.complete


def test_seat_name_not_utf8_is_ignored_and_escaped(box):
    os.makedirs(bytes_path(box, b"s\xff", b"inbox"))
    snap = guarded_scan(box.root)
    assert snap.ignored == ["s\\xff"] and snap.seats == ["alpha", "beta"]


def test_sidecar_name_not_utf8(box):
    fd = os.open(bytes_path(box, b"beta", b"inbox", b"\xfe.md.ack"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.close(fd)
    snap = guarded_scan(box.root)
    assert snap.orphan_sidecars == ["beta/inbox/\\xfe.md.ack"]


def test_non_md_and_hidden_undecodable_names_are_skipped(box):
    for raw in (b"\xff.txt", b".\xff.md", b"\xff"):
        os.close(os.open(bytes_path(box, b"beta", b"inbox", raw), os.O_WRONLY | os.O_CREAT, 0o644))
    snap = guarded_scan(box.root)
    assert snap.scope.files == 0 and snap.scope.complete


@pytest.mark.parametrize("name", ["a\nb.md", "\x1b[31mred.md", "\u202emd.exe.md", " .md", "-rf.md", "x" * 252 + ".md"])
def test_odd_but_utf8_names_are_read_and_flagged(box, name):
    box.raw(f"beta/inbox/{name}", letter_bytes())
    item = only(guarded_scan(box.root))
    assert isinstance(item, Letter) and item.flags == ("id-filename-mismatch",)
    assert item.path == f"beta/inbox/{name}"


@pytest.mark.parametrize("name", [".md", "..md", ".h-1.md"])
def test_dot_names_are_temporaries(box, name):
    box.raw(f"beta/inbox/{name}", letter_bytes())
    snap = guarded_scan(box.root)
    assert snap.scope.files == 0 and snap.letters == []


# --- hostile file types and links ------------------------------------------------------------------------


def test_symlink_loop(box):
    inbox = box.root / "beta" / "inbox"
    os.symlink("b.md", inbox / "a.md")
    os.symlink("a.md", inbox / "b.md")
    os.symlink("self.md", inbox / "self.md")
    snap = guarded_scan(box.root)
    assert {u.path: u.reason for u in snap.unsupported} == {
        "beta/inbox/a.md": "symlink", "beta/inbox/b.md": "symlink", "beta/inbox/self.md": "symlink",
    }


def test_seat_symlink_loop(box):
    os.symlink("gamma", box.root / "gamma")
    os.symlink(".", box.root / "beta" / "processed-loop")
    shutil.rmtree(box.root / "alpha" / "inbox")
    os.symlink("..", box.root / "alpha" / "inbox")
    snap = guarded_scan(box.root)
    assert {u.path: u.reason for u in snap.unsupported} == {"gamma": "symlinked seat", "alpha/inbox": "symlinked folder"}


@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero", "/dev/null", "/proc/self/environ", "/nonexistent"])
def test_symlinks_pointing_outside(box, target):
    os.symlink(target, box.root / "beta" / "inbox" / "out.md")
    snap = guarded_scan(box.root)
    assert {u.path: u.reason for u in snap.unsupported} == {"beta/inbox/out.md": "symlink"}
    assert "root:" not in repr(snap.scope.to_json())


def test_fifo_letter_never_blocks(box):
    os.mkfifo(box.root / "beta" / "inbox" / "f.md")
    snap = guarded_scan(box.root, seconds=5)
    assert {u.path: u.reason for u in snap.unsupported} == {"beta/inbox/f.md": "fifo"}


def test_fifo_in_place_of_a_folder_and_a_seat(box):
    shutil.rmtree(box.root / "beta" / "inbox")
    os.mkfifo(box.root / "beta" / "inbox")
    os.mkfifo(box.root / "gamma")
    snap = guarded_scan(box.root, seconds=5)
    assert {u.path: u.reason for u in snap.unsupported} == {"beta/inbox": "inbox is not a directory"}
    assert snap.ignored == ["gamma"]


def test_socket_letter(box):
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(box.root / "beta" / "inbox" / "s.md"))
    except OSError as exc:
        pytest.skip(f"no unix socket here: {exc}")
    try:
        snap = guarded_scan(box.root, seconds=5)
    finally:
        sock.close()
    assert {u.path: u.reason for u in snap.unsupported} == {"beta/inbox/s.md": "socket"}


@pytest.mark.parametrize("kind,dev", [("chr", (1, 5)), ("blk", (7, 0))], ids=["char-zero", "block-loop"])
def test_device_letter(box, kind, dev):
    mode = (stat.S_IFCHR if kind == "chr" else stat.S_IFBLK) | 0o600
    try:
        os.mknod(box.root / "beta" / "inbox" / "d.md", mode, os.makedev(*dev))
    except OSError as exc:
        pytest.skip(f"cannot make device nodes here: {exc}")
    snap = guarded_scan(box.root, seconds=5)
    assert {u.path: u.reason for u in snap.unsupported} == {"beta/inbox/d.md": "device"}


def deny(monkeypatch, names: set[str]):
    real_open = os.open

    def guarded(path, flags, mode=0o777, *, dir_fd=None):
        if os.path.basename(os.fsdecode(path)) in names:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", guarded)


def test_permission_denied_file(box, monkeypatch):
    box.raw("beta/inbox/h-1.md", letter_bytes())
    deny(monkeypatch, {"h-1.md"})
    snap = guarded_scan(box.root)
    assert snap.scope.unsupported == [{"path": "beta/inbox/h-1.md", "reason": "permission denied"}]


def test_permission_denied_folder_and_seat(box, monkeypatch):
    box.raw("beta/inbox/h-1.md", letter_bytes())
    deny(monkeypatch, {"inbox", "alpha"})
    snap = guarded_scan(box.root)
    assert {u.path: u.reason for u in snap.unsupported} == {"alpha": "permission denied", "beta/inbox": "permission denied"}


def test_permission_denied_root(box, monkeypatch):
    deny(monkeypatch, {"box"})
    with pytest.raises(LetterboxError) as err:
        scan(box.root)
    assert "Permission denied" in str(err.value)


def test_read_error_mid_file(box, monkeypatch):
    box.raw("beta/inbox/h-1.md", letter_bytes())
    real_read = os.read

    def eio(fd, n):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "read", eio)
    snap = guarded_scan(box.root)
    assert snap.scope.unsupported == [{"path": "beta/inbox/h-1.md", "reason": "cannot open: Input/output error"}]
    monkeypatch.setattr(os, "read", real_read)


def test_deeply_nested_directories_in_inbox_are_ignored(box):
    path = box.root / "beta" / "inbox"
    deep = path
    for i in range(100):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "h-9.md").write_bytes(letter_bytes("h-9"))
    snap = guarded_scan(box.root)
    assert snap.letters == [] and snap.scope.files == 0 and snap.scope.complete


def test_root_is_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "root")
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("e", _catch(lambda: scan(tmp_path / "root"))), daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive()
    assert isinstance(out["e"], LetterboxError)


def _catch(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return exc
    return None


@pytest.mark.parametrize("who", ["../beta", "beta/inbox", "\x00", "beta\n", "a" * 5000])
def test_hostile_participants(box, who):
    with pytest.raises(LetterboxError) as err:
        scan(box.root, [who])
    assert "\n" not in str(err.value)


def test_many_letters_in_one_inbox(box):
    inbox = box.root / "beta" / "inbox"
    for i in range(3000):
        (inbox / f"m-{i}.md").write_bytes(letter_bytes(f"m-{i}"))
    snap = guarded_scan(box.root)
    assert snap.scope.letters == 3000 and snap.scope.complete


# --- changes during the scan ------------------------------------------------------------------------------


def test_seat_replaced_by_a_file_mid_scan(box, monkeypatch):
    box.raw("alpha/inbox/a-1.md", letter_bytes("a-1"))
    box.raw("beta/inbox/b-1.md", letter_bytes("b-1"))

    def change():
        shutil.rmtree(box.root / "beta")
        (box.root / "beta").write_text("now a file")

    once_on_open(monkeypatch, "a-1.md", change)
    snap = guarded_scan(box.root)
    assert snap.scope.atomic
    assert snap.seats == ["alpha"] and snap.ignored == []  # a file at the root: not a warning
    assert [x.id for x in snap.letters] == ["a-1"]


def test_seat_replaced_by_a_file_on_every_attempt_is_not_atomic(box, monkeypatch):
    box.raw("alpha/inbox/a-1.md", letter_bytes("a-1"))

    def hook(name):
        if name == "a-1.md":
            beta = box.root / "beta"
            if beta.is_dir():
                shutil.rmtree(beta)
                beta.write_text("file")
            else:
                beta.unlink()
                (beta / "inbox").mkdir(parents=True)
                (beta / "processed").mkdir()

    on_open(monkeypatch, hook)
    snap = guarded_scan(box.root)
    assert snap.scope.atomic is False and not snap.scope.complete


def test_all_letters_vanish_mid_scan(box, monkeypatch):
    for i in range(20):
        box.raw(f"beta/inbox/v-{i:02}.md", letter_bytes(f"v-{i:02}"))

    def change():
        for p in (box.root / "beta" / "inbox").iterdir():
            p.unlink()

    once_on_open(monkeypatch, "v-00.md", change)
    snap = guarded_scan(box.root)
    assert snap.letters == [] and snap.scope.atomic and snap.scope.files == 0


def test_letters_appear_mid_scan(box, monkeypatch):
    box.raw("beta/inbox/a-0.md", letter_bytes("a-0"))

    def change():
        for i in range(50):
            box.raw(f"alpha/processed/n-{i:02}.md", letter_bytes(f"n-{i:02}"))

    once_on_open(monkeypatch, "a-0.md", change)
    snap = guarded_scan(box.root)
    assert snap.scope.letters == 51 and snap.scope.atomic


def test_file_swapped_for_a_fifo_between_listing_and_open(box, monkeypatch):
    box.raw("beta/inbox/h-1.md", letter_bytes())

    def change():
        (box.root / "beta/inbox/h-1.md").unlink()
        os.mkfifo(box.root / "beta/inbox/h-1.md")

    once_on_open(monkeypatch, "h-1.md", change)
    snap = guarded_scan(box.root, seconds=5)
    assert snap.scope.unsupported == [{"path": "beta/inbox/h-1.md", "reason": "fifo"}]


def test_file_swapped_for_a_symlink_between_listing_and_open(box, monkeypatch, tmp_path):
    (tmp_path / "secret.md").write_bytes(letter_bytes("secret-marker-3c"))
    box.raw("beta/inbox/h-1.md", letter_bytes())

    def change():
        (box.root / "beta/inbox/h-1.md").unlink()
        os.symlink(tmp_path / "secret.md", box.root / "beta/inbox/h-1.md")

    once_on_open(monkeypatch, "h-1.md", change)
    snap = guarded_scan(box.root)
    assert snap.scope.unsupported == [{"path": "beta/inbox/h-1.md", "reason": "symlink"}]
    assert "secret-marker" not in repr(snap.letters) + repr(snap.unreadable)


# --- read-only: the scan never writes ---------------------------------------------------------------------------


def test_scan_on_a_read_only_letterbox(box, monkeypatch):
    box.raw("beta/inbox/h-1.md", letter_bytes())
    box.raw("beta/inbox/bad.md", b"x")
    box.raw("beta/inbox/h-1.md.ack", b"")
    box.raw("letterbox-tui.toml", "[time]\nid_time_is_utc = true\n")
    os.mkfifo(box.root / "beta" / "inbox" / "f.md")
    before = box.tree_bytes()
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    real_open, real_builtin_open = os.open, builtins.open
    refused: list[str] = []

    def ro_open(path, flags, mode=0o777, *, dir_fd=None):
        if flags & write_flags:
            refused.append(os.fsdecode(path))
            raise OSError(30, "Read-only file system", path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def ro_builtin(file, mode="r", *a, **kw):
        if any(c in mode for c in "wax+"):
            refused.append(str(file))
            raise OSError(30, "Read-only file system", file)
        return real_builtin_open(file, mode, *a, **kw)

    def no(*a, **kw):
        refused.append(repr(a))
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "open", ro_open)
    monkeypatch.setattr(builtins, "open", ro_builtin)
    for fn in ("mkdir", "makedirs", "rename", "replace", "unlink", "remove", "rmdir", "link", "symlink", "utime", "chmod"):
        monkeypatch.setattr(os, fn, no)
    snap = guarded_scan(box.root)
    monkeypatch.undo()
    assert refused == []
    assert [x.id for x in snap.letters] == ["h-1"] and len(snap.unreadable) == 1
    assert box.tree_bytes() == before


def test_hostile_inputs_tried_are_counted(request):
    """Each other test item of this file tries one hostile input; print how many ran."""
    mine = [item for item in request.session.items if item.module is sys.modules[__name__] and item is not request.node]
    print(f"\nhostile inputs tried: {len(mine)}")
    if len(mine) > 1:  # the whole catalogue was collected, not a -k selection
        assert len(mine) >= 120


class _FlakyEntry:
    """A directory entry whose type cannot be read (as on a failing network file system)."""

    def __init__(self, entry):
        self._entry = entry
        self.name = entry.name
        self.path = entry.path

    def inode(self):
        return self._entry.inode()

    def _fail(self, *a, **kw):
        raise PermissionError(13, "Permission denied", self.name)

    is_symlink = is_dir = is_file = stat = _fail


def flaky_scandir(monkeypatch, names: set[str]):
    real = os.scandir

    class Listing:
        def __init__(self, arg):
            self._it = real(arg)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._it.close()

        def __iter__(self):
            for e in self._it:
                yield _FlakyEntry(e) if e.name in names else e

    monkeypatch.setattr(os, "scandir", Listing)


def test_entry_types_that_cannot_be_read(box, monkeypatch):
    box.raw("alpha/inbox/a-1.md", letter_bytes("a-1"))
    box.raw("beta/inbox/b-1.md", letter_bytes("b-1"))
    box.raw("alpha/status.md", "x")
    box.seat("gamma")
    box.raw("alpha/processed/p-1.md", letter_bytes("p-1"))
    box.raw("alpha/processed/p-2.md", letter_bytes("p-2"))
    box.raw("alpha/processed/p-3.md", letter_bytes("p-3"))
    flaky_scandir(monkeypatch, {"gamma", "inbox", "status.md", "p-2.md"})
    snap = guarded_scan(box.root)
    # one entry whose type cannot be read costs that entry only, not its folder
    assert sorted(x.id for x in snap.letters) == ["p-1", "p-3"]
    assert snap.unsupported.pop([u.path for u in snap.unsupported].index("alpha/processed/p-2.md")).reason == (
        "permission denied"
    )
    snap.scope.unsupported = [{"path": u.path, "reason": u.reason} for u in snap.unsupported]
    assert {u.path: u.reason for u in snap.unsupported} == {
        "gamma": "permission denied", "alpha/inbox": "permission denied", "beta/inbox": "permission denied",
    }
    assert snap.status_notes == {} and "gamma" in snap.seats and snap.scope.atomic

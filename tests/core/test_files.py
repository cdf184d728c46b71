"""core.files: reading one whole letterbox file never follows a symlink, never blocks on
a FIFO, keeps what it was asked to, and hashes honestly."""

import hashlib
import os
import threading

from letterbox_tui.core.files import NOT_REGULAR, TOO_LARGE_TO_HASH, read_file, read_files
from letterbox_tui.core.header import body_offset


def test_reads_and_hashes_the_whole_file(box):
    path = box.letter("a1", body="hello\n" * 1000)
    data = path.read_bytes()
    f = read_file(box.root, "beta/inbox/a1.md", keep=100)
    assert f.error is None and f.truncated
    assert f.data == data[:100]
    assert f.sha256 == hashlib.sha256(data).hexdigest()
    st = path.stat()
    assert f.stat_key == (st.st_size, st.st_mtime_ns, st.st_ino)


def test_keep_more_than_the_file_is_not_truncated(box):
    path = box.letter("a1")
    f = read_file(box.root, "beta/inbox/a1.md", keep=1 << 20, hashing=False)
    assert f.data == path.read_bytes() and not f.truncated and f.sha256 is None and f.error is None


def test_hash_limit_says_so_and_keeps_the_data(box):
    box.letter("a1", body="x" * 5000)
    f = read_file(box.root, "beta/inbox/a1.md", keep=10, hash_limit=1000)
    assert f.sha256 is None and f.error == TOO_LARGE_TO_HASH and len(f.data) == 10


def test_a_prefix_hash_covers_only_its_bound_and_says_how_much(box):
    path = box.letter("a1", body="x" * 5000)
    data = path.read_bytes()
    f = read_file(box.root, "beta/inbox/a1.md", keep=10, hash_limit=1000, prefix=True)
    assert f.error is None and f.hashed == 1000 < f.size == len(data)
    assert f.sha256 == hashlib.sha256(data[:1000]).hexdigest() and f.data == data[:10]
    whole = read_file(box.root, "beta/inbox/a1.md", keep=10, hash_limit=len(data), prefix=True)
    assert whole.hashed == whole.size and whole.sha256 == hashlib.sha256(data).hexdigest()
    plain = read_file(box.root, "beta/inbox/a1.md", keep=10)
    assert plain.hashed == plain.size and plain.sha256 == whole.sha256


def test_a_huge_sparse_letter_is_hashed_only_to_the_bound(box, monkeypatch):
    path = box.letter("a1")
    with open(path, "r+b") as fh:
        fh.truncate(50 << 30)  # 50 GiB, sparse
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    f = read_file(box.root, "beta/inbox/a1.md", keep=4096, hash_limit=8 << 20, prefix=True)
    assert f.hashed == 8 << 20 and f.size == 50 << 30 and f.sha256 is not None
    assert sum(reads) <= (8 << 20) + 4097  # the bound, and the head kept


def test_a_symlinked_letter_is_never_followed(box, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("---\nid: secret-marker\n---\nTOP SECRET\n")
    os.symlink(secret, box.root / "beta/inbox/link.md")
    f = read_file(box.root, "beta/inbox/link.md", keep=1 << 20)
    assert f.data == b"" and f.sha256 is None and f.error.startswith("cannot read")


def test_a_symlinked_folder_on_the_way_is_never_followed(box, tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "x.md").write_text("---\nid: x\n---\nTOP SECRET\n")
    os.symlink(real, box.root / "beta" / "linked")
    f = read_file(box.root, "beta/linked/x.md", keep=1 << 20)
    assert f.data == b"" and f.error


def test_a_fifo_never_blocks(box):
    os.mkfifo(box.root / "beta/inbox/pipe.md")
    out = []
    t = threading.Thread(target=lambda: out.append(read_file(box.root, "beta/inbox/pipe.md", keep=100)))
    t.start()
    t.join(timeout=5)
    assert not t.is_alive(), "reading a FIFO blocked"
    assert out[0].error == NOT_REGULAR


def test_missing_file_is_an_error_value_not_an_exception(box):
    assert read_file(box.root, "beta/inbox/none.md", keep=10).error.startswith("cannot read")
    assert read_file(box.root, "beta/inbox/nul\0.md", keep=10).error.startswith("cannot read")


def test_body_offset_finds_the_body_as_the_parser_closes_the_header():
    assert body_offset(b"---\nid: x\n---\nhello\n---\nmore") == len(b"---\nid: x\n---\n")
    assert body_offset(b"---\r\nid: x\r\n---\r\nhi") == len(b"---\r\nid: x\r\n---\r\n")
    assert body_offset(b"---\nid: x\n---") == len(b"---\nid: x\n---")
    assert body_offset(b"no header") is None
    assert body_offset(b"---\nid: x\nnever closes\n") is None


def test_a_retried_reply_never_blocks_on_a_fifo_where_the_reply_should_be(box):
    """A hostile FIFO named like the reply: the gate refuses in one line, never hangs."""
    from letterbox_tui.core.errors import LetterboxError
    from letterbox_tui.core.write import reply

    box.letter("task-1", frm="alpha", to="beta", type="request", requires_ack="true")
    os.mkfifo(box.root / "alpha/inbox/task-1--beta--result.md")
    out = []

    def run():
        try:
            reply(box.root, "task-1", "result", seat="beta", body="done\n")
            out.append("published")
        except LetterboxError as exc:
            out.append(str(exc))

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=10)
    assert not t.is_alive(), "the write gate blocked on a FIFO"
    assert out and out[0] != "published" and "\n" not in out[0]
    assert (box.root / "beta/inbox/task-1.md").exists()  # the task was not closed


def test_files_of_one_folder_read_together_are_each_read_alone(box, tmp_path, monkeypatch):
    """``read_files``: what ``read_file`` gives for each name (a letter, a missing file, a
    symlink, a FIFO, a NUL in a name), the folders on the way opened once."""
    box.raw("beta/inbox/a.md", "---\nid: a\n---\nbody\n")
    box.raw("beta/inbox/b.md", "x" * 5000)
    os.symlink(tmp_path, box.root / "beta/inbox/link.md")
    os.mkfifo(box.root / "beta/inbox/pipe.md")
    names = ["a.md", "none.md", "b.md", "link.md", "pipe.md", "nul\0.md", "a.md"]
    alone = [read_file(box.root, f"beta/inbox/{n}", keep=100, hashing=False) for n in names]
    opened = []
    real = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **kw: opened.append(path) or real(path, *a, **kw))
    assert read_files(box.root, "beta/inbox", names, keep=100, hashing=False) == alone
    assert opened.count("beta") == 1 and opened.count("inbox") == 1
    assert alone[2].truncated and alone[1].error.startswith("cannot read") and alone[4].error == NOT_REGULAR
    missing = read_files(box.root, "beta/nowhere", ["a.md", "b.md"], keep=10)
    assert [f.error[:11] for f in missing] == ["cannot read"] * 2 and missing[0] is not missing[1]

"""The C accelerator (core/_scanio.c) gives exactly what the pure-Python reader and
``parse_header`` give, on any bytes, and never blocks, follows a symlink or reads a body."""

from __future__ import annotations

import errno
import os
import shutil
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from letterbox_tui.core.cache import header_hash, letters_equal
from letterbox_tui.core.header import parse_header
from letterbox_tui.core.scan import _read_headers_py, scan

try:
    from letterbox_tui.core import _scanio
except ImportError:  # pragma: no cover - no compiler where the package was installed
    _scanio = None


def test_the_accelerator_is_built_where_a_compiler_is():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the pure-Python reader runs")
    import letterbox_tui

    assert _scanio is not None, (
        f"no built core/_scanio.c beside {os.path.dirname(letterbox_tui.__file__)}: install with "
        "`pip install -e .` (a plain install builds it into site-packages, not this tree) and see its output"
    )


needs_c = pytest.mark.skipif(_scanio is None, reason="the C accelerator is not built")


def dir_fd(path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


def both(folder, names):
    fd = dir_fd(folder)
    try:
        return _scanio.read_headers(fd, list(names), 2), _read_headers_py(fd, list(names))
    finally:
        os.close(fd)


def assert_same(c, py):
    """One file's results agree: stat, and either the same fields or the same bytes."""
    assert c[:7] == py[:7]
    c_data, c_fields = c[7], c[8]
    py_data = py[7]
    if c_fields is None:
        assert c_data == py_data
    else:
        parsed = parse_header(py_data)
        assert parsed.fields == c_fields
        assert py_data.startswith(c_data)
        assert header_hash(c_data) == header_hash(py_data)


_KEY = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,12}", fullmatch=True)
_VALUE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.from_regex(
    r"[ -~]{0,60}", fullmatch=True
)
_LINE = st.one_of(
    st.tuples(_KEY, _VALUE).map(lambda kv: f"{kv[0]}:{kv[1]}"),
    st.tuples(_KEY, _VALUE).map(lambda kv: f"{kv[0]}: {kv[1]}  "),
    st.sampled_from(["", "   ", "---", "--- ", "----", "no colon", " key: lead", "x:\ty", "k: \x00", "k: a\rb"]),
)
_EOL = st.sampled_from(["\n", "\r\n", "\r\r\n", "\r"])


@st.composite
def headers(draw) -> bytes:
    lines = draw(st.lists(_LINE, max_size=14))
    eol = draw(_EOL)
    opening = draw(st.sampled_from(["---\n", "---\r\n", "--- \n", "\ufeff---\n", "---"]))
    closing = draw(st.sampled_from(["---\n", "---\r\n", "---", "---x\n", "", "---\r"]))
    body = draw(st.binary(max_size=64))
    text = opening + "".join(line + eol for line in lines) + closing
    return text.encode("utf-8", "surrogatepass") + body


@needs_c
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=headers() | st.binary(max_size=300))
def test_any_bytes_read_and_split_as_the_python_reader_does(tmp_path, data):
    (tmp_path / "x.md").write_bytes(data)
    c, py = both(tmp_path, ["x.md"])
    assert_same(c[0], py[0])


@needs_c
@pytest.mark.parametrize("size", [4000, 4090, 4092, 4093, 4094, 4095, 4096, 4097, 4100, 9000, 32760, 32768, 32770, 40000])
@pytest.mark.parametrize("ending", [b"---\n", b"---\r\n", b"---", b"---x\n"])
def test_long_headers_across_read_boundaries(tmp_path, size, ending):
    head = b"---\nid: 2026-01-01T000000-a-info-x-00000000\n"
    filler = b"note: " + b"y" * 3000 + b"\n"
    body = head
    while len(body) + len(filler) < size:
        body += filler
    body += b"pad: " + b"z" * max(0, size - len(body) - 6) + b"\n"
    data = body + ending + b"the body\n" * 500
    (tmp_path / "x.md").write_bytes(data)
    c, py = both(tmp_path, ["x.md"])
    assert_same(c[0], py[0])


@needs_c
def test_many_files_on_several_threads_keep_their_order(tmp_path):
    names = []
    for i in range(5000):
        name = f"{i:05d}.md"
        (tmp_path / name).write_bytes(f"---\nid: n{i}\nfrom: a\nto: b\ntype: info\n---\nbody {i}\n".encode())
        names.append(name)
    fd = dir_fd(tmp_path)
    try:
        py = _read_headers_py(fd, names)
        for threads in (1, 2, 4, 8):
            c = _scanio.read_headers(fd, names, threads)
            assert [r[8][0] for r in c] == [("id", f"n{i}") for i in range(5000)]
            for a, b in zip(c, py):
                assert_same(a, b)
    finally:
        os.close(fd)


@needs_c
def test_a_batch_read_on_its_own_thread_is_what_read_headers_gives(tmp_path):
    names = []
    for i in range(3000):
        name = f"{i:05d}.md"
        (tmp_path / name).write_bytes(f"---\nid: n{i}\nfrom: a\nto: b\ntype: info\n---\nbody\n".encode())
        names.append(name)
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "long.md").write_bytes(b"---\nid: long\n" + b"x: " + b"y" * 9000 + b"\n---\n")
    names += ["pipe.md", "long.md", "missing.md"]
    fd = dir_fd(tmp_path)
    try:
        whole = _scanio.read_headers(fd, names, 2)
        batches = [_scanio.read_start(fd, names[i : i + 700]) for i in range(0, len(names), 700)]
        assert [r for b in batches for r in _scanio.read_finish(b)] == whole
        assert _scanio.read_finish(_scanio.read_start(fd, [])) == []
    finally:
        os.close(fd)


@needs_c
def test_a_batch_outlives_the_caller_s_descriptor_and_can_be_dropped(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.md").write_bytes(b"---\nid: from-a\n---\n")
    (tmp_path / "b" / "x.md").write_bytes(b"---\nid: from-b\n---\n")
    fd = dir_fd(tmp_path / "a")
    batch = _scanio.read_start(fd, ["x.md"] * 50)
    os.close(fd)
    other = dir_fd(tmp_path / "b")  # very likely the same number as the closed one
    try:
        assert {r[8] for r in _scanio.read_finish(batch)} == {(("id", "from-a"),)}
        with pytest.raises(ValueError):
            _scanio.read_finish(batch)
        for _ in range(20):  # started, never finished: waited for and freed when dropped
            _scanio.read_start(other, ["x.md"] * 200)
        with pytest.raises(ValueError):  # not a batch
            _scanio.read_finish(object())
        with pytest.raises(TypeError):
            _scanio.read_start(other, ("x.md",))
        with pytest.raises(ValueError):
            _scanio.read_start(other, ["a\x00b.md"])
        with pytest.raises(OSError):
            _scanio.read_start(-1, ["x.md"])
    finally:
        os.close(other)


@needs_c
@pytest.mark.parametrize("count", [0, 1, 128, 129, 1152, 1153, 3000])
def test_reading_ahead_gives_every_result_in_order(tmp_path, count):
    from letterbox_tui.core.scan import iter_headers, read_headers

    names = []
    for i in range(count):
        (tmp_path / f"{i:05d}.md").write_bytes(f"---\nid: n{i}\n---\n".encode())
        names.append(f"{i:05d}.md")
    fd = dir_fd(tmp_path)
    try:
        assert list(iter_headers(fd, names)) == read_headers(fd, names)
    finally:
        os.close(fd)


@needs_c
def test_what_cannot_be_read_is_reported_not_followed_nor_waited_for(tmp_path):
    (tmp_path / "real.md").write_bytes(b"---\nid: x\n---\n")
    os.symlink(tmp_path / "real.md", tmp_path / "link.md")
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "dir.md").mkdir()
    c, py = both(tmp_path, ["missing.md", "link.md", "pipe.md", "dir.md"])
    assert c == py
    missing, link, pipe, directory = c
    assert missing[:2] == (1, errno.ENOENT)
    assert link[:2] == (1, errno.ELOOP)
    assert pipe[0] == 0 and stat.S_ISFIFO(pipe[2]) and pipe[7] is None
    assert directory[0] == 0 and stat.S_ISDIR(directory[2]) and directory[7] is None


@needs_c
def test_bad_arguments_are_errors_not_crashes(tmp_path):
    fd = dir_fd(tmp_path)
    try:
        with pytest.raises(ValueError):
            _scanio.read_headers(fd, ["a\x00b.md"])
        with pytest.raises(TypeError):
            _scanio.read_headers(fd, [b"bytes.md"])
        with pytest.raises(TypeError):
            _scanio.stat_packed(fd, ("a.md",))
    finally:
        os.close(fd)
    assert _scanio.read_headers(-1, ["x.md"])[0][:2] == (1, errno.EBADF)


@needs_c
def test_stat_packed_is_the_memo_check_s_packing(tmp_path):
    from letterbox_tui.core.accel import pack_stats

    names = []
    for i in range(3000):
        (tmp_path / f"{i}.md").write_bytes(b"x" * i)
        names.append(f"{i}.md")
    fd = dir_fd(tmp_path)
    try:
        records = []
        for n in names:
            s = os.stat(n, dir_fd=fd, follow_symlinks=False)
            records.append((s.st_size, s.st_mtime_ns, s.st_ino, s.st_ctime_ns))
        assert _scanio.stat_packed(fd, names, 2) == pack_stats(records)
        assert _scanio.stat_packed(fd, names + ["gone.md"], 2) is None
    finally:
        os.close(fd)


@needs_c
def test_a_whole_scan_is_the_same_with_and_without_the_accelerator(tmp_path, monkeypatch):
    from letterbox_tui.core.demo import write_demo

    root = tmp_path / "demo"
    write_demo(root)
    (root / "alpha").mkdir(exist_ok=True)
    accelerated = scan(root)
    monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    pure = scan(root)
    assert len(accelerated.letters) == len(pure.letters) > 20
    for a, b in zip(accelerated.letters + accelerated.unreadable, pure.letters + pure.unreadable):
        assert letters_equal(a, b)
    a_scope, b_scope = accelerated.scope.to_json(), pure.scope.to_json()
    a_scope.pop("scanned_at"), b_scope.pop("scanned_at")
    assert a_scope == b_scope
    assert accelerated.seen.files == pure.seen.files


@needs_c
def test_a_big_generated_scan_is_the_same_with_and_without_reading_ahead(tmp_path, monkeypatch):
    """Folders of a few thousand letters (read ahead in batches, the next folder listed
    while one is built), with entries that are not letters mixed in."""
    from letterbox_tui import benchgen

    root = tmp_path / "big"
    benchgen.generate(root, 6000, 3)
    seats = sorted(p.name for p in root.iterdir() if (p / "inbox").is_dir())
    for n, seat in enumerate(seats):
        (root / seat / "inbox" / f"zz-fifo-{n}.md").parent.mkdir(exist_ok=True)
        os.mkfifo(root / seat / "inbox" / f"zz-fifo-{n}.md")
        (root / seat / "processed" / f"zz-dir-{n}.md").mkdir()
        (root / seat / "inbox" / f"zz-broken-{n}.md").write_bytes(b"---\nid: x\nfrom a\n---\n")
        (root / seat / "processed" / f"zz-orphan-{n}.md.ack").write_bytes(b"")
    accelerated = scan(root)
    monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    pure = scan(root)
    assert len(accelerated.letters) == len(pure.letters) >= 6000
    assert [x.path for x in accelerated.letters] == [x.path for x in pure.letters]
    for a, b in zip(accelerated.letters + accelerated.unreadable, pure.letters + pure.unreadable):
        assert letters_equal(a, b)
    assert accelerated.unsupported == pure.unsupported and len(pure.unsupported) == 2 * len(seats)
    assert accelerated.orphan_sidecars == pure.orphan_sidecars and len(pure.orphan_sidecars) == len(seats)
    a_scope, b_scope = accelerated.scope.to_json(), pure.scope.to_json()
    a_scope.pop("scanned_at"), b_scope.pop("scanned_at")
    assert a_scope == b_scope
    assert accelerated.seen.files == pure.seen.files


def test_the_pure_reader_is_used_when_asked(monkeypatch):
    from letterbox_tui.core.accel import scanio

    monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    assert scanio() is None
    monkeypatch.delenv("LETTERBOX_TUI_PURE")
    assert scanio() is _scanio

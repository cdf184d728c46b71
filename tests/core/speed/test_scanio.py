"""The C accelerator (core/speed/_scanio.c) gives exactly what the pure-Python reader and
``parse_header`` give, on any bytes, and never blocks, follows a symlink or reads a body."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from letterbox_tui.core.letters import letters_equal
from letterbox_tui.core.speed.cache import header_hash
from letterbox_tui.core.header import HeaderResult, parse_header
from letterbox_tui.core.reader import PURE
from letterbox_tui.core.reader import read_headers as _read_headers_py
from letterbox_tui.core.scan import scan
from letterbox_tui.core.speed.accel import CReader

try:
    from letterbox_tui.core.speed import _scanio
except ImportError:  # pragma: no cover - no compiler where the package was installed
    _scanio = None
else:
    from letterbox_tui.core.speed.accel import scanio as _configured

    _configured(pure=False)  # hands it core.letters' field tables, as the scan does


def test_the_accelerator_is_built_where_a_compiler_is():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the pure-Python reader runs")
    import letterbox_tui

    assert _scanio is not None, (
        f"no built core/speed/_scanio.c beside {os.path.dirname(letterbox_tui.__file__)}: install with "
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


def numbered_letters(folder, count: int) -> list[str]:
    """Write letters 00000.md ... (ids n0, n1, ...) into ``folder``; their names, in order."""
    names = []
    for i in range(count):
        name = f"{i:05d}.md"
        (folder / name).write_bytes(f"---\nid: n{i}\nfrom: a\nto: b\ntype: info\n---\nbody {i}\n".encode())
        names.append(name)
    return names


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


# Letters the accelerator makes itself: headers near the canonical form, each part
# perturbed now and then, so both sides of every check it makes are reached.
_TIME = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
    st.sampled_from([
        "2026-02-29T10:00:00Z", "2024-02-29T10:00:00Z", "2026-04-31T00:00:00Z", "2026-01-01T24:00:00Z",
        "2026-01-01T23:59:60Z", "2026-01-01T10:00:00+00:00", "2026-01-01T10:00:00-00:00", "2026-01-01T10:00:00",
        "2026-01-01T10:00:00z", "2026-01-01t10:00:00Z", "2026-01-01T10:00:00.5Z", "2026-01-01 10:00:00Z",
        "0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "２026-01-01T00:00:00Z", "",
    ]),
)
_ID = st.one_of(
    st.from_regex(r"[A-Za-z0-9_.:-]{1,20}", fullmatch=True),
    st.sampled_from(["a" * 128, "a" * 129, "has space", "slash/no", "é", "-", ".", "x..y", ""]),
)


_CANONICAL = {
    "from": "alpha", "to": "beta", "type": "request", "re": "", "thread": "t-1", "priority": "next",
    "requires_ack": "true", "deadline": "2026-05-01T12:19:00Z", "sent": "2026-05-01T00:19:00Z", "supersedes": "",
    "disputes": "", "rules_on": "", "upholds": "", "subject": "Hello", "extra-key": "v",
}
_PERTURBED = {
    "from": st.sampled_from(["", "external-bridge", "a b"]), "to": st.sampled_from(["", "external-bridge"]),
    "type": st.sampled_from(["", "ack", "info"]), "re": _ID, "thread": st.one_of(st.just(""), _ID),
    "priority": st.sampled_from(["", "now"]), "requires_ack": st.sampled_from(["", "false"]),
    "deadline": st.one_of(st.just(""), _TIME), "sent": _TIME, "supersedes": _ID,
    "disputes": st.sampled_from(["a, b", "a,,b", "bad id", " "]), "rules_on": _ID, "upholds": _ID,
    "subject": st.sampled_from(["", "x: y"]), "extra-key": st.sampled_from(["", "id"]),
}


@st.composite
def near_canonical(draw) -> tuple[str, bytes]:
    """Mostly canonical: each part is perturbed (or left out) one time in ten."""

    def rarely() -> bool:
        return draw(st.integers(0, 9)) == 0

    letter_id = draw(_ID) if rarely() else draw(st.from_regex(r"2026-05-01T[0-9]{6}-alpha-request-[a-z]{1,8}", fullmatch=True))
    fields = {"id": letter_id}
    for key, value in _CANONICAL.items():
        if rarely():
            if draw(st.booleans()):
                continue  # left out
            value = draw(_PERTURBED[key])
        fields[key] = value
    keep = draw(st.permutations(sorted(fields))) if rarely() else list(fields)
    name = letter_id + ".md"
    if rarely():
        name = draw(st.sampled_from([letter_id + "-0123abcd.md", "other.md", letter_id + ".MD.md"]))
    if "/" in name or name.startswith("."):
        name = "other.md"
    lines = "".join(f"{k}: {fields[k]}\n" for k in keep)
    return name, ("---\n" + lines + "---\nbody\n").encode()


@needs_c
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases=st.lists(near_canonical(), min_size=1, max_size=8, unique_by=lambda c: c[0]), utc=st.booleans())
def test_letters_made_by_the_accelerator_are_what_build_makes(tmp_path, cases, utc):
    from letterbox_tui.core.letters import build
    from letterbox_tui.core.model import Letter

    folder = tmp_path / f"case-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    for name, data in cases:
        (folder / name).write_bytes(data)
    names = [name for name, _ in cases]
    fd = dir_fd(folder)
    try:
        made = _scanio.read_headers(fd, names, 2, ("beta", "inbox", "beta/inbox/"))
        plain = _scanio.read_headers(fd, names, 2)
    finally:
        os.close(fd)
    from letterbox_tui.core.speed.cache import header_hash

    for name, c, p in zip(names, made, plain):
        assert c[:7] == p[:7]
        # a letter made in C comes with its header's hash (BLAKE2b-128, as the cache's)
        assert c[7] == (header_hash(p[7]) if type(c[8]) is Letter else p[7])
        expected = build(
            HeaderResult(p[8]) if p[8] is not None else parse_header(p[7]), path="beta/inbox/" + name,
            seat="beta", folder="inbox", name=name, size=p[3], mtime_ns=p[4], inode=p[5], id_time_is_utc=utc,
        )
        if type(c[8]) is Letter:
            MADE_IN_C.append(1)
            assert letters_equal(c[8], expected)
            assert c[8].fields == p[8] and not c[8].flags and not c[8].malformed
        else:
            assert c[8] == p[8]


MADE_IN_C: list[int] = []


def test_the_accelerator_made_letters_above(request):
    """The property test above cannot pass by never making a letter in C."""
    if _scanio is None:
        pytest.skip("the C accelerator is not built")
    if "test_letters_made_by_the_accelerator_are_what_build_makes" not in [i.name for i in request.session.items]:
        pytest.skip("run with the property test")
    assert len(MADE_IN_C) > 50


@needs_c
def test_a_canonical_letter_is_made_by_the_accelerator(tmp_path):
    from letterbox_tui.core.model import Letter

    lid = "2026-05-01T001900-alpha-request-plan-2d75c25d"
    (tmp_path / f"{lid}.md").write_bytes(
        f"---\nid: {lid}\nfrom: alpha\nto: beta\ntype: request\nre:\nthread: {lid}\npriority: next\n"
        "requires_ack: true\ndeadline: 2026-05-01T12:19:00Z\nsent: 2026-05-01T00:19:00Z\nx-note: kept\n---\nbody\n".encode()
    )
    fd = dir_fd(tmp_path)
    try:
        (result,) = _scanio.read_headers(fd, [f"{lid}.md"], 1, ("beta", "inbox", "beta/inbox/"))
    finally:
        os.close(fd)
    letter = result[8]
    assert type(letter) is Letter
    assert (letter.id, letter.sender, letter.recipient, letter.path) == (lid, "alpha", "beta", f"beta/inbox/{lid}.md")
    assert letter.sent_at == datetime(2026, 5, 1, 0, 19, tzinfo=timezone.utc) and letter.sent_at.tzinfo is timezone.utc
    assert letter.deadline_at == datetime(2026, 5, 1, 12, 19, tzinfo=timezone.utc)
    assert letter.fields[-1] == ("x-note", "kept") and letter.disputes == () and letter.re == ""
    assert (letter.size, letter.inode) == (result[3], result[5])


@needs_c
def test_the_accelerator_reads_its_field_table_from_python(tmp_path):
    """A header field added to the tables (here, on a Letter with one more slot) is made
    in C with no change to the C code; tables that miss a slot or name an unknown kind
    are refused, and then no letter is made in C at all."""
    from letterbox_tui.core import letters
    from letterbox_tui.core.model import Letter

    class Coloured(Letter):
        __slots__ = ("colour",)

    lid = "2026-05-01T001900-alpha-info-paint"
    (tmp_path / f"{lid}.md").write_bytes(
        f"---\nid: {lid}\nfrom: alpha\nto: beta\ntype: info\nrequires_ack: false\n"
        "sent: 2026-05-01T00:19:00Z\ncolour: red\n---\n".encode()
    )
    fd = dir_fd(tmp_path)
    where = ("beta", "inbox", "beta/inbox/")
    try:
        table = letters.FIELD_SLOTS + (("colour", "colour", "text", ""),)
        _scanio.configure(Coloured, table, letters.FILE_SLOTS)
        (result,) = _scanio.read_headers(fd, [f"{lid}.md"], 1, where)
        assert type(result[8]) is Coloured and result[8].colour == "red" and result[8].sender == "alpha"
        assert Coloured.__slots__ == ("colour",) and "colour" not in Letter.__slots__
        missing = tuple(row for row in letters.FIELD_SLOTS if row[0] != "subject")
        with pytest.raises(ValueError):
            _scanio.configure(Letter, missing, letters.FILE_SLOTS)
        (result,) = _scanio.read_headers(fd, [f"{lid}.md"], 1, where)
        assert type(result[8]) is tuple  # refused tables: build() makes every letter
        with pytest.raises(ValueError):
            _scanio.configure(Letter, letters.FIELD_SLOTS[:-1] + (("subject", "subject", "colourful", ""),),
                              letters.FILE_SLOTS)
        with pytest.raises((ValueError, TypeError)):
            _scanio.configure(Letter, letters.FIELD_SLOTS, letters.FILE_SLOTS[:-1] + ("fields",))
    finally:
        _scanio.configure(Letter, letters.FIELD_SLOTS, letters.FILE_SLOTS, True)  # as accel does
        os.close(fd)
    fd = dir_fd(tmp_path)
    try:
        (result,) = _scanio.read_headers(fd, [f"{lid}.md"], 1, where)
    finally:
        os.close(fd)
    assert type(result[8]) is Letter and result[8].fields[-1] == ("colour", "red")


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
    names = numbered_letters(tmp_path, 5000)
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
    names = numbered_letters(tmp_path, 3000)
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
def test_reading_ahead_gives_every_result_in_order(tmp_path, count, monkeypatch):
    from letterbox_tui.core.speed import accel

    monkeypatch.setattr(accel, "BATCH", 1024)  # the batch edges at 128 and 128 + 1024 (files are few here)
    c = CReader(_scanio)
    names = numbered_letters(tmp_path, count)
    fd = dir_fd(tmp_path)
    try:
        assert list(c.iter_headers(fd, names)) == c.read_headers(fd, names)
        where = ("beta", "inbox", "beta/inbox/")  # and a batch at a time, letters made in C
        made = c.read_headers(fd, names, where)
        taken = [r for _, results, _, _ in c.iter_batches(fd, names, where) for r in results]
        assert [type(r[8] if type(r) is tuple else r) for r in taken] == [type(r[8]) for r in made]
        assert [r if type(r) is tuple else r.id for r in taken] == [r if type(r[8]) is tuple else r[8].id for r in made]
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
    from letterbox_tui.core.speed.accel import pack_stats

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
    accelerated = scan(root, reader=CReader(_scanio))
    pure = scan(root, reader=PURE)
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
    from scripts import benchgen

    root = tmp_path / "big"
    benchgen.generate(root, 6000, 3)
    seats = sorted(p.name for p in root.iterdir() if (p / "inbox").is_dir())
    for n, seat in enumerate(seats):
        (root / seat / "inbox" / f"zz-fifo-{n}.md").parent.mkdir(exist_ok=True)
        os.mkfifo(root / seat / "inbox" / f"zz-fifo-{n}.md")
        (root / seat / "processed" / f"zz-dir-{n}.md").mkdir()
        (root / seat / "inbox" / f"zz-broken-{n}.md").write_bytes(b"---\nid: x\nfrom a\n---\n")
        (root / seat / "processed" / f"zz-orphan-{n}.md.ack").write_bytes(b"")
    accelerated = scan(root, reader=CReader(_scanio))
    pure = scan(root, reader=PURE)
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
    from letterbox_tui.core.speed.accel import reader, scanio

    monkeypatch.setenv("LETTERBOX_TUI_PURE", "1")
    assert scanio() is None and reader() is PURE
    monkeypatch.delenv("LETTERBOX_TUI_PURE")
    assert scanio() is _scanio
    assert reader(pure=True) is PURE
    if _scanio is not None:
        assert isinstance(reader(), CReader)


def test_the_core_scan_reads_with_the_pure_reader_unless_handed_another(tmp_path, monkeypatch):
    """The core takes its reader as a parameter and reads no variable: the default is pure."""
    import letterbox_tui.core.scan as scan_module

    assert scan_module.scan.__kwdefaults__["reader"] is PURE
    assert "LETTERBOX_TUI" not in open(scan_module.__file__).read()

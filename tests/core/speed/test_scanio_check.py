"""The accelerator's proof that every file stats as recorded (``_scanio.check_start`` /
``check_finish``, behind ``core.speed.memo.Proof``): the same verdict as comparing
``stat_packed``'s records, every kind of difference seen, malformed work refused or
vouching for nothing, and a proof dropped unfinished stopped and freed."""

from __future__ import annotations

import os

import pytest

from letterbox_tui.core.speed.accel import scanio

_scanio = scanio(pure=False)
needs_c = pytest.mark.skipif(_scanio is None, reason="the C accelerator is not built")


def _dir_fd(path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


def _folder(tmp_path, name: str, n: int):
    d = tmp_path / name
    d.mkdir()
    names = []
    for i in range(n):
        (d / f"{i:05d}.md").write_bytes(b"x" * (i % 50))
        names.append(f"{i:05d}.md")
    fd = _dir_fd(d)
    return d, fd, names, _scanio.stat_packed(fd, names, 1)


def _check(work, threads=2) -> bool:
    return _scanio.check_finish(_scanio.check_start(work, threads))


def _item(fd, names, stats):
    return (fd, "\0".join(names).encode(), len(names), stats)


@needs_c
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_unchanged_files_hold_and_any_change_is_seen(tmp_path, threads):
    a, fa, na, sa = _folder(tmp_path, "a", 700)
    b, fb, nb, sb = _folder(tmp_path, "b", 3)
    e, fe, _, se = _folder(tmp_path, "e", 0)
    try:
        work = [_item(fa, na, sa), _item(fe, [], se), _item(fb, nb, sb)]
        assert _check(work, threads)
        assert _check([], threads)
        # the last file of the big folder, then the first of the small one
        for path in (a / na[-1], b / nb[0]):
            before = path.stat()
            path.write_bytes(path.read_bytes())  # same size, same bytes: mtime/ctime move
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back: ctime still moved
            assert not _check(work, threads)
            assert _check([_item(fa, na, _scanio.stat_packed(fa, na, 1)), _item(fb, nb, _scanio.stat_packed(fb, nb, 1))])
        os.unlink(b / nb[1])
        assert not _check([_item(fb, nb, _scanio.stat_packed(fb, nb[:1], 1) * 3)])
        os.symlink("00000.md", b / nb[1])  # a symlink in its place is never followed
        fake = _scanio.stat_packed(fb, [nb[0], nb[0], nb[2]], 1)
        assert not _check([_item(fb, nb, fake)])
    finally:
        for fd in (fa, fb, fe):
            os.close(fd)


@needs_c
def test_malformed_work_vouches_for_nothing_or_is_refused(tmp_path):
    _, fd, names, stats = _folder(tmp_path, "a", 4)
    try:
        joined = "\0".join(names).encode()
        assert not _check([(fd, joined, 3, stats[:96])])  # four names, three said
        assert _check([(fd, joined + b"\0", 4, stats)])  # the last name ended by a NUL of its own
        assert not _check([(fd, joined + b"\0\0", 4, stats)])  # an empty fifth name
        assert not _check([(fd, b"", 1, stats[:32])])
        assert not _check([(fd, joined, 0, b"")])
        with pytest.raises(OSError):
            _scanio.check_start([(-1, joined, 4, stats)])
        with pytest.raises(ValueError):
            _scanio.check_start([(fd, joined, 4, stats[:-1])])
        with pytest.raises(TypeError):
            _scanio.check_start([(fd, "\0".join(names), 4, stats)])
        with pytest.raises(TypeError):
            _scanio.check_start(((fd, joined, 4, stats),))
        # any buffer: slices of one file read whole, the names each ended by a NUL
        whole = bytearray(b"head" + joined + b"\0" + stats + b"tail")
        view = memoryview(whole)
        at = 4 + len(joined) + 1
        assert _check([(fd, view[4:at], 4, view[at : at + len(stats)])])
        assert not _check([(fd, view[4:at], 4, view[at + 1 : at + 1 + len(stats)])])
        with pytest.raises(ValueError):
            _scanio.check_start([(fd, view[4 : at - 1], 4, view[at : at + len(stats)])])  # no NUL after the last
        handle = _scanio.check_start([(fd, joined, 4, stats)])
        assert _scanio.check_finish(handle) is True
        with pytest.raises(ValueError):
            _scanio.check_finish(handle)
    finally:
        os.close(fd)


@needs_c
def test_a_proof_dropped_unfinished_is_stopped_and_the_descriptors_are_its_own(tmp_path):
    _, fd, names, stats = _folder(tmp_path, "a", 3000)
    work = [_item(fd, names, stats)]
    handles = [_scanio.check_start(work, 2) for _ in range(20)]
    del handles  # stopped, waited for and freed: no thread left behind, no crash
    handle = _scanio.check_start(work, 2)
    os.close(fd)  # the caller's descriptor closed early: the threads use their own copy
    assert _scanio.check_finish(handle) is True

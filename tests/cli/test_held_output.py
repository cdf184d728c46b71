"""An answer's bytes go out whole and in order: ``held.write_bytes`` writes its parts with
``os.writev`` (no join), through partial writes, and ``Held.show`` keeps text and bytes in
the order they were written."""

from __future__ import annotations

import io
import os
import threading

from letterbox_tui.cli import held


def test_write_bytes_through_a_pipe_with_partial_writes(monkeypatch):
    parts = [os.urandom(n) for n in (0, 1, 5000, 70_000, 3, 0, 1_000_000)] * 300  # more than IOV_MAX parts
    want = b"".join(parts)
    calls = []
    real = os.writev

    def short(fd, bufs):  # at most 4097 bytes a call: every kind of partial write
        bufs = list(bufs)
        calls.append(len(bufs))
        left, cut = 4097, []
        for b in bufs:
            if left <= 0:
                break
            cut.append(b[:left])
            left -= len(b)
        return real(fd, cut)

    monkeypatch.setattr(os, "writev", short)
    r, w = os.pipe()
    got = []
    reader = threading.Thread(target=lambda: got.append(_drain(r)))
    reader.start()
    with open(w, "wb") as out:
        out.write(b"head:")  # buffered, and flushed before the parts
        held.write_bytes(out, parts)
        out.write(b":tail")
    reader.join()
    assert got == [b"head:" + want + b":tail"]
    assert max(calls) <= held._IOV and len(calls) > len(want) // 4097


def _drain(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def test_write_bytes_without_a_file_writes_the_parts():
    out = io.BytesIO()
    held.write_bytes(out, [b"a", b"", b"bc"])
    assert out.getvalue() == b"abc"


def test_between():
    assert held.between([], b",") == []
    assert held.between([b"x"], b",") == [b"x"]
    assert b"".join(held.between([b"x", b"y", b"z"], b",")) == b"x,y,z"


def test_show_keeps_text_and_bytes_in_order(tmp_path):
    path = tmp_path / "out"
    with open(path, "w", encoding="utf-8") as real:
        h = held.Held(real)
        h.write("one ")
        h.buffer.write(b"two ")
        held.write_bytes(h.buffer, [b"three", b" "])
        h.write("four ")
        h.write("five ")
        h.buffer.writelines([b"six"])
        h.show()
    assert path.read_bytes() == b"one two three four five six"


def test_a_query_from_the_index_on_a_pipe_is_the_text_written(tmp_path, monkeypatch, capsys):
    """A real process answering from the index onto a pipe (its rows' bytes through
    ``write_bytes``, held until the proof holds) prints what the text path prints."""
    import json
    import subprocess
    import sys
    import time

    from letterbox_tui.cli import main
    from letterbox_tui.core.demo import write_demo

    root = tmp_path / "box"
    write_demo(root)
    old = time.time() - 3600  # settled: older than any racy window
    for here, dirs, files in os.walk(root, topdown=False):
        for name in files + dirs:
            os.utime(os.path.join(here, name), (old, old), follow_symlinks=False)
    os.utime(root, (old, old))
    argv = ["--root", str(root), "query", "type=request", "until=2026-12-01T00:00:00Z", "--json"]
    main(argv[:-2] + ["--json"])  # (the index, built in line)
    capsys.readouterr()
    probe = ("import sys; from letterbox_tui.cli import held, main; real = held.write_bytes; "
             "held.write_bytes = lambda b, p: (sys.stderr.write('writev %d\\n' % len(p)), real(b, p)); "
             "sys.exit(main(sys.argv[1:]))")
    got = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True,
                         env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert b"writev" in got.stderr, got.stderr  # (the stored bytes, from the index)
    monkeypatch.setenv("LETTERBOX_TUI_NO_CACHE", "1")
    assert main(argv) == got.returncode  # (3: the demo's scope is not complete)
    a, b = json.loads(capsys.readouterr().out), json.loads(got.stdout)
    assert len(a["matches"]) > 1 and a["matches"] == b["matches"] and a["unknown"] == b["unknown"]

"""Derived files are a convenience, never a source of truth (issue 18, items 6-9): a header
cache, an answer memo or a memo state that is damaged, of the wrong shape or type, or huge
is ignored with one notice line, and the answer is the one the letters give."""

from __future__ import annotations

import json
import os
import pickle
import random
import time
from pathlib import Path

import pytest

from letterbox_tui.core.speed import cache as cache_mod
from letterbox_tui.core.speed import files as files_mod
from letterbox_tui.core.speed import memo as memo_mod
from tests.cli.helpers import cli


@pytest.fixture(autouse=True)
def _trust_fresh_files(monkeypatch):
    """The letters were written a moment ago: cache and memo them all the same."""
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    monkeypatch.setattr(memo_mod, "RACY_NS", 0)
    files_mod.take_notices()


@pytest.fixture
def mail(box):
    box.letter("2026-01-01T000000-alpha-request-ask-aaaaaaaa", type="request", requires_ack="true",
               sent="2026-01-01T00:00:00Z", deadline="2026-01-05T00:00:00Z")
    box.letter("2026-01-01T000100-beta-info-note-bbbbbbbb", frm="beta", to="alpha", sent="2026-11-02T10:00:00Z")
    box.letter("2026-01-02T000000-alpha-request-two-cccccccc", type="request", requires_ack="true",
               sent="2026-01-02T00:00:00Z", re="2026-01-01T000000-alpha-request-ask-aaaaaaaa")
    box.raw("beta/inbox/broken.md", "---\nid: broken\nfrom alpha\n---\n")
    time.sleep(0.02)
    return box


QUERY = ("query", "type=request", "--json")


def answer(out: str) -> dict:
    data = json.loads(out)
    data["scope"].pop("scanned_at")
    data.pop("at", None)  # owed's clock: now
    return data


def from_scratch(capsys, box, monkeypatch, *argv) -> tuple[int, str]:
    monkeypatch.setenv("LETTERBOX_TUI_NO_CACHE", "1")
    code, out, err = cli(capsys, box, *argv)
    monkeypatch.delenv("LETTERBOX_TUI_NO_CACHE")
    assert "ignored" not in err
    return code, out


def derived_files(box) -> dict[str, Path]:
    """The header cache, the memo state and the one memoised answer of ``box``. (A memo
    that is sound answers without the header cache being read at all.)"""
    found = {"headers": Path(cache_mod.cache_path(box.root, False))}
    prefix = memo_mod.root_prefix(str(box.root))
    for p in Path(files_mod.cache_dir()).iterdir():
        if p.name.startswith(prefix) and p.suffix in (".state", ".answer"):
            found[p.suffix[1:]] = p
    assert set(found) == {"headers", "state", "answer"} and all(p.is_file() for p in found.values()), found
    return found


OWED = ("owed", "--json")  # reads through the header cache (query may answer from the index)


def test_flipping_any_byte_of_any_derived_file_never_changes_an_answer(capsys, mail, monkeypatch):
    expected = {argv: from_scratch(capsys, mail, monkeypatch, *argv) for argv in (QUERY, OWED)}
    for argv in (QUERY, OWED):  # writes the cache and records the memo
        code, out, _ = cli(capsys, mail, *argv)
        assert (code, answer(out)) == (expected[argv][0], answer(expected[argv][1]))
    files = derived_files(mail)
    originals = {name: p.read_bytes() for name, p in files.items()}
    rng = random.Random(18)
    tried = 0
    for name, path in files.items():
        argv = OWED if name == "headers" else QUERY  # a command that reads the damaged file
        expected_code, expected_out = expected[argv]
        data = originals[name]
        for at in sorted(rng.sample(range(len(data)), min(25, len(data)))) + [0, len(data) - 1]:
            for p, original in zip(files.values(), originals.values()):
                p.write_bytes(original)  # every other file as it was written
            damaged = bytearray(data)
            damaged[at] ^= rng.randrange(1, 256)
            path.write_bytes(bytes(damaged))
            code, out, err = cli(capsys, mail, *argv)
            assert (code, answer(out)) == (expected_code, answer(expected_out)), (name, at)
            assert "ignored" in err and err.count("\n") == 1, (name, at, err)  # one notice line
            tried += 1
    assert tried > 60


def test_a_damaged_cache_never_stops_a_command_check_verify_included(capsys, mail, monkeypatch):
    expected = {argv: from_scratch(capsys, mail, monkeypatch, *argv) for argv in
                [("check", "--json"), ("check", "--verify", "--json"), ("owed", "--json")]}
    cli(capsys, mail, "check", "--json")
    path = Path(cache_mod.cache_path(mail.root, False))
    data = path.read_bytes()
    # the case the attack found: one same-length change inside a row ('sent' month 11 -> 13)
    at = data.index(b"2026-11-02T10:00:00Z")
    for damaged in (data[:at + 5] + b"13" + data[at + 7:], data[: len(data) // 2], b"\0" * len(data)):
        for argv, (code, out) in expected.items():
            path.write_bytes(damaged)
            got_code, got, err = cli(capsys, mail, *argv)
            assert got_code == code and answer(got) == answer(out), argv
            assert "internal error" not in err and "ignored" in err


def test_a_memo_state_of_the_wrong_shape_is_no_memo(capsys, mail, monkeypatch):
    expected_code, expected = from_scratch(capsys, mail, monkeypatch, *QUERY)
    cli(capsys, mail, *QUERY)
    state = derived_files(mail)["state"]
    token = files_mod.read_framed_head(str(state), memo_mod.MAGIC_STATE, memo_mod.VERSION, memo_mod.TOKEN)
    for wrong in [(1,), ((1, 2), ()), ((("", 1, 2, 3, 4),), (("x", "a", 1, b""),)), ("dirs", "folders"), {"a": 1}]:
        # well framed, the right token (so the answer files match it), a good checksum
        files_mod.write_framed(str(state), memo_mod.MAGIC_STATE, memo_mod.VERSION, [token, pickle.dumps(wrong)])
        code, out, err = cli(capsys, mail, *QUERY)
        assert (code, answer(out)) == (expected_code, answer(expected)), wrong
        assert "ignored" in err and "Error" not in err


def test_a_huge_sparse_cache_file_is_not_read(capsys, mail, monkeypatch):
    expected_code, expected = from_scratch(capsys, mail, monkeypatch, *QUERY)
    path = Path(cache_mod.cache_path(mail.root, False))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(cache_mod.MAGIC)
        fh.truncate(8 << 30)  # 8 GiB, sparse: nothing on disk
    read_sizes: list[int] = []
    real_readv = os.readv

    def counting_readv(fd, buffers):
        read_sizes.append(sum(len(b) for b in buffers))
        return real_readv(fd, buffers)

    monkeypatch.setattr(files_mod.os, "readv", counting_readv)
    t = time.monotonic()
    c = cache_mod.HeaderCache(mail.root, False)
    assert not c.loaded and time.monotonic() - t < 2
    assert sum(read_sizes) < 1 << 20  # not read whole (nor in part beyond a head)
    notices = files_mod.take_notices()
    assert len(notices) == 1 and "larger than" in notices[0]
    code, out, err = cli(capsys, mail, *QUERY)
    assert (code, answer(out)) == (expected_code, answer(expected))


def test_every_derived_file_is_read_within_its_bound(capsys, mail, monkeypatch):
    """The bound holds for the memo's files too (here a small one, to test cheaply)."""
    expected_code, expected = from_scratch(capsys, mail, monkeypatch, *QUERY)
    cli(capsys, mail, *QUERY)
    sizes = {name: p.stat().st_size for name, p in derived_files(mail).items()}
    monkeypatch.setattr(files_mod, "MAX_SIZE", min(sizes.values()) - 100)
    code, out, err = cli(capsys, mail, *QUERY)
    assert (code, answer(out)) == (expected_code, answer(expected))
    assert "larger than" in err


def test_a_file_where_a_derived_file_should_be_is_never_followed_or_blocked_on(capsys, mail, monkeypatch):
    expected_code, expected = from_scratch(capsys, mail, monkeypatch, *QUERY)
    path = Path(cache_mod.cache_path(mail.root, False))
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)  # a FIFO: opened without blocking, never read
    code, out, err = cli(capsys, mail, *QUERY)
    assert (code, answer(out)) == (expected_code, answer(expected))
    assert "not a regular file" in err

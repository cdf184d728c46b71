"""Replacing one of the user's own files whole or not at all (core.user_files)."""

from __future__ import annotations

import os
import stat

import pytest

from letterbox_tui.core.user_files import replace_atomically


def test_the_file_is_replaced_whole_and_private(tmp_path):
    target = tmp_path / "state" / "deep" / "history"
    replace_atomically(target, "one\n")
    replace_atomically(target, "two\nthree\n")
    assert target.read_text() == "two\nthree\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700 & ~_umask()
    assert sorted(os.listdir(target.parent)) == ["history"]  # no temporary left


def test_a_failed_replace_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "config.toml"
    target.write_text("old = 1\n")

    def refuse(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        replace_atomically(target, "new = 2\n")
    assert target.read_text() == "old = 1\n"
    assert os.listdir(tmp_path) == ["config.toml"]


def test_a_symlink_at_the_temporary_name_is_never_followed(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("theirs\n")
    monkeypatch.setattr("letterbox_tui.core.replace._token", lambda: "abcd1234abcd")
    (tmp_path / ".drafts.json.tmp.abcd1234abcd").symlink_to(elsewhere)
    with pytest.raises(FileExistsError):
        replace_atomically(tmp_path / "drafts.json", "{}")
    assert elsewhere.read_text() == "theirs\n" and not (tmp_path / "drafts.json").exists()


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old

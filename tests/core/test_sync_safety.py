"""git never runs a program a repository's config names for a reading command, and never
runs at all in a repository another user owns (issue 27 item 6)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core import sync as state
from letterbox_tui.core.sync_history import added
from letterbox_tui.core.sync_run import sync
from tests.core.sync_helpers import git, letter_text, machines, put

L1 = "2026-01-01T000000-alpha-info-one-aaaaaaaa"
HOOKS = ("post-index-change", "reference-transaction", "pre-commit", "post-checkout", "pre-push")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(state, "RACY_SECONDS", -1e9)
    monkeypatch.setenv("LETTERBOX_TUI_NO_CACHE", "1")  # every command asks git again


def probe(tmp: Path, name: str, then: str = "exit 0") -> tuple[str, Path]:
    """A program that records, in a file, that it ran (and lets git go on)."""
    ran = tmp / f"{name}.ran"
    script = tmp / f"{name}.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{ran}'\n{then}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script), ran


def armed(tmp: Path, repo: Path) -> dict[str, Path]:
    """Every program the repository's own config can name: fsmonitor, a clean filter on
    every file, and the hooks; a letter modified so that status must look at it."""
    ran = {}
    cmd, ran["fsmonitor"] = probe(tmp, "fsmonitor")
    git(repo, "config", "core.fsmonitor", cmd)
    cmd, ran["filter"] = probe(tmp, "filter", then="exec cat")  # the bytes unchanged
    git(repo, "config", "filter.probe.clean", cmd)
    put(repo, ".gitattributes", "* filter=probe\n")
    hooks = repo / ".git" / "hooks"
    for hook in HOOKS:
        cmd, ran[hook] = probe(tmp, hook)
        (hooks / hook).write_text(Path(cmd).read_text())
        (hooks / hook).chmod(0o755)
    return ran


def test_reading_commands_run_no_program_the_repository_names(tmp_path, capsys):
    _, a, _ = machines(tmp_path)
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    git(a, "add", "-A")
    git(a, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "x", "--no-verify")
    os.utime(a / "beta" / "inbox" / f"{L1}.md", (1, 1))  # stat differs: status reads the file
    ran = armed(tmp_path, a)
    for argv in (["query", "--json"], ["check", "--json"], ["show", L1, "--json"], ["exists", "type=info"]):
        main(["--root", str(a), *argv])
    out = capsys.readouterr().out
    assert '"sync":{"head"' in out  # git was asked: the scope's sync block is there
    assert state.status(a)["head"] is not None
    assert state.unpushed(a) is not None and added(a, f"beta/inbox/{L1}.md") is not None
    assert [name for name, path in ran.items() if path.exists()] == []


def test_sync_runs_the_users_own_hooks_as_git_does(tmp_path):
    _, a, _ = machines(tmp_path)
    ran = armed(tmp_path, a)
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))
    sync(a)
    assert ran["pre-push"].exists() and ran["reference-transaction"].exists()


def test_a_repository_another_user_owns_is_not_read(tmp_path, capsys):
    if os.geteuid() != 0:
        pytest.skip("needs root to give the repository to another user")
    _, a, _ = machines(tmp_path)
    ran = armed(tmp_path, a)
    os.utime(a / ".gitignore", (1, 1))
    for dirpath, dirnames, filenames in os.walk(a):
        for n in dirnames + filenames:
            os.lchown(os.path.join(dirpath, n), 65534, 65534)
    os.lchown(a, 65534, 65534)
    assert state.status(a) is None  # as git itself says: dubious ownership, not ours to read
    code = main(["--root", str(a), "query", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["scope"]["sync"] is None
    assert [name for name, path in ran.items() if path.exists()] == []

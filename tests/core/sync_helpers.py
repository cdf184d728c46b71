"""Two machines sharing one letterbox through a bare remote, with real git in temp dirs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from letterbox_tui.core.sync_run import init_git
from letterbox_tui.core.write import init_letterbox

SEATS = ("alpha", "beta")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def letter_text(letter_id: str, frm: str = "alpha", to: str = "beta", type: str = "info", body: str = "body\n") -> str:
    return (f"---\nid: {letter_id}\nfrom: {frm}\nto: {to}\ntype: {type}\npriority: next\n"
            f"requires_ack: false\nsent: 2026-01-01T00:00:00Z\n---\n{body}")


def put(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def machines(tmp: Path, seats=SEATS) -> tuple[Path, Path, Path]:
    """(remote, a, b): a bare remote; machine a made the letterbox with ``init --git`` and
    pushed it; machine b cloned it."""
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    a = tmp / "a"
    init_letterbox(a, seats)
    init_git(a)
    git(a, "remote", "add", "origin", str(remote))
    git(a, "push", "-q", "-u", "origin", "HEAD")
    b = tmp / "b"
    subprocess.run(["git", "clone", "-q", str(remote), str(b)], check=True, capture_output=True)
    return remote, a, b


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but git's own, with its bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if ".git" in dirnames:
            dirnames.remove(".git")
        for n in filenames:
            p = Path(dirpath) / n
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def letters(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in tree(root).items() if k.endswith(".md") and "/." not in "/" + k}


def hanging_ssh(tmp: Path) -> tuple[str, Path]:
    """(a ``GIT_SSH_COMMAND``, the file its pid appears in): a transport that connects and
    then never answers, as a remote whose network stalls."""
    pids = tmp / "ssh.pids"
    script = tmp / "hanging-ssh"
    script.write_text(f"#!/bin/sh\necho $$ >> '{pids}'\nexec sleep 600\n")
    script.chmod(0o755)
    return str(script), pids


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie awaiting its reaper counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(condition, timeout: float = 30.0, what: str = "condition"):
    """Poll ``condition()`` until it is true (its value), else fail after ``timeout``."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)

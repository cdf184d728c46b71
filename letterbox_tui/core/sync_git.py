"""Running git for a letterbox: one way, in its own process group, never a stranger's program.

A reading call runs no program the repository's configuration names (``READING``: no
fsmonitor, no hooks, no signature checks; ``core.sync`` switches filters off too); ``sync``'s
own steps run git as the user's git would (``user_git``), hooks and all. Every call runs in
its own process group, ended on a timeout (network steps: ``SyncTimeout``), an interruption
or SIGTERM, so nothing git started outlives the command.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import LetterboxError

if TYPE_CHECKING:
    import subprocess

    from .sync import Repo


class SyncError(LetterboxError):
    """git could not do what was asked (one line; the CLI exits 2)."""


class NoRemote(SyncError):
    """The copy has no remote to sync with (its message says how to add one, or name one)."""


def git_env() -> dict[str, str]:
    """The environment every git call gets: never prompts, plain C messages, and none of
    the caller's GIT_DIR-style overrides (the repository is the one found here)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY")}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=20")  # no prompt, no endless wait
    return env


#: what a reading git call is given, so that no program the repository's config names
#: runs (SPEC 9): no fsmonitor, no hooks, no signature checks; the clean filters a
#: ``.gitattributes`` could name are switched off per driver (``_no_filters``)
READING = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "log.showSignature=false",
           "-c", "diff.external=", "-c", "core.alternateRefsCommand=")
#: a signal is passed on to git's process group; a group that outlives this is killed
END_WAIT = 2.0


class SyncTimeout(SyncError):
    """A network step gave no answer in time (its git processes are ended)."""


def git(repo: Repo, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
        check: bool = True, as_user: bool = False, timeout: float | None = None,
        options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C <top> args…``; ``SyncError`` (git's own last line) when it fails and
    ``check``, or when git is not installed. A reading call (the default) runs no program
    the repository's config names (``READING``); ``as_user``: as the user's own git would
    run it, hooks and all (``sync``'s steps). ``timeout``: ``SyncTimeout`` past it."""
    import subprocess  # only when git runs: a kept answer needs none

    cmd = ["git", "-C", repo.top, "--no-optional-locks", "-c", "core.quotepath=off",
           *(() if as_user else READING), *options, *args]
    code, out, err = run_git(cmd, input=input, env=env or git_env(), timeout=timeout, what=f"git {args[0]}")
    done = subprocess.CompletedProcess(cmd, code, out, err)
    if check and done.returncode != 0:
        raise SyncError(f"git {args[0]}: {last_line(done.stderr) or f'exit {done.returncode}'}")
    return done


def user_git(repo: Repo, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """``git`` as the user's own git would run it: the repository's hooks and fsmonitor
    run (``sync``'s steps, which the user asked for; never a reading command's)."""
    return git(repo, *args, as_user=True, **kwargs)


def run_git(cmd: list[str], *, input: bytes | None = None, env: dict[str, str] | None = None,
            timeout: float | None = None, progress: Callable[[str], None] | None = None,
            what: str = "git") -> tuple[int, bytes, bytes]:
    """Run ``cmd`` in its own process group: (exit code, stdout, stderr). When it says
    nothing for ``timeout`` seconds (a network step: git's progress counts as an answer),
    or this process is interrupted or sent SIGTERM meanwhile, the whole group (git, its
    ssh, its hooks) is ended before ``SyncTimeout`` or the interruption goes on.
    ``progress``: each of stderr's updates as it comes."""
    import subprocess

    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or git_env(),
                                process_group=0)
    except FileNotFoundError:
        raise SyncError("git is not installed (the letterbox is in a git repository)") from None
    try:
        with _sigterm_raises():
            if timeout is None and progress is None:
                out, err = proc.communicate(input)
            else:
                out, err = _follow(proc, input, progress, timeout)
                proc.stdout.close()  # type: ignore[union-attr]
                proc.stderr.close()  # type: ignore[union-attr]
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        _end(proc)
        raise SyncTimeout(f"{what}: no answer in {timeout:g} s; stopped") from None
    except BaseException:
        _end(proc)
        raise


def _follow(proc: subprocess.Popen[bytes], input: bytes | None, progress: Callable[[str], None] | None,
            quiet: float | None) -> tuple[bytes, bytes]:
    """(stdout, stderr) of ``proc`` read to their end, each update on stderr (``\\r`` or
    ``\\n``-separated) to ``progress``; ``TimeoutExpired`` once nothing came for ``quiet``
    seconds."""
    import selectors
    import subprocess

    if proc.stdin is not None:
        try:
            proc.stdin.write(input or b"")
            proc.stdin.close()
        except BrokenPipeError:
            pass
    assert proc.stdout is not None and proc.stderr is not None
    got = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    err_fd = proc.stderr.fileno()
    pending = b""
    with selectors.DefaultSelector() as sel:
        for f in (proc.stdout, proc.stderr):
            sel.register(f, selectors.EVENT_READ)
        while sel.get_map():
            ready = sel.select(quiet)
            if not ready:
                raise subprocess.TimeoutExpired(proc.args, quiet or 0)
            for key, _ in ready:
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                got[key.fd] += chunk
                if key.fd == err_fd and progress is not None:
                    pending += chunk
                    *lines, pending = pending.replace(b"\r", b"\n").split(b"\n")
                    for ln in lines:
                        if shown := last_line(ln):
                            progress(shown)
    proc.wait(quiet)
    return bytes(got[proc.stdout.fileno()]), bytes(got[err_fd])


def _end(proc: subprocess.Popen[bytes]) -> None:
    """End ``proc``'s process group: SIGTERM, then SIGKILL for what is left."""
    import signal
    import subprocess

    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(END_WAIT)
    except subprocess.TimeoutExpired:
        pass
    _end_group(proc.pid)
    proc.wait()
    for f in (proc.stdin, proc.stdout, proc.stderr):
        if f is not None:
            f.close()


def _end_group(pgid: int) -> None:
    import signal

    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _sigterm_raises:
    """While git runs on the main thread, SIGTERM raises ``Terminated`` (so git's group is
    ended on the way out) instead of ending this process at once and leaving git behind."""

    def __enter__(self) -> None:
        import signal
        import threading

        self.previous = None
        if threading.current_thread() is not threading.main_thread():
            return
        from .errors import Terminated

        def handler(signum: int, _frame: object) -> None:
            raise Terminated(signum)

        try:
            self.previous = signal.signal(signal.SIGTERM, handler)
        except (ValueError, OSError):
            self.previous = None

    def __exit__(self, *exc: object) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def last_line(raw: bytes) -> str:
    """git's most telling line of ``raw`` stderr: its last ``fatal:``/``error:`` line, else
    its last non-empty line; control characters dropped."""
    lines = [" ".join(ln.split()) for ln in raw.decode("utf-8", "replace").replace("\r", "\n").split("\n")]
    lines = ["".join(c for c in ln if c.isprintable()) for ln in lines if ln]
    for ln in reversed(lines):
        if ln.startswith(("fatal:", "error:")):
            return ln
    return lines[-1] if lines else ""

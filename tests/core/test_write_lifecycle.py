"""The protocol's lifecycle lock (SPEC 4, issue 13 point 1; issue 18 item 15).

A held lock makes a writer wait and then refuse with nothing written; a stale lock (dead
pid; no pid after 2 s) is taken over; two writers racing to close one letter leave exactly
one terminal reply; ``ack`` racing ``result`` leaves no orphan sidecar; a writer killed
(-9) or terminated while holding the lock leaves a lock the next writer can take.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core.errors import LetterboxError, Terminated
from letterbox_tui.core.scan import scan
from letterbox_tui.core.write import Draft, deliver, file_letter, reply
from letterbox_tui.core.write.lifecycle import lifecycle_lock, lock_name
from tests.conftest import make_box

NOW = datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)


@pytest.fixture
def box(tmp_path):
    return make_box(tmp_path / "box", "alpha", "beta")


def task(box, slug="plan") -> str:
    return deliver(box.root, Draft("alpha", "beta", "request", slug, "Plan it.\n", requires_ack=True), now=NOW).id


def fyi(box) -> str:
    return deliver(box.root, Draft("alpha", "beta", "info", "fyi", "For you.\n"), now=NOW).id


def lock_dir(box, letter_id: str) -> Path:
    return box.root / "beta" / "inbox" / lock_name(letter_id + ".md")


def hold(box, letter_id: str, pid: int | str | None) -> Path:
    """A lock as another writer leaves it: the directory, with ``pid`` (None: no pid file)."""
    d = lock_dir(box, letter_id)
    d.mkdir()
    if pid is not None:
        (d / "pid").write_text(f"{pid}\n")
    return d


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def locks(box) -> list[str]:
    return sorted(str(p.relative_to(box.root)) for p in box.root.rglob("*.lifecycle.lock"))


def terminal_replies(box, letter_id: str) -> list[str]:
    return sorted(p.name for p in (box.root / "alpha" / "inbox").glob(f"{letter_id}--beta--*")
                  if p.name.endswith(("--nack.md", "--result.md")))


# --- a held lock ------------------------------------------------------------------------


@pytest.mark.parametrize("what", ["result", "nack", "ack", "file"])
def test_a_lock_held_by_a_live_writer_makes_the_writer_wait_then_refuse_with_nothing_written(box, what):
    letter = fyi(box) if what == "file" else task(box)
    hold(box, letter, os.getpid())  # this test's own process: alive
    before = box.tree_bytes()
    started = time.monotonic()
    with pytest.raises(LetterboxError, match="timed out waiting for lifecycle lock") as info:
        if what == "file":
            file_letter(box.root, letter, seat="beta", lock_timeout=0.3)
        else:
            reply(box.root, letter, what, seat="beta", body="Done.\n", now=NOW, lock_timeout=0.3)
    assert time.monotonic() - started >= 0.3  # it waited
    assert "\n" not in str(info.value) and "nothing written" in str(info.value)
    assert box.tree_bytes() == before  # byte for byte, the held lock included


def test_the_command_line_refuses_a_held_lock_in_one_line_with_exit_2(box, capsys, monkeypatch):
    letter = task(box)
    hold(box, letter, os.getpid())
    before = box.tree_bytes()
    monkeypatch.setenv("LETTERBOX_TUI_LOCK_TIMEOUT", "0.2")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"Done.\n")))
    code = main(["--root", str(box.root), "reply", letter, "result", "--as", "beta"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "timed out waiting for lifecycle lock" in err
    assert box.tree_bytes() == before
    code = main(["--root", str(box.root), "file", fyi(box), "--as", "beta"])
    assert code == 0  # another letter's lock is not this one's


def test_the_lock_is_released_when_the_write_fails(box, monkeypatch):
    letter = task(box)
    from letterbox_tui.core.write import replies

    def broken(*a, **kw):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(replies, "publish_bytes", broken)
    with pytest.raises(LetterboxError, match="Input/output error"):
        reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW)
    assert locks(box) == []


# --- stale locks ------------------------------------------------------------------------------


def test_a_lock_whose_pid_is_dead_is_taken_over(box):
    letter = task(box)
    hold(box, letter, dead_pid())
    started = time.monotonic()
    reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW, lock_timeout=5)
    assert time.monotonic() - started < 1
    assert terminal_replies(box, letter) == [f"{letter}--beta--result.md"] and locks(box) == []


def test_a_lock_without_a_pid_is_stale_after_two_seconds_not_before(box):
    letter = task(box)
    d = hold(box, letter, None)
    with pytest.raises(LetterboxError, match="timed out"):
        reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW, lock_timeout=0.2)
    old = time.time() - 3
    os.utime(d, (old, old))  # as if its writer died 3 s ago between mkdir and pid
    file_ok = reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW, lock_timeout=0.5)
    assert file_ok.created and locks(box) == []


def test_a_pid_file_that_is_not_a_pid_is_stale_after_two_seconds(box):
    letter = fyi(box)
    d = hold(box, letter, "")
    old = time.time() - 3
    os.utime(d / "pid", (old, old))
    assert file_letter(box.root, letter, seat="beta", lock_timeout=0.5)[1]
    assert locks(box) == []


def test_a_lock_holding_anything_else_is_never_removed(box):
    letter = task(box)
    d = hold(box, letter, dead_pid())
    (d / "notes").write_text("someone else's\n")
    with pytest.raises(LetterboxError, match="timed out"):
        reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW, lock_timeout=0.2)
    assert (d / "notes").read_text() == "someone else's\n"


# --- signals and kill -9 ---------------------------------------------------------------------


# SIGINT raises KeyboardInterrupt as at a terminal: a process started with SIGINT ignored
# (a CI job, anything run with ``&`` from a script) hands that on, and then Python installs
# no handler for it, so the holder would sleep through the signal.
_HOLDER = """
import signal, sys, time
from pathlib import Path
from letterbox_tui.core.write.lifecycle import lifecycle_lock
signal.signal(signal.SIGINT, signal.default_int_handler)
with lifecycle_lock(Path(sys.argv[1]), sys.argv[2]):
    print("held", flush=True)
    time.sleep(30)
"""


def _holder(box, letter: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", _HOLDER, str(box.root / "beta" / "inbox"), letter + ".md"],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline() == "held\n"
    return p


def test_a_writer_killed_9_while_holding_the_lock_leaves_a_lock_the_next_writer_takes_over(box):
    letter = task(box)
    p = _holder(box, letter)
    assert (lock_dir(box, letter) / "pid").read_text() == f"{p.pid}\n"
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert locks(box) != []  # kill -9 runs no cleanup
    reply(box.root, letter, "nack", seat="beta", body="Cannot.\n", now=NOW, lock_timeout=1)
    assert terminal_replies(box, letter) == [f"{letter}--beta--nack.md"] and locks(box) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_release_the_lock(box, sig):
    letter = task(box)
    p = _holder(box, letter)
    p.send_signal(sig)
    assert p.wait(timeout=30) != 0
    assert locks(box) == []


@pytest.mark.parametrize("to", ["process", "another thread"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_just_after_the_lock_is_taken_releases_it(box, sig, to, monkeypatch):
    """The signal lands in the instant between the lock's mkdir and the writer noting the
    lock as its own: it still raises, and the lock still goes. Sent to another thread of
    the process too: Python still runs the handler in the main thread, at once."""
    letter = task(box)
    real_mkdir = os.mkdir
    idle = threading.Event()
    other = threading.Thread(target=idle.wait, daemon=True)
    other.start()

    def mkdir_then_signal(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        if str(path).endswith(".lifecycle.lock"):
            if to == "process":
                os.kill(os.getpid(), sig)
            else:
                signal.pthread_kill(other.ident, sig)
                time.sleep(0.05)  # that thread takes it meanwhile: the handler is due now

    monkeypatch.setattr(os, "mkdir", mkdir_then_signal)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises((Terminated, KeyboardInterrupt)):
            with lifecycle_lock(box.root / "beta" / "inbox", letter + ".md"):
                time.sleep(5)  # never reached quietly: the signal raises before or at once
    finally:
        signal.signal(signal.SIGINT, previous)
        idle.set()
        other.join()
    assert locks(box) == []


# --- racing writers ---------------------------------------------------------------------------


def _race(root: Path, letter: str, kinds: tuple[str, str]) -> list[tuple[int, str]]:
    """Fork one ``letterbox-tui reply`` per kind, released together; their (exit, stderr)."""
    go_r, go_w = os.pipe()
    children = []
    for kind in kinds:
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child ends with os._exit
            code = 99
            try:
                os.close(go_w)
                os.read(go_r, 1)
                os.dup2(err_w, 2)
                sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
                sys.stdout = io.TextIOWrapper(io.FileIO(os.open(os.devnull, os.O_WRONLY), "w"))
                sys.stdin = io.TextIOWrapper(io.BytesIO(f"{kind} body\n".encode()))
                code = main(["--root", str(root), "reply", letter, kind, "--as", "beta"])
                sys.stdout.flush()
            finally:
                os._exit(code)
        os.close(err_w)
        children.append((pid, err_r))
    os.close(go_r)
    os.write(go_w, b"gg")
    os.close(go_w)
    out = []
    for pid, err_r in children:
        with os.fdopen(err_r) as f:
            err = f.read()
        _, status = os.waitpid(pid, 0)
        out.append((os.waitstatus_to_exitcode(status), err))
    return out


ROUNDS = 50


@pytest.mark.slow
def test_two_writers_racing_nack_and_result_leave_exactly_one_terminal_reply(box, monkeypatch):
    outcomes: dict[str, int] = {}
    for n in range(ROUNDS):
        letter = task(box, slug=f"race-{n}")
        results = _race(box.root, letter, ("nack", "result"))
        codes = sorted(code for code, _ in results)
        assert codes == [0, 2], results
        loser = next(err for code, err in results if code == 2)
        assert "already closed" in loser and loser.count("\n") == 1, loser
        replies = terminal_replies(box, letter)
        assert len(replies) == 1, replies
        winner = replies[0].rsplit("--", 1)[1].removesuffix(".md")
        outcomes[winner] = outcomes.get(winner, 0) + 1
        assert (box.root / "beta" / "processed" / f"{letter}.md").is_file()
        assert not (box.root / "beta" / "inbox" / f"{letter}.md").exists()
        assert locks(box) == []
    snap = scan(box.root)
    assert snap.scope.complete and not snap.unreadable and not snap.orphan_sidecars
    assert sum(outcomes.values()) == ROUNDS
    print(f"\n{ROUNDS} rounds nack vs result: one terminal reply each, won {outcomes}")


ACK_ROUNDS = 60


@pytest.mark.slow
def test_ack_racing_result_by_one_seat_leaves_no_orphan_sidecar(box, monkeypatch):
    outcomes = {"ack first": 0, "result first": 0}
    for n in range(ACK_ROUNDS):
        letter = task(box, slug=f"ack-{n}")
        results = dict(zip(("ack", "result"), _race(box.root, letter, ("ack", "result"))))
        assert results["result"][0] == 0, results
        sidecar = box.root / "beta" / "inbox" / f"{letter}.md.ack"
        assert not sidecar.exists(), f"round {n}: orphan sidecar"
        assert (box.root / "beta" / "processed" / f"{letter}.md").is_file()
        acked = (box.root / "alpha" / "inbox" / f"{letter}--beta--ack.md").exists()
        # The ack either came first (published, then closed by the result) or found the
        # letter closed and wrote nothing.
        assert results["ack"][0] == (0 if acked else 2), results
        outcomes["ack first" if acked else "result first"] += 1
        assert locks(box) == []
    snap = scan(box.root)
    assert not snap.orphan_sidecars and not snap.unreadable
    print(f"\n{ACK_ROUNDS} rounds ack vs result: no orphan sidecar, {outcomes}")


def test_a_retried_identical_reply_still_converges_after_another_writer_closed_nothing(box):
    letter = task(box)
    first = reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW)
    again = reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW)
    assert first.created and not again.created and "already closed" in again.notes[0]
    with pytest.raises(LetterboxError, match="already closed"):
        reply(box.root, letter, "nack", seat="beta", body="Cannot.\n", now=NOW)
    assert locks(box) == []


def test_the_lock_is_the_protocols_name_beside_the_letter(box):
    letter = task(box)
    with lifecycle_lock(box.root / "beta" / "inbox", letter + ".md"):
        d = lock_dir(box, letter)
        assert d.is_dir() and (d / "pid").read_text() == f"{os.getpid()}\n"
        assert sorted(p.name for p in d.iterdir()) == ["pid"]
        snap = scan(box.root)  # never a letter, never unsupported, never a warning
        assert snap.scope.complete and [x.id for x in snap.letters] == [letter]
        from letterbox_tui.core.check import check
        from letterbox_tui.core.resolve import resolve

        assert check(resolve(snap, NOW)) == []
    assert locks(box) == []


STALE_ROUNDS = 20


@pytest.mark.slow
def test_two_writers_racing_over_a_stale_lock_still_leave_one_terminal_reply(box, monkeypatch):
    """Both find the dead writer's lock, both try to take it over: one wins the letter."""
    dead = dead_pid()
    for n in range(STALE_ROUNDS):
        letter = task(box, slug=f"stale-{n}")
        hold(box, letter, dead)
        results = _race(box.root, letter, ("nack", "result"))
        assert sorted(code for code, _ in results) == [0, 2], results
        assert len(terminal_replies(box, letter)) == 1
        assert locks(box) == []


def test_a_lock_released_while_waiting_is_then_taken(box):
    """A protocol writer (a shell: mkdir, pid, then rm and rmdir) holds the lock for 0.3 s."""
    letter = task(box)
    d = lock_dir(box, letter)
    shell = subprocess.Popen(["bash", "-c", f'mkdir "{d}" && echo $$ > "{d}/pid" && echo held && sleep 0.3 '
                                            f'&& rm -f "{d}/pid" && rmdir "{d}"'], stdout=subprocess.PIPE, text=True)
    assert shell.stdout is not None and shell.stdout.readline() == "held\n"
    started = time.monotonic()
    reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW, lock_timeout=5)
    waited = time.monotonic() - started
    shell.wait()
    assert 0.1 < waited < 4, waited
    assert terminal_replies(box, letter) == [f"{letter}--beta--result.md"] and locks(box) == []


ROUNDS_REAL = 5


@pytest.mark.slow
def test_two_real_letterbox_tui_processes_racing_leave_one_terminal_reply(box):
    """The same race with the console's own entry point in fresh interpreters (fewer rounds:
    each start costs a few hundred milliseconds)."""
    env = dict(os.environ)
    for n in range(ROUNDS_REAL):
        letter = task(box, slug=f"real-{n}")
        procs = [subprocess.Popen([sys.executable, "-m", "letterbox_tui", "--root", str(box.root), "reply", letter,
                                   kind, "--as", "beta"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, env=env)
                 for kind in ("nack", "result")]
        for p in procs:  # the bodies arrive together: both are past reading stdin
            assert p.stdin is not None
            p.stdin.write(b"body\n")
        for p in procs:
            p.stdin.close()
        codes = sorted(p.wait(timeout=60) for p in procs)
        assert codes == [0, 2], [p.stderr.read() for p in procs]
        assert len(terminal_replies(box, letter)) == 1 and locks(box) == []


def test_a_writer_breaking_a_stale_lock_makes_the_others_wait_and_a_stale_guard_is_cleared(box):
    letter = task(box)
    hold(box, letter, dead_pid())
    guard = box.root / "beta" / "inbox" / f".{letter}.md.lifecycle.lock.break"
    guard.mkdir()  # another writer is breaking it right now
    with pytest.raises(LetterboxError, match="timed out"):
        reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW, lock_timeout=0.2)
    old = time.time() - 3
    os.utime(guard, (old, old))  # that writer was killed 3 s ago
    reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW, lock_timeout=1)
    assert not guard.exists() and locks(box) == []
    assert not [p for p in (box.root / "beta" / "inbox").iterdir() if p.name.startswith(".")]


def _holds_open(pid: int, folder: Path) -> bool:
    """Whether process ``pid`` has ``folder`` open (Linux: /proc/PID/fd)."""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(folder) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see the writer waiting")
def test_sigterm_while_waiting_for_the_lock_exits_143_in_one_line_and_leaves_the_holders_lock(box):
    letter = task(box)
    holder = _holder(box, letter)
    before = box.tree_bytes()
    env = {**os.environ, "LETTERBOX_TUI_LOCK_TIMEOUT": "30"}
    p = subprocess.Popen([sys.executable, "-m", "letterbox_tui", "--root", str(box.root), "reply", letter, "result",
                          "--as", "beta"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    p.stdin.write(b"Done.\n")
    p.stdin.close()
    inbox = (box.root / "beta" / "inbox").resolve()
    seen = 0  # the lock loop keeps the inbox open: seen on consecutive looks, it is waiting
    deadline = time.monotonic() + 25
    while seen < 3 and time.monotonic() < deadline and p.poll() is None:
        seen = seen + 1 if _holds_open(p.pid, inbox) else 0
        time.sleep(0.05)
    assert seen == 3, "the writer never waited for the lock"
    p.send_signal(signal.SIGTERM)
    code = p.wait(timeout=20)
    out, err = p.stdout.read(), p.stderr.read().decode()
    holder.kill()
    holder.wait()
    assert code == 143, err
    assert out == b"" and err.count("\n") == 1 and "terminated" in err
    assert box.tree_bytes() == before  # nothing written, the holder's lock as it was


def test_a_letter_seen_in_inbox_and_processed_is_a_move_in_flight_not_a_duplicate(box):
    """The scan listed inbox/ before another writer's move and processed/ after it: the
    reply is told the letter is closed, not that its id is held twice."""
    from letterbox_tui.core.model import Snapshot

    letter = task(box)
    snap = scan(box.root)
    reply(box.root, letter, "nack", seat="beta", body="Cannot.\n", now=NOW)  # the other writer
    moved = scan(box.root)
    both = Snapshot(**{**{f: getattr(snap, f) for f in snap.__dataclass_fields__},
                       "letters": snap.letters + [x for x in moved.letters if x.folder == "processed"]})
    with pytest.raises(LetterboxError, match="already closed"):
        reply(box.root, letter, "result", seat="beta", body="Done.\n", now=NOW, snapshot=both)
    assert terminal_replies(box, letter) == [f"{letter}--beta--nack.md"] and locks(box) == []


def test_a_letter_the_scan_missed_in_flight_is_looked_for_again(box):
    """The snapshot a writer acts on may miss a letter another writer was moving as it was
    taken (CI saw 'no letter' once in the race above): the writer looks again, finds it
    closed, and says so."""
    before = scan(box.root)  # taken before the letter existed: it misses it, as a torn look would
    letter = task(box, slug="missed")
    reply(box.root, letter, "result", seat="beta", body="done\n")
    with pytest.raises(LetterboxError, match="already closed"):
        reply(box.root, letter, "nack", seat="beta", body="no\n", snapshot=before)
    with pytest.raises(LetterboxError, match="no letter"):
        reply(box.root, "2026-01-01T000000-alpha-request-absent-00000000", "nack", seat="beta", body="no\n",
              snapshot=before)

"""``check`` findings (SPEC 7): every problem and warning, with its letters and files."""

from datetime import datetime, timezone

from letterbox_tui.core.check import CODES, check, has_problem
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)


def findings(box, participants=None, atomic=True):
    snap = scan(box.root, participants)
    snap.scope.atomic = atomic
    return check(resolve(snap, AT))


def by_code(found, code):
    return [f for f in found if f.code == code]


def test_a_clean_letterbox_has_no_findings(box):
    box.letter("a-1", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("a-1--beta--result", frm="beta", to="alpha", type="result", re="a-1")
    assert findings(box) == []


def test_unreadable_and_unsupported_are_problems(box):
    box.raw("beta/inbox/bad.md", "---\nid: bad\nno colon here\n---\n")
    (box.root / "alpha" / "archive").mkdir()
    found = findings(box)
    [u] = by_code(found, "unreadable-file")
    assert (u.paths, u.letters, u.severity) == (("beta/inbox/bad.md",), ("bad",), "problem")
    [a] = by_code(found, "unsupported-entry")
    assert a.paths == ("alpha/archive",) and a.problem
    assert has_problem(found)


def test_non_atomic_scan_is_a_problem(box):
    box.letter("a-1")
    [f] = findings(box, atomic=False)
    assert f.code == "non-atomic-scan" and f.problem


def test_duplicate_ids(box):
    box.letter("dup-1", frm="alpha", to="beta")
    box.letter("dup-1", frm="alpha", to="beta", seat="alpha", folder="processed")
    [f] = by_code(findings(box), "duplicate-id")
    assert f.letters == ("dup-1",)
    assert f.paths == ("alpha/processed/dup-1.md", "beta/inbox/dup-1.md")
    assert f.problem


def test_an_unreadable_file_naming_an_id_is_its_second_holder(box):
    box.letter("dup-2", frm="alpha", to="beta")
    box.letter("one-1", frm="alpha", to="beta")
    box.raw("alpha/inbox/broken.md", "---\nid: dup-2\nnot a header line\n---\n")
    res = resolve(scan(box.root), AT)
    asked = []
    holders = res.holders
    res.holders = lambda i: (asked.append(i), holders(i))[1]
    [f] = by_code(check(res), "duplicate-id")
    assert f.letters == ("dup-2",) and f.paths == ("alpha/inbox/broken.md", "beta/inbox/dup-2.md")
    assert asked == ["dup-2"]  # an id one letter holds and no other file names is not asked about


def test_malformed_pointer(box):
    box.letter("m-1", supersedes="not an id!")
    [f] = by_code(findings(box), "malformed-pointer")
    assert f.letters == ("m-1",) and "supersedes" in f.detail and f.problem


def test_cycle(box):
    box.letter("c-1", supersedes="c-2")
    box.letter("c-2", supersedes="c-1")
    box.letter("c-3", supersedes="c-1")
    [f] = by_code(findings(box), "cycle")
    assert f.letters == ("c-1", "c-2") and f.problem
    assert set(f.paths) == {"beta/inbox/c-1.md", "beta/inbox/c-2.md"}


def test_unsettled_fork_is_a_problem_settled_fork_a_warning(box):
    box.letter("f-1")
    box.letter("f-2", supersedes="f-1")
    box.letter("f-3", supersedes="f-1")
    [f] = findings(box)
    assert (f.code, f.letters, f.problem) == ("fork", ("f-1", "f-2", "f-3"), True)
    box.letter("d-1", frm="alpha", to="alpha", type="dispute", disputes="f-2,f-3")
    box.letter("r-1", frm="alpha", to="alpha", type="ruling", rules_on="d-1", upholds="f-2")
    found = findings(box)
    assert not by_code(found, "fork")
    [s] = by_code(found, "settled-fork")
    assert s.severity == "warning" and "f-2" in s.detail and "d-1" in s.letters
    assert not has_problem(found)


def test_a_ruling_without_upholds_settles_nothing(box):
    box.letter("f-1")
    box.letter("f-2", supersedes="f-1")
    box.letter("f-3", supersedes="f-1")
    box.letter("d-1", frm="alpha", to="alpha", type="dispute", disputes="f-2,f-3")
    box.letter("r-1", frm="alpha", to="alpha", type="ruling", rules_on="d-1")
    assert [f.code for f in findings(box)] == ["fork"]


def test_filename_warnings(box):
    box.letter("alias-1", name="alias-1-0123abcd.md")
    box.letter("named-2", name="something-else.md")
    found = findings(box)
    assert [f.letters for f in by_code(found, "filename-alias")] == [("alias-1",)]
    assert [f.letters for f in by_code(found, "id-filename-mismatch")] == [("named-2",)]
    assert not has_problem(found)


def test_dangling_pointers_only_on_a_complete_scan(box):
    box.letter("p-1", re="gone-1", thread="just-a-label")
    [f] = findings(box)
    assert (f.code, f.letters, f.severity) == ("dangling-pointer", ("p-1",), "warning")
    assert "gone-1" in f.detail
    # partial scope: the target may be elsewhere
    assert not by_code(findings(box, ["beta"]), "dangling-pointer")


def test_time_and_ack_warnings(box):
    box.letter("t-1", sent="2026-01-01T00:00:00")
    box.letter("t-2", deadline="tomorrow")
    box.letter("t-3", requires_ack=None)
    found = findings(box)
    assert sorted(f.letters[0] for f in by_code(found, "ambiguous-timestamp")) == ["t-1", "t-2"]
    assert [f.letters for f in by_code(found, "missing-requires-ack")] == [("t-3",)]
    assert not has_problem(found)


def test_orphan_sidecars_and_ignored_root_entries(box):
    box.raw("beta/inbox/ghost.md.ack", "")
    box.raw("NOTES.txt", "a regular file at the root: not a warning")
    (box.root / "Notes").mkdir()
    found = findings(box)
    assert [f.paths for f in by_code(found, "orphan-sidecar")] == [("beta/inbox/ghost.md.ack",)]
    assert [f.paths for f in by_code(found, "ignored-entry")] == [("Notes",)]
    assert not has_problem(found)


def test_problems_come_first_and_codes_are_known(box):
    box.raw("NOTES.txt", "x")
    box.letter("t-1", sent="")
    box.raw("beta/inbox/bad.md", "garbage")
    found = findings(box)
    assert all(f.code in CODES for f in found)
    severities = [f.severity for f in found]
    assert severities == sorted(severities, key=lambda s: s != "problem")
    assert found[0].to_json() == {
        "code": "unreadable-file", "severity": "problem", "detail": found[0].detail,
        "letters": [], "paths": ["beta/inbox/bad.md"],
    }


# --- issue 23: two terminal replies by one seat, and lock leftovers ------------------

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


def test_two_terminal_replies_by_one_seat_to_one_letter_are_a_problem(box):
    box.letter("t-1", frm="alpha", to="beta", type="request", requires_ack="true", seat="beta", folder="processed")
    box.letter("t-1--beta--result", frm="beta", to="alpha", type="result", re="t-1")
    assert not by_code(findings(box), "conflicting-replies")
    box.letter("t-1--beta--nack", frm="beta", to="alpha", type="nack", re="t-1")
    [f] = by_code(findings(box), "conflicting-replies")
    assert f.problem and f.letters == ("t-1", "t-1--beta--nack", "t-1--beta--result")
    assert "beta sent 2 terminal replies (nack, result) to t-1" in f.detail
    assert f.paths == ("alpha/inbox/t-1--beta--nack.md", "alpha/inbox/t-1--beta--result.md")


def test_replies_by_someone_else_are_not_conflicting(box):
    box.letter("t-1", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("t-1--beta--result", frm="beta", to="alpha", type="result", re="t-1")
    box.letter("t-1--gamma--nack", frm="gamma", to="alpha", type="nack", re="t-1")
    assert not by_code(findings(box), "conflicting-replies")


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def old(path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def lock(box, letter_id: str, pid: str | None) -> str:
    rel = f"beta/inbox/{letter_id}.md.lifecycle.lock"
    (box.root / rel).mkdir()
    if pid is not None:
        (box.root / rel / "pid").write_text(pid + "\n")
    return rel


def test_a_dead_writers_lifecycle_lock_is_warned_with_its_age_and_pid(box):
    box.letter("t-1", frm="alpha", to="beta", type="request", requires_ack="true")
    pid = dead_pid()
    rel = lock(box, "t-1", str(pid))
    old(box.root / rel / "pid", 3 * 86400 + 60)
    [f] = by_code(findings(box), "stale-lock")
    assert f.severity == "warning" and f.letters == ("t-1",) and f.paths == (rel,)
    assert f"pid {pid}" in f.detail and "3d old" in f.detail
    assert not has_problem(findings(box))


def test_a_lock_without_pid_is_stale_only_once_old(box):
    rel = lock(box, "t-1", None)
    assert not by_code(findings(box), "stale-lock")  # being taken: a writer writes its pid next
    old(box.root / rel, 7200)
    [f] = by_code(findings(box), "stale-lock")
    assert "no pid" in f.detail and "2h old" in f.detail


def test_a_live_writers_lock_is_not_warned(box):
    rel = lock(box, "t-1", str(os.getpid()))
    old(box.root / rel / "pid", 3 * 86400)
    assert not by_code(findings(box), "stale-lock")


def test_a_lock_breaking_guard_left_behind_is_warned(box):
    rel = "beta/inbox/.t-1.md.lifecycle.lock.break"
    (box.root / rel).mkdir()
    old(box.root / rel, 300)
    [f] = by_code(findings(box), "lock-guard")
    assert f.severity == "warning" and f.letters == ("t-1",) and f.paths == (rel,) and "5m old" in f.detail

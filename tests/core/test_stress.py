"""Concurrency (issue 7): 8 processes writing and 2 scanning at once, for a few seconds.

Each writer is a seat ``wN``. It sends tasks to the next seat and information letters to
any seat, and it answers the tasks in its own inbox (``ack``, then ``result`` or
``nack``: a reply into the sender's inbox, then a sidecar or a move into its own
``processed/``). Meanwhile two scanners read the whole letterbox again and again.

Afterwards: every letter a writer reported is present exactly once (lost = 0), ids are
unique, every closed task lies in its recipient's ``processed/`` with its reply, and every
scan taken during the run had an honest scope: never an unreadable (partial) letter,
``files`` equal to the ``.md`` entries it accounted for, and, whenever it said
``atomic: true``, a consistent cut: no letter twice, no reply without the letter it
answers, and never fewer letters than an earlier atomic scan (letters are never removed).
"""

from __future__ import annotations

import pytest

import json
import multiprocessing
import random
import time
from collections import Counter
from pathlib import Path

from letterbox_tui.core.scan import scan
from letterbox_tui.core.write import Draft, deliver, reply
from tests.conftest import make_box

WRITERS = 8
SCANNERS = 2
DURATION = 3.5  # seconds of concurrent writing
SEATS = [f"w{n}" for n in range(WRITERS)]


def _writer(root: str, n: int, out: str, deadline: float) -> None:
    me, nxt = SEATS[n], SEATS[(n + 1) % WRITERS]
    rng = random.Random(n)
    made: list[list[str]] = []  # [kind, id, parent id]
    acked: set[str] = set()
    closed: set[str] = set()
    step = 0
    while time.monotonic() < deadline:
        step += 1
        if step % 3 == 0:
            # Answer a task in my own inbox, against a scan of my own seat.
            snap = scan(root, [me], max_attempts=1)
            tasks = [x for x in snap.letters
                     if x.folder == "inbox" and x.task and x.recipient == me and x.id not in closed]
            if tasks:
                task = rng.choice(tasks)
                if task.id not in acked and rng.random() < 0.5:
                    kind = "ack"
                else:
                    kind = rng.choice(["result", "result", "nack"])
                p = reply(root, task.id, kind, seat=me, body=f"{me} {kind} {step}\n", snapshot=snap)
                assert p.created
                (acked if kind == "ack" else closed).add(task.id)
                made.append([kind, p.id, task.id])
                continue
        if rng.random() < 0.75:
            draft = Draft(me, nxt, "request", f"job-{step}", f"{me} asks {step}\n", requires_ack=True)
        else:
            draft = Draft(me, rng.choice(SEATS), "info", f"note-{step}", f"{me} notes {step}\n")
        made.append(["send", deliver(root, draft).id, ""])
    Path(out).write_text(json.dumps(made))


def _scanner(root: str, out: str, deadline: float) -> None:
    records = []
    while time.monotonic() < deadline:
        snap = scan(root)
        ids = Counter(x.id for x in snap.letters)
        present = set(ids)
        md_unsupported = [u for u in snap.unsupported if u.path.endswith(".md")]
        records.append({
            "atomic": snap.scope.atomic,
            "files": snap.scope.files,
            "letters": snap.scope.letters,
            "listed": len(snap.letters),
            "unreadable": [u.path for u in snap.unreadable],
            "unsupported": [u.path for u in snap.unsupported],
            "md_unsupported": len(md_unsupported),
            "twice": sorted(i for i, c in ids.items() if c > 1),
            "orphan_replies": sorted(
                x.id for x in snap.letters if x.type in ("ack", "result", "nack") and x.re not in present
            ),
        })
    Path(out).write_text(json.dumps(records))


@pytest.mark.slow
def test_eight_writers_two_scanners_lose_nothing_and_scans_are_honest(tmp_path):
    root = tmp_path / "box"
    make_box(root, *SEATS)
    ctx = multiprocessing.get_context("fork")
    deadline = time.monotonic() + DURATION
    procs = []
    for n in range(WRITERS):
        procs.append(ctx.Process(target=_writer, args=(str(root), n, str(tmp_path / f"w{n}.json"), deadline)))
    for n in range(SCANNERS):
        procs.append(ctx.Process(target=_scanner, args=(str(root), str(tmp_path / f"s{n}.json"), deadline)))
    started = time.monotonic()
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=DURATION + 20)
    elapsed = time.monotonic() - started
    assert [p.exitcode for p in procs] == [0] * len(procs)

    made = [entry for n in range(WRITERS) for entry in json.loads((tmp_path / f"w{n}.json").read_text())]
    scans = [r for n in range(SCANNERS) for r in json.loads((tmp_path / f"s{n}.json").read_text())]
    kinds = Counter(kind for kind, _, _ in made)
    # Enough of each to mean something even on a loaded machine (~300 sends, ~140 replies idle).
    assert kinds["send"] >= 40 and kinds["ack"] + kinds["result"] + kinds["nack"] >= 10, kinds

    # Nothing lost, nothing doubled.
    final = scan(root)
    assert final.scope.complete and final.unreadable == [] and final.orphan_sidecars == []
    on_disk = Counter(x.id for x in final.letters)
    reported = [i for _, i, _ in made]
    assert len(reported) == len(set(reported))
    lost = [i for i in reported if on_disk[i] != 1]
    assert lost == []
    assert sorted(on_disk) == sorted(reported) and set(on_disk.values()) == {1}

    # Each reply is where the protocol puts it, and so is the letter it answered.
    where = {x.id: x for x in final.letters}
    for kind, reply_id, parent_id in made:
        if kind == "send":
            continue
        r, parent = where[reply_id], where[parent_id]
        assert (r.re, r.sender, r.recipient, r.seat, r.folder) == (
            parent_id, parent.recipient, parent.sender, parent.sender, "inbox")
        closed = any(k in ("result", "nack") and p == parent_id for k, _, p in made)
        assert parent.folder == ("processed" if closed else "inbox"), parent.path
        if kind == "ack" and not closed:
            assert final.has_sidecar(parent)
    assert not [p for p in root.rglob(".*")], "a temporary was left behind"

    # Every scan taken meanwhile had an honest scope.
    assert len(scans) >= 4
    for n in range(SCANNERS):
        last = 0
        for r in json.loads((tmp_path / f"s{n}.json").read_text()):
            assert r["unreadable"] == [], "a partial letter was read"
            assert r["unsupported"] == []
            assert r["letters"] == r["listed"]
            assert r["files"] == r["letters"] + r["md_unsupported"], r
            if r["atomic"]:
                assert r["twice"] == [], "an atomic scan counted a letter twice"
                assert r["orphan_replies"] == [], "an atomic scan saw a reply but not its letter"
                assert r["letters"] >= last, "an atomic scan saw fewer letters than an earlier one"
                last = r["letters"]
    non_atomic = sum(1 for r in scans if not r["atomic"])
    print(f"\nconcurrent writes made: {len(made)} ({dict(kinds)}), lost: {len(lost)}; "
          f"scans: {len(scans)} ({non_atomic} non-atomic); {elapsed:.1f} s")


def test_a_letter_vanishing_mid_scan_is_not_counted_as_a_file(tmp_path, monkeypatch):
    """The deterministic companion of the run above: a letter moved away between the
    listing and the read makes the scan non-atomic, and ``files`` counts only the entries
    the scan accounted for (letters + unreadable + unsupported)."""
    import os

    box = make_box(tmp_path / "box", "alpha", "beta")
    for n in range(3):
        box.letter(f"l{n}", frm="alpha", to="beta")
    real_open = os.open
    moved = []

    def open_then_vanish(path, flags, *a, dir_fd=None, **kw):
        if path == "l1.md" and not moved:
            os.rename(box.root / "beta/inbox/l1.md", box.root / "alpha/inbox/l1.md")
            moved.append(path)
        return real_open(path, flags, *a, dir_fd=dir_fd, **kw)

    monkeypatch.setattr(os, "open", open_then_vanish)
    snap = scan(box.root, participants=["beta"], max_attempts=1)
    assert moved and not snap.scope.atomic
    assert snap.scope.files == snap.scope.letters == 2

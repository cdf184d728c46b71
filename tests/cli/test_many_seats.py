"""Many seats under a lowered open-file limit (issue 28, item 12): twice as many seats as a
process may hold descriptors (1,000 seats under a limit of 512, the proportion of 2,000
under the usual 1,024), so four times as many letter folders, and every reading command
still answers, the second time from the store. The scan and the store's proof hold a
bounded number of descriptors whatever the number of seats."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

SEATS = 1000
LIMIT = 512

# Run in its own process: the limit is lowered there only. Every reading command runs twice;
# the answers of both rounds are printed, and whether the second round's store was used.
_CHILD = r"""
import contextlib, io, json, resource, sys
from datetime import datetime, timezone

_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[2]), hard))
from letterbox_tui.cli import main
from letterbox_tui.store import open_answers
from letterbox_tui.store.stored import StoredAnswers

root = sys.argv[1]
commands = [["query", "state=any"], ["query", "type=request", "answered=no"], ["exists", "type=request"],
            ["owed"], ["disputes"], ["check"], ["digest"], ["show", "ask-0"], ["current", "ask-0"],
            ["answered", "ask-0"], ["thread", "ask-0"], ["inbox", "s1", "--all"]]
rounds = []
for _ in range(2):
    answers = []
    for argv in commands:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--root", root, *argv] + ([] if argv[0] == "inbox" else ["--json"]))
        answers.append([argv, code, out.getvalue(), err.getvalue()])
    rounds.append(answers)
stored = isinstance(open_answers(root, datetime.now(timezone.utc), notice=print), StoredAnswers)
print(json.dumps({"rounds": rounds, "stored": stored}))
"""


def _without_clock(text: str):
    """The answer without what the clock changes between rounds: the times of JSON
    documents, and the ages of ``inbox`` (a round may end a minute after the first)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return re.sub(r"\(active [^()]* ago\)", "(active ago)", text)

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("scanned_at", "at")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(doc)


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """Every seat has its folders; one in ten asks the next for something, and every other
    ask has its result (the letters are few: the folders are what is counted)."""
    root = tmp_path_factory.mktemp("seats") / "box"
    for i in range(SEATS):
        for folder in ("inbox", "processed"):
            (root / f"s{i}" / folder).mkdir(parents=True)
    (root / "locks").mkdir()
    for i in range(0, SEATS, 10):
        to = f"s{(i + 1) % SEATS}"
        (root / to / "inbox" / f"ask-{i}.md").write_text(
            f"---\nid: ask-{i}\nfrom: s{i}\nto: {to}\ntype: request\nre: \nthread: \npriority: next\n"
            f"requires_ack: true\ndeadline: \nsent: 2026-01-01T00:00:00Z\n---\nplease\n")
        if i % 20 == 0:
            (root / f"s{i}" / "inbox" / f"ask-{i}--{to}--result.md").write_text(
                f"---\nid: ask-{i}--{to}--result\nfrom: {to}\nto: s{i}\ntype: result\nre: ask-{i}\n"
                f"thread: \npriority: next\nrequires_ack: false\ndeadline: \nsent: 2026-01-02T00:00:00Z\n---\ndone\n")
    return root


@pytest.mark.slow
def test_every_reading_command_answers_with_twice_as_many_folders_as_descriptors(crowded):
    done = subprocess.run([sys.executable, "-c", _CHILD, str(crowded), str(LIMIT)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.splitlines()[-1])
    first, second = got["rounds"]
    for (argv, code, out, err), again in zip(first, second):
        assert "Too many open files" not in err and "Errno 24" not in err, (argv, err)
        assert code in (0, 1), (argv, code, err)
        assert err == "", (argv, err)
        assert out, argv
        assert again[1:] == [code, again[2], ""] and _without_clock(again[2]) == _without_clock(out), argv
    assert got["stored"], "the unchanged letterbox was not answered from the store"
    rows = json.loads(first[0][2])["matches"]
    assert len(rows) == SEATS // 10 + SEATS // 20

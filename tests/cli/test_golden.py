"""Every reading command's ``--json`` document on the demo letterbox, compared with the
golden taken from the from-scratch path before the reading path was rebuilt (issue 22):
the rebuild changes no answer. ``scanned_at`` and the root's path are the only parts
that may differ; every golden document still validates against ``letterbox-tui schema``.

The golden is made with ``python -m tests.cli.test_golden PATH`` (only when an answer is
meant to change, and the change reviewed document by document)."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from letterbox_tui.core.demo import DEMO_NOW, remove_archive, write_demo

GOLDEN = Path(__file__).parent / "golden" / "demo.json"
#: the clock every command runs at (``now``): after the demo's clock, so some tasks are late
NOW = datetime(2026, 12, 1, 9, 0, 0, tzinfo=timezone.utc)
AT = "2026-12-01T09:00:00Z"
ROOT = "<ROOT>"

QUERIES = [
    [], ["state=open"], ["state=closed"], ["state=unknown"], ["answered=no"], ["answered=unknown"],
    ["answered=yes"], ["accepted=yes"], ["accepted=no"], ["current=unknown"], ["current=no"],
    ["superseded=yes"], ["superseded=no"], ["superseded=head"], ["late=yes"], ["late=unknown"],
    ["late=yes", "at=2026-11-20T00:00:00Z"], ["type=request,delegate"], ["from=simon"], ["to=builder"],
    ["priority=now"], ["task=yes"], ["task=no"], ["slug~=plan"], ["subject~=DB"], ["since=-3d"],
    ["until=2026-11-25T00:00:00Z"], ["due<=2026-12-02T00:00:00Z"], ["due>2026-11-30T00:00:00Z"],
    ["due>=2026-11-01T00:00:00Z", "due<2026-12-10T00:00:00Z"], ["type=dispute"], ["type=nothing-like-this"],
    ["state=open", "answered=no", "type=request", "until=2026-11-29T00:00:00Z"],
]


def command_lines(ids: list[str], threads: list[str]) -> list[list[str]]:
    """Every reading command asked (the arguments after ``--root ROOT``, before ``--json``)."""
    lines: list[list[str]] = []
    for terms in QUERIES:
        lines.append(["query", *terms])
        lines.append(["exists", *terms])
    lines += [["--participant", "simon", "query"], ["--participant", "builder", "--participant", "planner", "query", "state=open"],
              ["--participant", "simon", "exists", "type=dispute"], ["--participant", "builder", "owed", "--at", AT]]
    for letter_id in ids:
        for command in ("show", "current", "answered", "thread"):
            lines.append([command, letter_id])
    for label in threads:
        lines.append(["thread", label])
    lines += [["owed"], ["owed", "--at", AT], ["owed", "--at", "2026-11-20T00:00:00Z"], ["owed", "--seat", "builder", "--at", AT],
              ["owed", "--at", AT, "--fail-late"], ["disputes"], ["check"], ["digest"], ["digest", "--at", AT],
              ["digest", "--seat", "simon", "--at", AT], ["leases"]]
    return lines


def demo(directory: Path) -> tuple[Path, list[str], list[str]]:
    """The demo letterbox written at ``directory``, its ids and its thread labels."""
    from letterbox_tui.core.scan import scan

    root = directory / "demo"
    write_demo(root, seed=7, now=DEMO_NOW)
    remove_archive(root)  # the answers its unsupported entry holds unknown, settled
    letters = scan(root).letters
    ids = sorted({x.id for x in letters})
    threads = sorted({x.thread for x in letters if x.thread and x.thread not in ids})
    return root, ids, threads


def normal(doc, root: Path):
    """``doc`` with the root's path written ``<ROOT>`` and every ``scanned_at`` the clock."""
    text = json.dumps(doc).replace(json.dumps(str(root))[1:-1], ROOT)

    def fix(x):
        if isinstance(x, dict):
            return {k: AT if k == "scanned_at" else fix(v) for k, v in x.items()}
        if isinstance(x, list):
            return [fix(v) for v in x]
        return x

    return fix(json.loads(text))


def answers(root: Path, lines: list[list[str]], run) -> list[dict]:
    """``run(argv) -> (code, stdout)`` for every line, as golden entries."""
    out = []
    for line in lines:
        code, text = run(["--root", str(root), *line, "--json"])
        out.append({"argv": line, "code": code, "doc": normal(json.loads(text), root)})
    return out


def _schema_name(argv: list[str]) -> str:
    while argv and argv[0] == "--participant":
        argv = argv[2:]
    return argv[0]


@pytest.fixture(scope="module")
def golden() -> list[dict]:
    return json.loads(GOLDEN.read_text())


def _frozen(monkeypatch) -> None:
    from letterbox_tui.cli import common

    monkeypatch.setattr(common, "now", lambda: NOW)


def test_every_json_document_is_the_golden(tmp_path, capsys, monkeypatch, golden):
    from letterbox_tui.cli import main

    _frozen(monkeypatch)
    root, ids, threads = demo(tmp_path)
    lines = command_lines(ids, threads)
    assert [g["argv"] for g in golden] == lines

    def run(argv):
        code = main(argv)
        out, err = capsys.readouterr()
        assert err == "", (argv, err)
        return code, out

    for want, got in zip(golden, answers(root, lines, run)):
        assert got == want, want["argv"]


def test_the_golden_validates_against_the_schema(golden):
    from letterbox_tui.core.schema import validate

    assert len(golden) > 200
    for entry in golden:
        validate(_schema_name(entry["argv"]), entry["doc"])


def write_golden(path: Path = GOLDEN) -> None:
    """Write the golden from what the commands answer now, at the clock ``NOW``."""
    import contextlib
    import io
    import tempfile

    from letterbox_tui.cli import common, main

    common.now = lambda: NOW

    def run(argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(argv)
        return code, out.getvalue()

    with tempfile.TemporaryDirectory() as tmp:
        root, ids, threads = demo(Path(tmp))
        entries = answers(root, command_lines(ids, threads), run)
    path.write_text(dump(entries))


def dump(entries: list[dict]) -> str:
    """The golden's text: one entry a line (a changed answer is a changed line)."""
    return "[\n" + ",\n".join(json.dumps(x, ensure_ascii=False) for x in entries) + "\n]\n"


if __name__ == "__main__":  # python -m tests.cli.test_golden
    write_golden(Path(sys.argv[1]) if len(sys.argv) > 1 else GOLDEN)

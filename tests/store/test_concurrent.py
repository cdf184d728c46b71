"""Writers and readers at once, then idle: the store's answer is the letters' own.

Eight writers send letters (real processes, the CLI's `send`) while four readers ask
(`query` and `owed`, each of which may refresh the store); once every process is done,
the answer read back from the store equals one computed from scratch, and every letter
sent is in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from letterbox_tui.core.documents import owed_document, query_document
from letterbox_tui.core.query import parse_query
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.store import open_answers
from letterbox_tui.store.stored import StoredAnswers
from tests.conftest import make_box

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SEATS = [f"s{i}" for i in range(8)]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _unclocked(doc):
    if isinstance(doc, dict):
        return {k: _unclocked(v) for k, v in doc.items() if k != "scanned_at"}
    if isinstance(doc, list):
        return [_unclocked(v) for v in doc]
    return doc


def test_after_concurrent_writers_and_readers_the_store_is_the_letters(tmp_path):
    box = make_box(tmp_path / "box", *SEATS)
    per_writer = 15
    writer = (
        "import sys\n"
        "from letterbox_tui.cli import main\n"
        "me, to, n = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
        "import io\n"
        "for i in range(n):\n"
        "    sys.stdin = io.StringIO(f'letter {i} from {me}\\n')\n"
        "    code = main(['--root', sys.argv[4], 'send', '--as', me, '--to', to, '--type', 'request',\n"
        "                 '--slug', f'job-{i}', '--ack', '--deadline', '2026-12-01T00:00:00Z'])\n"
        "    assert code == 0, code\n"
    )
    reader = (
        "import sys\n"
        "from letterbox_tui.cli import main\n"
        "for i in range(int(sys.argv[2])):\n"
        "    main(['--root', sys.argv[1], 'owed' if i % 2 else 'query', '--json'])\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", writer, seat, SEATS[(i + 1) % 8], str(per_writer), str(box.root)],
                              env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for i, seat in enumerate(SEATS)]
    procs += [subprocess.Popen([sys.executable, "-c", reader, str(box.root), "6"], env=_env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()
    at = datetime(2026, 12, 2, tzinfo=timezone.utc)
    computed = resolve(scan(box.root), at)
    assert len(computed.snapshot.letters) == len(SEATS) * per_writer  # nothing lost on disk
    open_answers(box.root, at)  # whatever the last reader left, this one settles it
    stored = open_answers(box.root, at)
    assert isinstance(stored, StoredAnswers)
    everything = parse_query([], at)
    assert _unclocked(query_document(stored, everything)) == _unclocked(query_document(computed, everything))
    assert _unclocked(owed_document(stored)) == _unclocked(owed_document(computed))


def test_a_reader_never_waits_long_for_a_writer_holding_the_store(tmp_path):
    """Another process holding the store's write lock for as long as it likes: a reading
    command answers from the letters at once, with one notice at most."""
    import sqlite3
    import time

    from letterbox_tui.store.db import store_path

    box = make_box(tmp_path / "box", "alpha", "beta")
    box.letter("ask-1", frm="alpha", to="beta", type="request", requires_ack="true")
    at = datetime(2026, 12, 2, tzinfo=timezone.utc)
    open_answers(box.root, at)
    box.letter("ask-2", frm="alpha", to="beta", type="request", requires_ack="true")  # a change to refresh
    con = sqlite3.connect(store_path(os.path.realpath(box.root)), isolation_level=None)
    con.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "letterbox_tui", "--root", str(box.root), "query", "--json"],
                              env=_env(), capture_output=True, text=True, timeout=120)
        waited = time.monotonic() - started
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert done.returncode == 0, done.stderr
    assert {r["id"] for r in json.loads(done.stdout)["matches"]} == {"ask-1", "ask-2"}
    assert len(done.stderr.splitlines()) <= 1
    assert waited < 30  # the store's own wait is bounded (2 s); the rest is the process

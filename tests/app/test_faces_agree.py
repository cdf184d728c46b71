"""Both faces agree: for the demo letterbox and a generated one, what the command line's
``--json`` says for owed, disputes, thread, exists, check and digest is what the running
app's model holds (and shows) for the same view, at the same clock. One test per view."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from datetime import datetime, timezone

import pytest

from letterbox_tui.cli import common, main
from letterbox_tui.core.demo import DEMO_NOW, write_demo
from letterbox_tui.core.owed import format_time
from letterbox_tui.app.widgets.letter_text import thread_lines
from tests.app.helpers import SIZE, scanned, view_built

GEN_NOW = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def _running_model(root, now):
    """The model of the app opened on ``root`` at ``now``, once every view is opened (and so
    built)."""
    from letterbox_tui.app import make_app
    from letterbox_tui.app.model import BUILDERS
    from letterbox_tui.core.settings import UserSettings

    async def run():
        app = make_app(root, now=lambda: now, poll_interval=None, user_settings=UserSettings())
        async with app.run_test(size=SIZE) as pilot:
            await scanned(pilot, app)
            for key in "2345":
                await pilot.press(key)
                await view_built(pilot, app)
            assert all(app.model.built(vid) for vid in BUILDERS)
            return app.model

    return asyncio.run(run())


@pytest.fixture(scope="module", params=["demo", "generated"])
def opened(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("faces") / request.param
    if request.param == "demo":
        write_demo(root, seed=7, now=DEMO_NOW)
        now = DEMO_NOW
    else:
        from tests.gen_letterbox import main as generate

        with contextlib.redirect_stdout(io.StringIO()):
            generate([str(root), "--letters", "600", "--seed", "11"])
        now = GEN_NOW
    return root, _running_model(root, now)


@pytest.fixture
def cli_json(opened, capsys, monkeypatch):
    root, model = opened
    monkeypatch.setattr(common, "now", lambda: model.at)  # the commands without --at: the app's clock

    def run(*argv):
        code = main(["--root", str(root), *argv, "--json"])
        out, err = capsys.readouterr()
        assert code in (0, 1, 3), err
        return json.loads(out)

    return run


def _no_clock(doc: dict) -> dict:
    """The document without the scan's own time (two scans, two times)."""
    return {**doc, "scope": {k: v for k, v in doc["scope"].items() if k != "scanned_at"}}


def _shown_ids(model, view: str) -> list[str]:
    return [r.letter.id for r in model.views[view] if r.letter is not None]


def test_owed(opened, cli_json):
    _, model = opened
    doc = cli_json("owed", "--at", format_time(model.at))
    assert _no_clock(doc) == _no_clock(model.owed.to_json())
    assert _shown_ids(model, "view:owed") == [r["id"] for g in doc["owed"] for r in g["items"]]
    headings = [r.heading.plain for r in model.views["view:owed"] if r.heading is not None]
    assert [h.split(" owes ")[0].strip() for h in headings] == [g["seat"] for g in doc["owed"]]
    assert model.counts["view:owed"] == sum(len(g["items"]) for g in doc["owed"])


def test_disputes(opened, cli_json):
    _, model = opened
    doc = cli_json("disputes")
    assert _no_clock(doc) == _no_clock(model.disputes.to_json())
    assert _shown_ids(model, "view:disputes") == [
        i for d in doc["disputes"] for i in [d["dispute"]["id"], *(x["id"] for x in d["disputed"])]]
    assert model.counts["view:disputes"] == len(doc["disputes"])


def test_thread(opened, cli_json):
    _, model = opened
    threads = {}
    for x in model.snapshot.letters:
        threads.setdefault(x.thread_id, x)
    biggest = sorted(threads, key=lambda t: (-len(model.res.thread(t)), t))[:5]
    assert len(model.res.thread(biggest[0])) > 1
    for thread_id in biggest:
        letter = threads[thread_id]
        doc = cli_json("thread", letter.id)
        assert doc["thread"] == thread_id
        view = model.thread(thread_id)
        assert (doc["root"], doc["tree"]) == (view.root, view.to_json())
        # what the Thread tab shows: every letter, in the tree's order
        flat, todo = [], list(reversed(doc["tree"]))
        while todo:
            node = todo.pop()
            flat.append(node["id"])
            todo.extend(reversed(node["children"]))
        assert [ln.letter.id for ln in thread_lines(model, letter) if ln.letter is not None] == flat


@pytest.mark.parametrize("terms", [["type=dispute"], ["type=request", "answered=no"], ["from=nobody-here"],
                                   ["state=unknown"]])
def test_exists(opened, cli_json, terms):
    _, model = opened
    doc = cli_json("exists", *terms)
    _, verdict = model.query_view(" ".join(terms))
    assert _no_clock(doc) == _no_clock(verdict.to_json())


def test_check(opened, cli_json):
    _, model = opened
    doc = cli_json("check")
    assert _no_clock(doc) == _no_clock(model.problems.to_json())
    assert [f.to_json() for f in model.findings] == doc["findings"]
    assert model.counts["view:problems"] == sum(1 for f in doc["findings"] if f["severity"] == "problem")
    shown = [r.item for r in model.views["view:problems"]]
    assert [f.to_json() for f in shown] == doc["findings"]


def test_digest(opened, cli_json):
    _, model = opened
    doc = cli_json("digest", "--at", format_time(model.at))
    del doc["scope"]
    assert doc == model.digest()
    truth = model.truth
    assert {i.letter.id for i in truth.decisions} == {d["id"] for d in doc["decisions"]}
    assert {r.letter.id for r in model.views["view:truth"] if r.letter is not None} >= {d["id"] for d in doc["decisions"]}

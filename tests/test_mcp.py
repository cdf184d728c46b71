"""The MCP server, started as a subprocess and driven by the SDK's own client over stdio:
every tool answers what the command line's ``--json`` answers, fresh after each change, and
bad input or a damaged world gives a tool error while the server keeps serving."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.schema import validate

pytest.importorskip("mcp")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
WAIT = 30.0  # seconds a change may take to show (a loaded machine); a condition, not a sleep


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LETTERBOX")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def cli_json(root: Path, *argv: str) -> dict:
    """The command line's ``--json`` document for the same question (a real process)."""
    done = subprocess.run([sys.executable, "-m", "letterbox_tui", "--root", str(root), *argv, "--json"],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode in (0, 1, 3), done.stderr
    return json.loads(done.stdout)


def unclocked(doc):
    if isinstance(doc, dict):
        return {k: unclocked(v) for k, v in doc.items() if k not in ("scanned_at", "changed_since_scan")}
    if isinstance(doc, list):
        return [unclocked(v) for v in doc]
    return doc


def serve(root: Path, scenario) -> None:
    """Run ``scenario(session)`` against a server on ``root``."""

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "letterbox_tui", "--root", str(root), "mcp"],
                                       env=_env())
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await scenario(session)

    anyio.run(main)


async def ask(session, name, **arguments):
    result = await session.call_tool(name, arguments)
    if result.is_error:
        return None, result.content[0].text
    return result.structured_content, None


@pytest.fixture
def demo(tmp_path):
    root = tmp_path / "box"
    write_demo(root)
    return root


def test_every_tool_answers_what_the_command_line_answers(demo):
    some = "2026-11-18T090000-planner-request-renewal-plan-3f9a1c07"
    ids = sorted(p.name[:-3] for p in (demo / "builder" / "inbox").glob("*.md"))
    some = ids[0]
    calls = [
        ("query", {"terms": ["state=open", "answered=no"]}, ["query", "state=open", "answered=no"]),
        ("query", {"terms": []}, ["query"]),
        ("exists", {"terms": ["type=ruling"]}, ["exists", "type=ruling"]),
        ("show", {"id": some}, ["show", some]),
        ("current", {"id": some}, ["current", some]),
        ("answered", {"id": some}, ["answered", some]),
        ("thread", {"id": some}, ["thread", some]),
        ("owed", {"at": "2026-11-29T12:00:00Z"}, ["owed", "--at", "2026-11-29T12:00:00Z"]),
        ("owed", {"seat": "builder", "at": "2026-11-29T12:00:00Z"},
         ["owed", "--seat", "builder", "--at", "2026-11-29T12:00:00Z"]),
        ("query", {"terms": ["state=open"], "limit": 2, "offset": 1}, ["query", "state=open", "--limit", "2",
                                                                        "--offset", "1"]),
        ("owed", {"at": "2026-11-29T12:00:00Z", "limit": 3, "offset": 2},
         ["owed", "--at", "2026-11-29T12:00:00Z", "--limit", "3", "--offset", "2"]),
        ("disputes", {}, ["disputes"]),
        ("digest", {"at": "2026-11-29T12:00:00Z"}, ["digest", "--at", "2026-11-29T12:00:00Z"]),
        ("check", {}, ["check"]),
        ("leases", {}, ["leases"]),
        ("inbox", {"seat": "builder", "at": "2026-11-29T12:00:00Z"}, ["inbox", "builder", "--at", "2026-11-29T12:00:00Z"]),
    ]
    got = {}

    async def scenario(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"query", "exists", "show", "current", "answered", "thread", "owed", "disputes",
                              "digest", "check", "leases", "inbox"}
        assert all(t.output_schema and t.input_schema for t in tools.values())
        for name, arguments, _ in calls:
            doc, error = await ask(session, name, **arguments)
            assert error is None, (name, error)
            validate(name, doc)
            got[(name, json.dumps(arguments))] = doc

    serve(demo, scenario)
    for name, arguments, argv in calls:
        doc = got[(name, json.dumps(arguments))]
        want = cli_json(demo, *argv)
        if name == "show":  # the body only when asked for
            for item in want["letters"]:
                item["body"], item["body_truncated"] = None, False
        assert unclocked(doc) == unclocked(want), name


def _letter(root: Path, seat: str, letter_id: str, **fields: str) -> Path:
    header = {"id": letter_id, "from": "planner", "to": seat, "type": "request", "requires_ack": "true",
              "sent": "2026-11-29T10:00:00Z", **fields}
    text = "---\n" + "".join(f"{k}: {v}\n" for k, v in header.items()) + "---\nbody\n"
    path = root / header["to"] / "inbox" / f"{letter_id}.md"
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text)
    os.rename(tmp, path)
    return path


async def _until(session, name, test, **arguments):
    """Ask until ``test(doc)`` holds (the change's event applied), within ``WAIT`` seconds."""
    end = time.monotonic() + WAIT
    while True:
        doc, error = await ask(session, name, **arguments)
        assert error is None, error
        if test(doc):
            return doc
        assert time.monotonic() < end, f"{name} never reflected the change"
        await anyio.sleep(0.05)


def write(root: Path, *argv: str) -> str:
    """A letter written by the command line (another process, through the write gate): its id."""
    done = subprocess.run([sys.executable, "-m", "letterbox_tui", "--root", str(root), *argv], input="body\n",
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_answers_follow_each_change_a_writer_makes(demo):
    """A writer adds a task (as the protocol's tools write one: a temporary renamed), then
    the command line, another process, replies to it and supersedes it, while a client asks:
    once each change's event is applied, the answer equals the command line's --json for
    that same state (asked before the next write)."""
    task = "2026-11-29T100000-planner-request-mcp-a-0000aaaa"
    at = "2026-11-29T12:00:00Z"
    pairs = []

    async def scenario(session):
        first, _ = await ask(session, "owed", at=at)
        pairs.append(("owed", first, cli_json(demo, "owed", "--at", at)))
        _letter(demo, "builder", task)
        doc = await _until(session, "query", lambda d: any(r["id"] == task for r in d["matches"]),
                           terms=["type=request"])
        pairs.append(("query after the add", doc, cli_json(demo, "query", "type=request")))
        doc, _ = await ask(session, "owed", at=at)
        pairs.append(("owed after the add", doc, cli_json(demo, "owed", "--at", at)))
        write(demo, "reply", task, "--as", "builder", "result")
        doc = await _until(session, "answered", lambda d: d["answered"] == "yes", id=task)
        pairs.append(("answered after the reply", doc, cli_json(demo, "answered", task)))
        newer = write(demo, "supersede", task, "--as", "planner")
        doc = await _until(session, "current", lambda d: d["current"] == "no", id=task)
        pairs.append(("current after the supersede", doc, cli_json(demo, "current", task)))
        doc, _ = await ask(session, "owed", at=at)
        pairs.append(("owed after the supersede", doc, cli_json(demo, "owed", "--at", at)))
        assert newer in json.dumps(doc)  # the new version is owed in its place

    serve(demo, scenario)
    for what, doc, want in pairs:
        assert unclocked(doc) == unclocked(want), what
    assert task not in json.dumps(pairs[0][1]) and task in json.dumps(pairs[2][1])
    assert pairs[0][1]["scope"]["files"] < pairs[-1][1]["scope"]["files"]


def test_hostile_letters_come_back_sanitized(demo):
    """Control characters and bidi in a body and in headers, and huge headers (one near the
    grammar's limits, readable; one over a line's 4096 bytes, unreadable): the body is
    sanitized, the JSON text escapes what a header hides, an unreadable file's finding
    holds no raw control or bidi character, and the server keeps serving."""
    letter_id = "2026-11-29T100000-planner-info-hostile-0000cccc"
    path = demo / "builder" / "inbox" / f"{letter_id}.md"
    subject = "see \u202egnp.exe " + "x" * 4000  # a line near the 4096 bytes a header line may take
    path.write_bytes(("---\nid: " + letter_id + "\nfrom: planner\nto: builder\ntype: info\nrequires_ack: false\n"
                      "sent: 2026-11-29T10:00:00Z\nsubject: " + subject + "\n"
                      + "".join(f"x-note-{n}: {'y' * 3000}\n" for n in range(9)) + "---\n"
                      "\x1b]0;owned\x07 \x1b[31mred\x1b[0m [@click=app.quit] \u202eevil\n").encode())
    huge = "2026-11-29T110000-planner-info-huge-0000dddd"
    (demo / "builder" / "inbox" / f"{huge}.md").write_bytes(
        ("---\nid: " + huge + "\nfrom: planner\u202e\x1b[2J\nto: builder\ntype: info\nx-huge: " + "C" * 5000
         + "\n---\nbody\n").encode())
    shown, checked = {}, {}

    async def scenario(session):
        result = await session.call_tool("show", {"id": letter_id, "body": True})
        assert not result.is_error, result.content[0].text
        shown.update(result.structured_content["letters"][0], text=result.content[1].text)
        result = await session.call_tool("check", {})
        assert not result.is_error, result.content[0].text
        checked.update(doc=result.structured_content, text=result.content[1].text)
        doc, error = await ask(session, "query", terms=["type=info"])  # and it goes on serving
        assert error is None and any(r["id"] == letter_id for r in doc["matches"])

    serve(demo, scenario)
    body = shown["body"]
    assert "\x1b" not in body and "\x07" not in body and "\u202e" not in body
    assert "red" in body and "[@click=app.quit]" in body  # the text stays, as text
    assert shown["headers"]["subject"] == subject  # the header is data, as --json gives it; its JSON text escapes it
    assert "\u202e" not in shown["text"] and "see \\u202egnp.exe" in shown["text"]
    findings = [f for f in checked["doc"]["findings"] if any(huge in p for p in f["paths"])]
    assert findings and findings[0]["code"] == "unreadable-file"
    for text in (json.dumps(checked["doc"], ensure_ascii=False), checked["text"]):
        assert "\x1b" not in text and "\u202e" not in text


def test_bad_input_and_a_damaged_world_give_tool_errors_and_it_keeps_serving(demo, tmp_path):
    from letterbox_tui.store.db import store_path

    said, cli_said = [], []

    async def scenario(session):
        said.append(await ask(session, "query", terms=["nonsense"]))
        said.append(await ask(session, "show", id="no-such-letter"))
        said.append(await ask(session, "owed", seat="nobody"))
        said.append(await ask(session, "owed", at="yesterday-ish"))
        said.append(await ask(session, "query", wrong=1))
        # a damaged store
        await ask(session, "query", terms=[])
        path = store_path(str(demo.resolve()))
        if os.path.exists(path):
            with open(path, "r+b") as f:
                f.seek(100)
                f.write(b"\xff" * 64)
        _letter(demo, "builder", "2026-11-29T100000-planner-request-after-damage-0000dddd")
        doc = await _until(session, "query", lambda d: any("after-damage" in r["id"] for r in d["matches"]),
                           terms=["type=request"])
        said.append((doc is not None, None))
        # the letterbox vanishes, then comes back
        shutil.move(demo, tmp_path / "away")
        said.append(await ask(session, "query", terms=[]))
        cli_said.append(subprocess.run([sys.executable, "-m", "letterbox_tui", "--root", str(demo), "query"],
                                       capture_output=True, text=True, env=_env(), timeout=120))
        shutil.move(tmp_path / "away", demo)
        doc = await _until(session, "query", lambda d: d["scope"]["letters"] > 0, terms=[])
        said.append((doc is not None, None))

    serve(demo, scenario)
    errors = [error for _, error in said[:5]]
    assert all(errors), said[:5]
    assert "invalid term 'nonsense'" in errors[0]
    assert "no letter no-such-letter in scope" in errors[1]
    assert "no seat 'nobody'" in errors[2]
    assert said[5][0] is True
    # the vanished letterbox: a tool error, not a dead server, saying what the command line says
    (vanished,) = cli_said
    assert vanished.returncode == 2 and vanished.stderr == f"letterbox-tui: {said[6][1]}\n"
    assert said[7][0] is True


def test_a_kept_result_is_dropped_after_a_write(demo):
    """A result kept for the current generation is given again while nothing changes, and
    after a letter is written the answer is the command line's for the new state."""
    new = "2026-11-29T100000-planner-request-kept-0000eeee"
    seen = {}

    async def scenario(session):
        metas = []
        for _ in range(2):
            result = await session.call_tool("query", {"terms": ["type=request"]})
            metas.append(result.meta["letterbox-tui"])
        owed = await session.call_tool("owed", {"at": "2026-11-29T12:00:00Z"})
        owed_again = await session.call_tool("owed", {"at": "2026-11-29T12:00:00Z"})
        seen["before"] = metas + [owed.meta["letterbox-tui"], owed_again.meta["letterbox-tui"]]
        _letter(demo, "builder", new)
        seen["query"] = await _until(session, "query", lambda d: any(r["id"] == new for r in d["matches"]),
                                     terms=["type=request"])
        result = await session.call_tool("owed", {"at": "2026-11-29T12:00:00Z"})
        seen["owed"], seen["after"] = result.structured_content, result.meta["letterbox-tui"]

    serve(demo, scenario)
    first, again, owed, owed_again = seen["before"]
    assert not first["reused"] and again["reused"] and again["generation"] == first["generation"]
    assert not owed["reused"] and owed_again["reused"]
    assert seen["after"]["generation"] > first["generation"]  # (reused: answered anew in the background)
    assert unclocked(seen["query"]) == unclocked(cli_json(demo, "query", "type=request"))
    assert unclocked(seen["owed"]) == unclocked(cli_json(demo, "owed", "--at", "2026-11-29T12:00:00Z"))
    assert new in json.dumps(seen["owed"])


def test_a_client_that_goes_away_mid_answer_ends_the_server_quietly(demo):
    """The client closes its end while results are written to it (it was killed): the
    server ends with no 'internal error', as a command whose pager quit does."""
    import json
    import subprocess

    server = subprocess.Popen([sys.executable, "-m", "letterbox_tui", "--root", str(demo), "mcp"], env=_env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def send(message):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        server.stdin.flush()

    send({"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
    assert b'"id":1' in server.stdout.readline()
    send({"method": "notifications/initialized"})
    for n in range(6):
        send({"id": 10 + n, "method": "tools/call", "params": {"name": "owed", "arguments": {}}})
    assert b'"result"' in server.stdout.readline()  # answers are being written: the client goes
    server.stdout.close()
    try:
        for n in range(20):  # keep asking until the server has met the closed pipe and ended
            send({"id": 100 + n, "method": "tools/call", "params": {"name": "owed", "arguments": {}}})
    except BrokenPipeError:
        pass
    finally:
        try:
            server.stdin.close()
        except BrokenPipeError:
            pass
    assert server.wait(60) == 0
    assert b"internal error" not in server.stderr.read()

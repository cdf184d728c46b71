"""The JSON contract (``core.schema``): ``letterbox-tui schema`` prints it, and the real
``--json`` output of every command, on the demo letterbox and a generated one, is what it
says (strict: no coercion, no key it does not name)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from letterbox_tui.cli import main
from letterbox_tui.core.demo import DEMO_NOW, write_demo
from letterbox_tui.core.schema import DOCUMENTS, json_schema, validate
from letterbox_tui.core.scan import scan

BY_ID = ("show", "current", "answered", "thread")
AT = "2026-12-01T09:00:00Z"


def _json(capsys, root, *argv):
    code = main(["--root", str(root), *argv, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1, 3), (argv, err)
    return json.loads(out)


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("schema") / "demo"
    write_demo(root, seed=7, now=DEMO_NOW)
    return root


@pytest.fixture(scope="module")
def generated_root(tmp_path_factory):
    from tests.gen_letterbox import main as generate

    import contextlib
    import io

    root = tmp_path_factory.mktemp("schema") / "gen"
    with contextlib.redirect_stdout(io.StringIO()):
        assert generate([str(root), "--letters", "400", "--seed", "5"]) == 0
    return root


def _every_output(capsys, root, sample):
    ids = sorted({x.id for x in scan(root).letters})[:: max(1, len(scan(root).letters) // sample)]
    yield "query", _json(capsys, root, "query")
    yield "query", _json(capsys, root, "query", "state=open", "late=yes", f"at={AT}")
    yield "exists", _json(capsys, root, "exists", "type=dispute")
    yield "exists", _json(capsys, root, "exists", "type=nothing-like-this")
    yield "owed", _json(capsys, root, "owed", "--at", AT)
    yield "disputes", _json(capsys, root, "disputes")
    yield "check", _json(capsys, root, "check")
    yield "digest", _json(capsys, root, "digest", "--at", AT)
    truth = root.parent / f"{root.name}-truth.md"
    yield "digest", _json(capsys, root, "digest", "--at", AT, "--write", str(truth))
    yield "digest", _json(capsys, root, "digest", "--at", AT, "--check", str(truth))
    seat = sorted(scan(root).seats)[0]
    yield "review", _json(capsys, root, "review", "--check", "--every", "1d", "--as", seat, "--at", AT)
    (root / "locks" / "src--auth.ts.lock").mkdir(parents=True, exist_ok=True)  # no lease file: a problem
    yield "leases", _json(capsys, root, "leases")
    for seat in sorted(scan(root).seats):
        yield "inbox", _json(capsys, root, "inbox", seat, "--at", AT)
    for letter_id in ids:
        for command in BY_ID:
            yield command, _json(capsys, root, command, letter_id)


@pytest.mark.parametrize("which", ["demo", "generated"])
def test_every_command_output_matches_its_schema(which, request, capsys):
    root = request.getfixturevalue(f"{which}_root")
    seen = set()
    for command, doc in _every_output(capsys, root, 12):
        validate(command, doc)
        seen.add(command)
    # sync needs a git remote: its document is validated in tests/cli/test_sync_cli.py
    assert seen == set(DOCUMENTS) - {"sync"}


def _checker(command):
    """A JSON Schema validator of the published schema, as an MCP client builds one."""
    from jsonschema.validators import validator_for
    from referencing import Registry

    schema = json_schema(command)
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=Registry())


def test_the_published_schemas_hold_every_output(generated_root, capsys):
    """What ``schema`` prints (and the MCP tools publish) is checked by JSON Schema itself,
    not only through the TypedDicts it is made from: every real output passes it."""
    checkers = {}
    for command, doc in _every_output(capsys, generated_root, 6):
        checker = checkers.get(command) or checkers.setdefault(command, _checker(command))
        assert [e.message for e in checker.iter_errors(doc)] == [], command


def test_the_published_schemas_refuse_what_the_types_refuse(demo_root, capsys):
    doc = _json(capsys, demo_root, "owed")
    row = doc["owed"][0]["items"][0]
    checker = _checker("owed")
    assert not list(checker.iter_errors(doc))
    for broken in ({**row, "head": 3}, {**row, "late": "maybe"}, {**row, "extra": 1},
                   {**row, "attention": [{**row["attention"][0], "since": 5}]},
                   {**row, "reasons": [{"code": "nope", "about": "late"}]}):
        assert list(checker.iter_errors({**doc, "owed": [{"seat": "x", "items": [broken]}]})), broken
    assert list(checker.iter_errors({**doc, "scope": {**doc["scope"], "sync": {"head": None}}}))


def test_validation_can_fail(demo_root, capsys):
    """The schemas are not vacuous: a wrong type, an unknown value, an extra or a missing
    key is refused."""
    doc = _json(capsys, demo_root, "query")
    row = doc["matches"][0]
    for broken in ({**row, "late": "maybe"}, {**row, "extra": 1}, {k: v for k, v in row.items() if k != "head"},
                   {**row, "requires_ack": True}, {**row, "reasons": [{"code": "nope", "about": "late"}]}):
        with pytest.raises(ValidationError):
            validate("query", {**doc, "matches": [broken]})
    with pytest.raises(ValidationError):
        validate("owed", {**_json(capsys, demo_root, "owed"), "scope": {**doc["scope"], "files": "44"}})


def test_schema_command_prints_each_schema(capsys):
    assert main(["schema", "owed"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one == json_schema("owed")
    assert one["title"] == "letterbox-tui owed --json" and one["additionalProperties"] is False
    assert set(one["required"]) == {"at", "owed", "scope"}
    assert main(["schema"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert set(every) == set(DOCUMENTS)
    assert every["thread"]["$defs"]["ThreadNode"]["properties"]["children"]["items"] == {"$ref": "#/$defs/ThreadNode"}


def test_schema_of_an_unknown_command_is_a_usage_error(capsys):
    assert main(["schema", "send"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no JSON schema for 'send'" in err

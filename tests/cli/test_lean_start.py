"""A reading command's start-up stays lean: the command line builds only the parser of the
command it runs (and that parser reads every argument as the whole one does)."""

from __future__ import annotations

import contextlib
import io

import pytest

from letterbox_tui import cli
from letterbox_tui.cli import COMMANDS, UsageError, build_parser, command_named

ARGVS = [
    ["answered", "X", "--json"],
    ["--root", "/r", "show", "X"],
    ["--root=/r", "--participant", "a", "current", "X", "--json", "--root", "/s"],
    ["query", "type=request", "from=a", "--json", "--participant", "b"],
    ["exists", "--fetch", "id=x"],
    ["owed", "--seat", "a", "--fail-late"],
    ["answered"],  # missing ID
    ["answered", "X", "--bogus"],
    ["show", "X", "--view", "owed"],  # an app option after the command
    ["query", "--", "type=x"],
    ["--theme", "dark", "digest", "--write", "p", "--check", "q"],
    ["bench", "--letters", "ten"],
    ["send", "--to", "a", "--type", "request", "--slug", "s", "--ack", "--deadline", "2026-01-01T00:00:00Z"],
]


def _parse(parser, argv):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            return ("ok", vars(parser.parse_args(argv)))
    except UsageError as exc:
        return ("usage", str(exc))
    except SystemExit as exc:
        return ("exit", exc.code, out.getvalue())


@pytest.mark.parametrize("argv", ARGVS + [[name, "--help"] for name in COMMANDS])
def test_the_one_command_parser_reads_every_argument_as_the_whole_one(argv):
    name = command_named(argv)
    assert name == argv[[a.startswith("-") or (i and argv[i - 1] in ("--root", "--theme", "--participant"))
                          for i, a in enumerate(argv)].index(False)]
    assert _parse(build_parser(name), argv) == _parse(build_parser(), argv)


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h", "show"], ["--ro", "/r", "show", "X"], ["sho", "X"],
                                  ["--", "show"], ["--view", "owed"], ["--root"]])
def test_anything_less_plain_gets_the_whole_parser(argv):
    assert command_named(argv) is None


def test_main_builds_one_command_parser(monkeypatch, capsys):
    built = []
    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda only=None: built.append(only) or real(only))
    assert cli.main(["schema", "nonesuch"]) == 2  # (the command runs, and refuses the name)
    assert built == ["schema"]

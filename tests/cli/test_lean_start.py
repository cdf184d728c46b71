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


# --- what a question on an unchanged letterbox loads -------------------------------------

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

#: never loaded by a question the derived index or the memo answers (a count, not a time)
HEAVY = ("rich", "pydantic", "textual", "tomllib", "tomlkit", "frontmatter", "platformdirs",
         "letterbox_tui.core.settings", "letterbox_tui.core.settings_model", "letterbox_tui.core.scan",
         "letterbox_tui.core.speed.cache", "letterbox_tui.core.speed.choice", "tempfile")
#: not loaded before the stat proof starts (they load while it runs)
AFTER_PROOF = ("letterbox_tui.core.model", "letterbox_tui.core.speed.index_rows", "letterbox_tui.core.query",
               "letterbox_tui.core.resolve", "letterbox_tui.cli.read", "dataclasses", "hashlib",
               "letterbox_tui.core.speed.index_lock")

_PROBE = r"""
import json, os, sys
from letterbox_tui.core.speed import memo
memo.RACY_NS = 0  # files written a moment ago count as settled (the test's whole life is one)
seen = {}
real = memo.Proof.__init__
def start(self, *a, **k):
    seen.setdefault("before_proof", sorted(sys.modules))
    real(self, *a, **k)
memo.Proof.__init__ = start
from letterbox_tui.cli import main
devnull = open(os.devnull, "w")
out, sys.stdout = sys.stdout, devnull
code = main(sys.argv[1:])
sys.stdout = out
print(json.dumps({"code": code, "before_proof": seen.get("before_proof"), "end": sorted(sys.modules)}))
"""


def _modules(root, argv):
    env = {k: v for k, v in os.environ.items() if k not in ("LETTERBOX_TUI_NO_CACHE", "LETTERBOX_TUI_PURE")}
    proc = subprocess.run([sys.executable, "-c", _PROBE, "--root", str(root), *argv], capture_output=True,
                          text=True, env=env, check=True)
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture
def settled_box(tmp_path):
    from letterbox_tui.core.demo import write_demo

    root = tmp_path / "box"
    write_demo(root)
    (root / "letterbox-tui.toml").unlink(missing_ok=True)  # no settings: none to load (the default)
    return root


def test_a_question_on_an_unchanged_letterbox_loads_only_what_it_needs(settled_box, monkeypatch):
    lid = sorted((settled_box / "builder" / "inbox").glob("*.md"))[0].name[:-3]
    questions = [["answered", lid, "--json"], ["current", lid, "--json"], ["show", lid, "--json"],
                 ["exists", "type=request", "from=planner", "--json"], ["query", "type=request", "--json"]]
    for argv in questions:
        _modules(settled_box, argv)  # the first run builds the index (and the memo) ...
    for argv in questions:
        got = _modules(settled_box, argv)  # ... the next ones are answered from them
        assert got["code"] in (0, 3)
        assert [m for m in got["end"] if m.split(".")[0] in HEAVY or m in HEAVY] == [], argv
        if got["before_proof"] is not None:  # (a memoised answer may need no resolver at all)
            assert [m for m in got["before_proof"] if m in AFTER_PROOF] == [], argv
    assert _modules(settled_box, questions[0])["before_proof"] is not None  # the index's proof ran


def test_the_lean_path_s_own_copies_agree_with_their_homes(tmp_path, monkeypatch):
    """What the lean path works out without importing its home module says the same."""
    from platformdirs import user_cache_dir

    from letterbox_tui.cli import common
    from letterbox_tui.core import scan, settings
    from letterbox_tui.core.speed import cache, files, index, memo

    assert memo.RACY_NS == scan.RACY_NS
    assert common.SETTINGS_FILE == settings.SETTINGS_NAME
    for value in (None, "", "  ", str(tmp_path / "xdg")):
        if value is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert files.cache_dir() == user_cache_dir("letterbox-tui")
        for utc in (False, True):
            assert index.index_path(str(tmp_path), utc) == cache.cache_path(str(tmp_path), utc)[:-8] + ".index"
    root = tmp_path / "box"
    root.mkdir()
    assert common.settings_utc(root) is False is settings.load_settings(root).id_time_is_utc
    (root / "letterbox-tui.toml").write_text("[time]\nid_time_is_utc = true\n")
    assert common.settings_utc(root) is True is settings.load_settings(root).id_time_is_utc


def test_the_memo_s_sync_token_is_core_sync_s(tmp_path):
    import subprocess as sp

    from letterbox_tui.cli.memoised import sync_token
    from letterbox_tui.core import sync

    plain = tmp_path / "plain" / "box"
    plain.mkdir(parents=True)
    assert sync_token(str(plain)) == sync.token(sync.status(plain)) == "nogit"
    repo = tmp_path / "repo"
    (repo / "box").mkdir(parents=True)
    sp.run(["git", "init", "-q", str(repo)], check=True)
    assert sync_token(str(repo / "box")) == sync.token(sync.status(repo / "box"))

"""The command line's frame: usage errors are one line and exit 2; no traceback ever."""

import pytest

from letterbox_tui import cli


def test_usage_error_is_one_line_exit_2(capsys):
    assert cli.main(["query", "--no-such-option"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_unknown_command_is_one_line_exit_2(capsys):
    assert cli.main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1


def test_a_bug_is_one_line_not_a_traceback(monkeypatch, capsys):
    import letterbox_tui.cli.read as read

    def boom(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(read, "cmd_check", boom)
    monkeypatch.delenv("LETTERBOX_TUI_DEBUG", raising=False)
    assert cli.main(["check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "Traceback" not in err


def test_debug_variable_shows_the_traceback(monkeypatch):
    import letterbox_tui.cli.read as read

    monkeypatch.setattr(read, "cmd_check", lambda args: 1 / 0)
    monkeypatch.setenv("LETTERBOX_TUI_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["check"])


def test_every_option_of_every_command_says_what_it_is_for(capsys):
    """``send --help`` listed ``--deadline T``, ``--re ID`` and seven more with no word of
    what they take: a user had to read the README to learn that ``+2d`` is a deadline.
    Every option of every command has a help line, and ``--deadline`` names both forms."""
    import argparse

    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    silent = [f"{name} {a.option_strings[0]}" for name, sub in commands.items()
              for a in sub._actions if a.option_strings and not a.help]
    assert silent == []
    assert set(cli.COMMANDS) <= set(commands)
    with pytest.raises(SystemExit):
        cli.main(["send", "--help"])
    out = capsys.readouterr().out
    assert "+2d" in out and "2026-12-05T17:00:00Z" in out

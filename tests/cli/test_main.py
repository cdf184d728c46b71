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

"""Settings a command cannot use: exit 2, every problem on its own line, nothing written."""

from __future__ import annotations

import pytest

from tests.cli.helpers import cli


@pytest.mark.parametrize("argv", [["query", "type=request"], ["owed"], ["check"],
                                  ["send", "--as", "alpha", "--to", "beta", "--type", "info", "--slug", "x"]])
def test_bad_letterbox_settings_list_every_problem_and_exit_2(capsys, box, argv, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("body\n"))
    box.raw("letterbox-tui.toml", 'theme = 1\n[time]\nid_time_is_utc = "no"\n[queries]\nq = 2\n')
    before = box.tree_bytes()
    code, out, err = cli(capsys, box, *argv)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith("letterbox-tui: cannot read settings ") and lines[0].endswith("3 problems")
    assert [x.split(":")[0].strip() for x in lines[1:]] == ["theme", "[time] id_time_is_utc", '[queries] "q"']
    assert "Traceback" not in err
    assert box.tree_bytes() == before


def test_a_keymap_in_the_letterbox_is_no_error_for_commands(capsys, box):
    box.raw("letterbox-tui.toml", '[keymap]\n"write.send" = "escape"\n')
    code, out, err = cli(capsys, box, "query", "type=request")
    assert code == 0 and err == ""

"""Settings a command cannot use: exit 2, every problem on its own line, nothing written."""

from __future__ import annotations

import pytest

from tests.cli.helpers import cli, cli_json


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


def test_human_seats_naming_no_seat_is_a_settings_warning_of_check(capsys, box):
    """``human_seats = ["simom"]`` (a typo) made waiting-on-human silently never apply to
    the seat meant: ``check`` said nothing. It warns, naming the seat and the file; a seat
    that is there (even outside a --participant scope) is no warning."""
    box.raw("letterbox-tui.toml", 'human_seats = ["alpha", "simom", "beta"]\n')
    code, doc = cli_json(capsys, box, "check")
    found = [f for f in doc["findings"] if f["code"] == "unknown-human-seat"]
    assert code == 0 and len(found) == 1, doc["findings"]
    [f] = found
    assert f["severity"] == "warning" and f["paths"] == ["letterbox-tui.toml"] and '"simom"' in f["detail"]
    code, doc = cli_json(capsys, box, "check", "--participant", "alpha")
    assert [f["detail"] for f in doc["findings"] if f["code"] == "unknown-human-seat"] == [f["detail"]]
    code, out, err = cli(capsys, box, "check")
    assert code == 0 and "unknown-human-seat" in out and "simom" in out and "1 warning" in out


def test_a_setting_nothing_reads_is_a_warning_of_check(capsys, box):
    """``human_seat = [...]`` (a typo of human_seats) did nothing and nobody said so from
    the command line: only the app showed the notice. ``check`` warns of each key nothing
    reads, naming it and the file; the commands still answer (exit 0)."""
    box.raw("letterbox-tui.toml", 'human_seat = ["alpha"]\nsilense = "3d"\n[time]\nzones = "utc"\n')
    code, doc = cli_json(capsys, box, "check")
    found = [f for f in doc["findings"] if f["code"] == "ignored-setting"]
    assert code == 0 and [f["severity"] for f in found] == ["warning"] * 3, doc["findings"]
    assert all(f["paths"] == ["letterbox-tui.toml"] for f in found)
    details = " ".join(f["detail"] for f in found)
    assert "human_seat" in details and "silense" in details and '[time] "zones"' in details
    code, out, err = cli(capsys, box, "owed")
    assert code == 0
    box.raw("letterbox-tui.toml", 'human_seats = ["alpha"]\n')
    code, doc = cli_json(capsys, box, "check")
    assert not [f for f in doc["findings"] if f["code"] == "ignored-setting"]


def test_id_time_is_utc_set_after_the_store_was_read_is_answered(capsys, box, monkeypatch):
    """SPEC 9: answers from the store equal answers computed from the letters, always. The
    setting is turned on after two reads: the letter's time comes from its id at once.
    (The store trusts a kept header once the file is ``RACY_NS`` older than the store's
    write; at 0 it does so at once, as it would for any letter at rest.)"""
    monkeypatch.setattr("letterbox_tui.store.RACY_NS", 0)
    letter_id = "2026-11-30T100000-alpha-info-hi-1111aaaa"
    box.raw(f"beta/inbox/{letter_id}.md",
            f"---\nid: {letter_id}\nfrom: alpha\nto: beta\ntype: info\nrequires_ack: false\n---\nhi\n")
    for _ in range(2):
        code, doc = cli_json(capsys, box, "query")
        assert doc["matches"][0]["legacy"] == ["missing-sent"]
    box.raw("letterbox-tui.toml", "[time]\nid_time_is_utc = true\n")
    code, doc = cli_json(capsys, box, "query")
    assert doc["matches"][0]["legacy"] == ["missing-sent", "time-from-id"]

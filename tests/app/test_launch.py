"""Starting the app: the root, --participant, and reading files safely for the pane."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from letterbox_tui.app import make_app
from letterbox_tui.cli import main
from letterbox_tui.core.errors import LetterboxError
from tests.app.helpers import SIZE, app_for, scanned


def test_not_a_letterbox_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["--root", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a letterbox" in err and "Traceback" not in err


def test_unknown_participant_fails_before_the_app(letterbox):
    with pytest.raises(LetterboxError, match="no seat 'ghost'"):
        make_app(letterbox.root, ["ghost"])


def test_bad_settings_fail_before_the_app(letterbox):
    letterbox.raw("letterbox-tui.toml", "[time\n")
    with pytest.raises(LetterboxError, match="cannot read settings"):
        make_app(letterbox.root)


async def test_partial_scope_shows_the_banner_and_only_its_seats(letterbox):
    app = app_for(letterbox, participants=["planner"])
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert app.query_one("#banner").display
        assert "partial scope (planner only)" in app.query_one("#banner", Static).render().plain
        ids = [mb.id for mb in app.model.mailboxes()]
        assert "seat:planner:inbox" in ids and not any(i.startswith("seat:builder") for i in ids)

"""#18 item 11: key bindings come only from the user's own config, never from the
letterbox's shared letterbox-tui.toml; buttons show the keys that really run them."""

from __future__ import annotations

from textual.widgets import Button, Input, Select, TextArea

from letterbox_tui.app.screens.write import WriteScreen
from tests.app.helpers import SIZE, app_for, scanned, until, user_config


def _files(root):
    return {p for p in root.rglob("*") if p.is_file()}


async def _fill_compose(pilot, app) -> WriteScreen:
    await pilot.press("c")
    await until(pilot, lambda: isinstance(app.screen, WriteScreen))
    screen = app.screen
    screen.query_one("#w-as", Select).value = "planner"
    screen.query_one("#w-to", Select).value = "builder"
    screen.query_one("#w-slug", Input).value = "hello"
    screen.query_one("#w-body", TextArea).text = "Hello.\n"
    screen.query_one("#w-slug", Input).focus()
    await pilot.pause()
    assert not screen.query_one("#w-send", Button).disabled  # ready: only the key decides
    return screen


async def test_a_letterbox_settings_file_cannot_rebind_keys(letterbox):
    letterbox.raw("letterbox-tui.toml", '[keymap]\n"write.send" = "escape"\n"app.quit" = "x"\n')
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert app._keymap == {}
        assert any("[keymap] ignored" in str(n.message) for n in app._notifications)
        before = _files(letterbox.root)
        screen = await _fill_compose(pilot, app)
        assert "Send (^s)" in str(screen.query_one("#w-send", Button).label)
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert _files(letterbox.root) == before  # Esc never publishes
        assert screen.written is None


async def test_the_users_own_keymap_rebinds_and_the_buttons_say_so(letterbox):
    user_config('[keymap]\n"write.send" = "ctrl+t"\n')
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        before = _files(letterbox.root)
        screen = await _fill_compose(pilot, app)
        assert str(screen.query_one("#w-send", Button).label) == "Send (^t)"
        await pilot.press("ctrl+s")  # no longer Send
        await pilot.pause(0.2)
        assert _files(letterbox.root) == before
        await pilot.press("ctrl+t")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        made = _files(letterbox.root) - before
        assert len(made) == 1 and next(iter(made)).parent == letterbox.root / "builder" / "inbox"


async def test_a_bad_user_config_stops_the_app_with_every_problem(letterbox):
    import pytest

    from letterbox_tui.core.settings import SettingsError

    user_config('theme = 3\n[keymap]\n"write.send" = ""\n')
    with pytest.raises(SettingsError) as err:
        app_for(letterbox)
    assert len(err.value.problems) == 2


async def test_settings_broken_while_the_app_runs_are_shown_with_every_problem(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        letterbox.raw("letterbox-tui.toml", 'theme = 1\n[time]\nid_time_is_utc = "no"\n')
        app.start_scan()
        await until(pilot, lambda: app.scan_error is not None)
        shown = [str(n.message) for n in app._notifications if n.title == "Scan failed"]
        assert shown and "2 problems" in shown[-1]
        assert "theme: must be a string" in shown[-1] and "[time] id_time_is_utc" in shown[-1]
        assert app.model is not None  # the last good scan stays on screen


def test_opening_the_app_on_bad_settings_exits_2_listing_each_problem(letterbox, capsys):
    from letterbox_tui.cli import main

    letterbox.raw("letterbox-tui.toml", 'theme = 1\n[queries]\nq = 2\n')
    code = main(["--root", str(letterbox.root)])
    err = capsys.readouterr().err
    assert code == 2 and err.splitlines()[1:] == ["  theme: must be a string (got 1)", '  [queries] "q": must be a string (got 2)']
    user_config('[keymap]\n"x" = ""\n')
    letterbox.raw("letterbox-tui.toml", "")
    code = main(["--root", str(letterbox.root)])
    assert code == 2 and "config.toml" in capsys.readouterr().err


async def test_saved_queries_that_do_not_parse_are_shown(letterbox):
    letterbox.raw("letterbox-tui.toml", '[queries]\nGood = "type=request"\nBad = "late=maybe"\n')
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        shown = [str(n.message) for n in app._notifications if n.title == "Saved queries"]
        assert len(shown) == 1 and '"Bad": invalid term' in shown[0] and "Good" not in shown[0]


def test_the_users_theme_beats_the_letterboxs_and_theme_beats_both(letterbox):
    letterbox.raw("letterbox-tui.toml", 'theme = "letterbox-high-contrast"\n')
    assert app_for(letterbox).theme == "letterbox-high-contrast"
    user_config('theme = "letterbox-light"\n')
    assert app_for(letterbox).theme == "letterbox-light"
    assert app_for(letterbox, theme="letterbox-dark").theme == "letterbox-dark"

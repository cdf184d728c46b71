"""Theme files: TOML, every colour checked at load, every failure reported at once."""

from __future__ import annotations

from letterbox_tui.app.themes import APP_VARIABLES, load_themes, parse_theme, shipped_themes_dir

from tests.app.helpers import SIZE, app_for


def test_shipped_themes_load_cleanly():
    loaded = load_themes(shipped_themes_dir())
    assert {"letterbox-dark", "letterbox-light", "letterbox-high-contrast"} <= set(loaded.themes)
    assert loaded.errors == []
    for theme in loaded.themes.values():
        assert set(APP_VARIABLES) <= set(theme.variables)


def test_every_bad_colour_is_reported_at_once(tmp_path):
    (tmp_path / "bad.toml").write_text(
        'name = "bad"\nprimary = "not-a-colour"\naccent = "#12345"\n[variables]\nlate = "blurple"\n'
    )
    (tmp_path / "broken.toml").write_text('name = "broken"\nprimary = \n')
    (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#112233"\n')
    loaded = load_themes(tmp_path)
    assert list(loaded.themes) == ["good"]
    text = "\n".join(loaded.errors)
    assert "primary = 'not-a-colour'" in text
    assert "accent = '#12345'" in text
    assert "variables.late = 'blurple'" in text
    assert "broken.toml: not valid TOML" in text
    assert len(loaded.errors) == 4


def test_missing_fields_and_unknown_keys():
    errors: list[str] = []
    assert parse_theme('colour = "#fff"\n', "x.toml", errors) is None
    assert any("name is missing" in e for e in errors)
    assert any("primary is missing" in e for e in errors)
    assert any("unknown key 'colour'" in e for e in errors)


async def test_app_uses_theme_and_falls_back(letterbox, tmp_path):
    app = app_for(letterbox, theme="letterbox-light")
    async with app.run_test(size=SIZE):
        assert app.theme == "letterbox-light"
        assert app.get_css_variables()["late"].upper() == "#C0392B"
    # an unknown theme in the settings file falls back, with a notice
    (letterbox.root / "letterbox-tui.toml").write_text('theme = "no-such-theme"\n')
    app = app_for(letterbox)
    async with app.run_test(size=SIZE):
        assert app.theme == "letterbox-dark"
        assert any("no-such-theme" in e for e in app.theme_errors)


def test_unknown_theme_on_the_command_line_is_one_line_and_exit_2(letterbox, capsys):
    """--theme with a typo is bad input: refused before the app starts."""
    from letterbox_tui.cli import main

    assert main(["--root", str(letterbox.root), "--theme", "no-such-theme"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no-such-theme" in err and "letterbox-light" in err


async def test_user_theme_folder_is_read(letterbox, tmp_path):
    user = tmp_path / "user-themes"
    user.mkdir()
    (user / "mine.toml").write_text('name = "mine"\nprimary = "#010203"\n[variables]\nlate = "#ABCDEF"\n')
    (user / "oops.toml").write_text('name = "oops"\nprimary = "#zzz"\n')
    app = app_for(letterbox, theme="mine", theme_dirs=[shipped_themes_dir(), user])
    async with app.run_test(size=SIZE):
        assert app.theme == "mine"
        assert app.get_css_variables()["late"].upper() == "#ABCDEF"
        assert any("oops.toml" in e for e in app.theme_errors)


async def test_switching_theme_repaints_the_cached_list_rows(letterbox):
    from tests.app.helpers import letters, scanned

    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        lst = letters(app)

        def colours():
            return {seg.style.color.name for seg in lst.render_line(2) if seg.style and seg.style.color}

        before = colours()
        app.theme = "letterbox-light"
        await pilot.pause()
        after = colours()
        assert before != after and "#1e2329" in after  # the light theme's foreground


def test_installed_copy_is_found_when_there_is_no_source_tree(monkeypatch, tmp_path):
    """A plain `pip install .` carries themes/ to <prefix>/share/letterbox-tui/themes."""
    import letterbox_tui.app.themes as themes_mod

    fake_pkg = tmp_path / "site" / "letterbox_tui" / "app" / "themes.py"
    monkeypatch.setattr(themes_mod, "__file__", str(fake_pkg))
    monkeypatch.setattr(themes_mod.sys, "prefix", str(tmp_path / "prefix"))
    assert themes_mod.shipped_themes_dir() == tmp_path / "prefix" / "share" / "letterbox-tui" / "themes"


def test_pyproject_ships_the_themes_folder():
    import tomllib
    from pathlib import Path

    data = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert data["tool"]["setuptools"]["data-files"]["share/letterbox-tui/themes"] == ["themes/*.toml"]


async def test_a_theme_chosen_in_the_app_is_kept_after_restart(letterbox):
    """Chosen in the app (the palette's "Change theme" sets ``app.theme``): written to the
    user's own config.toml, comments and other settings kept, nothing in the letterbox;
    the next start opens with it. The theme the app opened with is never written."""
    import tomllib

    from letterbox_tui.core.settings import user_config_path
    from tests.app.helpers import scanned, until, user_config

    path = user_config("# mine\n[keymap]\n\"app.help\" = \"question_mark\"\n")
    before = sorted(p.name for p in letterbox.root.rglob("*"))
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert "theme" not in tomllib.loads(path.read_text())  # opening wrote nothing
        app.theme = "letterbox-light"
        await until(pilot, lambda: 'theme = "letterbox-light"' in path.read_text())
    text = path.read_text()
    assert text.startswith("# mine") and tomllib.loads(text)["keymap"] == {"app.help": "question_mark"}
    assert path == user_config_path()
    assert sorted(p.name for p in letterbox.root.rglob("*")) == before
    again = app_for(letterbox)
    assert again.theme == "letterbox-light"
    # --theme on the command line wins for the run, and is not written
    once = app_for(letterbox, theme="letterbox-high-contrast")
    async with once.run_test(size=SIZE) as pilot:
        await scanned(pilot, once)
        assert once.theme == "letterbox-high-contrast"
    assert 'theme = "letterbox-light"' in path.read_text()

"""letterbox-tui.toml: defaults, values, and every way it can be unreadable (one-line errors)."""

from __future__ import annotations

import os
import threading

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.scan import scan
from letterbox_tui.core.settings import (
    Settings,
    SettingsError,
    UserSettings,
    load_settings,
    load_user_settings,
    remember_digest_path,
    remembered_digest_path,
    user_config_path,
    write_user_setting,
)


def test_no_file_gives_defaults(box):
    assert load_settings(box.root) == Settings()
    assert Settings().id_time_is_utc is False


def test_all_settings_read(box):
    box.raw(
        "letterbox-tui.toml",
        'theme = "letterbox-dark"\n[time]\nid_time_is_utc = true\n'
        '[queries]\n"Late requests" = "type=request late=yes"\n',
    )
    s = load_settings(box.root)
    assert s == Settings(True, "letterbox-dark", {"Late requests": "type=request late=yes"})


def test_empty_file_gives_defaults(box):
    box.raw("letterbox-tui.toml", "")
    assert load_settings(box.root) == Settings()


def test_unknown_keys_are_ignored_with_a_notice(box):
    box.raw("letterbox-tui.toml", "future = 1\n[time]\nother = 2\n")
    s = load_settings(box.root)
    assert (s.id_time_is_utc, s.theme, s.queries) == (False, "", {})
    assert s.notices == ('unknown setting "future" ignored', 'unknown setting [time] "other" ignored')


def test_the_letterbox_file_never_holds_key_bindings(box):
    """#18 item 11: the shared file cannot rebind keys; it says so and is otherwise used."""
    box.raw("letterbox-tui.toml", '[keymap]\n"write.send" = "escape"\n[queries]\nq = "type=request"\n')
    s = load_settings(box.root)
    assert not hasattr(s, "keymap") and s.queries == {"q": "type=request"}
    assert len(s.notices) == 1 and "[keymap] ignored" in s.notices[0] and "config.toml" in s.notices[0]


def test_every_problem_is_reported_at_once_one_line_each(box):
    box.raw("letterbox-tui.toml", 'theme = 7\n[time]\nid_time_is_utc = "yes"\n[queries]\na = 1\nb = "ok"\nc = [1]\n')
    with pytest.raises(SettingsError) as err:
        load_settings(box.root)
    lines = str(err.value).splitlines()
    assert lines[0].endswith("letterbox-tui.toml: 4 problems")
    assert lines[1:] == [
        "  theme: must be a string (got 7)",
        '  [time] id_time_is_utc: must be true or false (got "yes")',
        '  [queries] "a": must be a string (got 1)',
        '  [queries] "c": must be a string (got [1])',
    ]


def test_problems_never_carry_control_characters(box):
    box.raw("letterbox-tui.toml", '[queries]\n"\\u001b[31mred\\u202e" = 1\n')
    with pytest.raises(SettingsError) as err:
        load_settings(box.root)
    text = str(err.value)
    assert "\x1b" not in text and "\u202e" not in text and "\\u001b[31mred\\u202e" in text


@pytest.mark.parametrize(
    "content,words",
    [
        ("[time]\nid_time_is_utc = 1\n", "id_time_is_utc"),
        ('[time]\nid_time_is_utc = "true"\n', "id_time_is_utc"),
        ("time = 3\n", "[time]: must be a table"),
        ("[queries]\nx = 1\n", "[queries]"),
        ("queries = 'x'\n", "[queries]"),
        ("theme = 7\n", "theme"),
        ("[time\n", "line 1"),
        ("a = \n", "letterbox-tui.toml"),
        ("a = 1\na = 2\n", "letterbox-tui.toml"),
        ('silence = "0d"\n', "silence: expected a count of 1 or more and a unit"),
    ],
)
def test_bad_settings_are_a_one_line_error(box, content, words):
    box.raw("letterbox-tui.toml", content)
    with pytest.raises(LetterboxError) as err:
        load_settings(box.root)
    assert words in str(err.value) and "\n" not in str(err.value)  # one problem: one line
    assert "cannot read settings" in str(err.value)


def test_not_utf8(box):
    box.raw("letterbox-tui.toml", b"theme = '\xff'\n")
    with pytest.raises(LetterboxError):
        load_settings(box.root)


def test_deep_nesting_is_an_error_not_a_recursion_crash(box):
    box.raw("letterbox-tui.toml", "a = " + "[" * 50000 + "]" * 50000 + "\n")
    with pytest.raises(LetterboxError) as err:
        load_settings(box.root)
    assert "nested" in str(err.value) or "line" in str(err.value)


def test_oversized_file_is_refused_not_read_in_part(box):
    # The first MiB alone is valid TOML: reading only that would silently drop the rest.
    path = box.raw("letterbox-tui.toml", "# pad\n" * ((1 << 20) // 6 + 1) + "[time]\nid_time_is_utc = true\n")
    assert path.stat().st_size > 1 << 20
    with pytest.raises(LetterboxError) as err:
        load_settings(box.root)
    assert "larger than" in str(err.value)


def test_directory_in_its_place(box):
    (box.root / "letterbox-tui.toml").mkdir()
    with pytest.raises(LetterboxError) as err:
        load_settings(box.root)
    assert "directory" in str(err.value) or "not a regular file" in str(err.value)


def test_fifo_in_its_place_never_blocks(box):
    os.mkfifo(box.root / "letterbox-tui.toml")
    out = {}

    def run():
        try:
            load_settings(box.root)
        except LetterboxError as exc:
            out["e"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive()
    assert "not a regular file" in str(out["e"])


def test_symlink_is_refused(box, tmp_path):
    (tmp_path / "s.toml").write_text("[time]\nid_time_is_utc = true\n")
    os.symlink(tmp_path / "s.toml", box.root / "letterbox-tui.toml")
    with pytest.raises(LetterboxError):
        load_settings(box.root)


def test_permission_denied_is_an_error(box, monkeypatch):
    box.raw("letterbox-tui.toml", "")
    real_open = os.open

    def deny(path, flags, mode=0o777, *, dir_fd=None):
        if os.fsdecode(path).endswith("letterbox-tui.toml"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(LetterboxError) as err:
        load_settings(box.root)
    assert "Permission denied" in str(err.value)


def test_scan_stops_on_unreadable_settings_unless_told_the_time_rule(box):
    box.letter("a-1")
    box.raw("letterbox-tui.toml", "[time\n")
    with pytest.raises(LetterboxError):
        scan(box.root)
    assert [x.id for x in scan(box.root, id_time_is_utc=False).letters] == ["a-1"]


def test_nul_byte_in_the_root_is_an_error_not_a_valueerror():
    with pytest.raises(LetterboxError):
        load_settings("bad\x00root")


# --- the user's own settings (XDG config) -------------------------------------------------

def test_user_settings_default_when_there_is_no_file():
    s = load_user_settings()
    assert (s.theme, s.keymap, s.digest) == ("", {}, {})
    assert s.path == str(user_config_path()) and "letterbox-tui" in s.path


def test_user_settings_read_and_every_problem_reported(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('theme = "letterbox-light"\n[keymap]\n"letter.reply" = "a,ctrl+y"\n')
    assert load_user_settings(path) == UserSettings("letterbox-light", {"letter.reply": "a,ctrl+y"}, {}, (), str(path))
    path.write_text('theme = 1\n[keymap]\n"letter.reply" = ""\n"x" = "two words"\n[digest]\n"/a" = 2\n')
    with pytest.raises(SettingsError) as err:
        load_user_settings(path)
    assert [line.split(":")[0] for line in str(err.value).splitlines()[1:]] == ["  theme", "  [keymap]", '  [digest] "/a"']


def test_write_user_setting_keeps_comments_and_validates_first(tmp_path):
    path = tmp_path / "deep" / "config.toml"
    write_user_setting("theme", None, "letterbox-light", path=path)
    path.write_text("# mine\n" + path.read_text())
    write_user_setting("keymap", "letter.reply", "a", path=path)
    assert path.read_text().startswith("# mine\n")
    assert load_user_settings(path).keymap == {"letter.reply": "a"}
    before = path.read_bytes()
    with pytest.raises(LetterboxError):
        write_user_setting("keymap", "letter.reply", "not a key", path=path)
    with pytest.raises(LetterboxError):
        write_user_setting("nonsense", None, "x", path=path)
    assert path.read_bytes() == before  # a refused setting writes nothing
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]  # no temporary left
    write_user_setting("keymap", "letter.reply", None, path=path)
    assert load_user_settings(path).keymap == {}


def test_the_digest_path_is_remembered_per_letterbox(box, tmp_path):
    assert remembered_digest_path(box.root) is None
    remember_digest_path(box.root, tmp_path / "truth.md")
    assert remembered_digest_path(box.root) == str(tmp_path / "truth.md")
    assert remembered_digest_path(tmp_path) is None
    assert load_user_settings().digest == {os.path.realpath(box.root): str(tmp_path / "truth.md")}
    remember_digest_path(box.root, None)
    assert remembered_digest_path(box.root) is None


def test_the_fast_path_and_the_model_agree():
    """A plainly right file skips pydantic; what it gives must be what the model gives."""
    from hypothesis import given, settings as hsettings, strategies as st

    from letterbox_tui.core import settings as mod
    from letterbox_tui.core.settings_model import letterbox_settings, user_settings

    value = st.one_of(st.booleans(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
    table = st.dictionaries(st.sampled_from(["a", "id_time_is_utc", "x"]), value, max_size=3)
    doc = st.dictionaries(st.sampled_from(["theme", "time", "queries", "keymap", "digest", "other"]),
                          st.one_of(value, table), max_size=4)

    def outcome(fn, data):
        try:
            return fn(data)
        except SettingsError:
            return "error"

    @hsettings(max_examples=300, deadline=None)
    @given(doc)
    def check(data):
        if mod._plain(data, mod.LETTERBOX_KEYS):
            got = outcome(lambda d: letterbox_settings(d, "p"), data)
            assert got == Settings(data.get("time", {}).get("id_time_is_utc", False), data.get("theme", ""),
                                   dict(data.get("queries", {})))
        if mod._plain(data, mod.USER_KEYS) and mod._keys_plain(data.get("keymap", {})):
            got = outcome(lambda d: user_settings(d, "p"), data)
            assert got == UserSettings(data.get("theme", ""), dict(data.get("keymap", {})), dict(data.get("digest", {})), (), "p")

    check()


def test_saved_queries_that_do_not_parse_are_each_named(box):
    from letterbox_tui.core.settings import saved_query_problems

    box.raw("letterbox-tui.toml", '[queries]\nok = "type=request since=-7d"\nbad = "late=maybe"\n'
                                  'empty = "  "\nquote = "subject~=\'open"\n')
    problems = saved_query_problems(load_settings(box.root))
    assert len(problems) == 3
    assert problems[0].startswith('[queries] "bad": invalid term \'late=maybe\'')
    assert problems[1] == '[queries] "empty": empty query'
    assert problems[2].startswith('[queries] "quote": cannot split')


def test_every_setting_has_a_docstring():
    from pydantic import BaseModel

    from letterbox_tui.core.settings_model import LetterboxSettingsModel, UserSettingsModel

    def walk(model):
        for name, info in model.model_fields.items():
            assert info.description and len(info.description) > 20, f"{model.__name__}.{name}"
            sub = info.default_factory
            if isinstance(sub, type) and issubclass(sub, BaseModel):
                yield from walk(sub)
            yield name

    assert set(walk(LetterboxSettingsModel)) == {"theme", "time", "id_time_is_utc", "queries", "git", "network_timeout",
                                                 "human_seats", "silence", "due_soon", "zone"}
    assert set(walk(UserSettingsModel)) == {"theme", "time", "zone", "keymap", "digest"}


@pytest.mark.parametrize("table", ["keymap", "keys", "bindings", "editor", "pager", "commands"])
def test_nothing_that_changes_a_key_press_is_taken_from_the_letterbox(box, table):
    box.raw("letterbox-tui.toml", f'[{table}]\n"write.send" = "escape"\n')
    s = load_settings(box.root)
    assert s == Settings(notices=s.notices) and "ignored: key bindings and commands" in s.notices[0]

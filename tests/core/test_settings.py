"""letterbox-tui.toml: defaults, values, and every way it can be unreadable (one-line errors)."""

from __future__ import annotations

import os
import threading

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.scan import scan
from letterbox_tui.core.settings import Settings, load_settings


def test_no_file_gives_defaults(box):
    assert load_settings(box.root) == Settings()
    assert Settings().id_time_is_utc is False


def test_all_settings_read(box):
    box.raw(
        "letterbox-tui.toml",
        'theme = "letterbox-dark"\n[time]\nid_time_is_utc = true\n'
        '[queries]\n"Late requests" = "type=request late=yes"\n[keymap]\n"letter.reply" = "R"\n',
    )
    s = load_settings(box.root)
    assert s == Settings(True, "letterbox-dark", {"Late requests": "type=request late=yes"}, {"letter.reply": "R"})


def test_empty_file_gives_defaults(box):
    box.raw("letterbox-tui.toml", "")
    assert load_settings(box.root) == Settings()


def test_unknown_keys_are_ignored(box):
    box.raw("letterbox-tui.toml", "future = 1\n[time]\nother = 2\n")
    assert load_settings(box.root) == Settings()


@pytest.mark.parametrize(
    "content,words",
    [
        ("[time]\nid_time_is_utc = 1\n", "id_time_is_utc"),
        ('[time]\nid_time_is_utc = "true"\n', "id_time_is_utc"),
        ("time = 3\n", "id_time_is_utc"),
        ("[queries]\nx = 1\n", "[queries]"),
        ("queries = 'x'\n", "[queries]"),
        ("[keymap]\nx = []\n", "[keymap]"),
        ("theme = 7\n", "theme"),
        ("[time\n", "line 1"),
        ("a = \n", "letterbox-tui.toml"),
        ("a = 1\na = 2\n", "letterbox-tui.toml"),
    ],
)
def test_bad_settings_are_a_one_line_error(box, content, words):
    box.raw("letterbox-tui.toml", content)
    with pytest.raises(LetterboxError) as err:
        load_settings(box.root)
    assert words in str(err.value) and "\n" not in str(err.value)
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

"""Which letterbox to open (SPEC 2): --root, LETTERBOX_DIR, default-dir, ./.letterbox."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.root import candidate_root, default_dir_file, is_letterbox, resolve_root


def letterbox(path: Path, *, locks: bool = False, seat: str | None = "alpha") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if locks:
        (path / "locks").mkdir()
    if seat:
        (path / seat / "inbox").mkdir(parents=True)
    return path


def write_default_dir(target: str | Path, home: Path | None = None) -> Path:
    dd = default_dir_file() if home is None else home / ".config" / "agent-letterbox" / "default-dir"
    dd.parent.mkdir(parents=True, exist_ok=True)
    dd.write_text(f"{target}\n")
    return dd


@pytest.fixture
def four(tmp_path, monkeypatch):
    """Four letterboxes, one for each rule, and a working directory holding .letterbox."""
    boxes = {name: letterbox(tmp_path / name) for name in ("flag", "env", "file", "cwd/.letterbox")}
    monkeypatch.chdir(tmp_path / "cwd")
    return boxes


def test_root_option_wins(four, monkeypatch):
    monkeypatch.setenv("LETTERBOX_DIR", str(four["env"]))
    write_default_dir(four["file"])
    assert resolve_root(str(four["flag"])) == four["flag"].resolve()
    assert candidate_root(str(four["flag"]))[1] == "--root"


def test_letterbox_dir_second(four, monkeypatch):
    monkeypatch.setenv("LETTERBOX_DIR", str(four["env"]))
    write_default_dir(four["file"])
    assert resolve_root() == four["env"].resolve()
    assert candidate_root()[1] == "LETTERBOX_DIR"


def test_env_mapping_can_be_passed(four):
    assert resolve_root(None, {"LETTERBOX_DIR": str(four["env"])}) == four["env"].resolve()


def test_default_dir_file_third(four):
    dd = write_default_dir(four["file"])
    assert dd == Path(os.environ["HOME"]) / ".config" / "agent-letterbox" / "default-dir"
    assert resolve_root() == four["file"].resolve()
    assert candidate_root()[1] == str(dd)


def test_default_dir_is_one_location_xdg_config_home_when_set(four, monkeypatch, tmp_path):
    """The protocol reads ${XDG_CONFIG_HOME:-$HOME/.config}/agent-letterbox/default-dir only:
    with XDG_CONFIG_HOME set, a file under ~/.config is not read."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-empty"))
    write_default_dir(four["file"], home=Path(os.environ["HOME"]))
    assert resolve_root() == four["cwd/.letterbox"].resolve()
    monkeypatch.setenv("XDG_CONFIG_HOME", "")  # set but empty: as unset
    assert resolve_root() == four["file"].resolve()


def test_default_dir_file_under_xdg_config_home_as_the_protocol_reads_it(four, monkeypatch, tmp_path):
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    (xdg / "agent-letterbox").mkdir(parents=True)
    (xdg / "agent-letterbox" / "default-dir").write_text(f"{four['file']}\n")
    write_default_dir(four["env"], home=Path(os.environ["HOME"]))
    assert resolve_root() == four["file"].resolve()


def test_default_dir_tilde_and_whitespace(four, monkeypatch):
    home = Path(os.environ["HOME"])
    letterbox(home / "lb")
    write_default_dir("  ~/lb  ")
    assert resolve_root() == (home / "lb").resolve()


def test_dot_letterbox_last(four):
    assert resolve_root() == four["cwd/.letterbox"].resolve()
    assert candidate_root() == (Path(".letterbox"), "./.letterbox")


@pytest.mark.parametrize("content", ["", "\n", "   \n"])
def test_empty_default_dir_file_falls_through(four, content):
    dd = write_default_dir("x")
    dd.write_text(content)
    assert resolve_root() == four["cwd/.letterbox"].resolve()


def test_empty_letterbox_dir_falls_through(four, monkeypatch):
    monkeypatch.setenv("LETTERBOX_DIR", "")
    assert resolve_root() == four["cwd/.letterbox"].resolve()


def test_a_rule_that_applies_but_names_no_letterbox_does_not_fall_through(four, monkeypatch, tmp_path):
    (tmp_path / "plain").mkdir()
    monkeypatch.setenv("LETTERBOX_DIR", str(tmp_path / "plain"))
    with pytest.raises(LetterboxError) as err:
        resolve_root()
    assert "LETTERBOX_DIR" in str(err.value)


@pytest.mark.parametrize("make", ["missing", "plain-dir", "file", "seat-without-inbox", "inbox-is-file", "only-processed"])
def test_not_a_letterbox_is_one_line_naming_init_and_demo(tmp_path, make):
    target = tmp_path / "t"
    if make == "plain-dir":
        target.mkdir()
    elif make == "file":
        target.write_text("x")
    elif make == "seat-without-inbox":
        (target / "alpha" / "processed").mkdir(parents=True)
    elif make == "inbox-is-file":
        (target / "alpha").mkdir(parents=True)
        (target / "alpha" / "inbox").write_text("x")
    elif make == "only-processed":
        (target / "Alpha" / "inbox").mkdir(parents=True)  # not a seat name
    with pytest.raises(LetterboxError) as err:
        resolve_root(str(target))
    message = str(err.value)
    assert "\n" not in message
    assert "not a letterbox" in message and "init" in message and "demo" in message
    assert str(target) in message


def test_nothing_configured_and_no_dot_letterbox(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LetterboxError) as err:
        resolve_root()
    assert ".letterbox" in str(err.value) and "init" in str(err.value)


def test_locks_alone_makes_a_letterbox(tmp_path):
    assert is_letterbox(letterbox(tmp_path / "b", locks=True, seat=None))


def test_a_seat_with_an_inbox_makes_a_letterbox(tmp_path):
    assert is_letterbox(letterbox(tmp_path / "b"))


def test_locks_seat_does_not_count_as_a_seat(tmp_path):
    # 'locks' with an inbox is still locks/: a letterbox either way
    assert is_letterbox(letterbox(tmp_path / "b", seat="locks"))


def test_result_is_the_real_path(tmp_path):
    real = letterbox(tmp_path / "real")
    os.symlink(real, tmp_path / "link")
    assert resolve_root(str(tmp_path / "link")) == real.resolve()


def test_relative_root(tmp_path, monkeypatch):
    letterbox(tmp_path / "rel")
    monkeypatch.chdir(tmp_path)
    assert resolve_root("rel") == (tmp_path / "rel").resolve()


def test_nul_byte_in_a_path_is_a_letterbox_error(tmp_path):
    with pytest.raises(LetterboxError) as err:
        resolve_root("bad\x00path")
    assert "\x00" not in str(err.value) and "\\x00" in str(err.value)


def test_control_characters_in_the_path_are_escaped_in_the_message(tmp_path):
    with pytest.raises(LetterboxError) as err:
        resolve_root(str(tmp_path / "x\x1b[31m\nred"))
    message = str(err.value)
    assert "\x1b" not in message and "\n" not in message


def test_default_dir_that_is_a_fifo_never_blocks(tmp_path, monkeypatch, four):
    dd = default_dir_file()
    dd.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(dd)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", resolve_root()), daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "resolve_root blocked on a FIFO default-dir"
    assert out["r"] == four["cwd/.letterbox"].resolve()


def test_huge_default_dir_is_not_read_as_a_path(four):
    dd = write_default_dir("x")
    with open(dd, "wb") as fh:
        fh.truncate(50 << 20)
    assert resolve_root() == four["cwd/.letterbox"].resolve()


def test_default_dir_with_invalid_utf8_does_not_crash(four):
    dd = write_default_dir("x")
    dd.write_bytes(b"/nonexistent/\xff\xfe\n")
    with pytest.raises(LetterboxError) as err:
        resolve_root()
    assert "\\xff" in str(err.value)


def test_an_empty_root_option_is_refused_not_passed_over(four, monkeypatch):
    """``--root "$BOX"`` with BOX unset: the letterbox named elsewhere (LETTERBOX_DIR, the
    default-dir file, ./.letterbox) is never the one opened, nor written to, in its place."""
    monkeypatch.setenv("LETTERBOX_DIR", str(four["env"]))
    with pytest.raises(LetterboxError, match=r"^--root is empty: give the letterbox directory"):
        resolve_root("")
    with pytest.raises(LetterboxError, match=r"^--root is empty"):
        candidate_root("")

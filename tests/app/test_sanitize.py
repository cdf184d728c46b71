"""The one sanitizer: hostile letter text is shown literally, never interpreted."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Static

from letterbox_tui.app.sanitize import clean, clean_str, placeholder

HOSTILE_MARKUP = ["[@click=app.quit]quit[/]", "[bold]loud[/bold]", "[/", "[$accent]x", "[B]", "[link=https://evil]x[/link]"]

HOSTILE_CONTROL = {
    "osc0 title": "\x1b]0;pwned\x07",
    "osc2 title": "\x1b]2;pwned\x1b\\",
    "osc8 link": "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "osc52 clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "csi clear": "\x1b[2J\x1b[H",
    "csi colour": "\x1b[31mred",
    "c1 csi": "\x9b31m",
    "c1 osc": "\x9d0;t\x9c",
    "nul and bell": "a\x00b\x07c",
    "backspace": "abc\x08\x08\x08xyz",
    "lone cr": "safe\rEVIL",
    "del": "x\x7fy",
}

BIDI = ["\u202e", "\u202d", "\u202a", "\u202b", "\u202c", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c"]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@pytest.mark.parametrize("text", HOSTILE_MARKUP)
def test_markup_is_plain_text(text):
    c = clean(text)
    assert isinstance(c, Content)
    assert c.plain == text
    assert not c.spans


@pytest.mark.parametrize("name", sorted(HOSTILE_CONTROL))
def test_control_sequences_become_visible_placeholders(name):
    text = HOSTILE_CONTROL[name]
    out = clean(text).plain
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in out)
    assert not any(0x7F <= ord(ch) <= 0x9F for ch in out)
    assert out != text
    # every dangerous character left a visible mark
    assert "\u241b" in out or "<U+" in out or any(0x2400 <= ord(ch) <= 0x2421 for ch in out)


@pytest.mark.parametrize("ch", BIDI + ZERO_WIDTH)
def test_bidi_and_zero_width_are_shown(ch):
    out = clean(f"a{ch}b").plain
    assert ch not in out
    assert f"<U+{ord(ch):04X}>" in out


def test_placeholders_are_styled_and_newlines_tabs_kept():
    c = clean("line1\n\tline2\x1b")
    assert c.plain == "line1\n\tline2\u241b"
    assert [(s.start, s.end) for s in c.spans] == [(12, 13)]
    assert clean_str("a\r\nb") == "a\nb"
    assert clean("a\nb\tc", single_line=True).plain == "a\u2424b c"


def test_placeholder_table():
    assert placeholder("\x1b") == "\u241b"
    assert placeholder("\x00") == "\u2400"
    assert placeholder("\x7f") == "\u2421"
    assert placeholder("\x9b") == "<U+009B>"


async def test_static_shows_hostile_text_literally():
    """A Static given clean() output shows the brackets; the click action never exists."""
    text = "[@click=app.quit]quit[/] [bold]b[/bold] [$accent]a [/ \x1b]52;c;eA==\x07 \u202eevil"

    class One(App):
        def compose(self) -> ComposeResult:
            yield Static(clean(text), id="s")

    app = One()
    async with app.run_test(size=(120, 5)) as pilot:
        await pilot.pause()
        shown = app.query_one("#s", Static).render()
        plain = shown.plain if hasattr(shown, "plain") else str(shown)
        assert "[@click=app.quit]quit[/]" in plain
        assert "[bold]b[/bold]" in plain
        assert "[$accent]a [/" in plain
        assert "\x1b" not in plain and "\u202e" not in plain
        assert "<U+202E>evil" in plain
        await pilot.click("#s")
        await pilot.pause()
        assert app.is_running  # clicking the text did not run app.quit

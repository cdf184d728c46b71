"""Hostile letters: markup, control sequences, bidi and zero-width characters in headers,
bodies and status notes reach the screen only as visible, literal text."""

from __future__ import annotations

from textual.widgets import Static

from letterbox_tui.app.widgets.letter_pane import LetterPane
from tests.app.helpers import SIZE, app_for, body_of, letters, list_text, scanned, screen_text

EVIL = "2026-11-28T120000-alpha-request-evil-abcdef01"
SUBJECT = "[@click=app.quit]Click me[/] [bold]x \u009b31m \u202eevil\u202c z\u200bw"
BODY = (
    "Hello [@click=app.quit]quit[/] [$accent]accent [/\n"
    "\x1b]0;pwned title\x07 \x1b]52;c;cm0gLXJm\x07 \x1b[2J\x1b[31mred\x1b[0m \x9b1m\n"
    "\x1b]8;;https://evil.example\x1b\\a link\x1b]8;;\x1b\\ and [click](https://evil.example)\n"
    "bidi \u202eolleh\u202c zero\u200bwidth\u2060 tag\U000e0041\n"
)


def _box(box):
    box.letter(EVIL, frm="alpha", to="beta", type="request", requires_ack="true",
               sent="2026-11-28T12:00:00Z", subject=SUBJECT, body=BODY)
    box.letter("2026-11-28T130000-alpha-request-odd-abcdef02", frm="alpha", to="gh\u202eost", seat="beta",
               type="request", requires_ack="true", sent="2026-11-28T13:00:00Z")
    box.raw("beta/status.md", "\x1b]2;owned\x07[@click=app.quit]busy\u202e\n")
    return box


async def test_hostile_text_is_shown_literally_everywhere(box):
    app = app_for(_box(box), letter=EVIL)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).current.letter.id == EVIL
        row = next(r for r in list_text(app) if "Click me" in r)
        assert "[@click=app.quit]Click me[/]" in row
        assert "<U+009B>" in row
        head = app.query_one("#letter-head", Static).render().plain
        assert "[@click=app.quit]Click me[/] [bold]x <U+009B>31m <U+202E>evil<U+202C> z<U+200B>w" in head
        body = await body_of(pilot, app)
        assert "[@click=app.quit]quit[/]" in body and "[$accent]accent [/" in body
        assert "\u241b]52;c;" in body and "\u241b[2J" in body and "<U+009B>1m" in body
        assert "<U+202E>olleh<U+202C>" in body and "zero<U+200B>width<U+2060>" in body
        assert "<U+E0041>" in body
        shown = screen_text(app)
        for bad in ("\x1b", "\x9b", "\x07", "\u202e", "\u200b", "\u2060"):
            assert bad not in shown
        assert "[@click=app.quit]Click me[/]" in shown
        assert "\u241b]2;owned\u2407[@click" in shown  # the seat's status note
        for tab in ("thread", "chain", "provenance"):
            app.action_show_tab(tab)
            await pilot.pause()
            assert "\x1b" not in screen_text(app) and "\u202e" not in screen_text(app)
        prov = app.query_one("#letter-provenance", Static).render().plain
        assert "subject: [@click=app.quit]Click me[/]" in prov
        # clicking on the rendered text runs nothing
        app.action_show_tab("body")
        await pilot.pause()
        await pilot.click("#letter-head")
        await pilot.click("#letters")
        await pilot.pause()
        assert app.is_running
        # the export of the screen carries no raw escape either
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "\x9b" not in svg


async def test_hostile_recipient_in_the_owed_heading(box):
    app = app_for(_box(box))
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        headings = [r.heading.plain for r in letters(app).rows if r.heading is not None]
        assert any("gh<U+202E>ost owes" in h for h in headings)
        assert "\u202e" not in screen_text(app)


async def test_markdown_links_in_a_body_do_not_open(box, monkeypatch):
    opened = []
    app = app_for(_box(box), letter=EVIL)
    monkeypatch.setattr(app, "open_url", lambda url, **kw: opened.append(url))
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        from textual.widgets import Markdown

        await body_of(pilot, app)
        await pilot.press("M")  # the Markdown rendering is mounted when first asked for
        await pilot.pause()
        md = app.query_one("#letter-body", Markdown)
        assert md.display
        md.post_message(Markdown.LinkClicked(md, "https://evil.example"))
        await pilot.pause()
        assert opened == []


async def test_wide_characters_keep_the_columns_aligned(box):
    box.letter("2026-11-28T140000-alpha-info-wide-abcdef03", frm="alpha", to="beta",
               sent="2026-11-28T14:00:00Z", subject="計画の見直し 📦 plan review")
    box.letter("2026-11-28T150000-alpha-info-narrow-abcdef04", frm="alpha", to="beta",
               sent="2026-11-28T15:00:00Z", subject="plain subject")
    app = app_for(box, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        widths = [lst.describe(r, 120).cell_length for r in lst.rows]
        assert len(set(widths)) == 1  # every row is the same width in cells


async def test_a_long_body_is_plain_text_and_bounded(box):
    from letterbox_tui.app.widgets.letter_pane import PLAIN_LIMIT

    body = "".join(f"## Part {i}\n\n[bold]text[/bold] {i}\n\n" for i in range(4000))  # ~100 KiB
    box.letter("2026-11-28T160000-alpha-info-long-abcdef05", frm="alpha", to="beta",
               sent="2026-11-28T16:00:00Z", body=body)
    app = app_for(box, letter="2026-11-28T160000-alpha-info-long-abcdef05")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        pane = app.query_one(LetterPane)
        await body_of(pilot, app)
        assert not pane.body.display and pane.plain_body.display
        shown = pane.plain_body.render().plain
        assert "## Part 0" in shown and "[bold]text[/bold] 0" in shown
        assert f"the first {PLAIN_LIMIT // 1024} KiB are shown" in shown
        assert "## Part 3999" not in shown
        # asked for Markdown, a body this long stays as written, and says so
        await pilot.press("M")
        assert not pane.body.display and pane.plain_body.display
        assert "a long body: shown as written" in pane.body_mode.render().plain


async def test_the_letter_option_takes_a_token(box):
    """``--letter`` takes what every command takes (a token here: SPEC 7 "References")."""
    box.letter("2026-11-28T160000-alpha-info-by-token-abcdef07", frm="alpha", to="beta",
               sent="2026-11-28T16:00:00Z", body="found by its token\n")
    app = app_for(box, letter="abcdef07")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert "found by its token" in await body_of(pilot, app)

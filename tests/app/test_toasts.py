"""Toasts at 80x24 keep the list readable: a strip along the bottom, not half the list;
a long message wraps (whole) rather than being cut; the sidebar's counts stay one line."""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets._toast import Toast

from tests.app.helpers import app_for, scanned, screen_text, until

LONG = ("the letterbox settings name a saved query whose terms could not be parsed: "
        "type=request late=maybe owner=planner-with-a-long-seat-name ends-here")


async def test_a_toast_at_80x24_is_a_low_wide_strip_and_wraps_whole(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await scanned(pilot, app)
        lst = app.letter_list
        app.notify(LONG, title="Saved queries", severity="warning", timeout=30)
        await until(pilot, lambda: app.screen.query(Toast))
        await pilot.pause()
        toast = app.screen.query_one(Toast)
        r = toast.region
        # no more than a quarter of the list's rows, and the message is all there
        assert r.height <= max(4, lst.region.height // 4), r
        assert r.width >= 70
        shown = " ".join(ln.strip("│ ▌▐") for ln in screen_text(app).splitlines())
        assert "ends-here" in shown and "planner-with-a-long-seat-name" in shown



async def test_a_toast_of_several_lines_at_80x24_is_shown_to_its_last_word(letterbox):
    """A titled message of several lines, whose last line wraps (a saved query's error):
    its last words were cut ("late is one of" and no more) because the toast's height was
    worked out for a line two cells wider than the one it was given."""
    from letterbox_tui.app.sanitize import clean

    app = app_for(letterbox, view="all")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await scanned(pilot, app)
        for tail in ("late is one of yes|no|unknown", "late is one of yes|no|unknown, nothing else is read"):
            message = "letterbox-tui.toml:\n[queries] \"Broken\": invalid term 'late=maybe': " + tail
            app.clear_notifications()
            app.notify(clean(message), title="Saved queries", severity="warning", timeout=30)
            await until(pilot, lambda: app.screen.query(Toast))
            await pilot.pause()
            shown = " ".join(ln.strip("│ ▌▐") for ln in screen_text(app).splitlines())
            assert "Saved queries" in shown and tail.split()[-1] in shown, shown

async def test_sidebar_counts_never_wrap(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        mailboxes = app.mailbox_list
        # many new letters and a late count on one line: it fitted only while short
        app.new_counts = lambda: {"view:owed": 12345, "view:all": 12345, "view:problems": 999}
        app._refresh_mailboxes()
        await pilot.pause()
        width = mailboxes.scrollable_content_region.width
        for i in range(mailboxes.option_count):
            option = mailboxes.get_option_at_index(i)
            if option.id and option.id.startswith("view:"):
                assert "\n" not in option.prompt.plain
                assert option.prompt.cell_length <= width, option.prompt.plain


async def test_sidebar_lines_are_fitted_to_the_width_left_by_its_scrollbar(letterbox):
    """The sidebar scrolls at 160x24 (a seat takes several lines): its lines are fitted to
    the width beside the scrollbar from the first fill, not to the width before the
    scrollbar came (their last cells were then folded out of sight)."""
    app = app_for(letterbox, view="all")
    app.new_counts = lambda: {"view:owed": 12345, "view:all": 12345, "view:problems": 999}
    async with app.run_test(size=(160, 24)) as pilot:
        await scanned(pilot, app)
        await pilot.pause()
        mailboxes = app.mailbox_list
        assert mailboxes.show_vertical_scrollbar
        width = mailboxes.scrollable_content_region.width
        lines = [line for i in range(mailboxes.option_count)
                 for line in mailboxes.get_option_at_index(i).prompt.plain.split("\n")]
        assert all(cell_len(line) <= width for line in lines), [x for x in lines if cell_len(x) > width]


async def test_sidebar_counts_of_a_big_letterbox_fit_whole_numbers(letterbox):
    """At 100,000 letters Owed & late said "16.5k · 11.…": the late count was cut in the
    middle of its number. A count too long for its line is said shorter, never cut."""
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        m = app.model
        m.counts.update({"view:owed": 16543, "view:problems": 16543, "view:all": 100_000})
        m.late_count, m.warning_count = 11234, 16543
        for fresh in ({}, {"view:owed": 1234, "view:problems": 1234}):
            app.new_counts = lambda fresh=fresh: fresh
            app._refresh_mailboxes()
            await pilot.pause()
            mailboxes = app.mailbox_list
            width = mailboxes.scrollable_content_region.width
            shown = {}
            for i in range(mailboxes.option_count):
                option = mailboxes.get_option_at_index(i)
                if option.id and option.id.startswith("view:"):
                    text = option.prompt.plain
                    assert cell_len(text) <= width and "…" not in text, text
                    shown[option.id] = text
            assert shown["view:owed"].split()[-2:] == ["11k", "late"], shown
            assert "16" in shown["view:owed"] and "100k" in shown["view:all"]
            assert shown["view:problems"].split()[-2:] == ["16k", "warn"], shown

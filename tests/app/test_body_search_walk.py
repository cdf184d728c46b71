"""``F`` then ``n``/``N``: a body search walks its matches as less does, across the
matching letters, highlighted (styles on sanitized text), "match k of N" said, and a
wrap around said."""

from __future__ import annotations

import pytest

from letterbox_tui.app.screens.body_search import BodySearchScreen
from tests.app.helpers import app_for, body_searched, scanned, until

ONE = "2026-11-27T090000-planner-info-notes-ffff0011"
TWO = "2026-11-27T100000-planner-info-more-ffff0012"


def _two_letters(box):
    box.letter(ONE, frm="planner", to="builder", sent="2026-11-27T09:00:00Z", subject="Notes",
               body="the zebra is here\n" + "filler line\n" * 60 + "a second Zebra [b]at the end[/b]\n")
    box.letter(TWO, frm="planner", to="builder", sent="2026-11-27T10:00:00Z", subject="More",
               body="one more zebra\n")
    return box


def _match_styles(pane) -> list[tuple[str, str]]:
    text = pane.plain_body.visual
    return [(text.plain[s.start:s.end], str(s.style)) for s in text.spans if "reverse" in str(s.style)]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_n_and_N_walk_every_body_match_highlighted_and_say_k_of_n(letterbox, size):
    app = app_for(_two_letters(letterbox), view="all")
    async with app.run_test(size=size) as pilot:
        await scanned(pilot, app)
        await pilot.press("F")
        await until(pilot, lambda: isinstance(app.screen, BodySearchScreen))
        screen = app.screen
        await pilot.press(*"zebra", "enter")
        await until(pilot, lambda: not screen.running and screen.found)
        first = screen.found[0]
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not screen)
        walk = app.body_matches
        assert walk is not None and walk.total == 3
        pane = app.letter_pane
        order = [(x.id, n) for x, c in zip(walk.letters, walk.counts) for n in range(c)]
        assert order[0][0] == first.id
        seen = []
        for k in range(3):
            letter_id, nth = order[k]
            await until(pilot, lambda: pane.letter is not None and pane.letter.id == letter_id
                        and pane.body_key == pane.shown_key and _match_styles(pane))
            styles = _match_styles(pane)
            # every match of this body is highlighted, the current one apart; the
            # letter's own brackets stay text (never markup)
            assert [t.casefold() for t, _ in styles] == ["zebra"] * len(styles)
            current = [t for t, st in styles if "bold" in st]
            assert len(current) == 1 and styles.index(next(s for s in styles if "bold" in s[1])) == nth
            assert f"match {k + 1} of 3" in app.query_one("#status").render().plain
            assert f"match {k + 1} of 3" in pane.body_mode.visual.plain
            seen.append((letter_id, nth))
            if letter_id == ONE and nth == 1:
                assert "[b]at the end[/b]" in pane.plain_body.visual.plain
                # the second match is at the end of a long body: scrolled to it
                scroll = pane.query_one("#body-scroll")
                await until(pilot, lambda: scroll.scroll_y > 0)
            if k < 2:
                await pilot.press("n")
        assert seen == order
        notes = []
        app.notify = lambda message, **kw: notes.append(str(message))
        await pilot.press("n")  # past the last match: wraps to the first, and says so
        assert walk.at == 0 and any("Wrapped" in n and "first" in n for n in notes)
        await pilot.press("N")
        assert walk.at == 2 and any("last" in n for n in notes[1:])
        await until(pilot, lambda: pane.letter.id == order[2][0])
        # Esc back in the list, then Esc: the walk ends and the highlights go
        await pilot.press("escape", "escape")
        assert app.body_matches is None
        await until(pilot, lambda: not _match_styles(pane))


async def test_results_keep_one_line_each_once_the_list_scrolls(letterbox):
    """At 80x24 the results overflow the screen: a scrollbar appears after the first few,
    and the results listed before it were cut to the width without it, so their matching
    line wrapped into a stray line under it ("line 1: Running late ... the p99" then "ru…")."""
    for i in range(12):
        letterbox.letter(f"2026-11-27T09{i:02d}00-planner-info-long-{i:08x}", frm="planner", to="builder",
                         sent=f"2026-11-27T09:{i:02d}:00Z", subject=f"Long {i}",
                         body="Running late on the zebra benchmarks: two more days for the p99 runs, "
                              "and the cost table after that one\n")
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        screen = await body_searched(pilot, app, "zebra")
        assert len(screen.found) == 12
        await pilot.pause()
        results = screen.query_one("#bs-results")
        assert results.max_scroll_y > 0  # (the list scrolls: its scrollbar is up)
        room = results.scrollable_content_region.width
        for i in range(results.option_count):
            lines = results.get_option_at_index(i).prompt.plain.split("\n")
            assert len(lines) == 2 and all(len(line) <= room for line in lines), (room, lines)


async def test_the_status_line_quotes_the_body_search_and_keeps_its_count_at_80(letterbox):
    """The status line said the search text bare ("body search zebra is here match 1 of
    1"): a text with spaces or " · " read as more of the line, and a long one pushed
    "match k of N" off an 80-column line. It is quoted, one line, shortened to fit."""
    long = "zebra is here and " + "very " * 12 + "long"
    letterbox.letter(ONE, frm="planner", to="builder", sent="2026-11-27T09:00:00Z", subject="Notes",
                     body=f"the {long} line · 3 rows\n")
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        for needle, shown in (("zebra is here", '"zebra is here"'), ("line · 3 rows", '"line · 3 rows"'),
                              (long, '"zebra is here and v…"')):
            await pilot.press("F")
            await until(pilot, lambda: isinstance(app.screen, BodySearchScreen))
            screen = app.screen
            screen.query_one("#bs-input").value = needle
            await pilot.press("enter")
            await until(pilot, lambda: not screen.running and screen.found)
            await pilot.press("enter")
            await until(pilot, lambda: app.screen is not screen and app.body_matches is not None)
            await pilot.press("escape")  # (back in the list)
            status = app.query_one("#status").render().plain
            assert f"body search {shown}" in status and "match 1 of 1" in status, status
            assert len(status.rstrip()) <= 80


async def test_F_right_after_a_view_is_chosen_searches_that_view_once_it_is_built(letterbox):
    """``4F`` typed fast (All letters is built the first time it is opened): F came while
    the view was still being built and said "No letters in this view to search.", and the
    text typed for the search went to the list as keys (its s opened a supersede form)."""
    from tests.app.test_write_keys import at_once

    app = app_for(_two_letters(letterbox))  # Owed & late first: All is not built yet
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await scanned(pilot, app)
        await at_once(pilot, "4F")
        await until(pilot, lambda: isinstance(app.screen, BodySearchScreen))
        assert len(app.screen.letters) == len(app.model.snapshot.letters)
        assert not any("No letters" in str(n.message) for n in app._notifications)

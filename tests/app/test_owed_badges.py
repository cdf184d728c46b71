"""Triage in the app (issue 24 part 3): Owed & late shows each row's attention codes as
badges with their age, folded into one column of symbols on a narrow list; ``a``/``A``
cycle a filter by code and Esc clears it; the status line counts each code; the view opens
on the first row of the most urgent code; the columns stay aligned under a header whatever
a row holds (issue 26); help has the legend. Snapshots at 80x24 and 160x48.

The letterbox, at the app tests' clock (NOW, 2026-11-29T15:00Z); alpha asks, simon is a
person's seat (``human_seats``)::

    beta   quiet        never-acked 2d
           unread-ack   accepted-silent unknown (its ack sidecar cannot be read)
    gamma  soon         never-acked 1d, owner-blocked 4d (a hostile status note), due-soon
    simon  overdue      late 3d, accepted-silent 5d, waiting-on-human 10d
           asked        waiting-on-human 3d, chased 6h
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from letterbox_tui.app.owed_rows import (BADGES, age, badge, badges, counts_text, fit, next_code, symbol,
                                         symbols)
from letterbox_tui.app.screens.help import HelpScreen
from letterbox_tui.app.themes import shipped_themes_dir
from letterbox_tui.core.views.attention import CODES, Code
from tests.app.helpers import app_for, home_root, letters, reads_done, scanned, until
from tests.app.letterboxes import NOW
from tests.conftest import make_box


HOSTILE = "waiting on [@click=app.quit]quota[/] \x1b[31mnow"


def z(days: float = 0, hours: float = 0) -> str:
    """NOW moved by ``days`` and ``hours``, as a header writes it."""
    return (NOW + timedelta(days=days, hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def triage(root: Path):
    box = make_box(root, "alpha", "beta", "gamma", "simon")
    box.raw("letterbox-tui.toml", 'human_seats = ["simon"]\n')

    def ask(name, to, sent, **fields):
        box.letter(name, frm="alpha", to=to, type="request", requires_ack="true", sent=sent,
                   subject=name, **fields)

    ask("quiet", "beta", z(-2))
    ask("unread-ack", "beta", z(-9), deadline=z(11))
    (root / "beta" / "inbox" / "unread-ack.md.ack").mkdir()  # present (accepted), cannot be read
    ask("soon", "gamma", z(-1), deadline=z(hours=6))
    box.raw("gamma/status.md", f"state: blocked\nsince: {z(-4)}\nnotes: {HOSTILE}\n")
    ask("overdue", "simon", z(-10), deadline=z(-3))
    box.raw("simon/inbox/overdue.md.ack", f"acked_at: {z(-5)}\n")
    ask("asked", "simon", z(-3))
    box.raw("simon/inbox/asked.md.ack", f"acked_at: {z(hours=-12)}\n")
    box.letter("asked--chase", frm="alpha", to="simon", type="info", re="asked", thread="asked", sent=z(hours=-6))
    return box


@pytest.fixture
def box(tmp_path):
    return triage(tmp_path / "box")


def rows_by_subject(app) -> dict[str, object]:
    return {r.letter.subject: r for r in letters(app).rows if r.heading is None and r.letter is not None}


def line(app, subject: str, width: int) -> str:
    lst = letters(app)
    return lst.describe(rows_by_subject(app)[subject], width).plain


def status(app) -> str:
    return app.query_one("#status").render().plain


def shown(app) -> list[str]:
    return [r.letter.subject for r in letters(app).rows if r.heading is None and r.letter is not None]


# --- the badges, without an app ----------------------------------------------------------

AT = datetime(2026, 11, 29, 15, 0, tzinfo=timezone.utc)


def test_a_badge_says_its_code_and_age_and_unknown_is_never_dropped():
    assert badge(Code("late", AT - timedelta(days=3, hours=5), "…"), AT).plain == "LATE 3d"
    assert badge(Code("never-acked", AT - timedelta(hours=2, minutes=59), "…"), AT).plain == "NO-ACK 2h"
    assert badge(Code("late-unknown", None, "late is unknown: …"), AT).plain == "LATE?"  # no time on record
    unknown = badge(Code("accepted-silent", None, "unknown: the sidecar cannot be read", True), AT)
    assert unknown.plain == "SILENT ?" and unknown.spans[-1].style == "$unknown"
    assert symbol(Code("accepted-silent", None, "unknown: …", True)).plain == "s"
    assert symbol(Code("accepted-silent", AT, "")).plain == "S"
    # a code this version has no badge for is shown by its own name, never dropped
    foreign = Code("stalled[/]", AT - timedelta(minutes=5), "")
    assert badge(foreign, AT).plain == "STALLED[/] 5m" and symbol(foreign).plain == "*"
    assert set(BADGES) == set(CODES) and len({b.symbol for b in BADGES.values()}) == len(CODES)
    assert age(AT + timedelta(hours=2), AT) == "-2h"


def test_badges_fit_their_column_and_say_how_many_did_not():
    codes = tuple(Code(c, AT - timedelta(days=1), "") for c in ("late", "never-acked", "owner-blocked", "chased"))
    assert badges(codes, AT, 60).plain == "LATE 1d  NO-ACK 1d  BLOCKED 1d  CHASED 1d"
    assert badges(codes, AT, 30).plain == "LATE 1d  NO-ACK 1d  +2"
    assert symbols(codes, 4).plain == "!NBC"
    assert symbols(codes, 3).plain == "!N+"
    assert fit([], 10).plain == ""


def test_the_filter_cycles_through_the_codes_present_then_none():
    present = ["late", "never-acked", "chased"]
    assert next_code(present, None) == "late"
    assert next_code(present, "late") == "never-acked"
    assert next_code(present, "chased") is None  # past the last: the filter is cleared
    assert next_code(present, None, -1) == "chased"
    assert next_code(present, "owner-idle") == "late"  # a code gone since: start again


def test_counts_name_each_code_present_with_its_unknowns():
    counts = {code: {"known": 0, "unknown": 0} for code in CODES}
    counts["late"]["known"] = 2
    counts["never-acked"] |= {"known": 4, "unknown": 1}
    assert counts_text(counts).plain == "LATE 2  NO-ACK 5 (1?)"
    assert counts_text(counts, narrow=True).plain == "!2 N5(1?)"


# --- in the app ----------------------------------------------------------------------------

async def test_rows_show_badges_aligned_under_a_header_and_the_status_counts_codes(box):
    app = app_for(box)
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        await reads_done(pilot, app)
        wide = 125
        assert "LATE 3d  SILENT 5d  HUMAN 10d" in line(app, "overdue", wide)
        assert "NO-ACK 2d" in line(app, "quiet", wide)
        assert "NO-ACK 1d  BLOCKED 4d  SOON 18h" in line(app, "soon", wide)
        assert "HUMAN 3d  CHASED 6h" in line(app, "asked", wide)
        assert "SILENT ?" in line(app, "unread-ack", wide)  # its record cannot be read: unknown, not dropped
        # below 110 columns the badges fold into one column of symbols
        narrow = {s: line(app, s, 77) for s in ("overdue", "quiet", "soon", "asked", "unread-ack")}
        assert [t.split()[3] for t in (narrow["overdue"], narrow["asked"])] == ["!SH", "HC"]
        assert " NBD " in narrow["soon"] and " s " in narrow["unread-ack"] and " N " in narrow["quiet"]
        assert not any("NO-ACK" in t for t in narrow.values())
        # every column starts where the header says, whatever a row holds (issue 26: the
        # subject and the parties moved when a row had a reason or progress beside it)
        header = app.query_one("#list-columns").render().plain
        lst = letters(app)
        width = lst.scrollable_content_region.width - 1
        for r in (r for r in lst.rows if r.heading is None):
            text = lst.describe(r, width).plain  # (drawn one cell in, after the mark column)
            assert text[header.index("attention") - 1:].startswith(BADGES[r.item.attention[0].code].word)
            assert text[header.index("subject") - 1:].startswith(r.letter.subject)
            assert text[header.index("from→to") - 1:].startswith("alpha→")
        # the status line counts each code present, its unknowns too
        assert ("LATE 1  NO-ACK 2  SILENT 2 (1?)  BLOCKED 1  SOON 1  HUMAN 2  CHASED 1") in status(app)
        # the letter pane spells each code out, the status note's words sanitized
        assert letters(app).current.letter.subject == "overdue"
        lst.cursor = next(i for i, r in enumerate(lst.rows) if r.letter is not None and r.letter.subject == "soon")
        await until(pilot, lambda: app.letter_pane.letter is not None and app.letter_pane.letter.subject == "soon")
        head = app.query_one("#letter-head").render().plain
        assert "Attention NO-ACK 1d" in head and "gamma's status: blocked since" in head
        assert "[@click=app.quit]quota[/] ␛[31mnow" in head and "\x1b" not in head
        # the legend in help names every code's badge and symbol
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen.is_mounted)
        legend = app.screen.query_one("#help-text").render().plain
        for code, b in BADGES.items():
            assert f"  {b.symbol}  {b.word:<8} {code}:" in legend
        await pilot.press("Q")


async def test_a_cycles_a_filter_by_code_shown_in_the_title_and_status_and_esc_clears_it(box):
    app = app_for(box)
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        everything = shown(app)
        assert len(everything) == 5
        counts = status(app)[status(app).index("LATE 1"):]
        seen = []
        for _ in CODES:
            await pilot.press("a")
            if app.owed_code is None:
                break
            seen.append(app.owed_code)
            carrying = [s for s, r in rows_by_subject(app).items()]
            assert carrying and all(any(c.code == app.owed_code for c in rows_by_subject(app)[s].item.attention)
                                    for s in carrying)
            word = BADGES[app.owed_code].word
            assert f"only {word} ({app.owed_code})" in app.list_title.render().plain
            assert f"only {word}" in status(app)  # (by its word alone when the line is short of room)
            assert counts in status(app)  # the counts stay the whole view's
            assert letters(app).current.item.attention  # the cursor on an item carrying it
        # through every code present, most urgent first, then no filter
        assert seen == ["late", "never-acked", "accepted-silent", "owner-blocked", "due-soon", "waiting-on-human", "chased"]
        assert app.owed_code is None and shown(app) == everything and "no filter" in status(app)
        await pilot.press("a", "a")
        assert app.owed_code == "never-acked" and sorted(shown(app)) == ["quiet", "soon"]
        await pilot.press("o")  # the other order keeps the filter
        assert sorted(shown(app)) == ["quiet", "soon"]
        assert "2 with NO-ACK" in letters(app).rows[0].heading.plain
        await pilot.press("o", "A")
        assert app.owed_code == "late" and shown(app) == ["overdue"]
        assert letters(app).current.letter.subject == "overdue"
        await pilot.press("A")
        assert app.owed_code is None
        await pilot.press("A")
        assert app.owed_code == "chased" and shown(app) == ["asked"]
        await pilot.press("escape")
        assert app.owed_code is None and shown(app) == everything
        assert "only" not in app.list_title.render().plain
        await pilot.press("4", "a")  # elsewhere, a says what it is for
        assert any("arrange Owed & late" in str(n.message) for n in app._notifications)
        await pilot.press("Q")


async def test_the_view_opens_on_the_first_row_of_the_most_urgent_code(tmp_path):
    """Nothing is late: never-acked is the most urgent code present, so the list opens on
    the task nobody acked, though another seat's task is due sooner (the most overdue first
    opened on that one)."""
    box = make_box(tmp_path / "box", "alpha", "beta", "gamma")
    box.letter("due-first", frm="alpha", to="beta", type="request", requires_ack="true", sent=z(-1),
               deadline=z(hours=5), subject="due first")
    box.raw("beta/inbox/due-first.md.ack", f"acked_at: {z(hours=-2)}\n")
    box.letter("nobody-acked", frm="alpha", to="gamma", type="request", requires_ack="true", sent=z(-3),
               deadline=z(4), subject="nobody acked")
    box.letter("also-unacked", frm="alpha", to="gamma", type="request", requires_ack="true", sent=z(-3),
               subject="also unacked")
    app = app_for(box)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        assert shown(app) == ["due first", "nobody acked", "also unacked"]
        assert letters(app).current.letter.subject == "nobody acked"
        assert status(app).endswith("by owing seat · no filter · 3 rows · UTC · NO-ACK 2  SOON 1")  # 80 columns
        await pilot.press("Q")


# --- snapshots -------------------------------------------------------------------------------

@pytest.fixture
def fixed_box():
    root = home_root("letterbox-tui-snapshot-attention")
    return triage(root)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_owed_badges_snapshot(snap_compare, fixed_box, size):
    async def run_before(pilot):
        await scanned(pilot, pilot.app)
        await reads_done(pilot, pilot.app)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(app_for(fixed_box, theme_dirs=[shipped_themes_dir()]), terminal_size=size,
                        run_before=run_before)


async def test_a_long_owed_list_holds_every_row_scrolls_to_the_last_and_a_filter_counts_all(tmp_path):
    """Many more owed tasks than a screen: the list holds a row for each (and the status
    line counts them all, not what is drawn), G reaches and draws the last, and a filter by
    code counts every task carrying it, drawn or not."""
    box = make_box(tmp_path / "box", "alpha", "beta", "gamma")
    for i in range(120):  # beta: 120 tasks nobody acked, gamma: 60 late ones
        box.letter(f"unacked-{i:03d}", frm="alpha", to="beta", type="request", requires_ack="true",
                   sent=z(-2, hours=-i / 10), subject=f"unacked {i:03d}")
    for i in range(60):
        box.letter(f"late-{i:03d}", frm="alpha", to="gamma", type="request", requires_ack="true",
                   sent=z(-9), deadline=z(-1, hours=-i / 10), subject=f"late {i:03d}")
    app = app_for(box)
    async with app.run_test(size=(100, 30)) as pilot:
        await scanned(pilot, app)
        assert len(shown(app)) == 180 and len(set(shown(app))) == 180
        assert "180 rows" in status(app) and "LATE 60" in status(app) and "NO-ACK 180" in status(app)
        lst = letters(app)
        await pilot.press("G")
        await pilot.pause()
        last = lst.rows[lst.cursor]
        assert lst.cursor == len(lst.rows) - 1 and last.letter.subject == shown(app)[-1]
        assert any(last.letter.subject in lst.render_line(y).text for y in range(lst.size.height))
        await pilot.press("a")  # the most urgent code present: late
        await pilot.pause()
        assert "only" in app.list_title.render().plain and "60 rows" in status(app)
        assert sorted(shown(app)) == [f"late {i:03d}" for i in range(60)]
        await pilot.press("escape")
        await pilot.pause()
        assert len(shown(app)) == 180


async def test_a_long_lists_header_allows_for_the_scrollbar_from_the_first_draw(tmp_path):
    """Owed & late opened on more rows than fit: its column header is drawn at once for the
    width the rows get beside their scrollbar, not for the width before the scrollbar came
    (the header stood two cells off its columns until the next redraw: up to a second at
    100,000 letters)."""
    box = make_box(tmp_path / "box", "alpha", "beta")
    for i in range(60):
        box.letter(f"unacked-{i:03d}", frm="alpha", to="beta", type="request", requires_ack="true",
                   sent=z(-2, hours=-i / 10), subject=f"unacked {i:03d}")
    app = app_for(box, view="disputes")  # a short list first: no scrollbar
    async with app.run_test(size=(160, 30)) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        assert not lst.show_vertical_scrollbar
        drawn = []
        update = app._update_columns

        def recorded():
            update()
            drawn.append(app._columns_for[0])

        app._update_columns = recorded
        app.action_view("owed")
        first = drawn[0]  # drawn with the rows, before any layout
        await pilot.pause()
        await pilot.pause()
        assert lst.show_vertical_scrollbar
        assert first == lst.scrollable_content_region.width - 1 == app._columns_for[0]

"""The #14 journeys as a new user does them, key by key (found in tmux at 80x24 and
160x48): each test is one journey, and each assertion a surprise that was fixed."""

from __future__ import annotations

import pytest

from tests.app.helpers import SIZE, app_for, body_of, letters, scanned, screen_text, sent_with, until, view_built

BUDGET = "2026-11-21T090000-builder-request-budget-aaaa0004"
LATE_WORD = "2026-11-26T090000-planner-info-budget-eeee0001"


def _with_a_reply(box):
    box.letter(LATE_WORD, frm="planner", to="builder", type="info", re=BUDGET, thread=BUDGET,
               sent="2026-11-26T09:00:00Z", subject="Approve the budget", body="Two more days, please.\n")
    return box


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_morning_review_follows_the_thread_and_q_comes_back(letterbox, size):
    """Owed & late opens on the most urgent row; Enter reads it; ] Thread, j, Enter reads
    the reply without leaving Owed & late; h reads its parent; q goes back to the list
    where it was (it quit the app: nothing had focus after Enter in the Thread tab)."""
    app = app_for(_with_a_reply(letterbox))
    async with app.run_test(size=size) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        assert app.mailbox_id == "view:owed" and lst.current.letter.id == BUDGET  # most overdue
        # what it waits on shows as badges on a wide row (the deadline column says LATE 4d 3h,
        # the badge LATE 4d): late, and not never-acked, since planner wrote back though
        # nobody acked it; a narrow row folds the badges into symbols
        wide, narrow = lst.describe(lst.current, 160).plain, lst.describe(lst.current, 80).plain
        assert wide.count("LATE 4d") == 2 and "NO-ACK" not in wide
        assert narrow.count("LATE 4d") == 1
        await pilot.press("enter")
        assert app.focused.id == "body-scroll"
        await pilot.press("right_square_bracket")
        tv = app.letter_pane.thread_view
        assert app.focused is tv and tv.highlighted_letter.id == BUDGET
        await pilot.press("j", "enter")
        await until(pilot, lambda: app.letter_pane.letter.id == LATE_WORD)
        assert "Two more days" in await body_of(pilot, app)
        assert app.focused.id == "body-scroll", "reading the reply keeps the keys in the pane"
        assert app.mailbox_id == "view:owed" and lst.current.letter.id == BUDGET, "the list stays where it was"
        assert app.selected_letter().id == LATE_WORD  # r, d, s, e and | act on the letter read
        await pilot.press("h")  # to the letter it replies to
        await until(pilot, lambda: app.letter_pane.letter.id == BUDGET)
        await pilot.press("q")
        assert app.is_running and app.focused is lst
        assert app.mailbox_id == "view:owed" and lst.current.letter.id == BUDGET
        assert app.letter_pane.letter.id == BUDGET
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_q_with_nothing_focused_goes_to_the_list_not_out(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        app.set_focus(None)
        await pilot.press("q")
        assert app.is_running and app.focused is letters(app)


DISPUTE2 = "2026-11-26T090000-reviewer-dispute-plans-cccc0002"


def _status(app) -> str:
    return app.query_one("#status").render().plain


def _row_of(app, letter_id):
    return next(r for r in letters(app).rows if r.letter is not None and r.letter.id == letter_id and r.heading is None)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_a_dispute_and_its_ruling(letterbox, size):
    """Mark the letters an open dispute names, d: the form warns (the marks are counted on
    the status line: a toast covered the form's buttons at 80x24); send; the letter you
    wrote is neither announced nor marked new; Open disputes says its real order; u
    focuses Upholds (it focused Slug); the ruled dispute leaves Open disputes and looks
    ruled in All, the duplicate stays open."""
    from textual.widgets import Select

    from letterbox_tui.app.screens.write import WriteScreen

    app = app_for(letterbox, view="all")
    async with app.run_test(size=size) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        named = set(next(x for x in app.model.snapshot.letters if x.id == DISPUTE2).disputes)
        for key in [r.key for r in lst.rows if r.letter is not None and r.letter.id in named]:
            lst.cursor = lst.index_of(key)
            await pilot.press("m")
        assert "2 marked" in _status(app) and len(_status(app)) <= size[0]
        before = len(app._notifications)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        screen = app.screen
        assert "An open dispute already names these letters" in screen.query_one("#w-warn").render().plain
        await until(pilot, lambda: not screen.query_one("#w-send").disabled)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        written = screen.written or next(iter(app.seen.written))
        await scanned(pilot, app, count=2)
        mine = _row_of(app, written)
        assert not app.is_fresh(mine), "the letter you wrote is not new to you"
        assert not any("new letter" in str(n.title) for n in list(app._notifications)[before:])
        assert "marked" not in _status(app)

        await pilot.press("2")
        await view_built(pilot, app)
        assert "oldest dispute first" in _status(app)
        assert "· 2 disputes" in _status(app)  # not the rows of the letters they name
        shown = [r.letter.id for r in lst.rows if r.letter is not None and r.letter.type == "dispute"]
        assert shown == sorted(shown) and shown[-1] == written  # oldest first, as the status says
        lst.cursor = lst.index_of(_row_of(app, DISPUTE2).key)
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        screen = app.screen
        assert app.focused.id == "w-upholds", "the ruling's one choice has the keys"
        upholds = screen.query_one("#w-upholds", Select)
        upholds.value = sorted(named)[0]
        await until(pilot, lambda: not screen.query_one("#w-send").disabled)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        await scanned(pilot, app, count=3)
        assert DISPUTE2 not in {r.letter.id for r in lst.rows if r.letter is not None}
        assert written in {r.letter.id for r in lst.rows if r.letter is not None}, "the duplicate is still open"
        await pilot.press("4")
        text = lst.describe(_row_of(app, DISPUTE2), 120).plain
        assert text.startswith("✓") and "ruled" in text
        assert "OPEN dispute" in lst.describe(_row_of(app, written), 120).plain


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_compose_a_request_with_a_deadline_reply_and_supersede(letterbox, size):
    """c writes as the auditor (it wrote as the first seat by name, an agent's); a relative
    deadline is read back to the second (it showed microseconds); the past-deadline
    question answers to one key (only Tab reached its buttons); the letter written gets
    the cursor; r replies as its recipient; s starts from the old body (it started
    empty) and, once sent, the cursor is on the new version (it fell on the heading)."""
    from textual.widgets import Input, Select, TextArea

    from letterbox_tui.app.screens.choice import ChoiceScreen
    from letterbox_tui.app.screens.write import WriteScreen

    async def form(key):
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        await pilot.pause()
        return app.screen

    async def sent(screen, count):
        await until(pilot, lambda: not screen.query_one("#w-send").disabled)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        await scanned(pilot, app, count=count)

    app = app_for(letterbox)
    async with app.run_test(size=size) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        screen = await form("c")
        assert screen.query_one("#w-as", Select).value == "reviewer"  # wrote the last review and ruling
        assert app.focused.id == "w-to"
        screen.query_one("#w-to", Select).value = "builder"
        screen.query_one("#w-slug", Input).value = "vendor-choice"
        screen.query_one("#w-deadline", Input).value = "-1d"
        screen.query_one("#w-body", TextArea).text = "Which vendor? Decide by Friday.\n"
        await pilot.pause()
        shown = screen.query_one("#w-error").render().plain
        assert "-1d = 2026-11-28T15:00:00+00:00" in shown and "1d ago" in shown
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert "Send anyway (s)" in str(app.screen.query_one("#choice-send").label)
        await pilot.press("s")
        await until(pilot, lambda: not isinstance(app.screen, (WriteScreen, ChoiceScreen)))
        await scanned(pilot, app, count=2)
        first = lst.current.letter
        assert "-request-vendor-choice-" in first.id
        assert first.deadline_at is not None and app.mailbox_id == "view:owed"

        screen = await form("r")
        assert screen.query_one("#w-as", Select).value == "builder"
        screen.query_one("#w-body", TextArea).text = "On it.\n"
        await sent(screen, 3)
        assert lst.current.letter is not None and lst.current.letter.id == first.id  # the ack is not owed

        await until(pilot, lambda: app.letter_pane.body_text.startswith("Which vendor?"))
        screen = await form("s")
        assert screen.query_one("#w-body", TextArea).text == "Which vendor? Decide by Friday.\n"
        screen.query_one("#w-deadline", Input).value = "+3d"
        await sent(screen, 4)
        new = lst.current.letter
        assert new is not None and new.supersedes == first.id, "the cursor is on the new version"
        assert first.id not in {r.letter.id for r in lst.rows if r.letter is not None}


LONG = "2026-11-27T090000-planner-info-notes-ffff0002"


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_a_body_search_lists_letters_as_the_list_does_and_enter_reads_one(letterbox, size):
    """F: no progress bar before a search; each result is the letter's list line (its
    versions looked alike by subject) and its matching line cut to one line around the
    match (a long one wrapped into what looked like the next result); Enter reads the
    letter, body focused (at 80x24 it only moved the hidden list's cursor)."""
    from letterbox_tui.app.screens.body_search import BodySearchScreen

    letterbox.letter(LONG, frm="planner", to="builder", sent="2026-11-27T09:00:00Z", subject="Notes",
                     body="x" * 300 + " the access grant is logged " + "y" * 300 + "\n")
    app = app_for(letterbox, view="all")
    async with app.run_test(size=size) as pilot:
        await scanned(pilot, app)
        await pilot.press("F")
        await until(pilot, lambda: isinstance(app.screen, BodySearchScreen))
        screen = app.screen
        assert not screen.query_one("#bs-progress").display
        await pilot.press(*"grant", "enter")
        await until(pilot, lambda: not screen.running and "matching" in screen.query_one("#bs-status").render().plain)
        assert screen.query_one("#bs-progress").display
        results = screen.query_one("#bs-results")
        prompts = [results.get_option_at_index(i).prompt.plain for i in range(results.option_count)]
        assert len(prompts) == 2
        width = results.scrollable_content_region.width
        for prompt, x in zip(prompts, screen.found):
            head, found = prompt.split("\n")
            assert head == letters(app).describe(letters(app).rows[letters(app).index_of(x.path)], width - 1).plain
            assert len(found) <= width and "line 1: " in found
        assert "the access grant is logged" in prompts[[x.id for x in screen.found].index(LONG)]
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not screen)
        read = screen.found[0]
        assert app.letter_pane.letter is read and app.focused.id == "body-scroll"
        assert letters(app).current.letter is read


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_the_query_bar_with_relative_times_and_the_help(letterbox, size):
    """\\ since=-7d: the bar closes on Enter (it kept two rows) and the status line names
    the query and its order (it named Owed & late and its seat order); ? help: paragraphs
    wrap whole (hard breaks made ragged lines at 80), keys under a heading per place,
    j/space scroll, q closes."""
    from textual.containers import VerticalScroll

    from letterbox_tui.app.screens.help import HelpScreen
    from tests.app.helpers import screen_text

    app = app_for(letterbox)
    async with app.run_test(size=size) as pilot:
        await scanned(pilot, app)
        await pilot.press("backslash", *"since=-7d", "enter")
        assert not app.query_bar.display and app.focused is letters(app)
        status = _status(app)
        assert status.startswith(" Query · newest first") and "filter since=-7d" in status
        assert "Owed" not in status and len(status) <= size[0]
        sent = [r.letter.sent_at for r in letters(app).rows if r.heading is None and r.letter is not None
                and r.letter.sent_at is not None and not r.extra.get("reasons")]
        assert sent and min(sent) >= app.model.at.replace(day=22) and sent == sorted(sent, reverse=True)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = app.screen.query_one("#help-text").render().plain
        for heading in ("Anywhere", "In the list", "Reading a letter", "In the Thread tab"):
            assert f"\n{heading}" in text
        assert "Read the letter it answers" in text
        if size[0] == 80:
            assert "search: the next letter to act on" in screen_text(app)
        vs = app.screen.query_one(VerticalScroll)
        await pilot.press("j")
        assert vs.scroll_y == 1
        await pilot.press("space")
        assert vs.scroll_y > 5 or vs.max_scroll_y <= 5
        await pilot.press("G")  # g/G first/last, as in the list, the mailboxes and a letter
        assert vs.max_scroll_y > 0 and vs.scroll_y == vs.max_scroll_y
        await pilot.press("g")
        assert vs.scroll_y == 0
        await pilot.press("q")
        assert not isinstance(app.screen, HelpScreen) and app.is_running


async def test_n_visits_exactly_what_core_says_needs_attention_and_the_status_words_are_cores(letterbox):
    """n with no search walks the rows ``core.views.attention.needs_attention`` names, each
    once, in list order; every row's status word is ``standing``'s (both moved to core)."""
    from letterbox_tui.core.views.attention import needs_attention, standing

    app = app_for(letterbox, view="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        res = app.model.res
        want = [i for i, r in enumerate(lst.rows) if r.heading is None and needs_attention(r.letter, res)]
        assert want and len(want) < len(lst.rows)
        lst.cursor = len(lst.rows) - 1
        seen = []
        for _ in want:
            await pilot.press("n")
            seen.append(lst.cursor)
        assert seen == want
        for r in lst.rows:
            word = standing(r.letter, res).word
            if word and not r.note:
                assert word[:10] in lst.describe(r, 160).plain


async def test_enter_on_a_folded_seat_unfolds_it(letterbox):
    """Z folds every seat; Enter on a folded heading unfolds it (it opened a summary of the
    group as if it were a letter, and at 80x24 hid the list)."""
    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        await pilot.press("Z")
        assert all(r.heading is not None for r in lst.rows)
        seat = lst.current.extra["fold"]
        await pilot.press("enter")
        assert app.focused is lst and seat not in app.owed_folded
        assert any(r.heading is None and r.letter.recipient == seat for r in lst.rows)


async def test_enter_on_an_open_seat_heading_reads_its_first_task(letterbox):
    """Enter opens, as in mutt and aerc: on a seat's heading that is not folded it read the
    seat's first task (it folded the seat, which is z's work; z still folds it)."""
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        await pilot.press("g")
        assert lst.current.key == "group:builder" and not app.owed_folded
        await pilot.press("enter")
        await body_of(pilot, app)
        assert not app.owed_folded
        x = lst.current.letter
        assert x is not None and x.recipient == "builder" and lst.cursor == 1
        assert x.subject in screen_text(app)
        lst.focus()
        await pilot.press("g", "z")
        assert app.owed_folded == {"builder"}


async def test_j_and_k_scroll_the_letter_being_read(letterbox):
    """Reading (Enter), j/k scroll a line and space/- a page, as in mutt's pager (only the
    arrows did; j did nothing)."""
    from tests.app.test_reading import LINKED

    letterbox.letter(LINKED, frm="planner", to="builder", sent="2026-11-28T12:00:00Z", subject="Goals",
                     body="".join(f"line {i}\n" for i in range(80)))
    app = app_for(letterbox, view="all", letter=LINKED)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await pilot.press("enter")
        await body_of(pilot, app)
        scroll = app.focused
        assert scroll.id == "body-scroll" and scroll.max_scroll_y > 10
        await pilot.press("j", "j")
        assert scroll.scroll_y == 2
        await pilot.press("k")
        assert scroll.scroll_y == 1
        await pilot.press("space")
        assert scroll.scroll_y > 5
        await pilot.press("minus")
        assert scroll.scroll_y == 1


async def test_the_top_bar_fits_80_columns_and_a_review_just_recorded_says_so(letterbox):
    """R, send: the top bar says 'last review just now' (it said '0m ago') and fits 80
    columns (its end, who reviewed, was cut off)."""
    app = app_for(letterbox, now=lambda: __import__("tests.app.letterboxes", fromlist=["NOW"]).NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await sent_with(pilot, app, "R")
        await scanned(pilot, app, count=2)
        top = app.topbar.render().plain
        assert "last review just now" in top and len(top) <= 80
    app = app_for(letterbox)
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        assert "(by reviewer)" in app.topbar.render().plain or "(by " in app.topbar.render().plain


async def test_a_resize_to_80x24_refits_the_bars_and_keeps_the_cursor_in_sight(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        lst.cursor = len(lst.rows) - 1
        await pilot.press("enter")
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        await pilot.pause()
        assert len(app.topbar.render().plain) <= 80
        status = app.query_one("#status").render().plain
        assert len(status) <= 80 and "z folds" not in status
        assert lst.scroll_offset.y <= lst.cursor < lst.scroll_offset.y + lst.scrollable_content_region.height


async def test_a_superseded_request_past_its_deadline_is_marked_superseded_not_late(letterbox):
    """After a supersede the old version, past its deadline, showed '!' (late) beside
    'superseded by …' in All; it is owed by nobody: '~', as its status word says."""
    old = "2026-11-23T090000-planner-request-vendor-aaaa0010"
    letterbox.letter(old, frm="planner", to="builder", type="request", requires_ack="true",
                     deadline="2026-11-25T12:00:00Z", sent="2026-11-23T09:00:00Z", subject="Pick a vendor")
    letterbox.letter("2026-11-27T090000-planner-request-vendor-aaaa0011", frm="planner", to="builder", type="request",
                     requires_ack="true", supersedes=old, deadline="2026-12-02T12:00:00Z", sent="2026-11-27T09:00:00Z",
                     subject="Pick a vendor")
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)
        assert app.model.res.late(_row_of(app, old).letter).yes  # core: still late, and superseded
        line = letters(app).describe(_row_of(app, old), 160).plain
        assert line.startswith("~") and "superseded by" in line
        assert old not in {r.letter.id for r in app.model.rows("view:owed") or [] if r.letter is not None}


async def test_brackets_from_the_list_at_80x24_open_the_tab(letterbox):
    """At 80x24 the letter pane is hidden while the list has the keys: ] switched the
    hidden pane's tab and showed nothing; now it reads the letter on that tab."""
    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        assert app.letter_pane.region.height == 0
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert app.letter_pane.tabs.active == "tab-thread" and app.focused is app.letter_pane.thread_view
        assert app.letter_pane.region.height >= 12
        await pilot.press("q")
        assert app.focused is letters(app) and app.is_running

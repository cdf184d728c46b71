"""Reading a letter: the body as written (and as Markdown on M), keys like mutt/aerc
(q back, Q quit, j/k everywhere, / search with n/N), the navigable Thread tab."""

from __future__ import annotations

from letterbox_tui.app.widgets.letter_pane import LetterPane
from tests.app.helpers import SIZE, app_for, body_of, body_searched, letters, scanned, screen_text, thread_text, until

ACCESS = "2026-11-22T090000-builder-request-access-aaaa0005"
RESULT = ACCESS + "--planner--result"
LINKED = "2026-11-28T120000-planner-info-goals-ffff0001"


def _linked(box):
    box.letter(LINKED, frm="planner", to="builder", sent="2026-11-28T12:00:00Z", subject="Goals",
               body="GOAL: ship the ledger\nDONE-WHEN: table 5 migrates\nsee [the plan](http://example.com/plan?x=1)\n")
    return box


async def test_body_is_shown_as_written_and_m_renders_markdown(letterbox):
    app = app_for(_linked(letterbox), letter=LINKED)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        body = await body_of(pilot, app)
        assert "GOAL: ship the ledger\nDONE-WHEN: table 5 migrates" in body
        shown = screen_text(app)
        lines = shown.splitlines()
        # the two lines stay two lines, and the link shows its target as written
        assert any("│ GOAL: ship the ledger " in ln and "DONE" not in ln for ln in lines)
        assert any("│ DONE-WHEN: table 5 migrates " in ln for ln in lines)
        assert "[the plan](http://example.com/plan?x=1)" in shown
        assert "as written" in app.query_one("#status").render().plain
        pane = app.query_one(LetterPane)
        await pilot.press("M")
        await pilot.pause(0.3)
        assert pane.markdown and pane.body.display and not pane.plain_body.display
        shown = screen_text(app)
        # rendered: the link's text and, beside it, its target (never hidden)
        assert "the plan ⟨http://example.com/plan?x=1⟩" in shown
        assert "Markdown" in app.query_one("#status").render().plain
        await pilot.press("M")
        assert not pane.markdown and pane.plain_body.display
        assert "[the plan](http://example.com/plan?x=1)" in screen_text(app)


async def test_a_20kb_markdown_table_does_not_freeze_the_app(letterbox):
    from textual.widgets._markdown import MarkdownFence, MarkdownTable

    rows = "\n".join(f"| row {i} | value {i * 3} | some text here | x |" for i in range(500))
    table = "| a | b | c | d |\n|---|---|---|---|\n" + rows + "\n"
    assert len(table) > 20_000
    lid = "2026-11-28T130000-planner-info-table-ffff0002"
    letterbox.letter(lid, frm="planner", to="builder", sent="2026-11-28T13:00:00Z", body="A table:\n\n" + table)
    app = app_for(letterbox, letter=lid)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await body_of(pilot, app)
        pane = app.query_one(LetterPane)
        await pilot.press("M")
        await pane.body.update(pane.body_text)  # wait for the rendering to be mounted
        await pilot.pause()
        assert pane.body.display
        # What froze the app was Textual mounting a widget per cell (a grid of 2,000 cells
        # took 2.3 s on the UI thread): the rendering mounts a handful, whatever the size.
        mounted = list(pane.body.walk_children())
        assert len(mounted) <= 10, [type(w).__name__ for w in mounted][:20]
        assert not pane.body.query(MarkdownTable)  # too big a grid: shown as written
        fences = pane.body.query(MarkdownFence)
        assert len(fences) == 1 and fences[0].code.strip("\n") == table.strip("\n")
        # a small table is still a table
        from letterbox_tui.app.widgets.body import MAX_TABLE_CELLS

        assert MAX_TABLE_CELLS >= 40
        await pane.body.update("| a | b |\n|---|---|\n| 1 | 2 |\n")
        await pilot.pause()
        assert pane.body.query(MarkdownTable) and not pane.body.query(MarkdownFence)


async def test_q_goes_back_from_a_letter_and_quits_from_the_list(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("enter")
        assert app.focused.id == "body-scroll"
        await pilot.press("q")
        assert app.is_running and app.focused is letters(app)
        app.action_show_tab("thread")
        app.query_one("#letter-thread").focus()
        await pilot.press("q")
        assert app.is_running and app.focused is letters(app)
        app.query_one("#mailboxes").focus()
        await pilot.press("q")
        assert app.is_running and app.focused is letters(app)
        await pilot.press("q")  # in the list, the Thread tab still shown: back to the Body first
        assert app.is_running and app.query_one(LetterPane).tabs.active == "tab-body"
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_capital_q_quits_from_anywhere(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("enter")
        await pilot.press("Q")
        await pilot.pause()
    assert app.return_code == 0


async def test_j_and_k_move_in_the_mailboxes(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        ol = app.query_one("#mailboxes")
        ol.focus()
        start = ol.highlighted
        await pilot.press("j", "j")
        assert ol.highlighted == start + 2
        await pilot.press("k")
        assert ol.highlighted == start + 1
        await pilot.press("enter")
        assert app.mailbox_id == "view:disputes"


async def test_slash_searches_and_n_goes_to_the_next_match(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("slash")
        assert app.focused.id == "search"
        await pilot.press(*"postgres", "enter")
        lst = letters(app)
        first = lst.current.letter.subject
        assert "Postgres" in first
        await pilot.press("n")
        second = lst.current.letter.subject
        assert "Postgres" in second and second != first
        await pilot.press("N")
        assert lst.current.letter.subject == first
        assert 'search "postgres"' in app.query_one("#status").render().plain


async def test_help_scrolls_with_j_and_k_and_shows_the_real_keys(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        from textual.containers import VerticalScroll

        vs = app.screen.query_one(VerticalScroll)
        assert vs.outer_size.width <= 80 and vs.outer_size.height <= 24
        text = app.screen.query_one("#help-text").render().plain
        for shown in ("app.search", "app.query", "app.quit_now", "letter.markdown", "mailboxes.down", "thread.parent"):
            assert shown in text
        await pilot.press("j", "j", "j")
        assert vs.scroll_y == 3
        await pilot.press("k")
        assert vs.scroll_y == 2
        await pilot.press("q")
        assert app.is_running and not app.screen.query("#help-text")


async def test_thread_tab_is_navigable(letterbox):
    app = app_for(letterbox, view="all", letter=ACCESS)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        app.action_show_tab("thread")
        await pilot.pause()
        tv = app.query_one("#letter-thread")
        assert "└─> result  planner→builder" in thread_text(app)
        tv.focus()
        assert tv.highlighted_letter.id == ACCESS
        await pilot.press("j")
        assert tv.highlighted_letter.id == RESULT
        await pilot.press("h")  # to the letter it replies to
        assert tv.highlighted_letter.id == ACCESS
        await pilot.press("j", "enter")  # open the reply
        await until(pilot, lambda: letters(app).current.letter.id == RESULT)
        assert app.letter_pane.tabs.active == "tab-body"
        assert "Access granted." in await body_of(pilot, app)


async def test_e_opens_the_raw_file_in_the_pager_and_pipe_runs_a_command(letterbox, tmp_path, monkeypatch):
    paged, piped = tmp_path / "paged", tmp_path / "piped"
    monkeypatch.setenv("PAGER", f"cp /dev/stdin {paged}")
    app = app_for(letterbox, letter=ACCESS)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        raw = (letterbox.root / letters(app).current.letter.path).read_bytes()
        await pilot.press("e")
        await until(pilot, lambda: paged.exists() and paged.stat().st_size == len(raw))
        assert paged.read_bytes() == raw
        await pilot.press("vertical_line")
        assert app.focused.id == "pipe"
        app.query_one("#pipe").value = f"cat > {piped}"
        await pilot.press("enter")
        await until(pilot, lambda: piped.exists() and piped.stat().st_size == len(raw))
        assert piped.read_bytes() == raw
        assert app.last_program == (f"cat > {piped}", True)
        assert app.is_running and app.focused is letters(app)


async def test_body_search_reads_the_view_and_lists_matching_lines(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        screen = await body_searched(pilot, app, "granted")
        status = screen.query_one("#bs-status").render().plain
        assert "read 14 of 14 · 1 matching" in status
        results = screen.query_one("#bs-results")
        assert results.option_count == 1
        assert "line 1: Access granted." in results.get_option_at_index(0).prompt.plain
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not screen)
        assert letters(app).current.letter.id == RESULT
        # a query term never reads a body: the query layer stays headers-only
        assert "body" not in app.query_one("#status").render().plain.split("·")[3:4]


async def test_body_search_can_be_cancelled(letterbox, monkeypatch):
    import letterbox_tui.app.screens.body_search as bs

    real = bs.read_body

    def slow(root, rel, *a):
        time.sleep(0.05)
        return real(root, rel, *a)

    monkeypatch.setattr(bs, "read_body", slow)
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("F")
        from letterbox_tui.app.screens.body_search import BodySearchScreen

        await until(pilot, lambda: isinstance(app.screen, BodySearchScreen))
        screen = app.screen
        await pilot.press(*"zzz", "enter")
        await pilot.pause(0.1)
        await pilot.press("escape")
        await until(pilot, lambda: not screen.running)
        assert "cancelled after" in screen.query_one("#bs-status").render().plain
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is not screen)


async def test_reading_then_the_thread_tab_takes_j_and_k(letterbox):
    app = app_for(letterbox, view="all", letter=ACCESS)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await pilot.press("enter", "right_square_bracket")
        tv = app.query_one("#letter-thread")
        assert app.focused is tv
        await pilot.press("j")
        assert tv.highlighted_letter.id == RESULT


async def test_the_list_can_be_shown_threaded_and_threads_fold(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("T")
        lst = letters(app)
        keys = [r.key for r in lst.rows]
        head = keys.index(f"thread:{ACCESS}")
        assert lst.rows[head + 1].letter.id == ACCESS and lst.rows[head + 2].letter.id == RESULT
        assert lst.rows[head + 2].depth == 1  # the reply hangs under its parent
        assert "threaded" in app.query_one("#status").render().plain
        lst.cursor = head
        await pilot.press("z")
        keys = [r.key for r in lst.rows]
        assert f"thread:{ACCESS}" in keys and not any(r.letter is not None and r.letter.id == RESULT for r in lst.rows)
        await pilot.press("z")
        assert any(r.letter is not None and r.letter.id == RESULT for r in lst.rows)
        await pilot.press("T")
        assert not any(r.key.startswith("thread:") for r in lst.rows)


async def test_quick_keys_in_the_letter_pane_each_scroll(letterbox):
    """Five j typed at once scroll five lines (each scrolled from the same old place: one
    line in all); g and G reach the top and the bottom."""
    from tests.app.test_write_keys import at_once

    long_one = "2026-11-28T140000-planner-info-long-ffff0003"
    letterbox.letter(long_one, frm="planner", to="builder", sent="2026-11-28T14:00:00Z",
                     body="".join(f"line {i}\n" for i in range(200)))
    app = app_for(letterbox, view="all", letter=long_one)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await body_of(pilot, app)
        await pilot.press("enter")
        scroll = app.query_one("#body-scroll")
        assert app.focused is scroll
        await at_once(pilot, "jjjjj")
        assert scroll.scroll_y == 5
        await at_once(pilot, "G")
        assert scroll.scroll_y == scroll.max_scroll_y > 100
        await at_once(pilot, "kk")
        assert scroll.scroll_y == scroll.max_scroll_y - 2
        await at_once(pilot, "g")
        assert scroll.scroll_y == 0


async def test_q_in_the_list_turns_the_tab_back_before_it_quits(letterbox):
    """At 160 columns ] turns the letter's tab while the list keeps the keys: q meant as
    back turns it back, and only the next q quits."""
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        pane = app.query_one(LetterPane)
        await pilot.press("right_square_bracket")
        assert pane.tabs.active == "tab-thread" and app.focused is letters(app)
        await pilot.press("q")
        assert app.is_running and pane.tabs.active == "tab-body" and app.focused is letters(app)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_q_from_the_list_asks_first_when_a_draft_is_kept(letterbox):
    from letterbox_tui.app.screens.choice import ChoiceScreen
    from letterbox_tui.core.draft_store import DraftStore, KeptDraft

    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        DraftStore(letterbox.root).save(KeptDraft("compose", {"body": "Half a thought"}, saved_at="2026-11-29T14:00:00+00:00"))
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert "1 kept draft, not sent" in app.screen.query_one("#choice-text").render().plain
        await pilot.press("q")  # no answer: q-for-back pressed twice does not quit
        assert app.is_running and isinstance(app.screen, ChoiceScreen)
        await pilot.press("escape")  # Stay
        await until(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
        assert app.is_running and app.focused is letters(app)
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("e")  # Exit
        await pilot.pause()
    assert app.return_code == 0
    assert DraftStore(letterbox.root).kept()  # still kept: offered back at the next start


async def test_q_from_the_list_asks_first_while_a_sync_writes(letterbox, monkeypatch):
    import threading

    import letterbox_tui.core.sync_run as sync_run
    from letterbox_tui.app.screens.choice import ChoiceScreen
    from letterbox_tui.core.errors import LetterboxError

    gate = threading.Event()

    def slow_sync(root, *a, **kw):
        gate.wait(10)
        raise LetterboxError("not a git repository")

    monkeypatch.setattr(sync_run, "sync", slow_sync)
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("S")
        await until(pilot, lambda: app.syncing)
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert "a write under way (sync)" in app.screen.query_one("#choice-text").render().plain
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
        gate.set()
        await until(pilot, lambda: not app.syncing and not app.pending_writes())
        await pilot.press("q")  # nothing pending: quits at once
        await pilot.pause()
    assert app.return_code == 0


async def test_the_letter_option_shows_the_body_on_a_short_screen(letterbox):
    """``--letter ID`` opens with the letter's body shown (SPEC 7). Under 32 rows the pane
    shows only while a letter is read, and the option selected the row and left the pane
    hidden: at 80x24 the letter asked for was one line of the list."""
    app = app_for(_linked(letterbox), letter=LINKED)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await body_of(pilot, app)
        await until(pilot, lambda: "GOAL: ship the ledger" in screen_text(app))
        assert letters(app).current.letter.id == LINKED
        await pilot.press("q")  # back to the list, as from a letter read with Enter
        await until(pilot, lambda: app.focused is letters(app) and "GOAL: ship" not in screen_text(app))
        assert app.is_running

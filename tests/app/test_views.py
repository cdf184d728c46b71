"""The app's views, banner, --letter, query bar, live refresh, keymap, palette and help."""

from __future__ import annotations

import os

import pytest
from textual.widgets import Input, OptionList, Static, TabbedContent

from letterbox_tui.app import make_app
from letterbox_tui.app.widgets.letter_pane import LetterPane
from letterbox_tui.core.errors import LetterboxError
from tests.app.helpers import (SIZE, app_for, body_of, hold_scans, letters, list_text, scanned, screen_text, thread_text,
                               until, user_config, view_built)

PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"
BUDGET = "2026-11-21T090000-builder-request-budget-aaaa0004"
V3A = "2026-11-14T090000-planner-decision-db-choice-bbbb0003"
DISPUTE2 = "2026-11-26T090000-reviewer-dispute-plans-cccc0002"


def static_text(app, selector: str) -> str:
    return app.query_one(selector, Static).render().plain


def pane(app) -> LetterPane:
    return app.query_one("#letter-pane", LetterPane)


async def test_owed_view_opens_first_grouped_late_first(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert app.mailbox_id == "view:owed"
        rows = list_text(app)
        assert rows[0].strip().startswith("▾ builder owes")
        assert "1 late" in rows[0]
        assert "Renewal plan" in rows[1] and "LATE 1d 22h" in rows[1]
        assert "Review the docs" in rows[2] and "due in 18h" in rows[2]
        assert "Write release notes" in rows[3] and "no deadline" in rows[3]
        assert rows[4].strip().startswith("▾ planner owes")
        assert "Approve the budget" in rows[5] and "LATE 4d 3h" in rows[5]
        assert len(rows) == 6
        # the cursor starts on the most urgent item: the most overdue, whoever owes it
        assert letters(app).current.letter.id == BUDGET
        top = static_text(app, "#topbar")
        assert "complete" in top and "no review for 3 days" in top
        assert not app.query_one("#banner").display


async def test_owed_unknown_answers_show_their_reason(incomplete_box):
    app = app_for(incomplete_box)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        rows = list_text(app)
        # the unreadable file in builder/inbox may be a reply to what builder sent
        assert any("Approve the budget" in r and "? unreadable-file" in r for r in rows)


async def test_each_builtin_view(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("2")
        await view_built(pilot, app)
        rows = list_text(app)
        assert app.mailbox_id == "view:disputes"
        assert "Plan and budget disagree" in rows[0] and "open dispute" in rows[0]
        assert "Renewal plan" in rows[1] and "Approve the budget" in rows[2]
        assert len(rows) == 3  # the ruled dispute is not open

        await pilot.press("3")
        await view_built(pilot, app)
        rows = list_text(app)
        assert rows[0].strip() == "Decisions in force (1)"
        assert "Use Postgres 17 with replicas" in rows[1] and "in force (ruled)" in rows[1]
        assert rows[2].strip().startswith("Rulings and other superseding letters in force")
        assert "reviewer→reviewer" in rows[3] and "ruling" in rows[3]
        assert not any("Use SQLite instead" in r or "Use Postgres 17 " in r.split("with")[0] for r in rows[4:])
        assert len(rows) == 4

        await pilot.press("4")
        assert len([r for r in letters(app).rows if r.heading is None]) == 14

        await pilot.press("5")
        await view_built(pilot, app)
        rows = list_text(app)
        assert app.mailbox_id == "view:problems"
        assert any("settled-fork" in r for r in rows)

        # a seat's mailboxes
        app.open_mailbox("seat:planner:processed")
        await pilot.pause()
        rows = list_text(app)
        assert len(rows) == 1 and "Grant access" in rows[0]
        app.open_mailbox("seat:builder:sent")
        await pilot.pause()
        assert all("builder→" in r for r in list_text(app))


async def test_mailboxes_pane_lists_views_seats_status_and_queries(letterbox):
    letterbox.raw("letterbox-tui.toml", '[queries]\n"Late requests" = "type=request late=yes"\n')
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        ol = app.query_one("#mailboxes", OptionList)
        prompts = [ol.get_option_at_index(i).prompt.plain for i in range(ol.option_count)]
        joined = "\n".join(prompts)
        for label in ("Owed & late", "Open disputes", "Current truth", "All letters", "Problems"):
            assert label in joined
        assert "Owed & late   4 · 2 late" in joined
        assert "Drafting the Q1 plan" in joined
        assert any(p.strip().startswith("Inbox") for p in prompts)
        assert "Late requests" in joined
        app.open_mailbox("query:Late requests")
        await pilot.pause()
        rows = list_text(app)
        assert len(rows) == 2 and all("LATE" not in r for r in rows)
        assert {r.letter.id for r in letters(app).rows} == {PLAN, BUDGET}


async def test_view_option_and_letter_option(letterbox):
    app = app_for(letterbox, view="disputes", letter=V3A)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        # the letter is not in the disputes view, so the app shows it in All
        assert app.mailbox_id == "view:all"
        assert letters(app).current.letter.id == V3A
        assert pane(app).query_one(TabbedContent).active == "tab-body"
        assert "Use Postgres 17 with replicas" in static_text(app, "#letter-head")

    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert app.mailbox_id == "view:owed"
        assert letters(app).current.letter.id == PLAN
        assert "Please draft the **renewal plan**." in await body_of(pilot, app)
        # as written: the Markdown is not interpreted
        assert "Please draft the **renewal plan**." in screen_text(app)


async def test_unknown_letter_option_is_reported(letterbox):
    app = app_for(letterbox, letter="no-such-id")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert any("no-such-id" in str(n.message) for n in app._notifications)


def test_not_a_letterbox_fails_before_the_app(tmp_path):
    with pytest.raises(LetterboxError, match="not a letterbox"):
        make_app(tmp_path)


async def test_thread_chain_and_provenance_tabs(letterbox):
    app = app_for(letterbox, letter=V3A)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("right_square_bracket")
        assert pane(app).query_one(TabbedContent).active == "tab-thread"
        await pilot.press("right_square_bracket")
        chain = static_text(app, "#letter-chain")
        assert "Head (current): " + V3A in chain
        assert "⑂ fork: superseded by 2 letters" in chain
        assert "ruled" in chain and "upholds " + V3A in chain
        assert "Use SQLite instead" in chain
        await pilot.press("right_square_bracket")
        prov = static_text(app, "#letter-provenance")
        assert "planner/inbox/" not in prov or "builder/inbox/" + V3A + ".md" in prov
        assert "builder/inbox/" + V3A + ".md" in prov
        import hashlib

        digest = hashlib.sha256((letterbox.root / "builder" / "inbox" / (V3A + ".md")).read_bytes()).hexdigest()
        assert digest in prov
        for answer in ("current", "superseded", "answered", "accepted", "state", "late"):
            assert answer in prov
        assert "ruled" in prov


async def test_thread_tree_uses_reply_glyphs(letterbox):
    access = "2026-11-22T090000-builder-request-access-aaaa0005"
    app = app_for(letterbox, letter=access)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        app.action_show_tab("thread")
        await pilot.pause()
        thread = thread_text(app)
        assert "Thread " + access in thread
        assert "└─> result  planner→builder" in thread


async def test_banner_appears_opens_problems_and_goes_away(incomplete_box):
    app = app_for(incomplete_box, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        banner = app.query_one("#banner")
        assert banner.display
        text = static_text(app, "#banner")
        assert "Incomplete scope: 1 unreadable file" in text and "Press p for Problems" in text
        assert "incomplete" in static_text(app, "#topbar")
        await pilot.press("p")
        assert app.mailbox_id == "view:problems"
        await view_built(pilot, app)
        rows = list_text(app)
        assert "unreadable-file" in rows[0] and "builder/inbox/broken.md" in rows[0]
        assert "unreadable-file" in static_text(app, "#letter-head")
        os.unlink(incomplete_box.root / "builder" / "inbox" / "broken.md")
        await until(pilot, lambda: app.scan_count >= 2 and not app.scanning)
        assert not banner.display
        assert "complete" in static_text(app, "#topbar")


async def test_query_bar_filters_and_shows_errors_inline(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("backslash")
        inp = app.query_one("#query", Input)
        assert inp.has_focus
        inp.value = "late=maybe"
        await pilot.press("enter")
        err = static_text(app, "#query-error")
        assert "invalid term 'late=maybe'" in err
        assert app.query_text is None  # the list is unchanged
        inp.value = "type=request late=yes"
        await pilot.press("enter")
        assert static_text(app, "#query-error") == ""
        assert {r.letter.id for r in letters(app).rows} == {PLAN, BUDGET}
        assert "Query: type=request late=yes" in static_text(app, "#list-title")
        await pilot.press("escape")
        await pilot.press("escape")
        assert app.query_text is None
        assert app.mailbox_id == "view:owed"


async def test_query_unknown_rows_are_listed_with_reasons(incomplete_box):
    app = app_for(incomplete_box)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("backslash")
        app.query_one("#query", Input).value = "answered=no task=yes"
        await pilot.press("enter")
        rows = list_text(app)
        assert any(r.strip().startswith("Unknown (") for r in rows)
        assert any("? unreadable-file" in r for r in rows)


async def test_live_refresh_picks_up_a_new_letter_and_keeps_selection(letterbox):
    app = app_for(letterbox, view="all", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("j", "j")
        chosen = letters(app).current.key
        before = len(letters(app).rows)
        letterbox.letter("2026-11-29T140000-planner-info-hello-ffff0001", frm="planner", to="builder",
                         sent="2026-11-29T14:00:00Z", subject="A new letter arrives")
        await until(pilot, lambda: len(letters(app).rows) == before + 1)
        assert letters(app).current.key == chosen
        assert any("A new letter arrives" in r for r in list_text(app))


async def test_keymap_in_user_config_remaps_bindings(letterbox):
    user_config('[keymap]\n"view.all" = "a"\n"list.down" = "ctrl+n"\n')
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("4")
        assert app.mailbox_id == "view:owed"  # 4 no longer opens All
        await pilot.press("a")
        assert app.mailbox_id == "view:all"
        start = letters(app).cursor
        await pilot.press("j")
        assert letters(app).cursor == start  # j was replaced
        await pilot.press("ctrl+n")
        assert letters(app).cursor == start + 1


async def test_navigation_keys_and_next_attention(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        await pilot.press("G")
        assert lst.cursor == len(lst.rows) - 1
        await pilot.press("g")
        assert lst.cursor == 0
        await pilot.press("j", "k", "j")
        assert lst.cursor == 1
        await pilot.press("n")
        assert app._needs_attention(lst.current)
        first = lst.cursor
        await pilot.press("n")
        assert lst.cursor != first and app._needs_attention(lst.current)
        await pilot.press("N")
        assert lst.cursor == first


async def test_command_palette_has_app_commands(letterbox):
    from textual.command import CommandPalette

    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Problems")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: app.mailbox_id == "view:problems")
        # Textual's own commands are still there
        from textual.system_commands import SystemCommandsProvider

        assert any(getattr(c, "__name__", "") == "get_system_commands_provider" or c is SystemCommandsProvider for c in app.COMMANDS)


async def test_ctrl_p_opens_the_command_palette_as_help_says(letterbox):
    """Help and README say ": or ctrl+p": ctrl+p did nothing (Textual adds its ctrl+p only
    when no binding of the app runs the palette, and ":" did)."""
    from textual.command import CommandPalette

    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))


async def test_help_lists_every_binding_with_its_key(letterbox):
    user_config('[keymap]\n"letter.reply" = "ctrl+y"\n')
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        text = app.screen.query_one("#help-text", Static).render().plain
        reply_line = next(line for line in text.splitlines() if "letter.reply" in line)
        assert "^y" in reply_line and " r " not in reply_line
        assert "list.down" in text and "app.quit" in text
        await pilot.press("escape")
        assert app.screen is app.default_screen


async def test_quit_key(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_first_paint_happens_before_the_scan_ends(letterbox, monkeypatch):
    """The answers are read in a worker: the app paints and reacts while it is still going."""
    held = hold_scans(monkeypatch)
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.scanning and app.model is None
        assert "reading the letterbox" in static_text(app, "#topbar")
        assert "Reading the letterbox" in screen_text(app)
        await pilot.press("2")  # the app responds while the answers are read
        assert app.mailbox_id == "view:disputes"
        held.set()
        await scanned(pilot, app)
        assert app.model is not None and "reading" not in static_text(app, "#topbar")
        assert "Plan and budget disagree" in list_text(app)[0]  # the view asked for meanwhile


async def test_unknown_keymap_ids_are_reported(letterbox):
    user_config('[keymap]\n"view.nope" = "x"\n"app.quit" = "ctrl+q"\n')
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        messages = [str(n.message) for n in app._notifications]
        assert any("view.nope" in m for m in messages)
        assert not any("app.quit" in m for m in messages)


async def test_a_failed_scan_is_shown_not_raised(letterbox, monkeypatch):
    from letterbox_tui import store
    from letterbox_tui.core.errors import LetterboxError as LE

    def broken(*a, **kw):
        raise LE("cannot open letterbox: gone")

    monkeypatch.setattr(store, "open_answers", broken)
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.scan_error is not None)
        assert "scan failed: cannot open letterbox: gone" in static_text(app, "#topbar")
        assert "Could not read the letterbox: cannot open letterbox: gone" in screen_text(app)  # not "Reading…"
        assert app.is_running


async def test_unknown_answers_are_explained_in_the_body_tab(incomplete_box):
    app = app_for(incomplete_box, letter=BUDGET)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        head = static_text(app, "#letter-head")
        assert "Unknown because" in head
        assert "unreadable-file (state, answered, late)" in head  # one line, every answer it touches
        app.action_show_tab("provenance")
        await pilot.pause()
        assert "builder/inbox/broken.md" in static_text(app, "#letter-provenance")  # the files, in full


async def test_letter_option_selects_its_row_in_a_view_that_lists_it_as_a_finding(incomplete_box):
    incomplete_box.letter("2026-11-29T100000-planner-info-aliased-abcdef12", frm="planner", to="builder",
                          name="2026-11-29T100000-planner-info-aliased-abcdef12-0badf00d.md", sent="2026-11-29T10:00:00Z")
    app = app_for(incomplete_box, view="problems", letter="2026-11-29T100000-planner-info-aliased-abcdef12")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert app.mailbox_id == "view:problems"
        current = letters(app).current
        assert current.letter.id == "2026-11-29T100000-planner-info-aliased-abcdef12"
        assert current.key.startswith("finding:")


async def test_lateness_is_recomputed_as_the_clock_moves(letterbox):
    """Review the docs is due 2026-11-30T09:00Z; a day later it is late, with no file change."""
    from datetime import timedelta

    from tests.app.letterboxes import NOW

    clock = {"now": NOW}
    app = app_for(letterbox, now=lambda: clock["now"], poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert any("Review the docs" in r and "due in 18h" in r for r in list_text(app))
        clock["now"] = NOW + timedelta(days=1)
        await until(pilot, lambda: any("Review the docs" in r and "LATE 6h" in r for r in list_text(app)))


async def test_enter_reads_the_letter_and_escape_returns_to_the_list(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("right_square_bracket")
        await pilot.press("enter")
        assert pane(app).tabs.active == "tab-body"
        assert app.focused is not None and app.focused.id == "body-scroll"
        await pilot.press("escape")
        assert app.focused is letters(app)


async def test_unsettled_fork_is_in_doubt_and_drawn_in_the_chain(tmp_path):
    from tests.app.letterboxes import fill
    from tests.conftest import make_box

    box = fill(make_box(tmp_path / "box", "planner", "builder", "reviewer"))  # no ruling
    app = app_for(box, view="truth")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        rows = list_text(app)
        doubt = rows.index(next(r for r in rows if r.strip().startswith("In doubt")))
        assert "(2)" in rows[doubt]
        assert {("Use Postgres 17 with replicas" in r, "? fork" in r) for r in rows[doubt + 1:]} == {(True, True), (False, True)}
        lst = letters(app)
        lst.cursor = doubt + 1
        app.action_show_tab("chain")
        await pilot.pause()
        chain = static_text(app, "#letter-chain")
        assert "No single current head: 2 candidate heads" in chain
        assert "⑂ fork: superseded by 2 letters" in chain
        assert "open: no ruling yet" in chain
        assert "fork:" in chain  # the reason, spelled out under each branch


async def test_an_empty_letterbox(tmp_path):
    (tmp_path / "box" / "locks").mkdir(parents=True)
    from tests.conftest import Box

    app = app_for(Box(tmp_path / "box"))
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).rows == []
        assert "Nothing is owed" in screen_text(app)
        assert "0 letters" in static_text(app, "#topbar") and "no review recorded yet" in static_text(app, "#topbar")
        for key in ("2", "3", "4", "5", "c", "R", "r", "n", "G", "j"):
            await pilot.press(key)
        assert app.is_running and app.screen is app.default_screen


async def test_query_at_term_moves_the_clock_for_late(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("backslash")
        app.query_one("#query", Input).value = "late=yes at=2026-11-26T00:00:00Z"
        await pilot.press("enter")
        # on Nov 26 only the budget (due Nov 25) was late; the plan was due Nov 27
        assert {r.letter.id for r in letters(app).rows} == {BUDGET}


async def test_unknown_query_rows_explain_themselves_in_the_pane(incomplete_box):
    app = app_for(incomplete_box)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("backslash")
        app.query_one("#query", Input).value = "answered=no task=yes"
        await pilot.press("enter")
        lst = letters(app)
        lst.cursor = next(i for i, r in enumerate(lst.rows) if r.extra.get("reasons"))
        await pilot.pause()
        head = static_text(app, "#letter-head")
        assert head.startswith("Whether this letter matches the query is unknown, because")
        assert "unreadable-file" in head


async def test_deep_threads_and_long_chains_do_not_recurse_or_flood(tmp_path):
    """3,000 replies each answering the one before, and a 3,000-letter supersession chain."""
    from tests.conftest import make_box

    box = make_box(tmp_path / "box", "alpha", "beta")
    prev = None
    for i in range(3000):
        lid = f"t{i:05d}"
        box.letter(lid, frm="alpha", to="beta", re=prev or "", thread="t00000" if prev else "",
                   supersedes=prev or "", sent=f"2026-11-01T00:00:00Z")
        prev = lid
    app = app_for(box, view="all", letter="t02999")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app, timeout=60)
        app.action_show_tab("thread")
        await pilot.pause()
        thread = thread_text(app)
        assert "more letters in this thread" in thread
        assert len(thread.splitlines()) < 420
        app.action_show_tab("chain")
        await pilot.pause()
        chain = static_text(app, "#letter-chain")
        assert "more letters in this chain" in chain
        assert max(len(line) for line in thread.splitlines()) < 200


async def test_provenance_follows_the_selection_and_is_computed_when_shown(letterbox, monkeypatch):
    import letterbox_tui.app.widgets.letter_pane as lp

    hashed = []
    real = lp.sha256_of
    monkeypatch.setattr(lp, "sha256_of", lambda root, rel: hashed.append(rel) or real(root, rel))
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("j", "j", "j")
        assert hashed == []  # nobody looked at Provenance yet
        app.action_show_tab("provenance")
        await pilot.pause()
        first = letters(app).current.letter
        assert hashed == [first.path] and first.path in static_text(app, "#letter-provenance")
        await pilot.press("j")
        second = letters(app).current.letter
        assert second.path in static_text(app, "#letter-provenance")
        assert hashed == [first.path, second.path]


async def test_a_letter_moved_to_processed_keeps_the_selection(letterbox):
    """The protocol closes a letter by moving it from its seat's inbox/ to processed/ (its
    recipient's result, another terminal's ``file``). Reading it meanwhile, the list's
    cursor and the pane jumped to the newest letter, and its body replaced the one read."""
    app = app_for(letterbox, view="all", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        lst.cursor = next(i for i, r in enumerate(lst.rows) if i > 2 and r.letter is not None
                          and r.letter.folder == "inbox" and r.letter.task)
        chosen = lst.current.letter
        await pilot.press("enter")
        await body_of(pilot, app)
        src = letterbox.root / chosen.path
        dst = letterbox.root / chosen.seat / "processed" / src.name
        os.rename(src, dst)
        await until(pilot, lambda: lst.current is not None and lst.current.letter is not None
                    and lst.current.letter.folder == "processed")
        assert lst.current.letter.id == chosen.id
        assert app.letter_pane.letter.id == chosen.id


async def test_no_review_on_an_incomplete_scope_is_not_none_recorded(letterbox, tmp_path):
    """The top bar said "no review recorded yet" of a scope that could not see one: with
    --participant builder a review in the reviewer's own seat lies outside it, and an
    unreadable file may be the review (as ``review --check`` says)."""
    from tests.conftest import make_box

    letterbox.letter("2026-11-28T090000-reviewer-review-owed-and-late-eeee0001", frm="reviewer", to="reviewer",
                     type="review", sent="2026-11-28T09:00:00Z")
    unread = make_box(tmp_path / "unread", "alpha")
    unread.raw("alpha/inbox/broken.md", "---\nid: x\ntype: review\nfrom alpha\n---\n")
    for box, participants in ((letterbox, ["builder"]), (unread, None)):
        app = app_for(box, participants=participants)
        async with app.run_test(size=SIZE) as pilot:
            await scanned(pilot, app)
            top = static_text(app, "#topbar")
            assert "incomplete" in top and "no review recorded yet" not in top
            assert "no review in the letters read" in top


async def test_nothing_owed_is_said_as_proof_only_of_a_complete_scope(tmp_path):
    """An empty Owed & late over an unreadable file says it is so among the letters read,
    as ``owed`` does, not that every task is answered."""
    from tests.conftest import make_box

    box = make_box(tmp_path / "box", "alpha", "beta")
    box.raw("beta/inbox/broken.md", "---\nid: broken\nbroken line\n---\n")
    app = app_for(box)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).rows == []
        text = screen_text(app)
        assert "Nothing is owed among the letters read; 1 file unread (see check)." in text
        assert "every task is answered" not in text


async def test_a_partial_scope_banner_points_where_its_cause_is(letterbox, tmp_path):
    """With --participant alone the banner sent the user to Problems, which has nothing on
    a partial scope: it says how to read every seat. An unreadable file still leads to
    Problems, with or without --participant."""
    from tests.conftest import make_box

    unread = make_box(tmp_path / "unread", "alpha", "beta")
    unread.raw("alpha/inbox/broken.md", "---\nid: x\nfrom alpha\n---\n")
    for box, participants, leads in ((letterbox, ["builder"], "Start without --participant"),
                                     (unread, None, "Press p for Problems"),
                                     (unread, ["alpha"], "Press p for Problems")):
        app = app_for(box, participants=participants)
        async with app.run_test(size=(160, 48)) as pilot:
            await scanned(pilot, app)
            said = static_text(app, "#banner")
            assert "Incomplete scope" in said and leads in said, (participants, said)
            assert ("Press p" in said) == (leads == "Press p for Problems")

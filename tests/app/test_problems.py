"""Problems shows an unreadable file's offending line, sanitized, with its byte offset."""

from __future__ import annotations

from tests.app.helpers import SIZE, app_for, scanned, until


async def test_problems_shows_the_offending_line_and_its_byte_offset(letterbox):
    header = (b"---\nid: 2026-11-28T170000-builder-result-x-abcd0001\nfrom: builder\nto: planner\n"
              b"summary: licences\tall three MIT \x1b]2;owned\x07\n---\nbody\n")
    letterbox.raw("planner/inbox/2026-11-28T170000-builder-result-x-abcd0001.md", header)
    app = app_for(letterbox, view="problems")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        head = app.query_one("#letter-head")
        await until(pilot, lambda: "offending line" in head.render().plain)
        text = head.render().plain
        offset = header.index(b"summary")
        assert f"offending line 5 at byte {offset}" in text
        assert "summary: licences␉all three MIT ␛]2;owned␇" in text
        assert "\x1b" not in text and "\t" not in text


async def test_seat_status_shows_state_since_and_notes(letterbox):
    letterbox.raw("builder/status.md", "state: working\nsince: 2026-11-29T08:00:00Z\nnotes: ledger migration, table 4 of 5\n")
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        ol = app.query_one("#mailboxes")
        prompts = "\n".join(ol.get_option_at_index(i).prompt.plain for i in range(ol.option_count))
        assert "builder\n working\n since 2026-11-29 08:00\n ledger migration, table" in prompts
        joined = prompts.replace("\n ", " ")  # the note's wrapped lines, each indented
        assert "builder working since 2026-11-29 08:00 ledger migration, table 4 of 5" in joined
        # a free-form note is still its first line
        assert "planner Drafting the Q1 plan; back Monday." in joined
        # wrapped here at the sidebar's width, so every line keeps its indent
        width = ol.scrollable_content_region.width
        assert all(len(line) <= width for line in prompts.splitlines())


async def test_ruled_and_open_disputes_look_different(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        from tests.app.helpers import list_text

        rows = list_text(app)
        open_row = next(r for r in rows if "Plan and budget disagree" in r)
        ruled_row = next(r for r in rows if "Which database?" in r)
        assert open_row.startswith("⚖") and "OPEN dispute" in open_row
        assert ruled_row.startswith("✓") and "ruled: upholds 2026-11-14" in ruled_row
        assert "OPEN" not in ruled_row


async def test_every_tab_of_a_finding_or_a_seat_heading_says_what_it_is(letterbox):
    """A finding (Problems) or a seat's heading (Owed & late) is no letter: Body, Chain and
    Provenance showed its summary and the Thread tab was blank."""
    from tests.app.helpers import letters, thread_text

    letterbox.raw("planner/inbox/broken.md", "---\nid: x\nfrom planner\n---\n")
    app = app_for(letterbox, view="problems")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).current.letter is None
        app.action_show_tab("thread")
        await pilot.pause()
        assert "unreadable-file" in thread_text(app) and "broken.md" in thread_text(app)
        app.query_one("#letter-thread").focus()
        await pilot.press("j", "h", "enter", "l", "k")  # (captions: nothing to open)
        assert app.is_running and letters(app).current.letter is None
        await pilot.press("q")
        await pilot.press("1", "g")
        assert letters(app).current.heading is not None
        await pilot.pause()
        assert "owes" in thread_text(app)


async def test_problems_warns_of_human_seats_naming_no_seat(letterbox):
    """``human_seats`` naming a seat the letterbox does not have (a typo) is a settings
    warning in Problems, as ``check`` says it (it was silent: waiting-on-human never
    applied to the seat meant)."""
    from tests.app.helpers import list_text

    letterbox.raw("letterbox-tui.toml", 'human_seats = ["planner", "simom"]\n')
    app = app_for(letterbox, view="problems")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        found = [f for f in app.model.findings if f.code == "unknown-human-seat"]
        assert len(found) == 1 and '"simom"' in found[0].detail and found[0].paths == ("letterbox-tui.toml",)
        await until(pilot, lambda: any("unknown-human-seat" in r for r in list_text(app)))


async def test_an_unsupported_entry_says_why_answers_are_unknown_and_what_to_do(letterbox):
    """An ``archive/`` in a seat made most answers unknown, and Problems said only "archive
    folders are not read": not why that unsettles the other letters, nor what to do."""
    (letterbox.root / "builder" / "archive").mkdir()
    app = app_for(letterbox, view="problems")
    async with app.run_test(size=(120, 40)) as pilot:
        await scanned(pilot, app)
        lst = app.letter_list
        lst.cursor = next(i for i, r in enumerate(lst.rows) if r.item is not None and r.item.code == "unsupported-entry")
        head = app.query_one("#letter-head")
        await until(pilot, lambda: "builder/archive" in head.render().plain)
        text = " ".join(head.render().plain.split())
        assert "may be anything" in text and "unknown" in text, text
        assert "processed/" in text and "complete" in text, text

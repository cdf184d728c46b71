"""Writing screens: each validates its fields and writes through the one gate."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Checkbox, Input, Select, Static, TextArea

from letterbox_tui.app.screens.choice import ChoiceScreen
from letterbox_tui.app.screens.write import WriteScreen
from letterbox_tui.core.header import parse_header
from tests.app.helpers import SIZE, app_for, letters, scanned, until

PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"
BUDGET = "2026-11-21T090000-builder-request-budget-aaaa0004"
V3A = "2026-11-14T090000-planner-decision-db-choice-bbbb0003"
V3B = "2026-11-14T100000-builder-decision-db-choice-bbbb0004"
DISPUTE2 = "2026-11-26T090000-reviewer-dispute-plans-cccc0002"


def new_files(root: Path, before: set[Path]) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p not in before)


def all_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def fields(path: Path) -> dict[str, str]:
    text = path.read_text()
    head = text.split("---\n")[1]
    return dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "") for line in head.splitlines())


async def open_screen(pilot, app, key: str) -> WriteScreen:
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, WriteScreen))
    return app.screen


async def about_of(letterbox, letter: str, key: str) -> str:
    """What the form ``key`` opens on ``letter`` says it is about."""
    app = app_for(letterbox, letter=letter, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_screen(pilot, app, key)
        return screen.query_one("#w-about", Static).render().plain


async def send(pilot, app, screen: WriteScreen) -> None:
    await pilot.press("ctrl+s")
    await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
    await scanned(pilot, app, count=2)


def error_text(screen: WriteScreen) -> str:
    return screen.query_one("#w-error", Static).render().plain


async def test_compose_writes_a_letter_into_the_recipients_inbox(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        before = all_files(letterbox.root)
        screen = await open_screen(pilot, app, "c")
        assert screen.query_one("#w-send", Button).disabled  # empty slug and body
        assert "a slug is needed" in error_text(screen)
        screen.query_one("#w-as", Select).value = "planner"
        screen.query_one("#w-to", Select).value = "builder"
        screen.query_one("#w-slug", Input).value = "Bad Slug"
        await pilot.pause()
        assert "may hold only a-z" in error_text(screen)
        screen.query_one("#w-slug", Input).value = "migration-window"
        screen.query_one("#w-subject", Input).value = "Pick a migration window"
        screen.query_one("#w-deadline", Input).value = "2026-12-02T12:00:00"
        await pilot.pause()
        assert "needs RFC 3339 with an offset" in error_text(screen)
        screen.query_one("#w-deadline", Input).value = "2026-12-02T12:00:00Z"
        screen.query_one("#w-task", Checkbox).value = True
        screen.query_one("#w-re", Input).value = ""
        screen.query_one("#w-body", TextArea).text = "When can we migrate?\n"
        await pilot.pause()
        assert "Ready to send" in error_text(screen)
        await send(pilot, app, screen)
        made = new_files(letterbox.root, before)
        assert len(made) == 1 and made[0].parent == letterbox.root / "builder" / "inbox"
        f = fields(made[0])
        assert f["from"] == "planner" and f["to"] == "builder" and f["type"] == "request"
        assert f["requires_ack"] == "true" and f["deadline"] == "2026-12-02T12:00:00Z"
        assert f["sent"] == "2026-11-29T15:00:00Z"  # the app's clock
        assert f["subject"] == "Pick a migration window"
        assert made[0].read_text().endswith("When can we migrate?\n")
        assert any(r.letter is not None and r.letter.id == f["id"] for r in letters(app).rows)


async def test_pointer_errors_are_all_shown_before_send_and_nothing_is_written(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        before = letterbox.tree_bytes()
        screen = await open_screen(pilot, app, "c")
        screen.query_one("#w-as", Select).value = "planner"
        screen.query_one("#w-to", Select).value = "builder"
        screen.query_one("#w-slug", Input).value = "follow-up"
        screen.query_one("#w-re", Input).value = "2026-01-01T000000-nobody-request-ghost-00000000"
        screen.query_one("#w-thread", Input).value = "not a label"
        screen.query_one("#w-body", TextArea).text = "About the ghost letter.\n"
        await pilot.pause()
        err = error_text(screen)
        assert err.startswith("Not ready: ") and "re: no letter 2026-01-01T000000-nobody-request-ghost" in err
        assert "thread 'not a label' is not of id shape" in err  # every problem at once
        assert screen.query_one("#w-send", Button).disabled
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, WriteScreen) and letterbox.tree_bytes() == before
        screen.query_one("#w-re", Input).value = PLAN
        screen.query_one("#w-thread", Input).value = "a-free-label"  # a thread is a free label (v0.5)
        await pilot.pause()
        assert "Ready to send" in error_text(screen)


async def test_a_refused_write_shows_the_gate_error_and_writes_nothing(letterbox):
    import shutil

    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_screen(pilot, app, "c")
        screen.query_one("#w-as", Select).value = "planner"
        screen.query_one("#w-to", Select).value = "reviewer"
        screen.query_one("#w-slug", Input).value = "x" * 80
        await pilot.pause()
        assert "the task's replies would have 141-character ids" in error_text(screen)  # checked as typed
        screen.query_one("#w-slug", Input).value = "gone-seat"
        screen.query_one("#w-body", TextArea).text = "To a seat removed since the scan.\n"
        await pilot.pause()
        assert "Ready to send" in error_text(screen)
        shutil.rmtree(letterbox.root / "reviewer")  # the gate sees what the form could not
        before = letterbox.tree_bytes()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: error_text(screen).startswith("Refused: "))
        assert isinstance(app.screen, WriteScreen)  # still open, nothing written
        err = error_text(screen)
        assert "reviewer" in err and "nothing was written" in err
        assert letterbox.tree_bytes() == before
        await pilot.press("escape")  # changed: asks
        await pilot.pause()
        await pilot.click("#choice-discard")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        assert letterbox.tree_bytes() == before


async def test_reply_ack_publishes_the_reply_and_the_sidecar(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_screen(pilot, app, "r")
        assert screen.query_one("#w-as", Select).value == "builder"  # the recipient replies
        screen.query_one("#w-kind", Select).value = "ack"
        screen.query_one("#w-body", TextArea).text = "On it.\n"
        await pilot.pause()
        await send(pilot, app, screen)
        reply = letterbox.root / "planner" / "inbox" / f"{PLAN}--builder--ack.md"
        assert reply.is_file()
        assert fields(reply)["re"] == PLAN
        assert (letterbox.root / "builder" / "inbox" / f"{PLAN}.md.ack").exists()


async def test_reply_result_closes_the_task(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_screen(pilot, app, "r")
        screen.query_one("#w-kind", Select).value = "result"
        screen.query_one("#w-body", TextArea).text = "Plan attached.\n"
        await pilot.pause()
        await send(pilot, app, screen)
        assert (letterbox.root / "planner" / "inbox" / f"{PLAN}--builder--result.md").is_file()
        assert (letterbox.root / "builder" / "processed" / f"{PLAN}.md").is_file()
        assert all(r.letter is None or r.letter.id != PLAN for r in app.model.views["view:owed"])


async def test_supersede_points_at_the_old_letter(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        before = all_files(letterbox.root)
        screen = await open_screen(pilot, app, "s")
        assert screen.query_one("#w-slug", Input).value == "renewal-plan"
        assert screen.query_one("#w-to", Select).value == "builder"
        screen.query_one("#w-body", TextArea).text = "Revised: include the backup tier.\n"
        await pilot.pause()
        # the old letter's deadline (Nov 27) is kept, and it is in the past: asked first
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert "in the past" in app.screen.query_one("#choice-text", Static).render().plain
        await pilot.click("#choice-send")
        await until(pilot, lambda: not isinstance(app.screen, (WriteScreen, ChoiceScreen)))
        await scanned(pilot, app, count=2)
        made = new_files(letterbox.root, before)
        assert len(made) == 1
        f = fields(made[0])
        assert f["supersedes"] == PLAN and f["type"] == "request" and f["from"] == "planner"
        old = [x for x in app.model.snapshot.letters if x.id == PLAN][0]
        assert app.model.res.current(old).value == "no"


async def test_supersede_of_a_superseded_letter_says_it_makes_a_fork(letterbox):
    """The form names the letters that supersede the old one already (another would make a
    fork), as ``supersede`` does on stderr; a head's form says nothing of it."""
    v2 = "2026-11-12T090000-planner-decision-db-choice-bbbb0002"
    about = await about_of(letterbox, v2, "s")
    assert ("Already superseded by 2026-11-14T090000-planner-decision-db-choice-bbbb0003, "
            "2026-11-14T100000-builder-decision-db-choice-bbbb0004") in about and "fork" in about
    assert "Already superseded" not in await about_of(letterbox, PLAN, "s")


async def test_dispute_needs_two_marked_letters(letterbox):
    app = app_for(letterbox, view="owed")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("d")
        assert not isinstance(app.screen, WriteScreen)
        assert any("Mark two or more" in str(n.message) for n in app._notifications)
        lst = letters(app)
        await pilot.press("g", "j", "m")  # the plan (first row under builder's heading)
        await pilot.press("G")  # the budget (last row)
        await pilot.press("m")
        assert len(lst.marked) == 2
        before = all_files(letterbox.root)
        screen = await open_screen(pilot, app, "d")
        screen.query_one("#w-as", Select).value = "reviewer"
        screen.query_one("#w-to", Select).value = "reviewer"
        await pilot.pause()
        assert PLAN in screen.query_one("#w-body", TextArea).text
        await send(pilot, app, screen)
        made = new_files(letterbox.root, before)
        assert len(made) == 1 and made[0].parent == letterbox.root / "reviewer" / "inbox"
        f = fields(made[0])
        assert f["type"] == "dispute" and {s.strip() for s in f["disputes"].split(",")} == {PLAN, BUDGET}
        assert not lst.marked


async def test_rule_upholds_the_chosen_letter(letterbox):
    app = app_for(letterbox, view="disputes")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("j")
        await pilot.press("u")  # a disputed letter, not a dispute: refused
        assert not isinstance(app.screen, WriteScreen)
        await pilot.press("k")
        assert letters(app).current.letter.id == DISPUTE2
        before = all_files(letterbox.root)
        screen = await open_screen(pilot, app, "u")
        screen.query_one("#w-as", Select).value = "reviewer"
        screen.query_one("#w-upholds", Select).value = BUDGET
        await pilot.pause()
        await send(pilot, app, screen)
        made = new_files(letterbox.root, before)
        f = fields(made[0])
        assert f["type"] == "ruling" and f["rules_on"] == DISPUTE2 and f["upholds"] == BUDGET
        assert app.model.counts["view:disputes"] == 0


async def test_rule_on_a_ruled_dispute_names_the_ruling_there(letterbox):
    """Ruling again on a dispute already ruled: the form names the ruling and what it
    upholds (another upholding leaves the rulings disagreeing); an open one's says nothing."""
    about = await about_of(letterbox, "2026-11-15T090000-reviewer-dispute-db-choice-cccc0001", "u")
    assert ("Ruled already by 2026-11-16T090000-reviewer-ruling-db-choice-eeee0001 "
            "(upholds 2026-11-14T090000-planner-decision-db-choice-bbbb0003)") in about
    assert "Ruled already" not in await about_of(letterbox, DISPUTE2, "u")


async def test_record_review_updates_the_header(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert "no review for 3 days" in app.query_one("#topbar", Static).render().plain
        screen = await open_screen(pilot, app, "R")
        screen.query_one("#w-as", Select).value = "planner"
        await pilot.pause()
        body = screen.query_one("#w-body", TextArea).text
        assert "Review by planner" in body and PLAN in body
        before = all_files(letterbox.root)
        await send(pilot, app, screen)
        made = new_files(letterbox.root, before)
        assert len(made) == 1 and made[0].parent == letterbox.root / "planner" / "inbox"
        f = fields(made[0])
        assert f["type"] == "review" and f["from"] == "planner" and f["to"] == "planner"
        top = app.query_one("#topbar", Static).render().plain
        assert "last review just now" in top and "planner" in top


def test_written_letters_parse_as_letters(letterbox):
    """Guard for the helpers above: a header the app wrote is a readable header."""
    path = letterbox.root / "builder" / "inbox" / f"{PLAN}.md"
    assert parse_header(path.read_bytes()) is not None


async def test_body_can_be_written_in_the_editor(letterbox, tmp_path, monkeypatch):
    editor = tmp_path / "fake-editor"
    editor.write_text('#!/bin/sh\nprintf "Written in the editor.\\n" > "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_screen(pilot, app, "r")
        await pilot.pause()
        await pilot.press(*"Typed", "home", "ctrl+e", "!")  # ctrl+e is end-of-line in a field
        assert screen.query_one("#w-body", TextArea).text == "Typed!"
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert screen.query_one("#w-body", TextArea).text == "Written in the editor.\n"
        assert "Ready to send" in error_text(screen)
        assert not list(tmp_path.glob("letterbox-tui-*.md"))  # the temporary file is gone
        assert not any("letterbox-tui-" in p.name for p in letterbox.root.rglob("*"))


async def test_rule_and_review_default_to_the_seat_that_audits(letterbox):
    """Nobody has written in this session: the author of the latest review or ruling
    (reviewer, in this letterbox) is the natural author of the next ruling or review."""
    app = app_for(letterbox, view="disputes")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).current.letter.id == DISPUTE2
        screen = await open_screen(pilot, app, "u")
        assert screen.query_one("#w-as", Select).value == "reviewer"


async def test_the_form_names_every_marked_letter_and_every_reply_kind_at_80x24(letterbox):
    """What a form is about is never cut: a dispute of four marked letters named three of
    them above its fields (the fourth was hidden under them), and a reply to a long id
    lost the line saying what info does."""
    from tests.app.helpers import screen_text

    long_id = "2026-11-27T090000-planner-request-" + "a-rather-long-subject-slug-" * 2 + "dddd0001"
    letterbox.letter(long_id, frm="planner", to="builder", type="request", requires_ack="true",
                     sent="2026-11-27T09:00:00Z")
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        await pilot.press("g", "m", "j", "m", "j", "m", "j", "m")
        marked = [r.letter.id for r in lst.rows if r.key in lst.marked]
        assert len(marked) == 4
        screen = await open_screen(pilot, app, "d")
        await pilot.pause()
        shown = screen_text(app)
        joined = "".join(ch for ch in shown if ch not in "│ \n")  # (an id may wrap)
        above = joined[:joined.index("Asseat")]  # named above the fields, not only in the body
        assert all(x in above for x in marked), shown
        assert "As seat" in shown and "Send (^s)" in shown
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        lst.cursor = next(i for i, r in enumerate(lst.rows) if r.letter is not None and r.letter.id == long_id)
        screen = await open_screen(pilot, app, "r")
        await pilot.pause()
        shown = screen_text(app)
        assert "info is a note." in shown and "As seat" in shown and "Send (^s)" in shown, shown

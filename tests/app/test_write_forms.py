"""The writing forms as a daily user meets them (#14 writing side): compose starts empty and
a request is a task, Esc on a changed form asks and the draft comes back next start, a past
deadline asks, the typed offset is shown back, pointers are checked and completed as typed,
a duplicate dispute is warned about, a ruling preselects nothing, the write runs in a worker."""

from __future__ import annotations

import json
import threading

from textual.widgets import Button, Checkbox, Input, Select, Static, TextArea

from letterbox_tui.app.screens.choice import ChoiceScreen
from letterbox_tui.app.screens.write import WriteScreen
from letterbox_tui.core.draft_store import DraftStore
from tests.app.helpers import SIZE, app_for, hold_scans, letters, scanned, until

PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"
BUDGET = "2026-11-21T090000-builder-request-budget-aaaa0004"
DISPUTE2 = "2026-11-26T090000-reviewer-dispute-plans-cccc0002"


def files(root):
    return {p for p in root.rglob("*") if p.is_file()}


def header(path) -> dict[str, str]:
    head = path.read_text().split("---\n")[1]
    return dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "") for line in head.splitlines())


def kept_field(box, name: str):
    """The newest kept draft's ``name`` field (None when no draft is kept)."""
    kept = DraftStore(box.root).kept()
    return kept[0].fields.get(name) if kept else None


def saving(app) -> bool:
    """A draft save is still under way in a worker."""
    return any(w.group == "draft" and not w.is_finished for w in app.workers)


def status(screen) -> str:
    return screen.query_one("#w-error", Static).render().plain


async def open_form(pilot, app, key: str) -> WriteScreen:
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, WriteScreen))
    await pilot.pause()
    return app.screen


async def test_compose_starts_empty_even_with_a_letter_selected(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert app.selected_letter().id == PLAN
        screen = await open_form(pilot, app, "c")
        v = screen.values()
        assert v["to"] == "" and v["re"] == "" and v["thread"] == "" and v["slug"] == "" and v["body"] == ""
        assert screen.query_one("#w-to", Select).has_focus  # the first empty field
        assert "choose the seat it goes to" in status(screen)


async def test_a_request_is_a_task_by_default_and_a_delegate_always(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        before = files(letterbox.root)
        screen = await open_form(pilot, app, "c")
        task = screen.query_one("#w-task", Checkbox)
        kind = screen.query_one("#w-type", Select)
        assert kind.value == "request" and task.value is True
        kind.value = "info"
        await pilot.pause()
        assert task.value is False
        kind.value = "delegate"
        await pilot.pause()
        assert task.value is True and task.disabled  # protocol v0.5: a delegate is a task
        kind.value = "request"
        await pilot.pause()
        assert task.value is True and not task.disabled
        task.value = False  # the user's own choice is kept from here on
        await pilot.pause()
        kind.value = "delegate"
        await pilot.pause()
        kind.value = "request"
        await pilot.pause()
        assert task.value is False
        task.value = True
        screen.query_one("#w-to", Select).value = "builder"
        screen.query_one("#w-slug", Input).value = "rotate-keys"
        screen.query_one("#w-deadline", Input).value = "2026-12-03T17:00:00+02:00"
        screen.query_one("#w-body", TextArea).text = "Please rotate the keys.\n"
        await pilot.pause()
        # the offset typed is what is shown back, with the UTC the letter holds
        assert "2026-12-03T17:00:00+02:00 (written in UTC: 2026-12-03T15:00:00Z), in 4d 0h" in status(screen) or \
            "2026-12-03T17:00:00+02:00 (written in UTC: 2026-12-03T15:00:00Z), in 4d" in status(screen)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        made = files(letterbox.root) - before
        f = header(next(iter(made)))
        assert f["type"] == "request" and f["requires_ack"] == "true" and f["deadline"] == "2026-12-03T15:00:00Z"
        assert any("2026-12-03T17:00:00+02:00" in str(n.message) for n in app._notifications)


async def test_a_past_deadline_asks_before_sending(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        before = letterbox.tree_bytes()
        screen = await open_form(pilot, app, "c")
        screen.query_one("#w-to", Select).value = "builder"
        screen.query_one("#w-slug", Input).value = "late-already"
        screen.query_one("#w-deadline", Input).value = "-1d"  # relative to the app's clock
        screen.query_one("#w-body", TextArea).text = "Was due yesterday.\n"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        text = app.screen.query_one("#choice-text", Static).render().plain
        assert "in the past" in text and "1d ago" in text
        await pilot.press("escape")  # Back: nothing sent
        await until(pilot, lambda: app.screen is screen)
        assert letterbox.tree_bytes() == before
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.click("#choice-send")
        await until(pilot, lambda: not isinstance(app.screen, (WriteScreen, ChoiceScreen)))
        made = [p for p in files(letterbox.root) if p.name.endswith(".md") and "late-already" in p.name]
        assert header(made[0])["deadline"] == "2026-11-28T15:00:00Z"


async def test_esc_on_a_changed_form_asks_and_the_draft_is_restored_next_start(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        before = letterbox.tree_bytes()
        screen = await open_form(pilot, app, "r")
        await pilot.press("escape")  # unchanged: closes at once
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        screen = await open_form(pilot, app, "r")
        screen.query_one("#w-kind", Select).value = "result"
        screen.query_one("#w-body", TextArea).text = "The plan is attached.\n"
        await pilot.pause()
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("escape")  # the safe answer: keep editing
        await until(pilot, lambda: app.screen is screen)
        assert screen.query_one("#w-body", TextArea).text == "The plan is attached.\n"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.click("#choice-save")
        await until(pilot, lambda: not isinstance(app.screen, (WriteScreen, ChoiceScreen)))
        assert letterbox.tree_bytes() == before  # never in the letterbox
    kept = DraftStore(letterbox.root).kept()
    assert len(kept) == 1 and kept[0].kind == "reply" and kept[0].target == PLAN
    assert str(DraftStore(letterbox.root).dir).startswith(str(letterbox.root.parent.parent))  # not under the box

    app = app_for(letterbox)  # the next start offers it back
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        offered = app.screen.query_one("#choice-text", Static).render().plain
        assert "a reply to " + PLAN in offered
        # two lines, the app's break (it showed as ␤: sanitized like a letter's text)
        assert "␤" not in offered and offered.splitlines()[-1].startswith("saved ")
        await pilot.press("r")  # one key answers: Restore (r)
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        screen = app.screen
        assert screen.target.id == PLAN
        assert screen.query_one("#w-kind", Select).value == "result"
        assert screen.query_one("#w-body", TextArea).text == "The plan is attached.\n"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        assert (letterbox.root / "planner" / "inbox" / f"{PLAN}--builder--result.md").is_file()
    assert DraftStore(letterbox.root).kept() == []  # sent: the draft is gone


async def test_a_form_open_when_the_app_closes_is_kept(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "c")
        screen.query_one("#w-slug", Input).value = "half-written"
        screen.query_one("#w-body", TextArea).text = "Half a thought"
        await until(pilot, lambda: kept_field(letterbox, "body") == "Half a thought")  # kept as typed
        screen.query_one("#w-body", TextArea).text = "Half a thought, and more"
        await pilot.pause()
        await app.action_quit()  # closed before the autosave ran: kept on the way out
    kept = DraftStore(letterbox.root).kept()
    assert len(kept) == 1 and kept[0].fields["body"] == "Half a thought, and more"
    assert kept[0].fields["slug"] == "half-written"


async def test_discarding_a_draft_removes_it(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "c")
        screen.query_one("#w-body", TextArea).text = "Never mind"
        await until(pilot, lambda: kept_field(letterbox, "body") == "Never mind")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.click("#choice-discard")
        await until(pilot, lambda: not isinstance(app.screen, (WriteScreen, ChoiceScreen)))
    assert DraftStore(letterbox.root).kept() == []


async def test_a_kept_draft_is_offered_with_its_time_in_the_display_zone(letterbox):
    """Issue 26 item 5: the offer said "saved 2026-12-03T07:45:59+00:00" (UTC, as the
    draft file keeps it) while every other time on screen was local."""
    from letterbox_tui.core.draft_store import KeptDraft

    (letterbox.root / "letterbox-tui.toml").write_text('[time]\nzone = "Asia/Tokyo"\n')
    DraftStore(letterbox.root).save(KeptDraft("compose", {"body": "half a thought"},
                                              saved_at="2026-11-29T14:30:00+00:00", name="0123456789abcdef"))
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        offered = app.screen.query_one("#choice-text", Static).render().plain
        assert offered.splitlines()[-1] == "saved Sun 2026-11-29 23:30 JST", offered

def test_a_damaged_draft_file_is_skipped(letterbox):
    store = DraftStore(letterbox.root)
    store.dir.mkdir(parents=True)
    (store.dir / "0123456789abcdef.json").write_text("{not json")
    (store.dir / "fedcba9876543210.json").write_text(json.dumps({"kind": "compose", "fields": {"body": "ok", "x": [1]}}))
    kept = store.kept()
    assert [k.fields for k in kept] == [{"body": "ok"}]


async def test_pointers_complete_from_the_letterbox(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "c")
        re = screen.query_one("#w-re", Input)
        re.focus()
        await pilot.press(*"2026-11-20T09")
        await until(pilot, lambda: re._suggestion == PLAN)
        await pilot.press("right")  # accepts the completion
        assert re.value == PLAN
        re.value = "budget"
        await pilot.pause()
        assert BUDGET in screen.query_one("#w-hint", Static).render().plain  # ids that hold it
        re.value = "nosuchthing"
        await pilot.pause()
        assert "no id in the letterbox holds" in screen.query_one("#w-hint", Static).render().plain


async def test_agent_seat_is_the_default_writer(letterbox, monkeypatch):
    monkeypatch.setenv("LETTERBOX_AGENT", "reviewer")
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "c")
        assert screen.query_one("#w-as", Select).value == "reviewer"


async def test_a_dispute_naming_the_same_letters_as_an_open_one_is_warned(letterbox):
    app = app_for(letterbox, view="disputes")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        lst = letters(app)
        open_one = next(x for x in app.model.snapshot.letters if x.id == DISPUTE2)
        named = set(open_one.disputes)
        app.open_mailbox("view:all")
        await pilot.pause()
        for i, row in enumerate(lst.rows):
            if row.letter is not None and row.letter.id in named:
                lst.cursor = i
                app.action_mark()
        screen = await open_form(pilot, app, "d")
        warn = screen.query_one("#w-warn", Static).render().plain
        assert "An open dispute already names these letters" in warn and DISPUTE2 in warn
        assert "Ready to send" in status(screen) or "Not ready" in status(screen)  # a warning, not a block


async def test_no_warning_for_a_new_dispute(letterbox):
    app = app_for(letterbox, view="owed")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("g", "j", "m", "j", "m")  # the plan and the docs review: no dispute names both
        screen = await open_form(pilot, app, "d")
        assert {x.id for x in screen.marked} != {PLAN, BUDGET}
        assert not screen.query("#w-warn")


async def test_the_ruling_form_preselects_nothing_to_uphold(letterbox):
    app = app_for(letterbox, view="disputes")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).current.letter.id == DISPUTE2
        before = letterbox.tree_bytes()
        screen = await open_form(pilot, app, "u")
        upholds = screen.query_one("#w-upholds", Select)
        assert upholds.value is Select.NULL
        assert "choose the letter to uphold, or none" in status(screen)
        assert screen.query_one("#w-send", Button).disabled
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert letterbox.tree_bytes() == before
        upholds.value = ""  # an explicit "none"
        await pilot.pause()
        assert "Ready to send" in status(screen)
        old = files(letterbox.root)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        made = list(files(letterbox.root) - old)
        assert len(made) == 1 and header(made[0])["rules_on"] == DISPUTE2 and "upholds" not in header(made[0])


async def test_the_write_gate_runs_off_the_ui_thread(letterbox, monkeypatch):
    import letterbox_tui.core.write as write

    seen = {}
    gate = threading.Event()
    real = write.deliver

    def slow(*a, **kw):
        seen["thread"] = threading.current_thread() is not threading.main_thread()
        gate.wait(5)
        return real(*a, **kw)

    monkeypatch.setattr(write, "deliver", slow)
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "c")
        screen.query_one("#w-to", Select).value = "builder"
        screen.query_one("#w-slug", Input).value = "slow-disk"
        screen.query_one("#w-body", TextArea).text = "On a slow disk.\n"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "Sending" in status(screen))
        assert screen.query_one("#w-send", Button).disabled  # no second send while the first runs
        screen.query_one("#w-subject", Input).value = "still typing"  # the UI answers meanwhile
        await pilot.pause()
        gate.set()
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen))
        assert seen["thread"] is True


def test_the_forms_id_length_check_is_the_gates(letterbox):
    """What the form says as typed is what the gate would refuse, for the same numbers,
    and it says it once (the form and the gate share one rule: core.write.id_room_problem)."""
    from datetime import datetime, timezone

    from letterbox_tui.app.screens.write_rules import problems
    from letterbox_tui.core.errors import LetterboxError
    from letterbox_tui.core.write import Draft, deliver

    now = datetime(2026, 11, 29, 15, tzinfo=timezone.utc)
    for n in (60, 80, 94, 95, 100, 110):
        for task in (True, False):
            slug = "s" * n
            form = {"as": "planner", "to": "builder", "type": "request", "slug": slug, "task": task, "body": "x"}
            said = [p for p in problems("compose", form, None, now) if "characters" in p or "-character" in p]
            try:
                deliver(letterbox.root, Draft(sender="planner", recipient="builder", type="request", slug=slug,
                                              body="x\n", requires_ack=task), now=now)
                gate = None
            except LetterboxError as exc:
                gate = str(exc)
            assert len(said) == (0 if gate is None else 1), (n, task, said, gate)
            if said:
                assert said[0].split(":")[0] == gate.split(":")[0]


async def test_a_thread_completes_from_the_labels_in_use(letterbox):
    letterbox.letter("2026-11-28T120000-planner-info-note-aaaa0009", frm="planner", to="builder",
                     thread="storage-renewal", sent="2026-11-28T12:00:00Z")
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "c")
        thread = screen.query_one("#w-thread", Input)
        thread.focus()
        await pilot.press(*"stor")
        await until(pilot, lambda: thread._suggestion == "storage-renewal")
        await pilot.press("right")
        assert thread.value == "storage-renewal"
        thread.value = "brand-new-label"
        await pilot.pause()
        assert "a new label" in screen.query_one("#w-hint", Static).render().plain
        assert "thread" not in status(screen)  # a free label is no problem


async def test_reopening_the_same_form_takes_up_its_kept_draft(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "r")
        screen.query_one("#w-body", TextArea).text = "Half a reply\n"
        await pilot.pause()
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.click("#choice-save")
        await until(pilot, lambda: not isinstance(app.screen, (WriteScreen, ChoiceScreen)))
        screen = await open_form(pilot, app, "r")
        assert screen.query_one("#w-body", TextArea).text == "Half a reply\n"
        assert len(DraftStore(letterbox.root).kept()) == 1  # the same draft, not a second one
        screen.query_one("#w-body", TextArea).text = "Half a reply, now whole\n"
        await until(pilot, lambda: kept_field(letterbox, "body") == "Half a reply, now whole\n")
        assert len(DraftStore(letterbox.root).kept()) == 1


async def test_q_in_a_form_never_closes_it(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "c")
        screen.query_one("#w-body", TextArea).text = "Keep me"
        screen.query_one("#w-to", Select).focus()
        await pilot.press("q")
        await pilot.pause()
        assert app.screen is screen and app.is_running
        screen.query_one("#w-slug", Input).focus()
        await pilot.press("q")
        assert screen.query_one("#w-slug", Input).value == "q"


async def test_drafts_are_kept_off_the_ui_thread_and_never_outlive_a_send(letterbox, monkeypatch):
    threads = []
    real = DraftStore.save

    def save(self, draft):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(self, draft)

    monkeypatch.setattr(DraftStore, "save", save)
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await open_form(pilot, app, "c")
        screen.query_one("#w-to", Select).value = "builder"
        screen.query_one("#w-slug", Input).value = "typed"
        for i in range(5):
            screen.query_one("#w-body", TextArea).text = "x" * (i + 1)
        await until(pilot, lambda: kept_field(letterbox, "body") == "xxxxx" and not saving(app))
        assert threads and not any(threads)  # as typed: in a worker, never on the UI thread
        assert len(threads) < 5  # debounced, not one a keystroke
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, WriteScreen) and not saving(app))
    assert DraftStore(letterbox.root).kept() == []


async def test_compose_asked_for_while_the_letterbox_is_read_opens_when_it_is_read(letterbox, monkeypatch):
    """``c`` pressed before the first scan ends is kept, not dropped: the form opens after it."""
    release = hold_scans(monkeypatch)
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.scanning)
        await pilot.press("c")
        await pilot.pause()
        assert app.model is None and not isinstance(app.screen, WriteScreen)
        release.set()
        await scanned(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        assert app.screen.values()["to"] == ""  # compose, empty

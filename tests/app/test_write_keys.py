"""Keys typed into the writing forms as a fast typist types them (issue 26 items 1 and 9):
Tab and the text right behind it arrive together, with no pause between, and every
character lands in the field Tab moved to, in every form (the chase form too); a review
opened and closed at once is unchanged (no warning, no draft kept)."""

from __future__ import annotations

import asyncio

import pytest

from textual import events
from textual.keys import _character_to_key
from textual.widgets import Input, TextArea

from letterbox_tui.app.screens.choice import ChoiceScreen
from letterbox_tui.app.screens.progress import ProgressScreen
from letterbox_tui.app.screens.write import WriteScreen
from letterbox_tui.core.draft_store import DraftStore
from tests.app.helpers import SIZE, app_for, letters, scanned, until

PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"
BUDGET = "2026-11-21T090000-builder-request-budget-aaaa0004"
DISPUTE2 = "2026-11-26T090000-reviewer-dispute-plans-cccc0002"


async def at_once(pilot, *parts: str) -> None:
    """Post every key to the app in one go, as a terminal delivers fast typing: none waits
    for the one before it to be handled. ``<tab>`` and ``<shift+tab>`` are keys, anything
    else is typed character by character. Returns once every key has been handled."""
    app = pilot.app
    for part in parts:
        if part.startswith("<") and part.endswith(">"):
            key = part[1:-1]
            app.post_message(events.Key(key, "\t" if key == "tab" else None))
            continue
        for ch in part:
            app.post_message(events.Key(ch if ch.isalnum() else _character_to_key(ch), ch))
    handled = asyncio.Event()
    app.call_later(handled.set)  # after the keys: the app has passed each one on
    await handled.wait()
    for _ in range(3):  # and the fields have handled what they were given
        await pilot.pause()


async def opened(pilot, app, key: str, kind=WriteScreen):
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, kind))
    await pilot.pause()
    return app.screen


def text_fields(screen) -> dict[str, str]:
    return {w.id.removeprefix("w-"): (w.value if isinstance(w, Input) else w.text)
            for w in screen.query("Input, TextArea") if w.id}


async def test_compose_tab_and_typing_together_fill_the_right_fields(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await opened(pilot, app, "c")  # the focus is in To
        await at_once(pilot, "<tab>", "<tab>", "slug-text", "<tab>", "Threat model for the auth flow", "<tab>",
                      "<tab>", "2026-12-05T17:00:00Z", "<tab>", "<tab>", "auth-flow", "<tab>", "<tab>",
                      "Please model the threats.")
        assert text_fields(screen) == {"slug": "slug-text", "subject": "Threat model for the auth flow",
                                       "deadline": "2026-12-05T17:00:00Z", "thread": "auth-flow", "re": "",
                                       "body": "Please model the threats."}
        await at_once(pilot, "<shift+tab>", "<shift+tab>", PLAN[:10])  # back to Thread: typed there
        assert text_fields(screen)["thread"] == PLAN[:10]  # (Tab selects the field's text: replaced)
        assert text_fields(screen)["body"] == "Please model the threats."


async def test_reply_tab_and_typing_together_fill_the_right_fields(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await opened(pilot, app, "r")  # the focus is in the body
        await at_once(pilot, "Noted, on it.", "<shift+tab>", "noted")
        assert text_fields(screen) == {"slug": "noted", "body": "Noted, on it."}


async def test_supersede_tab_and_typing_together_fill_the_right_fields(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await opened(pilot, app, "s")  # the focus is in the slug (taken from the old letter)
        await at_once(pilot, "renewal-plan-v2", "<tab>", "Renewal plan, second version", "<tab>", "<tab>", "+2d",
                      "<tab>", "<tab>", "The new plan.")
        v = text_fields(screen)
        assert v["slug"] == "renewal-plan-v2" and v["subject"] == "Renewal plan, second version"
        assert v["deadline"] == "+2d" and v["body"].startswith("The new plan.")


async def test_dispute_tab_and_typing_together_fill_the_right_fields(letterbox):
    app = app_for(letterbox, view="owed")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("g", "j", "m", "j", "m")
        screen = await opened(pilot, app, "d")  # the focus is in the slug
        body = text_fields(screen)["body"]
        await at_once(pilot, "plan-clash", "<tab>", "They clash. ")
        v = text_fields(screen)
        assert v["slug"] == "plan-clash" and v["body"] == "They clash. " + body


async def test_rule_tab_and_typing_together_fill_the_right_fields(letterbox):
    app = app_for(letterbox, view="disputes")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).current.letter.id == DISPUTE2
        screen = await opened(pilot, app, "u")  # the focus is on Upholds
        body = text_fields(screen)["body"]
        await at_once(pilot, "<tab>", "plans-ruled", "<tab>", "Both stand. ")
        v = text_fields(screen)
        assert v["slug"] == "plans-ruled" and v["body"] == "Both stand. " + body


async def test_review_tab_and_typing_together_fill_the_right_fields(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await opened(pilot, app, "R")  # the focus is in the body
        body = text_fields(screen)["body"]
        await at_once(pilot, "Checked. ", "<tab>", "xyz")  # Tab left the body: xyz is not in it
        assert text_fields(screen) == {"body": "Checked. " + body}
        assert screen.query_one("#w-editor").has_focus


async def test_progress_tab_and_typing_together_fill_the_right_fields(letterbox):
    app = app_for(letterbox, letter=PLAN)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await opened(pilot, app, "P", ProgressScreen)
        await at_once(pilot, "half done", "<tab>", "xyz")
        assert screen.query_one("#progress-note", Input).value == "half done"
        assert screen.query_one("#progress-write").has_focus


async def test_chase_tab_and_typing_together_fill_the_right_fields(letterbox):
    from letterbox_tui.app.screens.chase import ChaseScreen

    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await opened(pilot, app, "C", ChaseScreen)  # the focus is in the note
        await at_once(pilot, "<shift+tab>", "<tab>", "is the plan on track?", "<tab>", "xyz")
        assert screen.query_one("#chase-note", Input).value == "is the plan on track?"
        assert screen.query_one("#chase-cancel").has_focus

#: (the app's options, the key that opens a screen, the keys typed right behind it, the
#: field they must land in and its value); "s", "d", "r" and "u" are in the text on
#: purpose: on the list they are keys that open other forms
BEHIND_THE_OPENER = [
    ({}, "c", ("<tab>", "<tab>", "my-slug"), "#w-slug", "my-slug"),
    ({"letter": PLAN}, "r", ("Noted, sure.",), "#w-body", "Noted, sure."),
    ({"letter": PLAN}, "s", ("renewal-plan-v2",), "#w-slug", "renewal-plan-v2"),
    ({"letter": PLAN}, "P", ("drafts sent",), "#progress-note", "drafts sent"),
    ({}, "C", ("status, dear?",), "#chase-note", "status, dear?"),
    ({"view": "all"}, "F", ("ruled",), "#bs-input", "ruled"),
]


@pytest.mark.parametrize("options, key, typed, field, value", BEHIND_THE_OPENER,
                         ids=[row[1] for row in BEHIND_THE_OPENER])
async def test_keys_typed_right_behind_the_opening_key_land_in_the_screen_it_opens(letterbox, options, key, typed,
                                                                                   field, value):
    """``c`` then at once ``Tab Tab my-slug`` left the slug empty, and ``F`` then ``zebra``
    left the search empty while the list took the letters as keys (its ``s`` opened a
    supersede form): the keys behind the opening key had gone to the list before its screen
    was up, and the form's first field took the focus later still. Such a key is passed on
    afresh to the new screen, whose first field has the focus once it is mounted."""
    app = app_for(letterbox, **options)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: not app.views_building)
        await at_once(pilot, key, *typed)
        assert len(app.screen_stack) == 2, app.screen_stack  # the one screen asked for, nothing else
        got = app.screen.query_one(field)
        assert (got.value if isinstance(got, Input) else got.text).startswith(value)


async def test_an_opening_key_typed_into_a_bar_is_a_letter_there(letterbox):
    """Keys a bar's field takes are its own: ``c``, ``r``, ``s``, ``d`` typed into the query
    bar are letters of the query, no form opens."""
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("backslash")
        await until(pilot, lambda: isinstance(app.focused, Input))
        await at_once(pilot, "from=c", "rsd")
        assert len(app.screen_stack) == 1 and app.focused.value == "from=crsd"


async def test_a_review_opened_and_closed_at_once_is_unchanged(letterbox):
    """The review's body is written for the seat the form opens with; the seat the Select
    reports as it mounts changed nothing, so Esc closes without asking and keeps nothing."""
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await opened(pilot, app, "R")
        assert not screen.changed()
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, (WriteScreen, ChoiceScreen)))
        await until(pilot, lambda: not any(w.group == "draft" for w in app.workers if w.is_running))
    assert DraftStore(letterbox.root).kept() == []


async def test_a_draft_is_saved_once_the_keys_pause_never_while_they_come(letterbox, monkeypatch):
    """Debounced: no save while keys come faster than the quiet time (a throttle saved
    0.3 s after the first key, mid-word, and again later); one save soon after the last
    key, holding all of it."""
    import time

    from letterbox_tui.app.screens import write_drafts

    changes, saves = [], []
    real_save, real_schedule = DraftStore.save, WriteScreen._schedule_autosave

    def save(self, draft):
        saves.append((time.monotonic(), draft.fields.get("body")))
        return real_save(self, draft)

    def schedule(self):
        changes.append(time.monotonic())
        return real_schedule(self)

    monkeypatch.setattr(DraftStore, "save", save)
    monkeypatch.setattr(WriteScreen, "_schedule_autosave", schedule)
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        screen = await opened(pilot, app, "c")
        screen.query_one("#w-body", TextArea).focus()
        await pilot.pause()
        for ch in "typed steadily":  # a key each 0.03 s: faster than the quiet time
            app.post_message(events.Key(ch if ch.isalnum() else _character_to_key(ch), ch))
            await asyncio.sleep(0.03)
        await until(pilot, lambda: saves and saves[-1][1] == "typed steadily")
    quiet, most = write_drafts.QUIET, write_drafts.MOST
    assert quiet <= 0.3
    for when, _ in saves:  # every save came after a pause in the keys (or MOST into them)
        before = [c for c in changes if c < when]
        assert when - before[-1] >= quiet - 0.02 or when - before[0] >= most - 0.02
    assert len(saves) <= 2  # never once a key
    assert saves[-1][0] - changes[-1] < 1.0  # on disk soon after the last key (0.2 s unloaded)

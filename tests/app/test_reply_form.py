"""The reply form starts with the kind that makes sense for the letter and shows the write
gate's own refusals (wrong seat, a second ack, a closed letter) while it is filled, not
only after Send; and a form's one-line fields take long text without a layout per key."""

from __future__ import annotations

import pytest
from textual.screen import Screen
from textual.widgets import Button, Select, Static, TextArea

from letterbox_tui.app.screens.write import WriteScreen
from letterbox_tui.app.screens.write_parts import FieldInput
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.write import reply
from tests.app.helpers import app_for, scanned, until
from tests.app.letterboxes import NOW

PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"
NOTES = "2026-11-28T110000-planner-request-notes-aaaa0003"
ACCESS = "2026-11-22T090000-builder-request-access-aaaa0005"


def error_text(screen: WriteScreen) -> str:
    return screen.query_one("#w-error", Static).render().plain


async def open_reply(pilot, app, letter_id: str) -> WriteScreen:
    """The reply form on ``letter_id``."""
    letter = next(x for x in app.model.snapshot.letters if x.id == letter_id)
    assert app.select_letter(letter)
    await until(pilot, lambda: app.selected_letter() is letter)
    await pilot.press("r")
    await until(pilot, lambda: isinstance(app.screen, WriteScreen))
    await pilot.pause()
    return app.screen


async def leave(pilot, app) -> None:
    app.screen._leave(None, discard=True)
    await until(pilot, lambda: not isinstance(app.screen, WriteScreen))


async def test_the_reply_form_starts_with_the_kind_that_fits_and_refuses_as_it_is_filled(letterbox):
    """One app for the three cases (a start each costs seconds): a letter already acked,
    a task not yet acked replied to from the wrong seat, and a closed letter."""
    reply(letterbox.root, PLAN, "ack", seat="builder", body="On it.\n", now=NOW)
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await scanned(pilot, app)

        # acked already: a result, not a second ack
        screen = await open_reply(pilot, app, PLAN)
        kind = screen.query_one("#w-kind", Select)
        assert kind.value == "result"
        screen.query_one("#w-body", TextArea).text = "Plan attached.\n"
        await until(pilot, lambda: error_text(screen).startswith("Ready to send"))
        kind.value = "ack"  # refused as the field is set, not after Send
        await until(pilot, lambda: "already acked" in error_text(screen))
        assert screen.query_one("#w-send", Button).disabled
        kind.value = "result"
        await until(pilot, lambda: error_text(screen).startswith("Ready to send"))
        await leave(pilot, app)

        # a task not yet acked: ack; from a seat that is not its recipient: refused
        screen = await open_reply(pilot, app, NOTES)
        assert screen.query_one("#w-kind", Select).value == "ack"
        screen.query_one("#w-body", TextArea).text = "On it.\n"
        await until(pilot, lambda: error_text(screen).startswith("Ready to send"))
        screen.query_one("#w-as", Select).value = "reviewer"
        await until(pilot, lambda: "only 'builder', its recipient, may ack" in error_text(screen))
        assert screen.query_one("#w-send", Button).disabled
        # the very words the gate refuses with: one rule
        with pytest.raises(LetterboxError, match="only 'builder', its recipient, may ack"):
            reply(letterbox.root, NOTES, "ack", seat="reviewer", body="On it.\n", now=NOW)
        screen.query_one("#w-kind", Select).value = "info"  # anyone may send a note
        await until(pilot, lambda: error_text(screen).startswith("Ready to send"))
        await leave(pilot, app)

        # closed (answered by a result, in planner's processed/): a note
        screen = await open_reply(pilot, app, ACCESS)
        kind = screen.query_one("#w-kind", Select)
        assert kind.value == "info"
        kind.value = "result"
        await until(pilot, lambda: "already closed" in error_text(screen))
        await leave(pilot, app)


async def test_a_long_field_scrolls_and_typing_lays_out_nothing(letterbox, monkeypatch):
    """At 80 columns a subject longer than its field shows its end as it is typed, and no
    key in a one-line field asks for a layout of the form (it did on every key)."""
    layouts = []
    real = Screen._refresh_layout

    def counted(self, *a, **kw):
        layouts.append(type(self).__name__)
        return real(self, *a, **kw)

    app = app_for(letterbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        await pilot.pause()
        screen = app.screen
        for field in screen.query(FieldInput):  # the reactive FieldInput changes is right only for these
            assert not field.styles.auto_dimensions, field.id
        subject = screen.query_one("#w-subject", FieldInput)
        subject.focus()
        await pilot.pause()
        await until(pilot, lambda: not screen._layout_required)  # the focus's own layout done
        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        text = "a subject much longer than the field it is typed into at eighty columns, longer still, and on, to the end"
        await pilot.press(*[c if c.isalnum() else "space" if c == " " else "comma" for c in text])
        await until(pilot, lambda: subject.value == text)
        await pilot.pause()
        assert "WriteScreen" not in layouts
        assert len(text) > subject.size.width and subject.scroll_x > 0
        shown = "".join(s.text for s in subject.render_line(0))
        assert shown.rstrip().endswith("to the end")

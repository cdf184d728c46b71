"""The current-truth file from the app (#17): W writes it (asking for the path once, then
remembered in the user's own settings) and Current truth's status line says whether the
last written file is current."""

from __future__ import annotations

import frontmatter
from textual.widgets import Input, Static

from letterbox_tui.app.truth_file import TruthPathScreen
from letterbox_tui.core.settings import remembered_digest_path
from tests.app.helpers import SIZE, app_for, scanned, until

PLAN = "2026-11-20T090000-planner-request-renewal-plan-aaaa0001"


def status(app) -> str:
    return app.screen_stack[0].query_one("#status", Static).render().plain


async def test_write_asks_once_remembers_and_tracks_staleness(letterbox, tmp_path):
    target = tmp_path / "agent" / "MEMORY-letters.md"
    target.parent.mkdir()
    app = app_for(letterbox, view="truth")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert "truth file: none (W writes one)" in status(app)
        await pilot.press("W")
        await until(pilot, lambda: isinstance(app.screen, TruthPathScreen))
        field = app.screen.query_one("#truth-path", Input)
        assert field.value.endswith("MEMORY-letters.md")  # a suggestion beside the letterbox
        # inside the letterbox: refused in the prompt, nothing written
        field.value = str(letterbox.root / "MEMORY.md")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TruthPathScreen)
        assert "inside the letterbox" in app.screen.query_one("#truth-error", Static).render().plain
        assert not (letterbox.root / "MEMORY.md").exists()
        field.value = str(target)
        await pilot.press("enter")
        await until(pilot, lambda: target.exists() and app.truth_state is not None)
        assert frontmatter.loads(target.read_text())["generator"] == "letterbox-tui"
        assert remembered_digest_path(letterbox.root) == str(target)
        await until(pilot, lambda: ": current ·" in status(app))
        # the toast says what was written where, once (it read "written / written")
        note = [n for n in app._notifications if "truth" in (n.title or "")][-1]
        said = f"{note.title} {note.message}"
        assert said.count("written") == 1 and "MEMORY-letters.md" in said, said

        # the owed task gets its result: the file is stale after the rescan
        letterbox.letter(f"{PLAN}--builder--result", frm="builder", to="planner", type="result", re=PLAN,
                         sent="2026-11-28T10:00:00Z")
        app.start_scan()
        await scanned(pilot, app, count=2)
        await until(pilot, lambda: ": stale ·" in status(app))
        assert app.truth_state.detail.startswith("stale: ")

        # W again: no question, the remembered file is rewritten and current again
        before = target.read_text()
        await pilot.press("W")
        await until(pilot, lambda: ": current ·" in status(app))
        assert not isinstance(app.screen, TruthPathScreen)
        assert target.read_text() != before and PLAN not in target.read_text().split("## Owed")[1].split("##")[0]


async def test_a_users_own_file_at_the_remembered_path_is_never_overwritten(letterbox, tmp_path):
    from letterbox_tui.core.settings import remember_digest_path

    own = tmp_path / "notes.md"
    own.write_text("my own notes\n")
    remember_digest_path(letterbox.root, own)
    app = app_for(letterbox, view="truth")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: app.truth_state is not None)
        assert app.truth_state.status == "error" and "not a letterbox-tui digest" in app.truth_state.detail
        await pilot.press("W")
        await until(pilot, lambda: app.truth_state.wrote)
        assert app.truth_state.status == "error"
        assert own.read_text() == "my own notes\n"

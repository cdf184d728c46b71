"""The footer is contextual: the keys it shows depend on the focused pane or screen."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from letterbox_tui.app.screens.help import HelpScreen
from letterbox_tui.app.screens.write import WriteScreen
from tests.app.helpers import app_for, scanned, until


def footer_words(app) -> list[str]:
    return [f"{k.key_display} {k.description}" for k in app.screen.query(FooterKey)]


async def test_the_footer_follows_the_focus(letterbox):
    app = app_for(letterbox, view="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: footer_words(app))
        in_list = footer_words(app)
        assert in_list[:2] == ["⏎ Read", "/ Search"] and "q Quit" in in_list
        await pilot.press("enter")  # reading: q goes back, j scrolls, ] turns the tab
        await until(pilot, lambda: "q Back" in footer_words(app))
        reading = footer_words(app)
        assert {"j Scroll", "] Tab", "M Markdown"} <= set(reading) and "/ Search" not in reading
        await pilot.press("right_square_bracket")  # the Thread tab: its own keys
        await until(pilot, lambda: "l Read" in footer_words(app) or "→ Read" in footer_words(app))
        await pilot.press("q", "question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen) and footer_words(app))
        assert footer_words(app)[0].endswith("Close") and "/ Search" not in footer_words(app)
        await pilot.press("escape", "c")
        await until(pilot, lambda: isinstance(app.screen, WriteScreen) and footer_words(app))
        form = footer_words(app)
        assert form[0] == "^s Send" and "tab Next field" in form and "q Quit" not in form
        # every context fits 80 columns (the row of keys was cut at the right)
        for words in (in_list, reading, form):
            assert sum(len(w) + 2 for w in words) <= 80, words


async def test_changes_signalled_in_a_row_make_one_recompose_and_none_when_no_key_changes(letterbox, monkeypatch):
    """Binding changes signalled before the footer is next composed (a start signals
    several) recompose it once, with the keys of the context as it is then; signals that
    change no key it shows recompose nothing."""
    from letterbox_tui.app.widgets.footer import ContextFooter

    app = app_for(letterbox, view="all")
    recomposed: list[list[str]] = []
    recompose = ContextFooter.recompose

    async def counted(self):
        await recompose(self)
        recomposed.append(footer_words(app))

    monkeypatch.setattr(ContextFooter, "recompose", counted)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await until(pilot, lambda: "⏎ Read" in footer_words(app))
        await pilot.pause()
        in_list = footer_words(app)
        recomposed.clear()
        for _ in range(3):  # the list keeps the focus: the same keys
            app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert recomposed == [] and footer_words(app) == in_list
        app.screen.refresh_bindings()
        await pilot.press("enter")  # the focus moves to the body before the scheduled recompose runs
        await until(pilot, lambda: "q Back" in footer_words(app))
        await pilot.pause()
        assert len(recomposed) == 1 and recomposed[0] == footer_words(app) and "/ Search" not in recomposed[0]


async def test_a_question_shows_its_own_keys_not_those_beneath_it(letterbox):
    """A question (Esc on a changed form, q with a kept draft) left the footer of the
    screen beneath it: "^s Send  tab Next field" under "Unsent changes", and under
    "Quit?" the list's "/ Search  c Compose  r Reply", none of which the question takes."""
    from letterbox_tui.app.screens.choice import ChoiceScreen

    app = app_for(letterbox, view="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        app.screen.query_one("#w-slug").value = "words"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.pause()
        assert footer_words(app) == ["esc Back"]

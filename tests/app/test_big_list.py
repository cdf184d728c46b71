"""100,000 letters mount and scroll: the list renders only what is visible.

Timings are printed (``-s``), not asserted against a budget; the assertions are about
behaviour: the list mounts, the cursor reaches the end, and only a screenful of rows is
ever described.
"""

from __future__ import annotations

import time

from textual.app import App, ComposeResult
from textual.content import Content

from letterbox_tui.app.widgets.letter_list import LetterList, ListRow

N = 100_000


class ListApp(App):
    def __init__(self, rows):
        super().__init__()
        self.rows = rows
        self.described: list[int] = []

    def compose(self) -> ComposeResult:
        yield LetterList(id="letters", describe=self.describe)

    def describe(self, row: ListRow, width: int) -> Content:
        self.described.append(row.extra["n"])
        return Content(f"letter {row.extra['n']:06d}  [bold]not markup[/bold]")

    def on_mount(self) -> None:
        self.query_one(LetterList).set_rows(self.rows)
        self.query_one(LetterList).focus()


async def test_hundred_thousand_rows_mount_and_scroll():
    rows = [ListRow(f"k{i}", extra={"n": i}) for i in range(N)]
    app = ListApp(rows)
    t0 = time.perf_counter()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        mounted = time.perf_counter() - t0
        lst = app.query_one(LetterList)
        assert lst.virtual_size.height == N
        assert lst.cursor == 0
        first = set(app.described)
        assert first and max(first) < 60  # only the visible rows were described
        t1 = time.perf_counter()
        await pilot.press("G")
        await pilot.pause()
        assert lst.cursor == N - 1
        assert lst.scroll_offset.y >= N - 48
        assert N - 1 in app.described
        await pilot.press("pageup")
        await pilot.pause()
        assert lst.cursor < N - 40
        await pilot.press("g")
        await pilot.pause()
        assert lst.cursor == 0 and lst.scroll_offset.y == 0
        for _ in range(20):
            await pilot.press("j")
        assert lst.cursor == 20
        scrolled = time.perf_counter() - t1
        # a few screens' worth of rows, never the whole list
        assert len(set(app.described)) < 500
        # the key lookup (keep the selection across rescans) works at this size
        assert lst.index_of(f"k{N - 5}") == N - 5
        line = lst.render_line(0)
        assert "[bold]not markup[/bold]" in line.text
    print(f"\n100,000 rows: mounted and first paint {mounted:.2f}s; G, pageup, g, 20×j {scrolled:.2f}s")

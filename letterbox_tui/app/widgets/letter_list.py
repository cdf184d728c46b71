"""The letter list: a virtual ``ScrollView`` that renders only the visible rows.

``DataTable``, ``OptionList`` and ``ListView`` measure every row before the first paint,
which at 100,000 letters takes seconds to minutes. Here the widget holds a sequence of
rows and a ``describe`` function; ``render_line(y)`` asks for the one row at ``y`` and
keeps the rendered strips in an LRU cache (toolong's ``log_lines.py`` does the same).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.segment import Segment
from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass(slots=True, eq=False)
class ListRow:
    """One line of the list. ``key`` is unique within a list (a path, or ``group:...``).

    ``letter`` is the readable letter shown on this line, if any; ``heading`` makes the
    row a group heading (the cursor skips it, unless ``extra["fold"]``: a group that folds); ``item`` carries anything else the view needs
    (a finding, an unreadable file). ``note`` is a short status the view computed
    (for example ``"late 2d 3h"``) and ``depth`` indents the row under the one above.
    """

    key: str
    letter: object | None = None
    heading: Content | None = None
    note: str = ""
    note_style: str = ""
    depth: int = 0
    item: object | None = None
    extra: dict = field(default_factory=dict)


Describe = Callable[[ListRow, int], Content]


def moved_key(key: str) -> str | None:
    """The key of a letter's row once it moved between its seat's ``inbox/`` and
    ``processed/`` (the protocol closes a letter so: a reply, ``file``), None for a key
    that is not a letter's path."""
    for here, there in (("/inbox/", "/processed/"), ("/processed/", "/inbox/")):
        seat, found, name = key.partition(here)
        if found and "/" not in seat and "/" not in name:
            return f"{seat}{there}{name}"
    return None


class LetterList(ScrollView, can_focus=True):
    """Rows from a model; only the visible ones are rendered."""

    BINDINGS = [
        Binding("j,down", "cursor(1)", "Down", show=False, id="list.down"),
        Binding("k,up", "cursor(-1)", "Up", show=False, id="list.up"),
        Binding("g,home", "top", "Top", show=False, id="list.top"),
        Binding("G,end", "bottom", "Bottom", show=False, id="list.bottom"),
        Binding("pagedown,ctrl+d", "page(1)", "Page down", show=False, id="list.page_down"),
        Binding("pageup,ctrl+u", "page(-1)", "Page up", show=False, id="list.page_up"),
        Binding("enter", "open", "Open", show=False, id="list.open"),
        Binding("right_curly_bracket", "group(1)", "Next group", show=False, id="list.next_group"),
        Binding("left_curly_bracket", "group(-1)", "Previous group", show=False, id="list.prev_group"),
    ]

    COMPONENT_CLASSES = {"letter-list--cursor", "letter-list--heading", "letter-list--marked"}

    DEFAULT_CSS = """
    LetterList {
        background: $surface;
        overflow-x: hidden;
    }
    LetterList > .letter-list--cursor { background: $block-cursor-blurred-background; }
    LetterList:focus > .letter-list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: bold;
    }
    LetterList > .letter-list--heading { color: $accent; text-style: bold; background: $panel; }
    LetterList > .letter-list--marked { background: $accent 30%; }
    """

    cursor: reactive[int] = reactive(-1, always_update=True, init=False)

    class Highlighted(Message):
        """The cursor moved to a row (``row`` is None when the list is empty)."""

        def __init__(self, letter_list: LetterList, row: ListRow | None) -> None:
            super().__init__()
            self.letter_list = letter_list
            self.row = row

    class Opened(Message):
        def __init__(self, letter_list: LetterList, row: ListRow) -> None:
            super().__init__()
            self.letter_list = letter_list
            self.row = row

    def __init__(self, *, describe: Describe | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: Sequence[ListRow] = ()
        self.describe: Describe = describe or (lambda row, width: row.heading or Content(row.key))
        self.marked: set[str] = set()
        self.empty_text = Content("No letters.")
        self._cache: LRUCache[tuple, Strip] = LRUCache(1024)
        self._index: dict[str, int] | None = None

    # --- the model ----------------------------------------------------------------
    def set_rows(self, rows: Sequence[ListRow], *, keep: str | None = None, empty: Content | None = None) -> None:
        """Show ``rows``; keep the cursor on the row with key ``keep`` when it is there."""
        self.rows = rows
        self._index = None
        if empty is not None:
            self.empty_text = empty
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(rows))
        target = self.index_of(keep) if keep else None
        if target is None and keep:  # the letter moved (closed) while it was selected
            target = self.index_of(moved_key(keep))
        if target is None:
            target = self._selectable(0, 1)
        self.cursor = -1 if target is None else target
        if target is not None:
            self.scroll_to_cursor(center=True)
        self.refresh()

    def index_of(self, key: str | None) -> int | None:
        if key is None:
            return None
        if self._index is None:
            self._index = {row.key: i for i, row in enumerate(self.rows)}
        return self._index.get(key)

    @property
    def current(self) -> ListRow | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor]
        return None

    def invalidate(self) -> None:
        """Forget rendered strips (after a theme change or marks changed)."""
        self._cache.clear()
        self.refresh()

    def _selectable(self, start: int, step: int) -> int | None:
        i = start
        n = len(self.rows)
        while 0 <= i < n:
            if self.rows[i].heading is None or self.rows[i].extra.get("fold"):
                return i
            i += step
        return None

    # --- movement -----------------------------------------------------------------
    def move_to(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        step = 1 if index >= self.cursor else -1
        target = self._selectable(index, step)
        if target is None:
            target = self._selectable(index, -step)
        if target is not None:
            self.cursor = target
            self.scroll_to_cursor()

    def action_cursor(self, delta: int) -> None:
        if not self.rows:
            return
        start = self.cursor + delta
        target = self._selectable(start, 1 if delta > 0 else -1)
        if target is not None:
            self.cursor = target
            self.scroll_to_cursor()

    def action_top(self) -> None:
        self.move_to(0)

    def action_bottom(self) -> None:
        target = self._selectable(len(self.rows) - 1, -1)
        if target is not None:
            self.cursor = target
            self.scroll_to_cursor()

    def action_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_group(self, step: int) -> None:
        """``}``/``{``: to the next/previous group (a seat in Owed & late): its heading
        when the heading folds, else the group's first row."""
        heads = [i for i, row in enumerate(self.rows) if row.heading is not None]
        if not heads:
            return
        here = max((h for h in heads if h <= self.cursor), default=-1)
        if step > 0:
            target = next((h for h in heads if h > self.cursor), None)
        else:
            target = max((h for h in heads if h < here), default=here if here >= 0 else None)
        if target is None or target < 0:
            return
        if not self.rows[target].extra.get("fold"):
            target = self._selectable(target, 1)
        if target is not None:
            self.cursor = target
            self.scroll_to_cursor()

    def action_open(self) -> None:
        row = self.current
        if row is not None:
            self.post_message(self.Opened(self, row))

    def scroll_to_cursor(self, center: bool = False) -> None:
        # force: a list that just got its rows has no scrollbar until the next layout, and
        # Textual refuses to scroll a widget without one (the list opened at its top, the
        # cursor on the most urgent row thousands of rows below); the offset is still
        # clamped to the rows there are
        height = self.scrollable_content_region.height or 1
        y = self.cursor
        if center:
            self.scroll_to(y=max(0, y - height // 2), animate=False, immediate=True, force=True)
        elif y < self.scroll_offset.y:
            self.scroll_to(y=y, animate=False, immediate=True, force=True)
        elif y >= self.scroll_offset.y + height:
            self.scroll_to(y=y - height + 1, animate=False, immediate=True, force=True)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        self.post_message(self.Highlighted(self, self.current))

    def on_click(self, event) -> None:
        index = event.y + self.scroll_offset.y
        if 0 <= index < len(self.rows) and (self.rows[index].heading is None or self.rows[index].extra.get("fold")):
            self.cursor = index
            self.focus()

    def on_resize(self, event) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(self.rows))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # --- rendering ----------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        index = y + self.scroll_offset.y
        width = self.scrollable_content_region.width or self.size.width
        base = self.rich_style
        if not self.rows:
            if y == 1:
                return self._strip(self.empty_text.pad_left(2), width, None)
            return Strip.blank(width, base)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        row = self.rows[index]
        is_cursor = index == self.cursor
        marked = row.key in self.marked
        key = (index, width, is_cursor, marked, row.key)
        strip = self._cache.get(key)
        if strip is None:
            if row.heading is not None:
                content = row.heading
                component = "letter-list--heading"
                if is_cursor:  # a group heading that folds (Owed & late) takes the cursor
                    content = Content(content.plain)
                    component = "letter-list--cursor"
            else:
                content = Content("▌" if marked else " ") + self.describe(row, width - 1)
                if is_cursor:
                    # one colour on the cursor row: a coloured cell could vanish into it
                    content = Content(content.plain)
                component = "letter-list--cursor" if is_cursor else ("letter-list--marked" if marked else None)
            strip = self._strip(content, width, component)
            self._cache[key] = strip
        return strip

    def _strip(self, content: Content, width: int, component: str | None) -> Strip:
        from textual.style import Style as VisualStyle

        base_rich = self.rich_style
        if component is not None:
            base_rich = base_rich + self.get_component_rich_style(component)
        base = VisualStyle.from_rich_style(base_rich)
        parse = self.app.stylesheet.parse_style
        segments = [
            Segment(text, style.rich_style if style else None)
            for text, style in content.truncate(width, ellipsis=True).render(base, end="", parse_style=parse)
        ]
        return Strip(segments).adjust_cell_length(width, base_rich)

"""The query bar's input: Up/Down walk the query history (kept in the user's state
directory), and the term being typed completes from the query language and the letterbox
(keys, ``type=`` values, seat names, ids), shown as a suggestion that → accepts."""

from __future__ import annotations

from collections.abc import Callable

from textual.binding import Binding
from textual.suggester import Suggester
from textual.widgets import Input

from letterbox_tui.core.grammar import ADDED_TYPES, PRIORITIES, PROTOCOL_TYPES
from letterbox_tui.core.history import QueryHistory


def complete_term(text: str, model, ids: Callable[[str], list[str]] | None = None) -> str | None:
    """``text`` with its last term completed, or None. ``model``: the app's model (its
    seats), or None while the first scan runs; ``ids(part)``: the letterbox's ids and thread
    labels that start with ``part``, newest first."""
    from letterbox_tui.core.query import KEYS, operators  # (the evaluator: not before the first frame)

    if not text or text.endswith(" "):
        return None
    head, _, term = text.rpartition(" ")
    prefix = head + " " if head else ""
    for op in ("~=", "<=", ">=", "=", "<", ">"):
        key, sep, value = term.partition(op)
        if sep and key in KEYS:
            done, _, part = value.rpartition(",")
            done = done + "," if done else ""
            for candidate in _values(key, model, ids, part):
                if candidate.startswith(part) and candidate != part:
                    return prefix + key + sep + done + candidate
            return None
    for key in KEYS:
        if key.startswith(term) and key != term:
            return prefix + key + operators(key)[0]
    return None


def _values(key: str, model, ids, part: str) -> list[str] | tuple[str, ...]:
    if key == "type":
        return PROTOCOL_TYPES + ADDED_TYPES
    if key == "priority":
        return PRIORITIES
    from letterbox_tui.core.query import choices

    fixed = choices(key)
    if fixed:
        return fixed
    if model is None:
        return ()
    if key in ("from", "to"):
        return model.snapshot.seats
    if key in ("id", "re", "thread") and ids is not None:
        return ids(part)
    return ()


class TermSuggester(Suggester):
    def __init__(self, model: Callable[[], object], owner: Callable[[], object]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.model = model
        self.owner = owner
    def ids(self, part: str) -> list[str]:
        """The current model's ids and thread labels that start with ``part``, newest first
        (the forms' index of this scan, built once in a worker; nothing until it is)."""
        from letterbox_tui.app.screens.write_rules import cached_pointers, pointers_for

        model = self.model()
        if model is None:
            return []
        pointers = cached_pointers(model)
        if pointers is None:
            self.owner().run_worker(lambda: pointers_for(model), thread=True, group="pointers", exclusive=True)
            return []
        return [x for x in pointers.complete(part, 5, thread=True) if x.startswith(part)]

    async def get_suggestion(self, value: str) -> str | None:
        return complete_term(value, self.model(), self.ids)


class QueryInput(Input):
    """An ``Input`` with the query history on Up/Down and term completion."""

    BINDINGS = [
        Binding("up", "history(-1)", "Previous query", show=False, id="query.previous"),
        Binding("down", "history(1)", "Next query", show=False, id="query.next"),
    ]

    def __init__(self, *args, history: QueryHistory | None = None, **kwargs) -> None:
        super().__init__(*args, suggester=TermSuggester(lambda: getattr(self.app, "model", None), lambda: self), **kwargs)
        self._history = history
        self._at: int | None = None  # where Up/Down is in the history (None: the line being typed)
        self._typed = ""

    @property
    def history(self) -> QueryHistory:
        if self._history is None:
            # an app given its user settings by hand (screenshots, snapshots) reads and
            # writes none of the user's files
            mine = bool(getattr(getattr(self.app, "user_settings", None), "path", ""))
            self._history = QueryHistory(keep=mine)
        return self._history

    def remember(self, query: str) -> None:
        """A query that ran: the newest in the history (written in a worker: a slow disk
        never holds the query bar up)."""
        history = self.history
        history.add(query, save=False)
        lines = list(history.entries)
        self.run_worker(lambda: history.save_lines(lines), thread=True, group="history", exit_on_error=False)
        self._at = None

    def action_history(self, step: int) -> None:
        entries = self.history.entries
        if not entries:
            return
        if self._at is None:
            if step > 0:
                return
            self._typed = self.value
            self._at = len(entries)
        self._at = max(0, self._at + step)
        if self._at >= len(entries):
            self._at = None
            self.value = self._typed
        else:
            self.value = entries[self._at]
        self.cursor_position = len(self.value)

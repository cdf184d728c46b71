"""Small pieces of the writing forms: id completion, the keys a button names, the seat that
audits this letterbox."""

from __future__ import annotations

from textual.binding import Binding
from textual.suggester import Suggester



class IdSuggester(Suggester):
    """Completes a pointer field with the letterbox's ids (newest first)."""

    def __init__(self, pointers, *, thread: bool = False) -> None:
        """``pointers``: a callable giving the form's ``Pointers`` (None until built)."""
        super().__init__(use_cache=False, case_sensitive=True)
        self.pointers = pointers
        self.thread = thread

    async def get_suggestion(self, value: str) -> str | None:
        pointers = self.pointers()
        if pointers is None:
            return None
        found = [i for i in pointers.complete(value, 1, thread=self.thread) if i.startswith(value)]
        return found[0] if found else None


def bound_keys(node, binding_id: str) -> str:
    """The keys that run ``binding_id`` on ``node`` now, with the user's keymap applied, as
    the footer shows them: a button's label never claims a key that does something else."""
    bindings = node._bindings.copy()
    keymap = getattr(node.app, "_keymap", None)
    if keymap:
        bindings.apply_keymap(keymap)
    keys = [k for k, found in bindings.key_to_bindings.items() if any(b.id == binding_id for b in found)]
    return ", ".join(node.app.get_key_display(Binding(k, "")) for k in keys) or "no key"


def last_auditor(letters) -> str | None:
    """The seat that wrote the latest review or ruling: who audits this letterbox, the
    natural author of the next ruling, review or dispute. None when there is none."""
    best = None
    for x in letters:
        if x.type in ("review", "ruling") and x.sent_at is not None and (best is None or x.sent_at > best.sent_at):
            best = x
    return best.sender if best is not None else None

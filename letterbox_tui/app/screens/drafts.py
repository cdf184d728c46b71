"""Kept drafts offered back: at start (after the first scan) and from the command palette.
One draft at a time, newest first: restore it into its form, leave it for later, or
discard it."""

from __future__ import annotations

from textual.content import Content

from letterbox_tui.core.draft_store import DraftStore, KeptDraft

from ..sanitize import cleans
from .choice import ChoiceScreen


def offer_kept_drafts(app, *, quiet: bool = True) -> None:
    """Offer the newest kept draft of this letterbox (``quiet``: say nothing when none)."""
    if app.model is None:
        return
    if quiet and not getattr(app.user_settings, "path", ""):
        return  # user settings given by hand (screenshots, snapshots): none of the user's files
    kept = DraftStore(app.root).kept()
    if not kept:
        if not quiet:
            app.notify("No draft is kept for this letterbox.", timeout=3)
        return
    draft = kept[0]
    more = len(kept) - 1
    # the line break is the app's, not the draft's (through cleans it showed as ␤)
    text = cleans(("Kept from before: ", "bold"), (draft.summary(), "")) + Content("\n") + cleans(
        (f"saved {saved_when(draft, app.model.zone)}" + (f"; {more} more after this one" if more else ""),
         "$text-muted"))
    app.push_screen(ChoiceScreen("A draft was kept", text, [("restore", "Restore"), ("later", "Later"),
                                                           ("discard", "Discard it")], safe="later", focus="restore"),
                    lambda answer: _answer(app, draft, answer))


def saved_when(draft: KeptDraft, zone) -> str:
    """When the draft was saved, in the display zone as every time on screen (the file keeps
    it in UTC); as kept when it is no time (a draft file edited by hand)."""
    from datetime import datetime

    from letterbox_tui.core.times import full

    try:
        return full(datetime.fromisoformat(draft.saved_at), zone)
    except (TypeError, ValueError):
        return draft.saved_at


def _answer(app, draft: KeptDraft, answer: str | None) -> None:
    store = DraftStore(app.root)
    if answer == "discard":
        store.discard(draft.name)
        offer_kept_drafts(app)
    elif answer == "restore":
        restore(app, draft)


def restore(app, draft: KeptDraft) -> None:
    """Open the draft's form with what was typed; the draft stays kept until it is sent
    or discarded."""
    from .write import KINDS, WriteScreen

    m = app.model
    by_id = {}
    for x in m.snapshot.letters:
        by_id.setdefault(x.id, x)
    target = by_id.get(draft.target) if draft.target else None
    marked = [by_id[i] for i in draft.marked if i in by_id]
    gone = (draft.kind in ("reply", "supersede", "rule") and target is None) or (draft.kind == "dispute" and len(marked) < 2)
    if draft.kind not in KINDS or gone:
        app.notify(Content("The letter this draft was about is no longer in the letterbox; the draft stays kept."),
                   severity="warning", timeout=6)
        return
    app.push_screen(WriteScreen(draft.kind, m, target=target, marked=marked, restore=draft), app._written)

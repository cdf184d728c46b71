"""Drafts with their pointers filled in, shared by the command line and the app:
supersede, dispute (and the info letters telling the disputed authors), ruling, review."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..errors import LetterboxError
from ..grammar import PRIORITIES, REPLY_KINDS
from ..model import Letter, Snapshot
from .gate import Draft, IdIndex, default_slug, sent_stamp, utc, writable_thread

def review_draft(snapshot: Snapshot, seat: str, at: datetime) -> Draft:
    """A ``review`` letter to the reviewer's own seat recording what was owed and late at
    ``at``: ids and the seats that owe them, never copied bodies."""
    from ..owed import owed
    from ..resolve import resolve

    at_utc = utc(at)
    res = resolve(snapshot, at_utc)
    groups = owed(res)
    total = sum(len(g.items) for g in groups)
    late = sum(1 for g in groups for x in g.items if res.late(x, at_utc).yes)
    unsure = sum(1 for g in groups for x in g.items if res.late(x, at_utc).unknown)
    scope = snapshot.scope
    lines = [
        f"Review by {seat} of what is owed at {sent_stamp(at_utc)}.",
        f"Owed: {total}; late: {late}; lateness unknown: {unsure}.",
        "Scope: " + ("complete" if scope.complete else "incomplete (" + "; ".join(scope.why_incomplete()) + ")")
        + f", {scope.letters} letters.",
    ]
    for group in groups:
        lines += ["", f"{group.seat} owes:"]
        for letter in group.items:
            value = res.late(letter, at_utc).value
            mark = {"yes": " (late)", "unknown": " (late: unknown)"}.get(value, "")
            lines.append(f"- {letter.id}{mark}")
    if not groups:
        lines.append("Nothing is owed.")
    return Draft(
        sender=seat, recipient=seat, type="review", slug="owed-and-late", body="\n".join(lines) + "\n",
        subject=f"Review at {sent_stamp(at_utc)}: {total} owed, {late} late",
    )


# --- drafts with their pointers filled in (shared by the command line and the app) -----


def supersede_draft(
    snapshot: Snapshot,
    old_id: str,
    seat: str,
    body: str,
    *,
    to: str | None = None,
    type: str | None = None,
    slug: str | None = None,
    requires_ack: bool | None = None,
    priority: str | None = None,
    deadline: str | None = None,
    thread: str | None = None,
    subject: str | None = None,
    re: str = "",
) -> Draft:
    """A new version of ``old_id``: every field left as None is taken from the old letter
    (recipient, type, slug, task-ness, priority, deadline, thread, subject)."""
    old = IdIndex(snapshot).one("supersedes", old_id)
    kind = type or old.type
    if kind in REPLY_KINDS:
        raise LetterboxError(f"{old_id} is a {kind!r} reply; give the new letter's type")
    new_slug = slug or default_slug(old, "")
    if not new_slug:
        raise LetterboxError(f"cannot take a slug from {old_id}; give one")
    return Draft(
        sender=seat, recipient=to or old.recipient, type=kind, slug=new_slug, body=body,
        priority=priority or (old.priority if old.priority in PRIORITIES else "next"),
        requires_ack=old.task if requires_ack is None else requires_ack,
        deadline=old.deadline if deadline is None else deadline,
        thread=old.thread_id if thread is None else thread,
        re=re, supersedes=old.id,
        subject=old.subject if subject is None else subject,
    )


def dispute_draft(
    snapshot: Snapshot, ids: Sequence[str], seat: str, body: str = "", *, to: str | None = None,
    slug: str | None = None,
) -> Draft:
    """A ``dispute`` naming two or more letters, to the disputer's own seat by default, in
    their thread (``writable_thread``)."""
    index = IdIndex(snapshot)
    disputed = [index.one("disputes", i) for i in ids]
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise LetterboxError("a dispute names two or more different letters")
    if not body.strip():
        body = "These letters disagree and cannot all hold:\n" + "".join(f"- {i}\n" for i in ids)
    return Draft(
        sender=seat, recipient=to or seat, type="dispute", slug=slug or default_slug(disputed[0], "dispute"),
        body=body, disputes=list(ids), thread=writable_thread(disputed),
    )


def notify_drafts(snapshot: Snapshot, dispute: Letter, seat: str) -> list[Draft]:
    """``info`` letters telling each other author of the disputed letters about ``dispute``."""
    index = IdIndex(snapshot)
    disputed = [index.one("disputes", i) for i in dispute.disputes]
    drafts = []
    for author in dict.fromkeys(d.sender for d in disputed):
        if author == seat:
            continue
        named = [d.id for d in disputed if d.sender == author]
        drafts.append(Draft(
            sender=seat, recipient=author, type="info", slug=default_slug(dispute, "dispute"),
            body=f"Dispute {dispute.id} names your letter(s):\n" + "".join(f"- {i}\n" for i in named),
            re=dispute.id, thread=dispute.thread_id,
        ))
    return drafts


def ruling_draft(
    snapshot: Snapshot, dispute_id: str, seat: str, body: str = "", *, upholds: str = "",
    to: str | None = None, slug: str | None = None,
) -> Draft:
    """A ``ruling`` on a dispute, to the dispute's author by default, in its thread."""
    dispute = IdIndex(snapshot).one("rules_on", dispute_id)
    if dispute.type != "dispute":
        raise LetterboxError(f"{dispute_id} is a {dispute.type!r} letter, not a dispute")
    if not body.strip():
        body = f"Ruling on dispute {dispute.id}: " + (
            f"{upholds} is upheld.\n" if upholds else "closed without upholding any letter.\n"
        )
    return Draft(
        sender=seat, recipient=to or dispute.sender, type="ruling", slug=slug or default_slug(dispute, "ruling"),
        body=body, rules_on=dispute.id, upholds=upholds, thread=writable_thread([dispute]),
    )

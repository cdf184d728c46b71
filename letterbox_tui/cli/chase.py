"""``letterbox-tui chase ID --as S [NOTE]``: ask the seat that owes ID how it stands, with an
``info`` letter through the write gate (``core.chase``). For example::

    letterbox-tui chase 2026-11-29T140512-planner-request-renewal-plan-3f9a1c07 --as planner
    letterbox-tui chase ID --as planner "is the draft on track for Friday?"

A second chase within the silence setting is refused unless ``--again`` is given.
"""

from __future__ import annotations

from argparse import Namespace

from letterbox_tui.core.chase import chase_draft
from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.views.attention import Rules
from letterbox_tui.core.write import deliver, utc_now

from .common import load
from .write import _letter_id, _note, _published, _reports, _whole


@_reports
def cmd_chase(args: Namespace) -> int:
    root, settings, snapshot = load(_whole(args))
    letter_id, note = _letter_id(snapshot, args.id), args.note
    at = utc_now()
    draft = chase_draft(resolve(snapshot, at), letter_id, args.as_seat, " ".join(note),
                        rules=Rules.of(settings), again=args.again)
    published = deliver(root, draft, now=at, snapshot=snapshot)
    _published(published.id)
    _note(f"chased {draft.recipient} on {letter_id}")
    return 0

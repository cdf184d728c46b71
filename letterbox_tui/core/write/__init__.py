"""Writing (SPEC 4): the one write gate and everything that goes through it.

- ``gate``: ``Draft``, validation, header rendering and ``deliver`` (publishes a new letter);
- ``fs``: folders opened without following symlinks, publication by hidden temporary and
  exclusive link, the move to ``processed/``, ``init``;
- ``lifecycle``: the protocol's per-letter lifecycle lock;
- ``replies``: ``reply`` (ack/nack/result/info), ``file_letter``, ``progress``;
- ``drafts``: supersede, dispute, ruling and review drafts with their pointers filled in.

Callers import from here: ``from letterbox_tui.core.write import Draft, deliver, reply``.
"""

from __future__ import annotations

from .drafts import dispute_draft, notify_drafts, review_draft, ruling_draft, supersede_draft
from .fs import init_letterbox, move_to_processed, publish_bytes, read_body
from .gate import (
    MAX_WRITTEN_ID,
    MAX_ATTEMPTS,
    MAX_SUBJECT,
    SENDABLE_TYPES,
    Draft,
    IdIndex,
    Published,
    agent_seat,
    check_body,
    check_seat,
    default_slug,
    deliver,
    header_fields,
    id_room_problem,
    id_stamp,
    normalize_deadline,
    random_token,
    render,
    sent_stamp,
    utc_now,
    valid_written_id,
    writer_seat,
    writer_session,
)
from .replies import REPLY_ORDER, file_letter, reply, reply_refusal

__all__ = [
    "MAX_ATTEMPTS", "MAX_SUBJECT", "MAX_WRITTEN_ID", "agent_seat", "valid_written_id", "writer_seat",
    "writer_session", "SENDABLE_TYPES", "Draft", "IdIndex", "Published", "check_body",
    "check_seat", "default_slug", "deliver", "dispute_draft", "file_letter", "header_fields",
    "id_room_problem", "id_stamp",
    "init_letterbox", "move_to_processed", "normalize_deadline", "notify_drafts", "publish_bytes",
    "random_token", "read_body", "render", "reply", "reply_refusal", "REPLY_ORDER", "review_draft", "ruling_draft", "sent_stamp",
    "supersede_draft", "utc_now",
]

"""From parsed header fields to a ``Letter`` or an ``Unreadable`` (SPEC 3), in one place."""

from __future__ import annotations

import re

from .grammar import ID_RE, id_time, parse_time
from .header import HeaderResult
from .model import EXTERNAL_BRIDGE, Letter, Unreadable

_ALIAS_RE = re.compile(r"-[0-9a-f]{8}\.md$")
_SINGLE_POINTERS = ("re", "thread", "supersedes", "rules_on", "upholds")
_valid_id = ID_RE.fullmatch


def build(
    result: HeaderResult,
    *,
    path: str,
    seat: str,
    folder: str,
    name: str,
    size: int = 0,
    mtime_ns: int = 0,
    inode: int = 0,
    id_time_is_utc: bool = False,
) -> Letter | Unreadable:
    """Make the letter a parsed header describes, or say why the file is unreadable."""
    fields = result.fields
    if fields is None:
        return Unreadable(path, seat, folder, result.error, result.legible, result.illegible, size, mtime_ns, inode)
    f = dict(fields)
    get = f.get
    letter_id = get("id", "")
    sender = get("from", "")
    recipient = get("to", "")
    kind = get("type", "")
    error = ""
    if not letter_id:
        error = "no 'id' field" if "id" not in f else "empty 'id'"
    elif _valid_id(letter_id) is None:
        error = "invalid 'id'"
    elif not sender:
        error = "missing or empty 'from'"
    elif not recipient:
        error = "missing or empty 'to'"
    elif not kind:
        error = "missing or empty 'type'"
    if error:
        return Unreadable(path, seat, folder, error, f, "", size, mtime_ns, inode)

    flags: list[str] = []
    if name != letter_id + ".md":
        if name.startswith(letter_id + "-") and _ALIAS_RE.search(name) and len(name) == len(letter_id) + 12:
            flags.append("filename-alias")
        else:
            flags.append("id-filename-mismatch")
    malformed = []
    for key in _SINGLE_POINTERS:
        value = get(key)
        if value and _valid_id(value) is None:
            malformed.append(key)
    disputes_raw = get("disputes", "")
    disputes: tuple[str, ...] = ()
    if disputes_raw:
        disputes = tuple([p.strip() for p in disputes_raw.split(",")])
        if any(_valid_id(d) is None for d in disputes):
            malformed.append("disputes")
            disputes = tuple([d for d in disputes if _valid_id(d)])
    sent = get("sent", "")
    sent_at = parse_time(sent) if sent else None
    if sent_at is None:
        if not sent:
            flags.append("missing-sent")
            # As the protocol reads it: declared-UTC id prefixes stand in for a missing
            # `sent` only (a present but bad `sent` stays ambiguous), never across the bridge.
            if id_time_is_utc and sender != EXTERNAL_BRIDGE and recipient != EXTERNAL_BRIDGE:
                sent_at = id_time(letter_id)
                if sent_at is not None:
                    flags.append("time-from-id")
        else:
            flags.append("ambiguous-sent")
    deadline = get("deadline", "")
    deadline_at = parse_time(deadline) if deadline else None
    if deadline and deadline_at is None:
        flags.append("ambiguous-deadline")
    requires_ack = get("requires_ack", "")
    if not requires_ack:
        flags.append("missing-requires-ack")
    # By position, in Letter.__init__'s order (keywords cost more than the work here)
    return Letter(
        letter_id,  # id
        sender,  # sender
        recipient,  # recipient
        kind,  # type
        get("re", ""),  # re
        get("thread", ""),  # thread
        get("priority", ""),  # priority
        requires_ack,  # requires_ack
        deadline,  # deadline
        sent,  # sent
        get("supersedes", ""),  # supersedes
        disputes,  # disputes
        get("rules_on", ""),  # rules_on
        get("upholds", ""),  # upholds
        get("subject", ""),  # subject
        fields,  # fields
        seat,  # seat
        folder,  # folder
        path,  # path
        name,  # name
        sent_at,  # sent_at
        deadline_at,  # deadline_at
        tuple(flags),  # flags
        tuple(malformed),  # malformed
        size,  # size
        mtime_ns,  # mtime_ns
        inode,  # inode
    )

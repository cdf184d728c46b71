"""From parsed header fields to a ``Letter`` or an ``Unreadable`` (SPEC 3), in one place."""

from __future__ import annotations

import re

from .grammar import ID_RE, id_time, parse_time
from .header import HeaderResult
from .model import EXTERNAL_BRIDGE, Letter, Unreadable

_ALIAS_RE = re.compile(r"-[0-9a-f]{8}\.md$")
_SINGLE_POINTERS = ("re", "thread", "supersedes", "rules_on", "upholds")


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
    if result.fields is None:
        return Unreadable(path, seat, folder, result.error, result.legible, result.illegible, size, mtime_ns, inode)
    f = dict(result.fields)
    letter_id = f.get("id", "")
    error = ""
    if not letter_id:
        error = "no 'id' field" if "id" not in f else "empty 'id'"
    elif ID_RE.fullmatch(letter_id) is None:
        error = "invalid 'id'"
    else:
        for key in ("from", "to", "type"):
            if not f.get(key):
                error = f"missing or empty {key!r}"
                break
    if error:
        return Unreadable(path, seat, folder, error, f, "", size, mtime_ns, inode)

    flags: list[str] = []
    if name != letter_id + ".md":
        if name.startswith(letter_id + "-") and _ALIAS_RE.search(name) and len(name) == len(letter_id) + 12:
            flags.append("filename-alias")
        else:
            flags.append("id-filename-mismatch")
    malformed = [k for k in _SINGLE_POINTERS if f.get(k) and ID_RE.fullmatch(f[k]) is None]
    disputes_raw = f.get("disputes", "")
    disputes: tuple[str, ...] = ()
    if disputes_raw:
        disputes = tuple(p.strip() for p in disputes_raw.split(","))
        if any(ID_RE.fullmatch(d) is None for d in disputes):
            malformed.append("disputes")
            disputes = tuple(d for d in disputes if ID_RE.fullmatch(d))
    sender, recipient = f["from"], f["to"]
    sent = f.get("sent", "")
    sent_at = parse_time(sent)
    if sent_at is None:
        flags.append("missing-sent" if not sent else "ambiguous-sent")
        if id_time_is_utc and EXTERNAL_BRIDGE not in (sender, recipient):
            sent_at = id_time(letter_id)
            if sent_at is not None:
                flags.append("time-from-id")
    deadline = f.get("deadline", "")
    deadline_at = parse_time(deadline) if deadline else None
    if deadline and deadline_at is None:
        flags.append("ambiguous-deadline")
    requires_ack = f.get("requires_ack", "")
    if not requires_ack:
        flags.append("missing-requires-ack")
    return Letter(
        id=letter_id,
        sender=sender,
        recipient=recipient,
        type=f["type"],
        re=f.get("re", ""),
        thread=f.get("thread", ""),
        priority=f.get("priority", ""),
        requires_ack=requires_ack,
        deadline=deadline,
        sent=sent,
        supersedes=f.get("supersedes", ""),
        disputes=disputes,
        rules_on=f.get("rules_on", ""),
        upholds=f.get("upholds", ""),
        subject=f.get("subject", ""),
        fields=result.fields,
        seat=seat,
        folder=folder,
        path=path,
        name=name,
        sent_at=sent_at,
        deadline_at=deadline_at,
        flags=tuple(flags),
        malformed=tuple(malformed),
        size=size,
        mtime_ns=mtime_ns,
        inode=inode,
    )

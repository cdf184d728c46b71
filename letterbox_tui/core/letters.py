"""The one place a ``Letter`` is made (SPEC 3).

- ``build``: from parsed header fields to a ``Letter`` or an ``Unreadable``; every reader's
  output goes through it.
- ``FIELD_SLOTS`` and ``FILE_SLOTS``: which header field fills which ``Letter`` slot and
  what each field must be for a letter that gets no flag. ``build`` reads its pointer
  fields from the table. Adding a header field is done here: the table, ``build`` and
  ``state``/``restore``.
- ``state`` and ``restore``: a letter as plain data (str, int, tuples) and back, for a
  derived store: what ``build`` made, kept, not rebuilt.
- ``letters_equal``: every field, flag and time the same.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime

from .grammar import ID_RE, id_time, parse_time
from .header import HeaderResult
from .model import EXTERNAL_BRIDGE, Letter, Unreadable, header_getter

_ALIAS_RE = re.compile(r"-[0-9a-f]{8}\.md$")
_valid_id = ID_RE.fullmatch

#: The header fields a ``Letter`` keeps in a slot of its own, as (header key, slot, what
#: the value must be for a letter with no flag, the slot its time goes to). Kinds:
#: ``id`` a valid id, the file named ``<id>.md``; ``required`` present and not empty;
#: ``pointer`` empty or a valid id (else ``malformed``); ``time`` empty or a time with an
#: offset; ``sent`` a time with an offset (``missing-sent`` when absent); ``list`` ids
#: separated by commas (a tuple); ``text`` anything.
FIELD_SLOTS: tuple[tuple[str, str, str, str], ...] = (
    ("id", "id", "id", ""),
    ("from", "sender", "required", ""),
    ("to", "recipient", "required", ""),
    ("type", "type", "required", ""),
    ("re", "re", "pointer", ""),
    ("thread", "thread", "pointer", ""),
    ("priority", "priority", "text", ""),
    ("requires_ack", "requires_ack", "required", ""),
    ("deadline", "deadline", "time", "deadline_at"),
    ("sent", "sent", "sent", "sent_at"),
    ("supersedes", "supersedes", "pointer", ""),
    ("disputes", "disputes", "list", ""),
    ("rules_on", "rules_on", "pointer", ""),
    ("upholds", "upholds", "pointer", ""),
    ("subject", "subject", "text", ""),
)
#: The other slots, by the attribute that gives them, in this order: every header line's
#: key, their values (kept only when the named slots do not hold them), the seat, the
#: folder, the path from the root, the file name (kept only when it is not the path's last
#: part), flags, malformed pointers, and the file's stat when read (size, mtime_ns, inode,
#: ctime_ns).
FILE_SLOTS: tuple[str, ...] = (
    "header_keys", "header_values", "seat", "folder", "path", "name", "flags", "malformed", "size", "mtime_ns", "inode",
    "ctime_ns",
)
_SINGLE_POINTERS = tuple(key for key, _, kind, _ in FIELD_SLOTS if kind == "pointer")

#: the header fields whose values most letters share with others (seats, types, yes/no):
#: one string object each, however many letters carry it
SHARED_VALUES = frozenset(("from", "to", "type", "priority", "requires_ack"))
#: a header's keys -> ``header_keys``'s answer for them; most letters of a letterbox are
#: written by a few writers, in a few key orders
_KEYS: dict[tuple[str, ...], tuple[tuple[str, ...], tuple[int, ...], bool]] = {}
_intern = sys.intern


def header_keys(keys: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[int, ...], bool]:
    """The one tuple of ``keys`` letters share, where ``SHARED_VALUES`` lie in it, and
    whether a letter's named attributes hold the values of them all (``header_getter``:
    the letter then keeps no tuple of its values)."""
    found = _KEYS.get(keys)
    if found is None:
        keys = tuple([_intern(k) for k in keys])
        found = (keys, tuple([i for i, k in enumerate(keys) if k in SHARED_VALUES]),
                 header_getter(keys) is not None)
        if len(_KEYS) < 4096:
            _KEYS[keys] = found
    return found


def share_values(values: list[str], shared: tuple[int, ...]) -> None:
    """Make the values at ``shared`` (from ``header_keys``) the one string of their text."""
    for i in shared:
        values[i] = _intern(values[i])


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
    ctime_ns: int = 0,
    id_time_is_utc: bool = False,
) -> Letter | Unreadable:
    """Make the letter a parsed header describes, or say why the file is unreadable."""
    fields = result.fields
    if fields is None:
        return Unreadable(path, seat, folder, result.error, result.legible, result.illegible, size, mtime_ns, inode,
                          ctime_ns)
    keys, shared, named = header_keys(tuple([k for k, _ in fields]))
    values = [v for _, v in fields]
    share_values(values, shared)
    f = dict(zip(keys, values))
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
        return Unreadable(path, seat, folder, error, f, "", size, mtime_ns, inode, ctime_ns)

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
        (),  # fields: given as header_keys and header_values
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
        ctime_ns,  # ctime_ns
        keys,  # header_keys
        None if named else tuple(values),  # header_values: None when the named slots hold them
    )


# --- a letter kept and restored (a derived store) ------------------------------------

#: names the shape ``state`` gives; a store written for another shape is not read
STATE_LAYOUT = ("letter-state-2", Letter.__slots__, FIELD_SLOTS, FILE_SLOTS)


def state(letter: Letter) -> tuple:
    """What ``restore`` needs to give ``letter`` back: plain data only (str, int, tuples),
    its times as where they came from (0 none, 1 its own field, 2 the id's time prefix)."""
    return (
        letter.id, letter.sender, letter.recipient, letter.type, letter.re, letter.thread, letter.priority,
        letter.requires_ack, letter.deadline, letter.sent, letter.supersedes, letter.disputes, letter.rules_on,
        letter.upholds, letter.subject, letter.header_keys, letter.header_values, letter.seat, letter.folder, letter.path,
        letter.name, 0 if letter.sent_at is None else (2 if "time-from-id" in letter.flags else 1),
        0 if letter.deadline_at is None else 1, letter.flags, letter.malformed, letter.size, letter.mtime_ns,
        letter.inode, letter.ctime_ns,
    )


#: the type of each item ``state`` gives
_STATE_TYPES = (
    (str,) * 11 + (tuple,) + (str,) * 3 + (tuple, tuple) + (str,) * 4 + (int, int, tuple, tuple, int, int, int, int)
)
_join = "".join  # raises TypeError on anything but a str: a C-speed check of a tuple's items


def restore(kept: tuple) -> Letter:
    """The letter ``state`` kept (its times read again from its own text, the way ``build``
    read them). Raises ``ValueError`` or ``TypeError`` when ``kept`` has another shape or
    holds another type anywhere (the derived file it came from is no source of truth)."""
    if type(kept) is not tuple or tuple(map(type, kept)) != _STATE_TYPES:
        raise TypeError("not a kept letter")
    if len(kept[15]) != len(kept[16]):
        raise ValueError("not a kept letter: keys and values differ in number")
    _join(kept[15]), _join(kept[16])
    if kept[11] or kept[23] or kept[24]:  # disputes, flags, malformed: most letters have none
        _join(kept[11]), _join(kept[23]), _join(kept[24])
    (letter_id, sender, recipient, kind, re_, thread, priority, requires_ack, deadline, sent, supersedes,
     disputes, rules_on, upholds, subject, keys, values, seat, folder, path, name, sent_code, deadline_code,
     flags, malformed, size, mtime_ns, inode, ctime_ns) = kept
    return Letter(
        letter_id, sender, recipient, kind, re_, thread, priority, requires_ack, deadline, sent, supersedes,
        disputes, rules_on, upholds, subject, (), seat, folder, path, name,
        None if not sent_code else (parse_time(sent) if sent_code == 1 else id_time(letter_id)),
        parse_time(deadline) if deadline_code else None, flags, malformed, size, mtime_ns, inode, ctime_ns,
        header_keys(keys)[0], values,
    )


#: what two letters must agree on to be the same letter: each slot, as its attribute gives it
#: (the header's values, the file name and the times, wherever and whenever they are read)
COMPARED = tuple({"_values": "header_values", "_name": "name", "_sent_at": "sent_at", "_deadline_at": "deadline_at"}
                 .get(name, name) for name in Letter.__slots__)


def letters_equal(a: Letter | Unreadable, b: Letter | Unreadable) -> bool:
    """Every field, flag and time the same (how a letter kept and restored is compared)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Unreadable):
        return a == b
    for name in COMPARED:
        x, y = getattr(a, name), getattr(b, name)
        if x != y:
            return False
        if isinstance(x, datetime) and x.tzinfo != y.tzinfo:
            return False
    return True

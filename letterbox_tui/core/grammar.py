"""The small grammars of the protocol: ids, seats, slugs and times (SPEC 3)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

# Ids as read: up to 243 characters (the protocol's compat reader; its strict reader and
# every writer, this project's included, make at most 128: write.gate.MAX_WRITTEN_ID).
ID_RE = re.compile(r"[A-Za-z0-9_.:-]{1,243}")
SEAT_RE = re.compile(r"[a-z][a-z0-9-]*")
#: a header key (SPEC 3): the one definition, which the header grammar builds on
KEY = r"[A-Za-z][A-Za-z0-9_-]*"
KEY_RE = re.compile(KEY)
SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
TOKEN_RE = re.compile(r"[A-Za-z0-9_.:-]+")
HEX8_TAIL_RE = re.compile(r"-[0-9a-f]{8}$")
ID_TIME_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2})(\d{2})(\d{2})")
_ID_TIME_PREFIX_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{6}-")
REPLY_KINDS = ("ack", "nack", "result")
#: A time relative to a clock (SPEC 6, additive): ``now``, ``today``, ``yesterday``, ``-7d``,
#: ``+2d``, ``-36h``, ``-90m``. What it means is ``core.query.parse_when``'s.
RELATIVE_TIME_RE = re.compile(r"now|today|yesterday|[+-][0-9]{1,7}[dhm]")

PROTOCOL_TYPES = ("request", "delegate", "blocker", "status", "info", "ack", "nack", "result")
ADDED_TYPES = ("decision", "dispute", "ruling", "review")
PRIORITIES = ("now", "next", "whenever")

# "<seat>-<type>-" at the start of a parent id whose parties are not known: the earliest
# "-<type>-" wins, as the protocol's own reader does.
_PARENT_PREFIX_RE = re.compile(r"[a-z][a-z0-9-]*?-(?:" + "|".join(PROTOCOL_TYPES + ADDED_TYPES) + r")-")
# A zero offset written with a minus sign: RFC 3339's "offset unknown" (-00:00, and the
# -0000 / -00 / -00:00:00 spellings fromisoformat also takes).
_UNKNOWN_OFFSET_RE = re.compile(r"-00(?::?00)?(?::?00(?:\.0+)?)?$")


def lines(text: str) -> list[str]:
    """A protocol file's lines (a sidecar, a status note, a lease), as its line tools read
    them: split at each newline only, a carriage return before it dropped. A U+2028, a
    form feed or a lone carriage return is inside a line (``str.splitlines`` would end the
    line there, and cut a progress note short)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def valid_id(value: str) -> bool:
    return ID_RE.fullmatch(value) is not None


def valid_seat(value: str) -> bool:
    return SEAT_RE.fullmatch(value) is not None and value != "locks"


def tokens(text: str) -> set[str]:
    """Every id-shaped token in a text (used to find id mentions in broken headers)."""
    return set(TOKEN_RE.findall(text))


def parse_time(value: str) -> datetime | None:
    """An aware datetime from an RFC 3339 value with an offset, else None (ambiguous).

    What ``datetime.fromisoformat`` accepts, ``Z`` included; a naive value, an invalid one
    and ``-00:00`` ("offset unknown") are ambiguous.
    """
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            return None
        # A time that has no UTC equivalent (year 1 at +01:00) cannot be compared safely.
        if parsed.year == 1 or parsed.year == 9999:
            parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None
    if value[-1] not in "Zz" and not parsed.utcoffset() and _UNKNOWN_OFFSET_RE.search(value.rstrip()):
        return None
    return parsed


def id_time(letter_id: str) -> datetime | None:
    """The UTC time in an id's ``YYYY-MM-DDTHHMMSS`` prefix, or None."""
    m = ID_TIME_RE.match(letter_id)
    if not m:
        return None
    try:
        return datetime(*(int(g) for g in m.groups()), tzinfo=timezone.utc)  # type: ignore[misc]
    except ValueError:
        return None


def slug_of(letter_id: str, sender: str = "", kind: str = "") -> str:
    """The slug of an id (SPEC 3): strip the time prefix, ``<from>-<type>-``, and ``-<8 hex>``.

    For a reply id ``<parent>--<seat>--<kind>`` the slug is the parent's slug.
    """
    parts = letter_id.split("--")
    if len(parts) >= 3 and parts[-1] in REPLY_KINDS and SEAT_RE.fullmatch(parts[-2] or "-"):
        return slug_of("--".join(parts[:-2]))
    s = _ID_TIME_PREFIX_RE.sub("", letter_id, count=1)
    if sender and kind and s.startswith(f"{sender}-{kind}-"):
        s = s[len(sender) + len(kind) + 2:]
    elif not sender:
        # Without the parties (a parent id), strip a leading "<seat>-<type>-" when the
        # type is one we know, which is how the protocol's writer builds ids.
        m = _PARENT_PREFIX_RE.match(s)
        if m:
            s = s[m.end():]
    return HEX8_TAIL_RE.sub("", s)

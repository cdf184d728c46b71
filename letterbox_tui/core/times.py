"""Times as a person reads them, and the one meaning of "today".

Letters hold times as written (RFC 3339 with an offset) and JSON keeps them so. What is
shown to a person (the app, the CLI's text) is in the *display zone*: the system's local
time zone by default (``TZ`` honoured, daylight saving included), or UTC, or a named zone,
as ``[time] zone`` says (``"local"``, ``"utc"``, ``"Europe/Berlin"``). A zone is a
``tzinfo``, or None for the system's local zone.

"Today" is the display zone's calendar day around a clock, local midnight to local
midnight (``day_bounds``): the query language's ``today`` and ``yesterday``, the app's
"due today" and the CLI's are all this one function.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone, tzinfo

#: a display zone: a tzinfo, or None for the system's local time zone
Zone = tzinfo | None

ZONE_WORDS = ("local", "utc")


def zone_named(name: str) -> Zone:
    """``local`` (None), ``utc``, or an IANA zone name; ``ValueError`` when it is none."""
    word = name.strip()
    if word.lower() == "local":
        return None
    if word.lower() == "utc":
        return timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(word)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f'expected "local", "utc" or a time zone name such as "Europe/Berlin" (got {name!r})') from None


def local(t: datetime, zone: Zone) -> datetime:
    """``t`` in the display zone (a naive ``t`` is taken as UTC)."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(zone)


def midnight(day: date, zone: Zone) -> datetime:
    """The first moment of ``day`` in ``zone`` (None: the system's local zone)."""
    if zone is None:
        return datetime(day.year, day.month, day.day).astimezone()
    return datetime(day.year, day.month, day.day, tzinfo=zone)


def day_bounds(at: datetime, zone: Zone, days: int = 0) -> tuple[datetime, datetime]:
    """The calendar day holding ``at`` in ``zone`` (``days`` later; -1: yesterday), as
    ``[start, end)``: local midnight to the next local midnight (23 or 25 hours across a
    daylight-saving change)."""
    day = local(at, zone).date() + timedelta(days=days)
    return midnight(day, zone), midnight(day + timedelta(days=1), zone)


def is_today(t: datetime, at: datetime, zone: Zone) -> bool:
    """``t`` falls on the same calendar day as ``at`` in ``zone``."""
    start, end = day_bounds(at, zone)
    return start.timestamp() <= t.timestamp() < end.timestamp()  # (exact across a fold)


def zone_label(at: datetime, zone: Zone) -> str:
    """What the zone is called at ``at``: ``UTC``, ``CET``; ``UTC+05:30`` when the zone
    has no name of letters of its own."""
    if zone is timezone.utc:
        return "UTC"
    t = local(at, zone)
    name = t.tzname() or ""
    if name.isalpha() and name.isupper():
        return name
    return "UTC" + _offset(t.utcoffset() or timedelta(0))


def zone_words(at: datetime, zone: Zone) -> str:
    """For the help: ``local time, CET (UTC+01:00)`` or ``UTC``."""
    if zone is timezone.utc:
        return "UTC"
    t = local(at, zone)
    label = zone_label(at, zone)
    offset = "UTC" + _offset(t.utcoffset() or timedelta(0))
    where = "local time" if zone is None else f"{getattr(zone, 'key', label)}"
    return f"{where}, {label}" + ("" if label == offset else f" ({offset})")


def _offset(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def stamp(t: datetime, zone: Zone) -> str:
    """A time for the CLI's text, read the same by anyone: ``2026-12-01 18:00 +01:00``
    (``2026-12-01 17:00 UTC`` when the zone is UTC)."""
    lt = local(t, zone)  # (formatted by hand: strftime was most of the cost of a long table)
    head = f"{lt.year:04d}-{lt.month:02d}-{lt.day:02d} {lt.hour:02d}:{lt.minute:02d} "
    if zone is timezone.utc:
        return head + "UTC"
    return head + _offset(lt.utcoffset() or timedelta(0))


def full(t: datetime, zone: Zone) -> str:
    """A time on its own, with its zone's name: ``Tue 2026-12-01 18:00 CET``."""
    lt = local(t, zone)
    return lt.strftime("%a %Y-%m-%d %H:%M ") + zone_label(t, zone)


def short(t: datetime, at: datetime, zone: Zone) -> str:
    """A time in a list: ``Dec 01 18:00`` this year, else ``2025-12-01``."""
    lt = local(t, zone)
    if lt.year == local(at, zone).year:
        return lt.strftime("%b %d %H:%M")
    return lt.strftime("%Y-%m-%d")


def clock_or_day(t: datetime, at: datetime, zone: Zone) -> str:
    """A time in a narrow list: ``18:00`` today, else ``Dec 01``."""
    lt = local(t, zone)
    return lt.strftime("%H:%M") if is_today(t, at, zone) else lt.strftime("%b %d")

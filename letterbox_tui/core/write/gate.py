"""The one write gate (SPEC 4): every letter this project writes goes through ``deliver``.

``deliver(root, draft, now=...)`` validates a ``Draft`` completely before anything touches
the disk, then publishes it the protocol's way (``fs.publish_bytes``): a hidden temporary
file in the recipient's ``inbox/``, ``fsync``, an exclusive create of ``<id>.md`` with
``link`` (which never overwrites), removal of the temporary, ``fsync`` of the directory.
Readers never see a partial letter and concurrent writers lose nothing: a name collision
picks a new random suffix.

Header field order follows the protocol's writer (``bin/letterbox``): ``id sent from to
type re [thread] [supersedes] priority requires_ack deadline``, then this project's added
fields ``disputes rules_on upholds subject`` when set.

Every refusal is a ``LetterboxError`` with a one-line reason, raised before any write.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from ..errors import LetterboxError
from ..grammar import ADDED_TYPES, PRIORITIES, PROTOCOL_TYPES, REPLY_KINDS, SLUG_RE, parse_time, slug_of, valid_id, valid_seat
from ..header import MAX_HEADER, MAX_LINE, parse_header
from ..letters import build
from ..model import Letter, Snapshot
from ..references import resolve_reference
from ..settings import Settings, load_settings
from .fs import open_dir, publish_bytes

#: Types ``deliver`` accepts; ``ack``/``nack``/``result`` go through ``reply`` only.
SENDABLE_TYPES = tuple(t for t in PROTOCOL_TYPES + ADDED_TYPES if t not in REPLY_KINDS)
MAX_SUBJECT = 200
MAX_ATTEMPTS = 16
#: the longest id a writer makes (the protocol's strict reader and every writer: 128)
MAX_WRITTEN_ID = 128
#: the protocol's writer session: ``[A-Za-z0-9._:-]{1,64}``, from ``LETTERBOX_SESSION``
SESSION_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
SESSION_ENV = "LETTERBOX_SESSION"


Token = Callable[[], str]


def random_token() -> str:
    """Eight lowercase hex digits, the protocol's id suffix."""
    return secrets.token_hex(4)


@dataclass(slots=True)
class Draft:
    """A letter before it has an id: what the writer wants to say, and to whom."""

    sender: str
    recipient: str
    type: str
    slug: str
    body: str
    priority: str = "next"
    requires_ack: bool = False
    deadline: str = ""
    thread: str = ""
    re: str = ""
    supersedes: str = ""
    disputes: Sequence[str] = ()
    rules_on: str = ""
    upholds: str = ""
    subject: str = ""
    #: the protocol's writer session; None: ``$LETTERBOX_SESSION`` (unset or empty: none)
    session: str | None = None


@dataclass(slots=True)
class Published:
    """A letter on disk: its id, absolute path, and the ``Letter`` it reads back as.

    ``created`` is False when the letter was already there (a retried reply).
    """

    id: str
    path: Path
    letter: Letter
    created: bool = True
    notes: list[str] = field(default_factory=list)


# --- time --------------------------------------------------------------------------


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def utc(now: datetime | None) -> datetime:
    moment = utc_now() if now is None else now
    if moment.tzinfo is None:
        raise LetterboxError("the writer's clock must be timezone-aware")
    return moment.astimezone(timezone.utc).replace(microsecond=0)


def sent_stamp(moment: datetime) -> str:
    """``sent`` as the protocol writes it: UTC ``YYYY-MM-DDTHH:MM:SSZ``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def id_stamp(moment: datetime) -> str:
    """The id's time prefix: UTC ``YYYY-MM-DDTHHMMSS``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H%M%S")


def normalize_deadline(value: str, now: datetime | None = None) -> str:
    """A deadline with an offset, or a time relative to ``now`` as the query language
    reads it (``+2d``, ``+36h``, ``-90m``, SPEC 6; the one parser the forms use too),
    written back in UTC with ``Z`` (the protocol's form)."""
    from ..query import is_relative, parse_when

    if not value:
        return ""
    check_value("deadline", value)
    if is_relative(value):
        parsed = parse_when(value, utc(now))
        if parsed is None:
            raise LetterboxError(f"deadline {value!r} is out of range")
        parsed = parsed.replace(microsecond=0)  # (the clock's fraction: whole seconds are written)
    else:
        parsed = parse_time(value)
    if parsed is None:
        raise LetterboxError(f"deadline {value!r} needs a date, a time and an offset (e.g. 2026-12-01T17:00:00Z) "
                             "or a time from now (+2d, +36h)")
    if parsed.microsecond:
        raise LetterboxError(f"deadline {value!r}: whole seconds only")
    try:
        return sent_stamp(parsed)
    except (OverflowError, ValueError):
        raise LetterboxError(f"deadline {value!r} is out of range") from None


# --- validation helpers ------------------------------------------------------------


def check_value(key: str, value: str) -> None:
    """Refuse anything that would not read back as the same one-line header value."""
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
        raise LetterboxError(f"{key}: control characters and line breaks are not allowed")
    if any(c in "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029" for c in value):
        raise LetterboxError(f"{key}: direction or separator characters are not allowed")
    if value != value.strip():
        raise LetterboxError(f"{key}: leading or trailing spaces are not allowed")
    try:
        size = len(f"{key}: {value}\n".encode("utf-8"))
    except UnicodeEncodeError:
        raise LetterboxError(f"{key}: not valid text") from None
    if size > MAX_LINE:
        raise LetterboxError(f"{key}: too long for a header line")


def check_id_value(key: str, value: str) -> None:
    """An id looked up in the letterbox: the read grammar (another edition may have written
    one longer than 128). What a writer writes is checked by ``check_written_id``."""
    if not valid_id(value):
        shown = value if len(value) <= 60 and value.isprintable() else repr(value[:60])
        raise LetterboxError(f"{key}: {shown} is not a letter id ([A-Za-z0-9_.:-], 1 to 243 characters)")


def check_written_id(key: str, value: str) -> None:
    """An id-valued header a writer writes (``re``, ``thread``, ``supersedes``,
    ``rules_on``, ``upholds``, each of ``disputes``): the read grammar, and at most 128
    characters, the protocol's strict reader's limit (a longer one makes it refuse the
    whole letterbox), whether the value is given or copied from another letter."""
    check_id_value(key, value)
    if len(value) > MAX_WRITTEN_ID:
        raise LetterboxError(f"{key}: {len(value)} characters (a letter written here may hold at most "
                             f"{MAX_WRITTEN_ID}, the protocol's strict reader's limit); nothing written")


def valid_written_id(value: str) -> bool:
    """An id a writer may make: the read grammar, at most 128 characters."""
    return len(value) <= MAX_WRITTEN_ID and valid_id(value)


AGENT_ENV = "LETTERBOX_AGENT"


def writer_seat(as_seat: str | None = None, env: dict[str, str] | None = None) -> str:
    """The writing seat: ``as_seat`` when given, else ``$LETTERBOX_AGENT`` (the protocol's
    identity variable); refused in one line when neither is set."""
    if as_seat:
        return as_seat
    agent = (os.environ if env is None else env).get(AGENT_ENV, "").strip()
    if not agent:
        raise LetterboxError(f"which seat writes? give --as SEAT or set {AGENT_ENV}")
    if not valid_seat(agent):
        raise LetterboxError(f"{AGENT_ENV} {agent[:70]!r} is not a seat name ([a-z][a-z0-9-]*)")
    return agent


def agent_seat(env: dict[str, str] | None = None) -> str:
    """``$LETTERBOX_AGENT`` when it is a seat name, else "": the app's forms' default seat."""
    agent = (os.environ if env is None else env).get(AGENT_ENV, "").strip()
    return agent if valid_seat(agent) else ""


def writer_session(session: str | None = None, env: dict[str, str] | None = None) -> str:
    """The ``session`` field to write: ``session``, else ``$LETTERBOX_SESSION`` ("" when
    unset or empty); refused unless it is 1 to 64 of ``[A-Za-z0-9._:-]``."""
    value = (os.environ if env is None else env).get(SESSION_ENV, "") if session is None else session
    if value and SESSION_RE.fullmatch(value) is None:
        shown = value if len(value) <= 70 and value.isprintable() else repr(value[:70])
        raise LetterboxError(f"{SESSION_ENV} {shown} is not a session ([A-Za-z0-9._:-], 1 to 64 characters)")
    return value


#: an id's ``YYYY-MM-DDTHHMMSS`` prefix and ``-<8 hex>`` suffix, around ``-<from>-<type>-<slug>``
_ID_FRAME = len("2026-01-01T000000") + len("-0123abcd")


def id_room_problem(sender: str, recipient: str, kind: str, slug: str, task: bool) -> str | None:
    """Why a letter with these parts cannot be written, or None: its id would pass 128
    characters, or (a task) its longest ownership reply ``<id>--<recipient>--result``
    would, and the task could then never be answered (issue 18 item 12). For forms that
    check as the writer types; ``deliver`` refuses the same."""
    length = _ID_FRAME + len(f"-{sender}-{kind}-{slug}")
    if length > MAX_WRITTEN_ID:
        return (f"the id would be {length} characters (at most {MAX_WRITTEN_ID}): "
                f"shorten the slug by {length - MAX_WRITTEN_ID}")
    reply = length + len(f"--{recipient}--result")
    if task and reply > MAX_WRITTEN_ID:
        return (f"the task's replies would have {reply}-character ids (at most {MAX_WRITTEN_ID}): "
                f"shorten the slug by {reply - MAX_WRITTEN_ID} or more")
    return None


def check_seat(root: Path, seat: str, role: str) -> None:
    """A seat is a directory at the root holding an ``inbox/`` (neither a symlink)."""
    if not valid_seat(seat):
        raise LetterboxError(f"{role} {seat!r} is not a seat name ([a-z][a-z0-9-]*)")
    try:
        fd = open_dir(root, seat, "inbox")
    except LetterboxError:
        raise LetterboxError(f"no seat {seat!r} in {root} (it needs a {seat}/inbox/ directory)") from None
    os.close(fd)


def check_body(body: str) -> bytes:
    if not isinstance(body, str) or not body.strip():
        raise LetterboxError("the body is empty; write the letter's text on stdin")
    try:
        data = body.encode("utf-8")
    except UnicodeEncodeError:
        raise LetterboxError("the body is not valid UTF-8") from None
    return data if data.endswith(b"\n") else data + b"\n"


class IdIndex:
    """Which files hold which ids, for refusing absent or duplicated pointers."""

    def __init__(self, snapshot: Snapshot, rescan: Callable[[], Snapshot] | None = None) -> None:
        self._rescan = rescan
        self._index(snapshot)

    def _index(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.letters: dict[str, list[Letter]] = {}
        for letter in snapshot.letters:
            self.letters.setdefault(letter.id, []).append(letter)
        self.unreadable: dict[str, list[str]] = {}
        for u in snapshot.unreadable:
            legible_id = u.legible.get("id", "")
            if legible_id:
                self.unreadable.setdefault(legible_id, []).append(u.path)
        self.thread_labels = {letter.thread for letter in snapshot.letters if letter.thread}

    def moving(self, letter_id: str) -> Letter:
        """The letter a reply, a filing or a progress note acts on: as ``one``, except that
        a letter seen in both its seat's ``inbox/`` and ``processed/`` under one name is a
        move caught in flight between the scan's two listings (another writer closing it):
        the ``processed/`` copy, so that the lifecycle lock's re-check says what happened."""
        reference = letter_id
        letter_id = resolve_reference(self.snapshot, reference) or reference  # a display id, token, path
        held = self.letters.get(letter_id, [])
        if not held and self._rescan is not None:
            # A letter another writer moves as this scan reads its folders can be seen in
            # neither (CI saw it once under load): look again before saying it is not there.
            self._index(self._rescan())
            self._rescan = None
            letter_id = resolve_reference(self.snapshot, reference) or reference
            held = self.letters.get(letter_id, [])
        if len(held) == 2 and letter_id not in self.unreadable:
            a, b = held
            if a.seat == b.seat and a.name == b.name and {a.folder, b.folder} == {"inbox", "processed"}:
                return a if a.folder == "processed" else b
        return self.one("id", letter_id)

    def one(self, key: str, letter_id: str) -> Letter:
        """The single readable letter holding ``letter_id``, or a refusal naming why."""
        check_id_value(key, letter_id)
        held = self.letters.get(letter_id, [])
        extra = self.unreadable.get(letter_id, [])
        if not held:
            where = f" (only an unreadable file claims it: {extra[0]})" if extra else ""
            raise LetterboxError(f"{key}: no letter {letter_id} in {self.snapshot.root}{where}")
        if len(held) + len(extra) > 1:
            paths = ", ".join([h.path for h in held] + extra)
            raise LetterboxError(f"{key}: id {letter_id} is held by more than one file ({paths})")
        return held[0]


def snapshot_of(root: Path, settings: Settings, now: datetime) -> Snapshot:
    from ..scan import scan

    return scan(root, id_time_is_utc=settings.id_time_is_utc, now=now)


def letterbox_ids(root: Path, settings: Settings, now: datetime, snapshot: Snapshot | None = None) -> IdIndex:
    """The ids of ``snapshot``, else of a scan of ``root`` now; a letter it misses is
    looked for once more in a new scan (``IdIndex.moving``)."""
    def look() -> Snapshot:
        return snapshot_of(root, settings, now)

    return IdIndex(snapshot if snapshot is not None else look(), rescan=look)


# --- headers -------------------------------------------------------------------------


def header_fields(
    *,
    letter_id: str,
    sent: str,
    sender: str,
    recipient: str,
    type: str,
    re: str = "",
    thread: str = "",
    supersedes: str = "",
    priority: str = "next",
    requires_ack: str = "false",
    deadline: str = "",
    disputes: Sequence[str] = (),
    rules_on: str = "",
    upholds: str = "",
    subject: str = "",
    session: str = "",
) -> list[tuple[str, str]]:
    """Header fields in the protocol writer's order (``session`` after ``deadline``, as its
    writer puts it), then this project's added fields."""
    fields = [("id", letter_id), ("sent", sent), ("from", sender), ("to", recipient), ("type", type), ("re", re)]
    if thread:
        fields.append(("thread", thread))
    if supersedes:
        fields.append(("supersedes", supersedes))
    fields += [("priority", priority), ("requires_ack", requires_ack), ("deadline", deadline)]
    if session:
        fields.append(("session", session))
    if disputes:
        fields.append(("disputes", ", ".join(disputes)))
    for key, value in (("rules_on", rules_on), ("upholds", upholds), ("subject", subject)):
        if value:
            fields.append((key, value))
    return fields


def render(fields: Iterable[tuple[str, str]], body: bytes) -> bytes:
    lines = ["---"] + [f"{k}: {v}" if v else f"{k}:" for k, v in fields] + ["---", ""]
    return "\n".join(lines).encode("utf-8") + body


def read_back(data: bytes, *, seat: str, folder: str, name: str, expected: list[tuple[str, str]]) -> Letter:
    """Parse the bytes about to be published exactly as a reader will; refuse any doubt."""
    result = parse_header(data[: MAX_HEADER + 8])
    item = build(result, path=f"{seat}/{folder}/{name}", seat=seat, folder=folder, name=name)
    if not isinstance(item, Letter):
        raise LetterboxError(f"refused: the letter would be unreadable ({item.error})")
    if item.flags or item.malformed:
        raise LetterboxError(f"refused: the letter would read back flagged ({', '.join(item.flags + item.malformed)})")
    if list(item.fields) != expected:
        raise LetterboxError("refused: the letter's header would not read back as written")
    return item


# --- the gate ------------------------------------------------------------------------


def deliver(
    root: str | os.PathLike[str],
    draft: Draft,
    *,
    now: datetime | None = None,
    snapshot: Snapshot | None = None,
    token: Token = random_token,
) -> Published:
    """Validate ``draft`` and publish it into the recipient's inbox; return what was written.

    ``snapshot`` (a fresh scan by default, taken only when the draft has pointers) is what
    pointers are checked against. ``now`` is the writer's clock; ``token`` the id suffix.
    """
    root_p = Path(os.path.realpath(os.fspath(root)))
    settings = load_settings(root_p)
    moment = utc(now)
    d = _normalized(draft)
    check_seat(root_p, d.sender, "from")
    check_seat(root_p, d.recipient, "to")
    if d.type in REPLY_KINDS:
        raise LetterboxError(f"type {d.type!r} is a reply: use 'reply ID {d.type}'")
    if d.type not in SENDABLE_TYPES:
        raise LetterboxError(f"unknown type {d.type!r} (one of: {', '.join(SENDABLE_TYPES)})")
    if not isinstance(d.slug, str) or SLUG_RE.fullmatch(d.slug) is None:
        raise LetterboxError(f"slug {d.slug!r} must match [a-z0-9][a-z0-9-]*")
    if d.priority not in PRIORITIES:
        raise LetterboxError(f"priority {d.priority!r} must be one of {', '.join(PRIORITIES)}")
    body = check_body(d.body)
    deadline = normalize_deadline(d.deadline, moment)
    subject = d.subject or ""
    if subject:
        check_value("subject", subject)
        if len(subject) > MAX_SUBJECT:
            raise LetterboxError(f"subject: at most {MAX_SUBJECT} characters")
    if d.type == "delegate" and not d.requires_ack:
        raise LetterboxError("delegate letters require --ack (a delegate is a task)")
    session = writer_session(d.session)
    disputes = list(d.disputes)
    _check_kind_fields(d, disputes)
    if d.thread:  # a free label of id shape (protocol v0.5): it need not name a letter
        check_written_id("thread", d.thread)
    pointers = [(k, v) for k, v in (("re", d.re), ("supersedes", d.supersedes),
                                    ("rules_on", d.rules_on), ("upholds", d.upholds)) if v]
    pointers += [("disputes", v) for v in disputes]
    thread = d.thread
    if pointers:
        for key, value in pointers:
            check_written_id(key, value)
        index = letterbox_ids(root_p, settings, moment, snapshot)
        for key, value in pointers:
            index.one(key, value)
        if d.rules_on:
            dispute = index.one("rules_on", d.rules_on)
            if dispute.type != "dispute":
                raise LetterboxError(f"rules_on: {d.rules_on} is a {dispute.type!r} letter, not a dispute")
            if d.upholds and d.upholds not in dispute.disputes:
                raise LetterboxError(f"upholds: {d.upholds} is not among the letters dispute {d.rules_on} names")
            if not thread:
                thread = writable_thread([dispute])
        if d.type == "dispute" and not thread:
            thread = writable_thread([index.one("disputes", v) for v in disputes])

    def compose(suffix: str) -> tuple[str, list[tuple[str, str]], bytes, Letter]:
        if not isinstance(suffix, str) or len(suffix) != 8 or any(c not in "0123456789abcdef" for c in suffix):
            raise LetterboxError("internal: the id suffix must be 8 lowercase hex digits")
        letter_id = f"{id_stamp(moment)}-{d.sender}-{d.type}-{d.slug}-{suffix}"
        if not valid_written_id(letter_id):
            raise LetterboxError(f"the id would be {len(letter_id)} characters (at most {MAX_WRITTEN_ID}): "
                                 "shorten the slug")
        too_long = id_room_problem(d.sender, d.recipient, d.type, d.slug, d.requires_ack)
        if too_long:
            raise LetterboxError(too_long)
        fields = header_fields(
            letter_id=letter_id, sent=sent_stamp(moment), sender=d.sender, recipient=d.recipient,
            type=d.type, re=d.re, thread=thread, supersedes=d.supersedes, priority=d.priority,
            requires_ack="true" if d.requires_ack else "false", deadline=deadline, disputes=disputes,
            rules_on=d.rules_on, upholds=d.upholds, subject=subject, session=session,
        )
        data = render(fields, body)
        letter = read_back(data, seat=d.recipient, folder="inbox", name=letter_id + ".md", expected=fields)
        return letter_id, fields, data, letter

    # Every check, the final read-back included, happens before any write.
    letter_id, _fields, data, letter = compose(token())
    inbox = root_p / d.recipient / "inbox"
    for _ in range(MAX_ATTEMPTS):
        try:
            publish_bytes(root_p, (d.recipient, "inbox"), letter_id + ".md", data)
        except FileExistsError:
            # Same second, same suffix: pick another suffix.
            letter_id, _fields, data, letter = compose(token())
            continue
        except OSError as exc:
            raise LetterboxError(f"cannot publish into {inbox}: {exc.strerror or exc}") from None
        return Published(letter_id, inbox / (letter_id + ".md"), letter)
    raise LetterboxError(f"could not find a free id in {inbox} after {MAX_ATTEMPTS} attempts")


def writable_thread(letters: Sequence[Letter]) -> str:
    """The thread a dispute or ruling joins when its writer names none: the thread the
    letters it concerns share, else the first-named letter's (the one the writer disputes
    first), so that it is seen from the letters it is about. "" (a thread of its own) when
    that label is too long to write."""
    thread = letters[0].thread_id if letters else ""
    return thread if valid_written_id(thread) else ""


def _normalized(draft: Draft) -> Draft:
    """The draft with absent optional values as "" and ``disputes`` as a list of ids."""
    blanks = {k: "" for k in ("deadline", "thread", "re", "supersedes", "rules_on", "upholds", "subject")
              if getattr(draft, k) is None}
    disputes = draft.disputes or ()
    if isinstance(disputes, str):
        disputes = [p.strip() for p in disputes.split(",")]
    return replace(draft, disputes=list(disputes), **blanks)


def _check_kind_fields(d: Draft, disputes: list[str]) -> None:
    if d.type == "dispute":
        if len(disputes) < 2 or len(set(disputes)) != len(disputes):
            raise LetterboxError("a dispute names two or more different letters")
    elif disputes:
        raise LetterboxError("disputes: only a 'dispute' letter names disputed letters")
    if d.type == "ruling":
        if not d.rules_on:
            raise LetterboxError("a ruling names the dispute it rules on (rules_on)")
    elif d.rules_on or d.upholds:
        raise LetterboxError("rules_on/upholds: only a 'ruling' letter rules on a dispute")
    if d.upholds and not d.rules_on:
        raise LetterboxError("upholds needs rules_on")



def default_slug(letter: Letter, fallback: str) -> str:
    """The slug of an existing letter when it is a valid slug, else ``fallback``."""
    slug = slug_of(letter.id, letter.sender, letter.type)
    return slug if SLUG_RE.fullmatch(slug) and len(slug) <= 60 else fallback

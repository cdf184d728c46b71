"""The one write gate (SPEC 4): every letter this project writes goes through here.

``deliver(root, draft, now=...)`` validates a ``Draft`` completely before anything touches
the disk, then publishes it the protocol's way: a hidden temporary file in the
recipient's ``inbox/``, ``fsync``, an exclusive create of ``<id>.md`` with ``link`` (which
never overwrites), removal of the temporary, ``fsync`` of the directory. Readers never see
a partial letter and concurrent writers lose nothing: a name collision picks a new random
suffix.

``reply`` publishes the protocol's derived replies and then the replier's own local state
(``.md.ack`` sidecar for ``ack``; the letter moved to the replier's own ``processed/`` for
``nack`` and ``result``). ``file`` moves a non-task letter to its owner's ``processed/``.
Nothing here writes into another seat's ``processed/``, rewrites or deletes a letter.

Header field order follows the protocol's writer (``bin/letterbox``): ``id sent from to
type re [thread] [supersedes] priority requires_ack deadline``, then this project's added
fields ``disputes rules_on upholds subject`` when set.

Every refusal is a ``LetterboxError`` with a one-line reason, raised before any write.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from .errors import LetterboxError
from .grammar import (
    ADDED_TYPES,
    PRIORITIES,
    PROTOCOL_TYPES,
    REPLY_KINDS,
    SLUG_RE,
    parse_time,
    slug_of,
    valid_id,
    valid_seat,
)
from .files import read_file
from .header import MAX_HEADER, MAX_LINE, body_offset, parse_header
from .letters import build
from .model import Letter, Snapshot
from .settings import Settings, load_settings

#: Types ``deliver`` accepts; ``ack``/``nack``/``result`` go through ``reply`` only.
SENDABLE_TYPES = tuple(t for t in PROTOCOL_TYPES + ADDED_TYPES if t not in REPLY_KINDS)
MAX_SUBJECT = 200
MAX_ATTEMPTS = 16

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

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


def _utc(now: datetime | None) -> datetime:
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


def normalize_deadline(value: str) -> str:
    """A deadline with an offset, written back in UTC with ``Z`` (the protocol's form)."""
    if not value:
        return ""
    _check_value("deadline", value)
    parsed = parse_time(value)
    if parsed is None:
        raise LetterboxError(f"deadline {value!r} needs a date, a time and an offset (e.g. 2026-12-01T17:00:00Z)")
    if parsed.microsecond:
        raise LetterboxError(f"deadline {value!r}: whole seconds only")
    try:
        return sent_stamp(parsed)
    except (OverflowError, ValueError):
        raise LetterboxError(f"deadline {value!r} is out of range") from None


# --- validation helpers ------------------------------------------------------------


def _check_value(key: str, value: str) -> None:
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


def _check_id_value(key: str, value: str) -> None:
    if not valid_id(value):
        shown = value if len(value) <= 60 and value.isprintable() else repr(value[:60])
        raise LetterboxError(f"{key}: {shown} is not a letter id ([A-Za-z0-9_.:-], 1 to 128 characters)")


def check_seat(root: Path, seat: str, role: str) -> None:
    """A seat is a directory at the root holding an ``inbox/`` (neither a symlink)."""
    if not valid_seat(seat):
        raise LetterboxError(f"{role} {seat!r} is not a seat name ([a-z][a-z0-9-]*)")
    try:
        fd = _open_dir(root, seat, "inbox")
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

    def __init__(self, snapshot: Snapshot) -> None:
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

    def one(self, key: str, letter_id: str) -> Letter:
        """The single readable letter holding ``letter_id``, or a refusal naming why."""
        _check_id_value(key, letter_id)
        held = self.letters.get(letter_id, [])
        extra = self.unreadable.get(letter_id, [])
        if not held:
            where = f" (only an unreadable file claims it: {extra[0]})" if extra else ""
            raise LetterboxError(f"{key}: no letter {letter_id} in {self.snapshot.root}{where}")
        if len(held) + len(extra) > 1:
            paths = ", ".join([h.path for h in held] + extra)
            raise LetterboxError(f"{key}: id {letter_id} is held by more than one file ({paths})")
        return held[0]


def _snapshot(root: Path, settings: Settings, now: datetime) -> Snapshot:
    from .scan import scan

    return scan(root, id_time_is_utc=settings.id_time_is_utc, now=now)


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
) -> list[tuple[str, str]]:
    """Header fields in the protocol writer's order, then this project's added fields."""
    fields = [("id", letter_id), ("sent", sent), ("from", sender), ("to", recipient), ("type", type), ("re", re)]
    if thread:
        fields.append(("thread", thread))
    if supersedes:
        fields.append(("supersedes", supersedes))
    fields += [("priority", priority), ("requires_ack", requires_ack), ("deadline", deadline)]
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
    moment = _utc(now)
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
    deadline = normalize_deadline(d.deadline)
    subject = d.subject or ""
    if subject:
        _check_value("subject", subject)
        if len(subject) > MAX_SUBJECT:
            raise LetterboxError(f"subject: at most {MAX_SUBJECT} characters")
    disputes = list(d.disputes)
    _check_kind_fields(d, disputes)
    pointers = [(k, v) for k, v in (("re", d.re), ("thread", d.thread), ("supersedes", d.supersedes),
                                    ("rules_on", d.rules_on), ("upholds", d.upholds)) if v]
    pointers += [("disputes", v) for v in disputes]
    if pointers:
        for key, value in pointers:
            _check_id_value(key, value)
        index = IdIndex(snapshot if snapshot is not None else _snapshot(root_p, settings, moment))
        for key, value in pointers:
            if key == "thread" and value not in index.letters and value in index.thread_labels:
                continue  # joining an existing thread by its label
            index.one(key, value)
        if d.rules_on:
            dispute = index.one("rules_on", d.rules_on)
            if dispute.type != "dispute":
                raise LetterboxError(f"rules_on: {d.rules_on} is a {dispute.type!r} letter, not a dispute")
            if d.upholds and d.upholds not in dispute.disputes:
                raise LetterboxError(f"upholds: {d.upholds} is not among the letters dispute {d.rules_on} names")

    def compose(suffix: str) -> tuple[str, list[tuple[str, str]], bytes, Letter]:
        if not isinstance(suffix, str) or len(suffix) != 8 or any(c not in "0123456789abcdef" for c in suffix):
            raise LetterboxError("internal: the id suffix must be 8 lowercase hex digits")
        letter_id = f"{id_stamp(moment)}-{d.sender}-{d.type}-{d.slug}-{suffix}"
        if not valid_id(letter_id):
            raise LetterboxError(f"the id would be {len(letter_id)} characters (at most 128): shorten the slug")
        fields = header_fields(
            letter_id=letter_id, sent=sent_stamp(moment), sender=d.sender, recipient=d.recipient,
            type=d.type, re=d.re, thread=d.thread, supersedes=d.supersedes, priority=d.priority,
            requires_ack="true" if d.requires_ack else "false", deadline=deadline, disputes=disputes,
            rules_on=d.rules_on, upholds=d.upholds, subject=subject,
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


# --- the file system -------------------------------------------------------------------


def _open_dir(root: Path, *parts: str) -> int:
    """Open ``root/parts...`` as a directory, following no symlink below the root."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise LetterboxError(f"cannot open {root}: {exc.strerror}") from None
    for part in parts:
        try:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            os.close(fd)
            raise LetterboxError(f"cannot open {root.joinpath(*parts)}: {exc.strerror}") from None
        os.close(fd)
        fd = nxt
    return fd


def publish_bytes(root: Path, folder: tuple[str, ...], name: str, data: bytes) -> None:
    """Publish ``data`` as ``root/folder/name``: hidden temporary, fsync, exclusive link.

    Raises ``FileExistsError`` when ``name`` exists (it is never overwritten); a reader
    sees either no file or the whole file.
    """
    dfd = _open_dir(root, *folder)
    try:
        tmp = f".{name}.tmp.{secrets.token_hex(6)}"
        fd = os.open(tmp, _NEW_FILE_FLAGS, 0o644, dir_fd=dfd)
        try:
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        finally:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except FileNotFoundError:
                pass
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _exists(root: Path, folder: tuple[str, ...], name: str) -> bool:
    try:
        os.lstat(root.joinpath(*folder, name))
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


#: the largest existing reply body compared when a reply is retried
_COMPARED_BODY = 16 * 1024 * 1024


def read_body(path: Path) -> bytes | None:
    """The body of a letter file (after the closing delimiter), or None when it cannot be
    read whole: not a regular file, a symlink, no closing delimiter, or over 16 MiB.
    Read through ``core.files`` (never follows the link, never blocks on a FIFO)."""
    f = read_file(path.parent, path.name, keep=_COMPARED_BODY + MAX_HEADER + 8, hashing=False)
    if f.error is not None or f.truncated:
        return None
    data = f.data.replace(b"\r\n", b"\n")
    start = body_offset(data)
    return None if start is None else data[start:]


def move_to_processed(root: Path, seat: str, name: str) -> bool:
    """Move ``seat/inbox/name`` to ``seat/processed/name`` (rename within the seat).

    Never overwrites: a different file already in ``processed/`` under that name is a
    refusal. Returns False when the letter was already moved (a retry converging).
    """
    src = root / seat / "inbox" / name
    dst = root / seat / "processed" / name
    try:
        src_st = os.lstat(src)
    except FileNotFoundError:
        if os.path.lexists(dst):
            return False
        raise LetterboxError(f"{seat}/inbox/{name} is gone") from None
    try:
        dst_st = os.lstat(dst)
    except FileNotFoundError:
        dst_st = None
    if dst_st is not None:
        if (dst_st.st_dev, dst_st.st_ino) == (src_st.st_dev, src_st.st_ino):
            os.unlink(src)
            _fsync_dirs(root, seat)
            return True
        raise LetterboxError(f"{seat}/processed/{name} already exists; not overwriting it")
    fd = _open_dir(root, seat, "processed")  # refuses a symlinked processed/
    os.close(fd)
    os.rename(src, dst)
    _fsync_dirs(root, seat)
    return True


def _fsync_dirs(root: Path, seat: str) -> None:
    for folder in ("inbox", "processed"):
        try:
            fd = _open_dir(root, seat, folder)
        except LetterboxError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove_sidecar(root: Path, seat: str, name: str) -> None:
    try:
        os.unlink(root / seat / "inbox" / (name + ".ack"))
    except FileNotFoundError:
        pass


# --- replies and filing ----------------------------------------------------------------


def _own_letter(index: IdIndex, letter_id: str, seat: str, action: str) -> Letter:
    letter = index.one("id", letter_id)
    if letter.seat != seat:
        raise LetterboxError(
            f"{letter_id} lies in {letter.seat}/{letter.folder}/, not in {seat}'s folders: "
            f"only its owner may {action} it"
        )
    return letter


def reply(
    root: str | os.PathLike[str],
    letter_id: str,
    kind: str,
    *,
    seat: str,
    body: str,
    now: datetime | None = None,
    slug: str = "",
    priority: str = "next",
    snapshot: Snapshot | None = None,
    token: Token = random_token,
) -> Published:
    """Reply ``ack``, ``nack``, ``result`` or ``info`` to a letter, the protocol's way.

    Ownership replies (ack/nack/result) come from the letter's recipient, whose own inbox
    holds it. Their id is ``<parent>--<seat>--<kind>``: a retry finds the reply already
    published (same body) and only completes the local state.
    """
    root_p = Path(os.path.realpath(os.fspath(root)))
    settings = load_settings(root_p)
    moment = _utc(now)
    if kind not in REPLY_KINDS + ("info",):
        raise LetterboxError(f"reply kind {kind!r} must be ack, nack, result or info")
    check_seat(root_p, seat, "--as")
    index = IdIndex(snapshot if snapshot is not None else _snapshot(root_p, settings, moment))
    parent = index.one("id", letter_id)
    thread = parent.thread or parent.id
    if kind == "info":
        return deliver(
            root_p,
            Draft(sender=seat, recipient=parent.sender, type="info", slug=slug or default_slug(parent, "reply"),
                  body=body, priority=priority, re=parent.id, thread=thread),
            now=moment, snapshot=index.snapshot, token=token,
        )
    if parent.recipient != seat:
        raise LetterboxError(f"only {parent.recipient!r}, its recipient, may {kind} {letter_id}")
    if parent.seat != seat:
        raise LetterboxError(f"{letter_id} lies in {parent.seat}/{parent.folder}/, not in your folders; not replying")
    if priority not in PRIORITIES:
        raise LetterboxError(f"priority {priority!r} must be one of {', '.join(PRIORITIES)}")
    check_seat(root_p, parent.sender, "the letter's sender")
    reply_id = f"{parent.id}--{seat}--{kind}"
    if not valid_id(reply_id):
        raise LetterboxError(f"the reply id would be {len(reply_id)} characters (at most 128)")
    _check_id_value("thread", thread)
    data_body = check_body(body)
    name = reply_id + ".md"
    existing = _existing_reply(root_p, parent.sender, name)
    if parent.folder == "processed":
        if existing is None:
            raise LetterboxError(f"{letter_id} is already closed without your {kind} reply")
        _same_body(existing, data_body)
        try:  # a writer killed after the move leaves the ack sidecar behind: finish the job
            _remove_sidecar(root_p, seat, parent.name)
        except OSError as exc:
            raise LetterboxError(f"cannot remove {seat}/inbox/{parent.name}.ack: {exc.strerror or exc}") from None
        return Published(reply_id, existing, _read_letter(existing, parent.sender), created=False,
                         notes=[f"already closed: {letter_id} (your {kind} reply is published)"])
    if parent.requires_ack not in ("true", "false"):
        raise LetterboxError(f"{letter_id} has no valid requires_ack ({parent.requires_ack!r}); not replying")
    if kind == "ack" and parent.requires_ack != "true":
        raise LetterboxError(f"ack is only for tasks; {letter_id} is not one (reply result, or file it)")
    fields = header_fields(
        letter_id=reply_id, sent=sent_stamp(moment), sender=seat, recipient=parent.sender, type=kind,
        re=parent.id, thread=thread, priority=priority, requires_ack="false",
    )
    data = render(fields, data_body)
    letter = read_back(data, seat=parent.sender, folder="inbox", name=name, expected=fields)
    created = False
    if existing is None:
        try:
            publish_bytes(root_p, (parent.sender, "inbox"), name, data)
            created = True
        except FileExistsError:
            existing = _existing_reply(root_p, parent.sender, name)
        except OSError as exc:
            raise LetterboxError(f"cannot publish into {parent.sender}/inbox/: {exc.strerror or exc}") from None
    if existing is not None:
        _same_body(existing, data_body)
        letter = _read_letter(existing, parent.sender) or letter
    path = existing or root_p / parent.sender / "inbox" / name
    published = Published(reply_id, path, letter, created=created)
    # Local state, after the reply is durable (protocol order).
    try:
        if kind == "ack":
            # A terminal reply may have closed the letter meanwhile: no orphan sidecar then.
            if _exists(root_p, (seat, "inbox"), parent.name):
                sidecar = "\n".join([f"ack_id: {reply_id}", f"acked_at: {sent_stamp(moment)}", f"by: {seat}", ""])
                try:
                    publish_bytes(root_p, (seat, "inbox"), parent.name + ".ack", sidecar.encode())
                except FileExistsError:
                    published.notes.append("the sidecar was already there")
        else:
            move_to_processed(root_p, seat, parent.name)
            _remove_sidecar(root_p, seat, parent.name)
    except OSError as exc:
        raise LetterboxError(
            f"the {kind} reply {reply_id} is published, but updating {seat}'s own folders failed "
            f"({exc.strerror or exc}); run the same reply again to finish"
        ) from None
    if not created:
        published.notes.append(f"the {kind} reply was already published")
    return published


def _existing_reply(root: Path, seat: str, name: str) -> Path | None:
    for folder in ("inbox", "processed"):
        if _exists(root, (seat, folder), name):
            return root / seat / folder / name
    return None


def _same_body(path: Path, body: bytes) -> None:
    existing = read_body(path)
    if existing is None or existing.rstrip(b"\n") != body.rstrip(b"\n"):
        raise LetterboxError(f"a different reply is already published as {path.name}; not replacing it")


def _read_letter(path: Path, seat: str) -> Letter | None:
    f = read_file(path.parent, path.name, keep=MAX_HEADER + 8, hashing=False)
    if f.error is not None:
        return None
    item = build(parse_header(f.data), path=f"{seat}/{path.parent.name}/{path.name}", seat=seat,
                 folder=path.parent.name, name=path.name)
    return item if isinstance(item, Letter) else None


def default_slug(letter: Letter, fallback: str) -> str:
    """The slug of an existing letter when it is a valid slug, else ``fallback``."""
    slug = slug_of(letter.id, letter.sender, letter.type)
    return slug if SLUG_RE.fullmatch(slug) and len(slug) <= 60 else fallback


def file_letter(
    root: str | os.PathLike[str],
    letter_id: str,
    *,
    seat: str,
    snapshot: Snapshot | None = None,
    now: datetime | None = None,
) -> tuple[Path, bool]:
    """Move one's own non-task letter from ``inbox/`` to ``processed/``.

    Returns the new path and whether it moved (False: it was already filed).
    """
    root_p = Path(os.path.realpath(os.fspath(root)))
    settings = load_settings(root_p)
    check_seat(root_p, seat, "--as")
    index = IdIndex(snapshot if snapshot is not None else _snapshot(root_p, settings, _utc(now)))
    letter = _own_letter(index, letter_id, seat, "file")
    if letter.folder == "processed":
        return root_p / letter.path, False
    if letter.requires_ack == "true":
        raise LetterboxError(f"{letter_id} is a task: reply result or nack to close it")
    if letter.requires_ack != "false":
        raise LetterboxError(f"{letter_id} has no valid requires_ack; not filing it")
    try:
        move_to_processed(root_p, seat, letter.name)
    except OSError as exc:
        raise LetterboxError(f"cannot file {letter_id}: {exc.strerror or exc}") from None
    return root_p / seat / "processed" / letter.name, True


# --- init ------------------------------------------------------------------------------


def init_letterbox(directory: str | os.PathLike[str], seats: Iterable[str]) -> list[str]:
    """Create a letterbox the protocol's tools accept; idempotent, never deletes.

    Returns the relative paths it created.
    """
    names = [s.strip() for s in seats]
    if not names or any(not n for n in names):
        raise LetterboxError("--seats needs one or more seat names, comma-separated")
    for name in names:
        if not valid_seat(name):
            raise LetterboxError(f"{name!r} is not a seat name ([a-z][a-z0-9-]*, not 'locks')")
    root = Path(directory)
    if os.path.lexists(root) and not root.is_dir():
        raise LetterboxError(f"{root} exists and is not a directory")
    wanted = ["locks"] + [f"{n}/{f}" for n in dict.fromkeys(names) for f in ("inbox", "processed")]
    for rel in wanted:
        cur = root
        for part in rel.split("/"):
            cur = cur / part
            if cur.is_symlink() or (os.path.lexists(cur) and not cur.is_dir()):
                raise LetterboxError(f"{cur} exists and is not a plain directory")
    created = []
    try:
        root.mkdir(parents=True, exist_ok=True)
        for rel in wanted:
            path = root / rel
            if not path.is_dir():
                path.mkdir(parents=True, exist_ok=True)
                created.append(rel)
    except OSError as exc:
        raise LetterboxError(f"cannot create {root}: {exc.strerror}") from None
    return created


# --- review ----------------------------------------------------------------------------


def review_draft(snapshot: Snapshot, seat: str, at: datetime) -> Draft:
    """A ``review`` letter to the reviewer's own seat recording what was owed and late at
    ``at``: ids and the seats that owe them, never copied bodies."""
    from .owed import owed
    from .resolve import resolve

    at_utc = _utc(at)
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
    """A ``dispute`` naming two or more letters, to the disputer's own seat by default."""
    index = IdIndex(snapshot)
    disputed = [index.one("disputes", i) for i in ids]
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise LetterboxError("a dispute names two or more different letters")
    if not body.strip():
        body = "These letters disagree and cannot all hold:\n" + "".join(f"- {i}\n" for i in ids)
    return Draft(
        sender=seat, recipient=to or seat, type="dispute", slug=slug or default_slug(disputed[0], "dispute"),
        body=body, disputes=list(ids),
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
        body=body, rules_on=dispute.id, upholds=upholds, thread=dispute.thread_id,
    )

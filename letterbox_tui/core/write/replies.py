"""Replies and filing (SPEC 4): the protocol's derived ownership replies and the moves
of one's own letters to ``processed/``.

``reply`` publishes the reply into the sender's inbox and then the replier's own local
state (``.md.ack`` sidecar for ``ack``; the letter moved to the replier's own
``processed/`` for ``nack`` and ``result``). ``file_letter`` moves a non-task letter to its
owner's ``processed/``. Both work under the protocol's lifecycle lock.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from ..errors import LetterboxError, Unfinished
from ..files import read_file
from ..grammar import PRIORITIES, REPLY_KINDS
from ..header import MAX_HEADER, parse_header
from ..letters import build
from ..model import Letter, Snapshot
from ..settings import load_settings
from .fs import exists, move_to_processed, publish_bytes, read_body, remove_sidecar
from .gate import (
    MAX_WRITTEN_ID,
    Draft,
    IdIndex,
    Published,
    Token,
    check_body,
    check_written_id,
    check_seat,
    default_slug,
    deliver,
    header_fields,
    letterbox_ids,
    random_token,
    read_back,
    render,
    sent_stamp,
    utc,
    valid_written_id,
    writer_session,
)
from .lifecycle import lifecycle_lock


def _own_letter(index: IdIndex, letter_id: str, seat: str, action: str) -> Letter:
    letter = index.moving(letter_id)
    if letter.seat != seat:
        raise LetterboxError(
            f"{letter_id} lies in {letter.seat}/{letter.folder}/, not in {seat}'s folders: "
            f"only its owner may {action} it"
        )
    return letter


#: the reply kinds in the order a form offers them: the first the rule allows is the default
REPLY_ORDER = ("ack", "result", "nack", "info")


def reply_refusal(parent: Letter, kind: str, seat: str, *, accepted: bool | None, shown: str = "") -> str | None:
    """Why ``seat`` may not reply ``kind`` (ack, nack, result or info) to ``parent`` as its
    record stands, or None: the one rule, asked by ``reply`` before it writes and by the
    app's reply form as it is filled. ``accepted``: whether the letter is already acked
    (a second ack is refused) and its folder says whether it is closed; None (the gate):
    those two are decided from the folders under the lifecycle lock instead, where the
    very same reply again is a retry that finishes the job. ``shown``: how to name the
    letter (the reference the user gave; its id by default)."""
    name = shown or parent.id
    if kind == "info":
        return None
    if parent.recipient != seat:
        return f"only {parent.recipient!r}, its recipient, may {kind} {name}"
    if parent.seat != seat:
        return f"{name} lies in {parent.seat}/{parent.folder}/, not in your folders; not replying"
    if parent.folder != "inbox":
        return None if accepted is None else f"already closed: {name} (it lies in {seat}/processed/)"
    if parent.requires_ack not in ("true", "false"):
        return f"{name} has no valid requires_ack ({parent.requires_ack!r}); not replying"
    if kind == "ack" and parent.requires_ack != "true":
        return f"ack is only for tasks; {name} is not one (reply result, or file it)"
    if kind == "ack" and accepted:
        return f"already acked: {name} (an ack is sent once; reply result or nack to close it)"
    return None


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
    lock_timeout: float | None = None,
) -> Published:
    """Reply ``ack``, ``nack``, ``result`` or ``info`` to a letter, the protocol's way.

    Ownership replies (ack/nack/result) come from the letter's recipient, whose own inbox
    holds it. Their id is ``<parent>--<seat>--<kind>``: a retry finds the reply already
    published (same body) and only completes the local state. They are written under the
    letter's lifecycle lock (``lock_timeout`` seconds of waiting, default about 5).
    """
    root_p = Path(os.path.realpath(os.fspath(root)))
    settings = load_settings(root_p)
    moment = utc(now)
    if kind not in REPLY_KINDS + ("info",):
        raise LetterboxError(f"reply kind {kind!r} must be ack, nack, result or info")
    check_seat(root_p, seat, "--as")
    index = letterbox_ids(root_p, settings, moment, snapshot)
    parent = index.moving(letter_id)
    thread = parent.thread or parent.id
    check_written_id("thread", thread)  # copied from the letter: refused, not cut, when too long
    if kind == "info":
        return deliver(
            root_p,
            Draft(sender=seat, recipient=parent.sender, type="info", slug=slug or default_slug(parent, "reply"),
                  body=body, priority=priority, re=parent.id, thread=thread),
            now=moment, snapshot=index.snapshot, token=token,
        )
    refusal = reply_refusal(parent, kind, seat, accepted=None, shown=letter_id)
    if refusal:
        raise LetterboxError(refusal)
    if priority not in PRIORITIES:
        raise LetterboxError(f"priority {priority!r} must be one of {', '.join(PRIORITIES)}")
    check_seat(root_p, parent.sender, "the letter's sender")
    reply_id = f"{parent.id}--{seat}--{kind}"
    if not valid_written_id(reply_id):
        raise LetterboxError(f"the reply id would be {len(reply_id)} characters (at most {MAX_WRITTEN_ID})")
    data_body = check_body(body)
    name = reply_id + ".md"
    session = writer_session()
    fields = header_fields(
        letter_id=reply_id, sent=sent_stamp(moment), sender=seat, recipient=parent.sender, type=kind,
        re=parent.id, thread=thread, priority=priority, requires_ack="false", session=session,
    )
    data = render(fields, data_body)
    letter = read_back(data, seat=parent.sender, folder="inbox", name=name, expected=fields)
    # Every check above was made without the lock; what the letter's folder holds is
    # checked again under it (the protocol's order: lock, re-check, publish, local state).
    known = _terminal_names(index.snapshot, parent, seat)
    with lifecycle_lock(root_p / seat / "inbox", parent.name, timeout=lock_timeout, shown=letter_id):
        if parent.folder == "processed" or not exists(root_p, (seat, "inbox"), parent.name):
            return _closed(root_p, parent, seat, kind, reply_id, name, data_body, meanwhile=parent.folder == "inbox")
        existing = _existing_reply(root_p, parent.sender, name)
        _refuse_if_closed(root_p, parent, seat, kind, name, known, existing, data_body)
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
        # Local state, after the reply is durable (protocol order), still under the lock:
        # no other writer of ours or the protocol's closes the letter meanwhile, so an
        # ``ack`` never leaves an orphan sidecar.
        try:
            if kind == "ack":
                by = f"{seat} session={session}" if session else seat  # as the protocol stamps it
                sidecar = "\n".join([f"ack_id: {reply_id}", f"acked_at: {sent_stamp(moment)}", f"by: {by}", ""])
                try:
                    publish_bytes(root_p, (seat, "inbox"), parent.name + ".ack", sidecar.encode())
                except FileExistsError:
                    published.notes.append("the sidecar was already there")
            else:
                move_to_processed(root_p, seat, parent.name)
                remove_sidecar(root_p, seat, parent.name)
        except (OSError, LetterboxError) as exc:
            why = exc.strerror or exc if isinstance(exc, OSError) else exc
            raise Unfinished(
                f"the {kind} reply {reply_id} is published, but updating {seat}'s own folders failed "
                f"({why}); run the same reply again to finish", reply_id,
            ) from None
    if not created:
        published.notes.append(f"the {kind} reply was already published")
    return published


def _closed(root: Path, parent: Letter, seat: str, kind: str, reply_id: str, name: str, body: bytes, *,
            meanwhile: bool) -> Published:
    """The letter is no longer in ``seat``'s inbox (checked under the lock). When this very
    reply is published (a retry), finish the job: converged. Otherwise refuse, nothing
    written: another reply closed it."""
    existing = _existing_reply(root, parent.sender, name)
    if existing is None:
        how = " meanwhile, by another writer" if meanwhile else ""
        raise LetterboxError(f"already closed{how}: {parent.id} (your {kind} was not sent)")
    _same_body(existing, body)
    try:  # a writer killed after the move leaves the ack sidecar behind: finish the job
        if kind != "ack" or not exists(root, (seat, "inbox"), parent.name):
            remove_sidecar(root, seat, parent.name)
    except OSError as exc:
        raise LetterboxError(f"cannot remove {seat}/inbox/{parent.name}.ack: {exc.strerror or exc}") from None
    return Published(reply_id, existing, _read_letter(existing, parent.sender), created=False,
                     notes=[f"already closed: {parent.id} (your {kind} reply is published)"])


def _terminal_names(snapshot: Snapshot, parent: Letter, seat: str) -> list[str]:
    """The file names a terminal reply by ``seat`` to ``parent`` may have in the sender's
    folders: the derived ``<id>--<seat>--result|nack.md`` (both tools write those), and
    the name of any other the scan saw (a result or nack from ``seat`` to the sender whose
    ``re`` is the letter)."""
    names = [f"{parent.id}--{seat}--{k}.md" for k in ("result", "nack")]
    for x in snapshot.letters:
        if (x.re == parent.id and x.type in ("result", "nack") and x.sender == seat
                and x.recipient == parent.sender and x.seat == parent.sender and x.name not in names):
            names.append(x.name)
    return names


def _refuse_if_closed(root: Path, parent: Letter, seat: str, kind: str, name: str, known: list[str],
                      existing: Path | None, body: bytes) -> None:
    """Under the lock, with the letter still in ``seat``'s inbox: when ``seat`` already
    published a terminal reply to it (a writer killed between publishing and moving left
    it so), finish that close (move the letter, remove its sidecar) and refuse this reply,
    nothing new written. The very same reply again is a retry: the caller finishes it."""
    same = existing is not None and kind in ("result", "nack") and _body_is(existing, body)
    if same:
        return
    found = [p for n in known if (p := _existing_reply(root, parent.sender, n)) is not None]
    if kind in ("result", "nack") and existing is not None and existing not in found:
        found.append(existing)
    # only a readable letter that is one closes it (a FIFO or a stray file at the name does not)
    earlier = [p for p in found if _closes(p, parent, seat)]
    if not earlier:
        return
    first = sorted(earlier)[0]
    try:
        move_to_processed(root, seat, parent.name)
        remove_sidecar(root, seat, parent.name)
        done = f"it is now moved to {seat}/processed/"
    except (OSError, LetterboxError) as exc:
        why = exc.strerror or exc if isinstance(exc, OSError) else exc
        done = f"moving it to {seat}/processed/ failed ({why}); run the same command again"
    raise LetterboxError(f"already closed: {parent.id} by your earlier reply {first.name} "
                         f"(your {kind} was not sent; {done})")


def _closes(path: Path, parent: Letter, seat: str) -> bool:
    """Whether the file at ``path`` reads as a terminal reply by ``seat`` to ``parent``."""
    x = _read_letter(path, parent.sender)
    return (x is not None and x.type in ("result", "nack") and x.re == parent.id and x.sender == seat
            and x.recipient == parent.sender)


def _body_is(path: Path, body: bytes) -> bool:
    existing = read_body(path)
    return existing is not None and existing.rstrip(b"\n") == body.rstrip(b"\n")


def _existing_reply(root: Path, seat: str, name: str) -> Path | None:
    for folder in ("inbox", "processed"):
        if exists(root, (seat, folder), name):
            return root / seat / folder / name
    return None


def _same_body(path: Path, body: bytes) -> None:
    if not _body_is(path, body):
        raise LetterboxError(f"a different reply is already published as {path.name}; not replacing it")


def _read_letter(path: Path, seat: str) -> Letter | None:
    f = read_file(path.parent, path.name, keep=MAX_HEADER + 8, hashing=False)
    if f.error is not None:
        return None
    item = build(parse_header(f.data), path=f"{seat}/{path.parent.name}/{path.name}", seat=seat,
                 folder=path.parent.name, name=path.name)
    return item if isinstance(item, Letter) else None



def file_letter(
    root: str | os.PathLike[str],
    letter_id: str,
    *,
    seat: str,
    snapshot: Snapshot | None = None,
    now: datetime | None = None,
    lock_timeout: float | None = None,
) -> tuple[Path, bool]:
    """Move one's own non-task letter from ``inbox/`` to ``processed/``.

    Returns the new path and whether it moved (False: it was already filed).
    """
    root_p = Path(os.path.realpath(os.fspath(root)))
    settings = load_settings(root_p)
    check_seat(root_p, seat, "--as")
    index = letterbox_ids(root_p, settings, utc(now), snapshot)
    letter = _own_letter(index, letter_id, seat, "file")
    if letter.folder == "processed":
        # Already filed; a lock a killed writer left behind is cleared on the way.
        with lifecycle_lock(root_p / seat / "inbox", letter.name, timeout=lock_timeout, shown=letter_id):
            return root_p / letter.path, False
    if letter.requires_ack == "true":
        raise LetterboxError(f"{letter_id} is a task: reply result or nack to close it")
    if letter.requires_ack != "false":
        raise LetterboxError(f"{letter_id} has no valid requires_ack; not filing it")
    with lifecycle_lock(root_p / seat / "inbox", letter.name, timeout=lock_timeout, shown=letter_id):
        if not exists(root_p, (seat, "inbox"), letter.name):
            if exists(root_p, (seat, "processed"), letter.name):
                return root_p / seat / "processed" / letter.name, False
            raise LetterboxError(f"{letter_id} is gone from {seat}/inbox/ (moved meanwhile); not filing it")
        try:
            move_to_processed(root_p, seat, letter.name)
        except OSError as exc:
            raise LetterboxError(f"cannot file {letter_id}: {exc.strerror or exc}") from None
    return root_p / seat / "processed" / letter.name, True

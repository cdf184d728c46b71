"""The writing commands (SPEC 7): init, demo, send, reply, file, supersede, dispute, rule,
review. Each parses its arguments into a call of the one write gate (``core.write``) and
prints what was written; refusals are ``LetterboxError`` (exit 2, nothing written).
"""

from __future__ import annotations

import functools
import os
import sys
from argparse import Namespace
from collections.abc import Callable
from typing import NoReturn
from datetime import datetime
from pathlib import Path

from letterbox_tui.core.errors import LetterboxError, Unfinished
from letterbox_tui.core.grammar import parse_time
from letterbox_tui.core.model import letters_with_id
from letterbox_tui.core.references import names_a_path, resolve_reference
from letterbox_tui.core.text import clean
from letterbox_tui.core.root import candidate_root
from letterbox_tui.core.write import (
    Draft,
    deliver,
    dispute_draft,
    file_letter,
    init_letterbox,
    notify_drafts,
    reply,
    review_draft,
    ruling_draft,
    sent_stamp,
    supersede_draft,
    utc_now,
    writer_seat,
)
from letterbox_tui.core.write.progress import write_progress

from .common import load, open_root


def _stdin_body(*, optional: bool = False) -> str:
    """The letter body from stdin. ``optional``: a terminal or empty stdin gives ""."""
    stream = sys.stdin
    if stream is None:
        return ""
    if optional and stream.isatty():
        return ""
    try:
        data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8")
    except OSError as exc:
        raise LetterboxError(f"cannot read the body from stdin: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise LetterboxError("the body on stdin is not UTF-8") from None


def _emit(line: str) -> None:
    """One line on stdout. Started with stdout closed (``>&-``: ``sys.stdout`` is None),
    ``OSError`` (EBADF), as a failed write would."""
    if sys.stdout is None:
        raise OSError(9, "stdout is closed")
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class _Unreported(Exception):
    """A letter was published but its id could not be printed (SPEC 7: exit 4)."""


def _published(letter_id: str, line: str | None = None) -> None:
    """Print what was published; when stdout fails (closed, a full disk, a closed pipe)
    say so on stderr with the id, and end with exit 4: a retry would send it twice."""
    try:
        _emit(letter_id if line is None else line)
    except OSError as exc:
        _unreported(letter_id, exc)


def _unreported(letter_id: str, exc: OSError) -> NoReturn:
    # What stdout still holds, or is given later, goes nowhere: nothing fails again at exit.
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - kept to the end
    else:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass
    why = exc.strerror or type(exc).__name__
    _note(f"published {letter_id}, but could not print its id ({why}); do not send it again")
    raise _Unreported(letter_id) from None


def _reports(command: Callable[[Namespace], int]) -> Callable[[Namespace], int]:
    """A writing command: exit 4 when what it published could not be reported."""

    @functools.wraps(command)
    def run(args: Namespace) -> int:
        try:
            return command(args)
        except _Unreported:
            return 4
        except Unfinished as exc:  # published, but the replier's own folders are not done
            _note(f"letterbox-tui: {exc}")
            return 4

    return run


def _note(line: str) -> None:
    """One line on stderr; nowhere when stderr is closed (``2>&-``) or fails."""
    if sys.stderr is None:
        return
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except OSError:
        pass


def _at(value: str | None) -> datetime:
    if not value:
        return utc_now()
    parsed = parse_time(value)
    if parsed is None:
        raise LetterboxError(f"--at {value!r} needs a date, a time and an offset (e.g. 2026-12-01T09:00:00Z)")
    return parsed


# --- init and demo ---------------------------------------------------------------------


def cmd_init(args: Namespace) -> int:
    if args.dir == "":  # (``init "$DIR"`` with DIR unset: not a letterbox made elsewhere instead)
        raise LetterboxError("init: DIR is empty: give the directory to make the letterbox in")
    directory = Path(args.dir) if args.dir else candidate_root(getattr(args, "root", None))[0]
    seats = [s for s in args.seats.split(",")]
    created = init_letterbox(directory, seats)
    names = ", ".join(dict.fromkeys(s.strip() for s in seats))
    what = f"created {len(created)} director{'y' if len(created) == 1 else 'ies'}" if created else "already in place"
    _emit(f"letterbox {directory} with seats {names}: {what}")
    if getattr(args, "git", False):
        from letterbox_tui.core.sync_run import init_git

        _emit(f"kept in git: {', '.join(init_git(directory))}")
    return 0


def cmd_demo(args: Namespace) -> int:
    from letterbox_tui.core.demo import write_demo

    from .common import now

    directory = Path(args.dir or "demo-letterbox")
    report = write_demo(directory, seed=args.seed, now=now())  # the story as of today: it never drifts
    if args.no_open:
        for line in report.summary():
            _emit(line)
        return 0
    try:
        from letterbox_tui.app import run_app
    except ImportError:
        for line in report.summary():
            _emit(line)
        _note("the terminal app is not available; the demo letterbox is written")
        return 0
    return int(run_app(root=str(directory), participants=None, view=None, letter=None, theme=None) or 0)


# --- sending ---------------------------------------------------------------------------


def _letter_id(snapshot, ref: str | None) -> str:
    """The id a letter reference names (SPEC 7 "References": a display id, a token or a
    path, as ``reply`` takes them), else the reference as given: the gate then refuses it
    as "no letter REF"."""
    if not ref:
        return ""
    return resolve_reference(snapshot, ref) or ref


@_reports
def cmd_send(args: Namespace) -> int:
    snapshot = None
    if args.re or args.supersedes:
        root, _settings, snapshot = load(_whole(args))  # pointers are checked against the letterbox
        # (a --thread is a free label: nothing to check it against)
    else:
        root = open_root(_whole(args))
    body = _stdin_body()
    draft = Draft(
        sender=args.as_seat, recipient=args.to, type=args.type, slug=args.slug, body=body,
        priority=args.priority, requires_ack=args.ack, deadline=args.deadline or "",
        thread=args.thread or "", re=_letter_id(snapshot, args.re), supersedes=_letter_id(snapshot, args.supersedes),
        subject=args.subject or "",
    )
    published = deliver(root, draft, snapshot=snapshot)
    _published(published.id)
    return 0


@_reports
def cmd_reply(args: Namespace) -> int:
    if args.slug and args.kind != "info":  # (said, not silently dropped)
        raise LetterboxError(f"--slug is for info replies: a {args.kind}'s id is <letter id>--<seat>--{args.kind}")
    root, _settings, snapshot = load(_whole(args))
    letter_id = _letter_id(snapshot, args.id)  # (a refusal names the letter, whatever reference named it)
    body = _stdin_body()
    published = reply(root, letter_id, args.kind, seat=args.as_seat, body=body, slug=args.slug or "",
                      priority=args.priority, snapshot=snapshot)
    _published(published.id)
    for note in published.notes:
        _note(note)
    return 0


@_reports
def cmd_file(args: Namespace) -> int:
    root, _settings, snapshot = load(_whole(args))
    letter_id = _letter_id(snapshot, args.id)
    if not args.read:
        _refuse_unread_by_path(snapshot, args.id, letter_id)
    path, moved = file_letter(root, letter_id, seat=args.as_seat, snapshot=snapshot)
    rel = os.path.relpath(path, root)
    _published(letter_id, f"filed: {letter_id} -> {rel}" if moved else f"already filed: {letter_id} ({rel})")
    return 0


def _refuse_unread_by_path(snapshot, ref: str, letter_id: str) -> None:
    """A result or nack still in the inbox, named by its file's path (as a script globbing
    an inbox names it), is filed only with ``--read``: the reply that answers someone's
    task is not put away unseen. The protocol's ``file`` keeps the same rule."""
    if ref == letter_id or not names_a_path(ref):
        return
    for x in letters_with_id(snapshot.letters, letter_id):
        if x.folder == "inbox" and x.type in ("result", "nack"):
            raise LetterboxError(f"{clean(ref, single_line=True)} is a {x.type} named by its path: read it first "
                                 f"(letterbox-tui show {letter_id}), then file it with --read")


@_reports
def cmd_supersede(args: Namespace) -> int:
    root, _settings, snapshot = load(_whole(args))
    old_id = _letter_id(snapshot, args.id)
    draft = supersede_draft(
        snapshot, old_id, args.as_seat, _stdin_body(), to=args.to, type=args.type,
        slug=args.slug, requires_ack=args.ack, priority=args.priority, deadline=args.deadline,
        thread=args.thread, subject=args.subject, re=_letter_id(snapshot, args.re),
    )
    newer = sorted({x.id for x in snapshot.letters if x.supersedes == old_id})
    _published(deliver(root, draft, snapshot=snapshot).id)
    if newer:  # (published all the same: a fork is the protocol's to hold, and a ruling's to settle)
        _note(f"note: {old_id} was already superseded by {', '.join(newer)}: it now has "
              f"{len(newer) + 1} successors, a fork (a dispute and a ruling settle it; or supersede the newest instead)")
    return 0


def _whole(args: Namespace) -> Namespace:
    """Writing checks pointers against the whole letterbox, never a partial scope; the
    writing seat is ``--as``, else ``$LETTERBOX_AGENT`` (the protocol's identity)."""
    if getattr(args, "participant", None):
        raise LetterboxError("--participant restricts reading; writing commands check the whole letterbox")
    if hasattr(args, "as_seat"):
        args.as_seat = writer_seat(args.as_seat)
    return args


@_reports
def cmd_dispute(args: Namespace) -> int:
    root, _settings, snapshot = load(_whole(args))
    ids = [_letter_id(snapshot, ref) for ref in args.ids]
    draft = dispute_draft(snapshot, ids, args.as_seat, _stdin_body(optional=True), to=args.to, slug=args.slug)
    published = deliver(root, draft, snapshot=snapshot)
    if not args.notify:
        _published(published.id)
        return 0
    ids = [published.id]
    _root, _settings, snapshot = load(args)
    for note in notify_drafts(snapshot, published.letter, args.as_seat):
        ids.append(deliver(root, note, snapshot=snapshot).id)
    # every letter is published before any is reported: stdout failing on the first
    # must not leave the others unsent (exit 4 names them all)
    try:
        for letter_id in ids:
            _emit(letter_id)
    except OSError as exc:
        _unreported(", ".join(ids), exc)
    return 0


@_reports
def cmd_rule(args: Namespace) -> int:
    root, _settings, snapshot = load(_whole(args))
    dispute_id, upholds = _letter_id(snapshot, args.dispute), _letter_id(snapshot, args.upholds)
    draft = ruling_draft(snapshot, dispute_id, args.as_seat, _stdin_body(optional=True),
                         upholds=upholds, to=args.to, slug=args.slug)
    other = sorted({x.id for x in snapshot.letters
                    if x.type == "ruling" and x.rules_on == dispute_id and x.upholds != (upholds or "")})
    _published(deliver(root, draft, snapshot=snapshot).id)
    if other:  # (SPEC 5: a fork is settled only when every ruling on the dispute upholds one letter)
        _note(f"note: {dispute_id} has a ruling that upholds otherwise ({', '.join(other)}): "
              "its rulings no longer agree, so they settle no fork")
    return 0


@_reports
def cmd_review(args: Namespace) -> int:
    if args.check:
        from .truth import cmd_review_check

        return cmd_review_check(args)
    if args.every or args.json:
        raise LetterboxError("review: --every and --json go with --check (recording a review prints its id)")
    root, _settings, snapshot = load(_whole(args))
    at = _at(args.at)
    draft = review_draft(snapshot, args.as_seat, at)
    published = deliver(root, draft, snapshot=snapshot)
    _published(published.id)
    _note(f"review recorded at {sent_stamp(at)} in {args.as_seat}/inbox/")
    return 0


@_reports
def cmd_progress(args: Namespace) -> int:
    """``progress ID --as S NOTE``: e.g. ``letterbox-tui progress ID --as beta drafted 3 of 5``."""
    root, _settings, snapshot = load(_whole(args))
    letter_id = _letter_id(snapshot, args.id)  # (said as the full id, whatever reference named it)
    write_progress(root, letter_id, " ".join(args.note), seat=args.as_seat, snapshot=snapshot)
    _published(letter_id, f"progress: {letter_id}")
    return 0


def cmd_status(args: Namespace) -> int:
    """``status SEAT working|idle|blocked [NOTE]``: e.g. ``letterbox-tui status beta blocked
    waiting on the key`` writes ``beta/status.md`` as the protocol does."""
    from letterbox_tui.core.write.status import write_status

    if getattr(args, "participant", None):
        raise LetterboxError("--participant restricts reading; status writes one seat's note")
    root = open_root(args)
    path = write_status(root, args.seat, args.state, " ".join(args.note))
    rel = os.path.relpath(path, root)
    try:
        _emit(f"status: {args.seat} {args.state} ({rel})")
    except OSError as exc:  # written; saying so failed (a retry only writes the note again)
        _note(f"wrote {rel}, but could not say so ({exc.strerror or type(exc).__name__})")
        if sys.stdout is None:
            sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - kept to the end
        return 4
    return 0

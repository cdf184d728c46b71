"""Everything ``check`` reports (SPEC 7): problems and warnings, each naming its letters
and files. Problems make ``check`` exit 1; warnings do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .model import Letter, Snapshot

if TYPE_CHECKING:  # (the app's first frame imports Finding, not the resolver)
    from .resolve import Resolution

PROBLEM = "problem"
WARNING = "warning"

#: Every finding code, in the order findings are listed.
CODES: dict[str, str] = {
    "unreadable-file": PROBLEM,
    "unsupported-entry": PROBLEM,
    "non-atomic-scan": PROBLEM,
    "duplicate-id": PROBLEM,
    "malformed-pointer": PROBLEM,
    "cycle": PROBLEM,
    "fork": PROBLEM,
    "remote-deletion": PROBLEM,
    "remote-rewrite": PROBLEM,
    "conflicting-replies": PROBLEM,
    "filename-alias": WARNING,
    "id-filename-mismatch": WARNING,
    "dangling-pointer": WARNING,
    "ambiguous-timestamp": WARNING,
    "time-from-id": WARNING,
    "missing-requires-ack": WARNING,
    "orphan-sidecar": WARNING,
    "ignored-entry": WARNING,
    "unknown-human-seat": WARNING,
    "ignored-setting": WARNING,
    "settled-fork": WARNING,
    "stale-temporary": WARNING,
    "stale-lock": WARNING,
    "lock-guard": WARNING,
}
_RANK = {code: i for i, code in enumerate(CODES)}


def settings_findings(settings, seats) -> list[Finding]:
    """What the letterbox's settings say that a reader would miss: each setting the file
    holds that nothing reads (a typo such as ``human_seat``: it does nothing), and each
    ``human_seats`` entry that is no seat at the root (a typo: waiting-on-human never
    applies to it). ``seats``: every seat at the root, even outside a ``--participant``
    scope."""
    import json

    from .settings_types import SETTINGS_NAME

    there = set(seats)
    ignored = [Finding("ignored-setting", notice, (), (SETTINGS_NAME,)) for notice in settings.notices]
    return ignored + [Finding("unknown-human-seat", f"human_seats names {json.dumps(seat)}, no seat of this letterbox: "
                              "no task can be waiting-on-human for it", (), (SETTINGS_NAME,))
                      for seat in dict.fromkeys(settings.human_seats) if seat not in there]


@dataclass(slots=True, frozen=True)
class Finding:
    code: str
    detail: str
    letters: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @property
    def severity(self) -> str:
        return CODES[self.code]

    @property
    def problem(self) -> bool:
        return self.severity == PROBLEM

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "detail": self.detail,
            "letters": list(self.letters),
            "paths": list(self.paths),
        }


def check(res: Resolution, now: float | None = None) -> list[Finding]:
    """Every finding over the resolution's snapshot: problems first, then warnings.

    ``now`` (seconds since the epoch, default the wall clock) is what the age of a lock
    left in an inbox is measured against: file times are the file system's clock, not the
    resolution's ``at``."""
    snap = res.snapshot
    out: list[Finding] = []
    out += _scope_findings(snap)
    by_id: dict[str, list[Letter]] = {}
    for letter in snap.letters:
        by_id.setdefault(letter.id, []).append(letter)
    # an id one letter holds and no unreadable file names has that one holder: the others
    # are asked who holds them (readable copies and unreadable files naming it)
    named = {u.legible.get("id", "") for u in snap.unreadable if u.legible}
    for letter_id, copies in by_id.items():
        if len(copies) == 1 and letter_id not in named:
            continue
        holders = res.holders(letter_id)
        if len(holders) > 1:
            out.append(Finding("duplicate-id", f"{len(holders)} files hold id {letter_id}", (letter_id,), tuple(holders)))
    for letter in snap.letters:
        out += _letter_findings(letter)
    out += _cycles(res, by_id)
    out += _forks(res, by_id)
    out += _conflicting_replies(res, snap)
    if snap.scope.complete:
        for d in res.dangling():
            out.append(Finding(
                "dangling-pointer", f"{d.field}: {d.target} is not in the letterbox",
                (d.letter.id,), (d.letter.path,),
            ))
    for rel in snap.orphan_sidecars:
        out.append(Finding("orphan-sidecar", "an .md.ack sidecar with no letter beside it", (), (rel,)))
    for name in snap.ignored:
        out.append(Finding("ignored-entry", "not a seat: ignored at the root", (), (name,)))
    out += lock_findings(str(snap.root), snap.seats, now)
    return ordered(out)


def ordered(findings: list[Finding]) -> list[Finding]:
    """Findings in the order they are listed: by code (problems first), then files, letters."""
    return sorted(findings, key=lambda f: (_RANK[f.code], f.paths, f.letters))


def has_problem(findings: list[Finding]) -> bool:
    return any(f.problem for f in findings)


def _scope_findings(snap: Snapshot) -> list[Finding]:
    out = []
    for u in snap.unreadable:
        legible_id = u.legible.get("id", "")
        out.append(Finding("unreadable-file", u.error, (legible_id,) if legible_id else (), (u.path,)))
    for e in snap.unsupported:
        out.append(Finding("unsupported-entry", e.reason, (), (e.path,)))
    if not snap.scope.atomic:
        out.append(Finding("non-atomic-scan", "files changed while the scan ran, and rescans did not settle"))
    return out


def _letter_findings(letter: Letter) -> list[Finding]:
    out = []
    mine = ((letter.id,), (letter.path,))
    for flag in ("filename-alias", "id-filename-mismatch", "missing-requires-ack", "time-from-id"):
        if flag in letter.flags:
            out.append(Finding(flag, _FLAG_DETAIL[flag].format(letter=letter), *mine))
    if letter.sent_at is None:
        what = "no sent time" if not letter.sent else f"sent '{letter.sent}' has no usable offset"
        out.append(Finding("ambiguous-timestamp", what, *mine))
    if letter.deadline and letter.deadline_at is None:
        out.append(Finding("ambiguous-timestamp", f"deadline '{letter.deadline}' has no usable offset", *mine))
    for key in letter.malformed:
        raw = letter.field(key) or ""
        out.append(Finding("malformed-pointer", f"{key}: '{raw}' is not a valid id", *mine))
    return out


_FLAG_DETAIL = {
    "filename-alias": "legacy alias: file {letter.name} holds {letter.id}",
    "id-filename-mismatch": "file name {letter.name} does not match its id",
    "missing-requires-ack": "no requires_ack: treated as a non-task",
    "time-from-id": "no usable sent time: the id's UTC prefix is used",
}


def _cycles(res: Resolution, by_id: dict[str, list[Letter]]) -> list[Finding]:
    out = []
    for group in res.cycles():
        paths = tuple(x.path for i in group for x in by_id.get(i, ()))
        out.append(Finding("cycle", "supersession cycle: " + " -> ".join(group), tuple(group), paths))
    return out


def _forks(res: Resolution, by_id: dict[str, list[Letter]]) -> list[Finding]:
    """A fork: two or more letters supersede the same letter. A settled one (a ruling on a
    dispute naming every branch upholds one branch) is a warning; any other, a problem.
    Its files are those of the letters superseding it (a copy of a branch's id that
    supersedes another letter is not in this fork: naming every copy in every fork made
    ``check`` quadratic in an id held by many files)."""
    out = []
    for fork in res.forks():
        ids = (fork.at, *fork.branches)
        paths = tuple(x.path for x in res.superseders(by_id[fork.at][0]))
        n = len(fork.branches)
        if fork.settled:
            detail = (f"{n} letters supersede {fork.at}; dispute {fork.dispute} settles it: "
                      f"{fork.winner} upheld by {', '.join(fork.rulings)}")
            out.append(Finding("settled-fork", detail, ids + ((fork.dispute,) if fork.dispute else ()), paths))
        else:
            detail = f"{n} letters supersede {fork.at}; no ruling settles it"
            if fork.in_losing_branch:
                detail += " (it lies on the losing branch of a settled fork)"
            out.append(Finding("fork", detail, ids, paths))
    return out


def _conflicting_replies(res: Resolution, snap: Snapshot) -> list[Finding]:
    """Two or more terminal replies (different ids) by one seat to one letter: each says
    the task is closed, and they may say different things (a writer killed between
    publishing its reply and moving the letter, then a second reply)."""
    groups: dict[tuple[str, str, str], dict[str, Letter]] = {}
    for x in snap.letters:
        if x.type in ("result", "nack") and x.re:
            groups.setdefault((x.re, x.sender, x.recipient), {}).setdefault(x.id, x)
    out = []
    for (re_id, sender, recipient), found in groups.items():
        if len(found) < 2 or not any(p.recipient == sender and p.sender == recipient for p in res.by_id(re_id)):
            continue
        replies = sorted(found.values(), key=lambda x: x.id)
        kinds = ", ".join(x.type for x in replies)
        out.append(Finding(
            "conflicting-replies",
            f"{sender} sent {len(replies)} terminal replies ({kinds}) to {re_id}; only one can be its answer",
            (re_id, *(x.id for x in replies)), tuple(x.path for x in replies),
        ))
    return out


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def lock_findings(root: str, seats, now: float | None = None) -> list[Finding]:
    """Locks nobody holds any more in each seat's ``inbox/`` (``write.lifecycle.leftovers``):
    a dead writer's lifecycle lock, or a lock-breaking guard a killed writer left. The
    protocol's compat query calls a letterbox holding one incomplete until it is removed."""
    import os
    from pathlib import Path

    from .errors import LetterboxError
    from .write.fs import open_dir  # follows no symlink below the root
    from .write.lifecycle import leftovers

    out = []
    for seat in seats:
        try:
            fd = open_dir(Path(root), seat, "inbox")
        except LetterboxError:
            continue
        try:
            found = leftovers(fd, now)
        finally:
            os.close(fd)
        for x in found:
            letter = x.letter_name[:-3] if x.letter_name.endswith(".md") else x.letter_name
            rel = f"{seat}/inbox/{x.name}"
            if x.kind == "guard":
                detail = (f"a lock-breaking guard left by a killed writer, {_age(x.age)} old; "
                          "nothing holds it: remove the empty directory")
                out.append(Finding("lock-guard", detail, (letter,), (rel,)))
            else:
                who = f"its writer (pid {x.pid}) is not running" if x.pid is not None else "it has no pid"
                detail = (f"a stale lifecycle lock, {_age(x.age)} old: {who}; the next reply to or move "
                          "of this letter removes it")
                out.append(Finding("stale-lock", detail, (letter,), (rel,)))
    return out

"""How one letter stands, in a word, and whether it needs the reader's attention: the
answers behind the app's status column and its ``n``/``N`` keys (they were derived in the
app; the faces must agree, so they are here, computed from a ``Resolution`` only).

``standing`` is the first of: superseded (by whom), current unknown (why), and for a task:
late, state unknown, closed, answered unknown, accepted, open. A letter that is not a task
and is current has no standing word.

``needs_attention``: late, or current unknown, or an open task that nobody has accepted
nor answered (including one whose answer is unknown).

``attention``: the attention codes of an owed item (SPEC 7), below.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..model import Answer, Letter
from ..owed import format_time
from ..records import Records, Sign
from ..text import span

if TYPE_CHECKING:  # (the app's first frame imports this module, not the resolver)
    from ..resolve import Resolution

#: what a standing is, for a face to style it
KINDS = ("superseded", "unknown", "late", "closed", "accepted", "open", "")


@dataclass(frozen=True, slots=True)
class Standing:
    word: str  # "superseded by 2026-11-16T1600…", "current? fork", "late", "open", …
    kind: str  # one of KINDS

    def __str__(self) -> str:
        return self.word


def _codes(answer) -> str:
    return ", ".join(sorted({r.code for r in answer.reasons}))


def standing(x: Letter, res: Resolution) -> Standing:
    current = res.current(x)
    if current.no:
        sup = res.superseders(x)
        return Standing(f"superseded by {sup[0].id[:14]}…" if sup else "superseded", "superseded")
    if current.unknown:
        return Standing(f"current? {_codes(current)}", "unknown")
    if not x.task:
        return Standing("", "")
    if res.late(x).yes:
        return Standing("late", "late")
    state = res.state(x)
    if state.value == "unknown":
        return Standing("state? " + _codes(state), "unknown")
    if state.value == "closed":
        return Standing("closed", "closed")
    answered = res.answered(x)
    if answered.unknown:
        return Standing("answered? " + _codes(answered), "unknown")
    return Standing("accepted", "accepted") if res.accepted(x).yes else Standing("open", "open")


def needs_attention(x: Letter, res: Resolution) -> bool:
    """Late, current unknown, or an open task nobody has accepted or answered yet."""
    if res.late(x).value != "no" or res.current(x).unknown:
        return True
    return bool(x.task and res.state(x).value != "closed" and not res.accepted(x).yes and not res.answered(x).yes)


# --- attention codes (SPEC 7 "Attention codes") -----------------------------------------
#
# What each owed item waits on, from the record only: the resolver's answers, the letters,
# the ack sidecars, the owing seat's status note and the leases (``core.records``), and the
# settings (``Rules``). Computed here once; ``owed``, the digest, ``review`` and the app show
# these. The clock is the parameter ``at``.

#: every code, most urgent first: the order ``owed`` sorts by and each row lists its codes in
CODES = ("late", "late-unknown", "never-acked", "accepted-silent", "owner-blocked", "lease-silent",
         "due-soon", "waiting-on-human", "owner-idle", "chased")
RANK = {code: i for i, code in enumerate(CODES)}
#: what a code whose record cannot be read says first in its detail (its ``since`` is null)
UNKNOWN = "unknown: "


@dataclass(frozen=True, slots=True)
class Code:
    """One attention code on an owed item: since when the record shows it, and why."""

    code: str
    since: datetime | None
    detail: str
    #: the record it rests on cannot be read (or says too little): the detail says why
    unknown: bool = False

    def to_json(self) -> dict[str, str | None]:
        return {"code": self.code, "since": None if self.since is None else format_time(self.since),
                "detail": self.detail}


def _unknown(code: str, why: str) -> Code:
    return Code(code, None, UNKNOWN + why, True)


@dataclass(frozen=True, slots=True)
class Rules:
    """The settings the codes use: ``silence`` (accepted-silent, lease-silent), ``due_soon``,
    the seats people answer from, and the reader's own seat (``--as``: a person too)."""

    silence: timedelta = timedelta(days=2)
    due_soon: timedelta = timedelta(hours=24)
    human_seats: frozenset[str] = frozenset()
    own_seat: str | None = None

    @classmethod
    def of(cls, settings, own_seat: str | None = None) -> Rules:
        return cls(settings.silence, settings.due_soon, frozenset(settings.human_seats), own_seat)

    @classmethod
    def of_letterbox(cls, root: str, own_seat: str | None = None) -> Rules:
        """From the letterbox's own ``letterbox-tui.toml`` (``SettingsError`` when it
        cannot be used)."""
        from ..settings import load_settings

        return cls.of(load_settings(root), own_seat)


def _t(at: datetime | None) -> str:
    return "?" if at is None else format_time(at)


def _ago(at: datetime, then: datetime) -> str:
    return f"{span(at - then)} ago" if then <= at else f"{span(then - at)} ahead"


def _reasons(answer: Answer) -> str:
    return "; ".join(f"{r.code}" + (f" ({r.detail})" if r.detail else "") for r in answer.reasons) or "no reason recorded"


def _latest(signs: list[Sign]) -> Sign | None:
    return max(signs, key=lambda s: (s.at, s.what)) if signs else None


def attention(x: Letter, res: Resolution, at: datetime, rules: Rules, records: Records) -> tuple[Code, ...]:
    """Every attention code of owed item ``x`` at ``at``, most urgent first."""
    seat = x.recipient
    out: list[Code] = []
    late = res.late(x, at)
    d = x.deadline_at
    if late.yes and d is not None:
        out.append(Code("late", d, f"due {x.deadline}, {span(at - d)} overdue"))
    elif late.unknown:
        since = d if d is not None and d < at else None
        out.append(Code("late-unknown", since, f"late is unknown: {_reasons(late)}"))
    elif d is not None and timedelta(0) <= d - at <= rules.due_soon:
        out.append(Code("due-soon", d - rules.due_soon, f"due {x.deadline}, in {span(d - at)}"))

    children = res.children(x)
    own = [c for c in children if c.sender == seat and c.type != "ack"]
    if not res.accepted(x).yes:
        if not own:
            sent = f"sent {x.sent}, {_ago(at, x.sent_at)}" if x.sent_at is not None else f"sent {x.sent or '?'}"
            hidden = records.hidden_reply(x)
            if hidden:
                out.append(_unknown("never-acked", f"{sent}; no ack, no sidecar, no reply from {seat} seen, but {hidden}"))
            else:
                out.append(Code("never-acked", x.sent_at, f"{sent}; no ack, no sidecar, no reply from {seat}"))
    else:
        out += _silent(x, res, at, rules, records, own)

    note = records.status(seat)
    if note is not None:
        if note.error:
            out += [_unknown("owner-blocked", note.error), _unknown("owner-idle", note.error)]
        elif note.state in ("blocked", "idle"):
            detail = f"{seat}'s status: {note.state}"
            detail += f" since {note.since_raw}" if note.since_raw else " (no since)"
            if note.since_raw and note.since is None:
                detail += " (not a time)"
            elif note.since is not None and x.sent_at is not None and note.since < x.sent_at:
                detail += ", before this letter was sent"
            if note.notes:
                detail += f": {note.notes}"
            out.append(Code("owner-" + note.state, note.since, detail))

    out += _lease_silent(seat, at, rules, records)

    if seat in rules.human_seats or seat == rules.own_seat:
        who = "your own seat" if seat == rules.own_seat else "a person's seat (human_seats)"
        out.append(Code("waiting-on-human", x.sent_at, f"{seat} is {who}"))

    chases = [c for c in children if c.type == "info" and c.recipient == seat and c.sender != seat]
    if chases:
        last = max(chases, key=lambda c: (c.sent_at is not None, c.sent_at or at, c.id))
        n = len(chases)
        out.append(Code("chased", last.sent_at, f"last chased by {last.sender} at {last.sent or '?'} "
                                                f"({n} chase{'s' if n != 1 else ''}): {last.id}"))
    out.sort(key=lambda c: RANK[c.code])
    return tuple(out)


def _silent(x: Letter, res: Resolution, at: datetime, rules: Rules, records: Records,
            own: list[Letter]) -> list[Code]:
    """``accepted-silent``: accepted, and no sign of life (the ack, a progress note, a reply
    from the owing seat) for longer than the silence setting."""
    signs = [Sign(a.sent_at, f"ack letter {a.id}") for a in res.acks(x) if a.sent_at is not None]
    signs += [Sign(c.sent_at, f"{c.type} letter {c.id}") for c in own if c.sent_at is not None]
    sidecar = records.sidecar(x)
    problem = ""
    if sidecar is not None:
        signs += list(sidecar.signs)
        problem = sidecar.problem
    last = _latest(signs)
    if last is not None and at - last.at <= rules.silence:
        return []
    seen = f"; last sign of life: {last.what} at {_t(last.at)}, {_ago(at, last.at)}" if last else ""
    hidden = records.hidden_reply(x)
    if problem or hidden:
        return [_unknown("accepted-silent", "; ".join(p for p in (problem, hidden) if p) + seen)]
    if last is None:
        return [_unknown("accepted-silent", "accepted, but no time of the ack or of any progress is on record")]
    return [Code("accepted-silent", last.at, f"accepted; nothing for longer than {span(rules.silence)}{seen}")]


def _lease_silent(seat: str, at: datetime, rules: Rules, records: Records) -> list[Code]:
    """``lease-silent``: a lease held by the owing seat while it has written nothing for
    longer than the silence setting. A lease entry whose owner cannot be read may be its."""
    leases = records.leases()
    held = [lease for lease in leases if lease.owner == seat]
    maybe = [lease for lease in leases if lease.owner is None]
    if not held and not maybe:
        return []
    last, doubt = records.last_written(seat)
    if last is not None and at - last.at <= rules.silence:
        return []
    wrote = f"nothing written since {last.what} at {_t(last.at)}" if last else "nothing it wrote is on record"
    if held:
        lease = held[0]
        more = f" (and {len(held) - 1} more)" if len(held) > 1 else ""
        what = f"holds lease {lease.target}{more}, taken {lease.taken or '?'}; {wrote}"
        if doubt:
            return [_unknown("lease-silent", f"{what}, but {'; '.join(doubt)}")]
        since = last.at if last else lease.taken_at
        return [Code("lease-silent", since, what)]
    why = "; ".join(f"locks/{lease.name}: {', '.join(lease.problems) or 'no owner'}" for lease in maybe[:3])
    return [_unknown("lease-silent", f"{wrote}, and a lease whose holder cannot be read may be {seat}'s ({why})")]


def most_urgent(codes: tuple[Code, ...]) -> int:
    """The rank of a row's most urgent code (rows without one last)."""
    return RANK[codes[0].code] if codes else len(CODES)


def counts_text(counts: dict[str, dict[str, int]]) -> str:
    """``late 2, never-acked 3 (1 unknown)``: each code some owed item carries ("" if none)."""
    parts = []
    for code, n in counts.items():
        if n["known"] or n["unknown"]:
            parts.append(f"{code} {n['known'] + n['unknown']}" + (f" ({n['unknown']} unknown)" if n["unknown"] else ""))
    return ", ".join(parts)

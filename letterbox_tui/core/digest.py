"""Current truth (SPEC 7 ``digest``): decisions in force, open disputes, what is owed and
late (each item with its attention codes), what needs attention most (the counts per code
and the ten most urgent items), and what is uncertain. Every entry cites its letter id and
path; bodies are never read or copied.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from .lazy import with_field
from .model import Letter
from .owed import format_time
from .query import subject
from .records import Records
from .resolve import Resolution
from .views.attention import Rules
from .views.order import time_key

#: how many of the most urgent owed items the digest lists
URGENT = 10


def _cite(letter: Letter) -> dict[str, Any]:
    return {
        "id": letter.id,
        "path": letter.path,
        "from": letter.sender,
        "to": letter.recipient,
        "type": letter.type,
        "subject": subject(letter),
        "sent": letter.sent,
    }


def _involves(letter: Letter, seat: str | None) -> bool:
    return seat is None or seat in (letter.sender, letter.recipient)


def may_be_uncertain(letter: Letter, res: Resolution) -> bool:
    """Could the digest list ``letter`` as uncertain at some clock? (``current`` unknown for
    a decision; ``answered``, ``state`` or ``late`` unknown for a task not closed.) None of
    the answers this asks depends on the clock (``late``'s unknown needs one of them
    unknown, or a deadline with no usable offset): the store keeps these letters, and the
    digest looks only at them."""
    if letter.type == "decision" and res.current(letter).unknown:
        return True
    if not letter.task:
        return False
    state = res.state(letter)
    if state.value == "closed":
        return False
    return state.value == "unknown" or res.answered(letter).value != "no" or (
        bool(letter.deadline) and letter.deadline_at is None)


def digest(res: Resolution, seat: str | None = None, *, rules: Rules | None = None,
           records: Records | None = None) -> dict[str, Any]:
    """The digest's data; ``seat`` keeps what that seat wrote, received or owes. ``rules``
    (default: the letterbox's settings) and ``records`` as ``owed_view`` takes them."""
    from .views.owed import owed_view

    every = res.snapshot.letters
    kept = getattr(res, "uncertain_letters", None)  # the store's (``may_be_uncertain``)
    candidates = kept() if kept is not None else None
    letters = [x for x in (every if candidates is None else candidates) if _involves(x, seat)]
    decided = [x for x in with_field(every, "type", ("decision",)) if _involves(x, seat)]
    decisions = sorted((x for x in decided if res.current(x).yes), key=time_key)

    disputes = []
    for od in res.open_disputes():
        if seat is None or _involves(od.dispute, seat) or any(_involves(d, seat) for d in od.disputed):
            disputes.append({
                **_cite(od.dispute),
                "disputed": [_cite(d) for d in od.disputed],
            })

    view = owed_view(res, seat, rules=rules, records=records)
    owed_groups = []
    for group in view.groups:
        items = []
        for i in group.items:
            x = i.letter
            items.append({**_cite(x), "deadline": x.deadline, "late": i.late.value, "answered": i.answered.value,
                          "attention": [c.to_json() for c in i.attention]})
        owed_groups.append({"seat": group.seat, "items": items})
    urgent = [{**_cite(i.letter), "seat": i.letter.recipient, "attention": [c.to_json() for c in i.attention]}
              for i in islice((i for i in view.most_urgent_first() if i.attention), URGENT)]

    uncertain = []
    for x in letters:
        names: list[tuple[str, Any]] = []
        if x.type == "decision":
            names.append(("current", res.current(x)))
        if x.task:
            st = res.state(x)
            if st.value != "closed":
                names += [("answered", res.answered(x)), ("state", st), ("late", res.late(x))]
        for name, ans in names:
            if ans.value == "unknown":
                uncertain.append({
                    **_cite(x), "answer": name, "value": "unknown",
                    "reasons": [r.to_json() for r in ans.reasons],
                })
    return {
        "at": format_time(res.at),
        "seat": seat,
        "decisions": [_cite(x) for x in decisions],
        "disputes": disputes,
        "owed": owed_groups,
        "late": [i["id"] for g in owed_groups for i in g["items"] if i["late"] == "yes"],
        "attention": {"counts": view.counts(), "urgent": urgent},
        "uncertain": uncertain,
    }

"""Hostile supersession shapes (issue 18), built in memory at any size: a wide fork, a cycle,
a comb (a chain with a side branch at every link), the comb with every fork settled by a
ruling, and a cycle whose letters have replies. Each is a ``Snapshot`` of plain letters, as
the header grammar would make them; ``work(snapshot)`` is what the reading commands do with
one: resolve, every row's answers and reasons as JSON, and ``check``'s findings. Also: one id
held by n files, and n unreadable files that may each be a reply to any of n tasks; a comb
whose middle id is held twice with different ``supersedes``, and one id held by n files each
superseding another letter of one chain, each under a ruled dispute (issues 27 and 28)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from letterbox_tui.core.model import Letter, Scope, Snapshot, Unreadable

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
SENT = "2026-01-01T00:00:00Z"
SENT_AT = datetime(2026, 1, 1, tzinfo=timezone.utc)


def letter(lid: str, *, type: str = "decision", frm: str = "alpha", to: str = "beta", **fields: str) -> Letter:  # noqa: A002
    """One readable letter in ``<to>/inbox/<id>.md`` (fields: supersedes, re, disputes, ...)."""
    disputes = tuple(d for d in fields.pop("disputes", "").split(",") if d)
    header = {"id": lid, "from": frm, "to": to, "type": type, "requires_ack": "false", "sent": SENT, **fields}
    if disputes:
        header["disputes"] = ",".join(disputes)
    return Letter(
        lid, frm, to, type, fields.get("re", ""), "", "", "false", "", SENT, fields.get("supersedes", ""),
        disputes, fields.get("rules_on", ""), fields.get("upholds", ""), "", tuple(header.items()),
        to, "inbox", f"{to}/inbox/{lid}.md", f"{lid}.md", SENT_AT, None,
    )


def snapshot(letters: list[Letter]) -> Snapshot:
    scope = Scope(root="/box", participants=["alpha", "beta"], files=len(letters), letters=len(letters))
    return Snapshot("/box", letters, [], [], scope, seats=["alpha", "beta"])


def fork(n: int) -> Snapshot:
    """n letters supersede one letter, and nothing settles it."""
    return snapshot([letter("f")] + [letter(f"s{i:06d}", supersedes="f") for i in range(n)])


def cycle(n: int) -> Snapshot:
    """n letters each superseding the next, the last the first."""
    return snapshot([letter(f"c{i:06d}", supersedes=f"c{(i + 1) % n:06d}") for i in range(n)])


def cycle_with_replies(n: int) -> Snapshot:
    """A cycle of n tasks, each with a terminal reply (replies to superseded versions)."""
    out = []
    for i in range(n):
        lid = f"c{i:06d}"
        out.append(letter(lid, type="request", supersedes=f"c{(i + 1) % n:06d}"))
        out.append(letter(lid + "--beta--result", type="result", frm="beta", to="alpha", re=lid))
    return snapshot(out)


def comb(n: int) -> Snapshot:
    """A chain a0 <- a1 <- ... <- an with a side branch b_i superseding each a_i."""
    out = [letter("a000000")]
    for i in range(n):
        out.append(letter(f"a{i + 1:06d}", supersedes=f"a{i:06d}"))
        out.append(letter(f"b{i:06d}", supersedes=f"a{i:06d}"))
    return snapshot(out)


def settled_comb(n: int) -> Snapshot:
    """The comb, each fork settled: a dispute names both branches, a ruling upholds the spine."""
    snap = comb(n)
    for i in range(n):
        d = f"d{i:06d}"
        snap.letters.append(letter(d, type="dispute", disputes=f"a{i + 1:06d},b{i:06d}"))
        snap.letters.append(letter(f"r{i:06d}", type="ruling", rules_on=d, upholds=f"a{i + 1:06d}"))
    snap.scope.files = snap.scope.letters = len(snap.letters)
    return snap


def duplicated_id(n: int) -> Snapshot:
    """n files holding one id (copy-000000.md, ...)."""
    out = []
    for i in range(n):
        x = letter("same", type="request")
        x.path, x.name = f"beta/inbox/copy-{i:06d}.md", f"copy-{i:06d}.md"
        out.append(x)
    return snapshot(out)


def open_unreadable(n: int) -> Snapshot:
    """A chain of n tasks and n unreadable files whose legible fields (from: beta only) do
    not rule them out as a terminal reply to any of them."""
    snap = snapshot([letter(f"t{i:06d}", type="request", supersedes=f"t{i - 1:06d}" if i else "") for i in range(n)])
    snap.unreadable = [
        Unreadable(f"alpha/inbox/broken-{i:06d}.md", "alpha", "inbox", "bad line", {"from": "beta"}) for i in range(n)
    ]
    return snap


def answered_duplicate(n: int) -> Snapshot:
    """n copies of one task, with n acks and n results to it (each copy asks for all)."""
    snap = duplicated_id(n)
    snap.letters += [letter(f"ack-{i:06d}", type="ack", frm="beta", to="alpha", re="same") for i in range(n)]
    snap.letters += [letter(f"res-{i:06d}", type="result", frm="beta", to="alpha", re="same") for i in range(n)]
    return snap


def replies_below(n: int) -> Snapshot:
    """A first version with n terminal replies, superseded by a chain of n versions (each
    is owed reply-to-superseded naming it)."""
    out = [letter("v000000", type="request")]
    out += [letter(f"v{i:06d}", type="request", supersedes=f"v{i - 1:06d}") for i in range(1, n + 1)]
    out += [letter(f"r{i:06d}", type="result", frm="beta", to="alpha", re="v000000") for i in range(n)]
    return snapshot(out)


def copy(x: Letter, name: str) -> Letter:
    """The letter ``x`` as the file ``<to>/inbox/<name>`` (another file holding its id)."""
    x.path, x.name = f"{x.recipient}/inbox/{name}", name
    return x


def ruled_duplicate_comb(n: int) -> Snapshot:
    """The comb, its middle id held by a second file superseding another letter (so the
    chain is no tree), and one ruling settling its first fork."""
    snap = comb(n)
    k = n // 2
    snap.letters.append(copy(letter(f"a{k:06d}", supersedes="b000000"), f"a{k:06d}-copy.md"))
    snap.letters.append(letter("d", type="dispute", disputes="a000001,b000000"))
    snap.letters.append(letter("r", type="ruling", rules_on="d", upholds="a000001"))
    snap.scope.files = snap.scope.letters = len(snap.letters)
    return snap


def held_over_chain(n: int) -> Snapshot:
    """A chain t0 <- t1 <- ... of n letters, and n files holding one id, the i-th superseding
    t_i (so every link is a fork), with a ruling upholding the chain's head: every fork
    settled."""
    out = [letter(f"t{i:06d}", supersedes=f"t{i - 1:06d}" if i else "") for i in range(n)]
    out += [copy(letter("many", supersedes=f"t{i:06d}"), f"many-{i:06d}.md") for i in range(n)]
    out.append(letter("d", type="dispute", disputes=f"t{n - 1:06d},many"))
    out.append(letter("r", type="ruling", rules_on="d", upholds=f"t{n - 1:06d}"))
    return snapshot(out)


def open_held_over_chain(n: int) -> Snapshot:
    """``held_over_chain`` with no ruling: every fork unsettled, each named in a reason."""
    snap = held_over_chain(n)
    del snap.letters[-1]
    snap.scope.files = snap.scope.letters = len(snap.letters)
    return snap


SHAPES = {
    "fork": fork, "cycle": cycle, "cycle_with_replies": cycle_with_replies,
    "comb": comb, "settled_comb": settled_comb, "duplicated_id": duplicated_id,
    "open_unreadable": open_unreadable, "answered_duplicate": answered_duplicate,
    "replies_below": replies_below, "ruled_duplicate_comb": ruled_duplicate_comb,
    "held_over_chain": held_over_chain, "open_held_over_chain": open_held_over_chain,
}


def work(snap: Snapshot) -> int:
    """Resolve, make every row as JSON, every finding of ``check``, the digest and the
    app's current-truth view; the bytes written."""
    from letterbox_tui.core.check import check
    from letterbox_tui.core.digest import digest
    from letterbox_tui.core.resolve import resolve
    from letterbox_tui.core.rows import row
    from letterbox_tui.core.views.truth import truth_view

    res = resolve(snap, AT)
    size = 0
    for x in snap.letters:
        size += len(json.dumps(row(x, res)))
    first = snap.letters[0]  # and what ``current ID`` adds, once
    size += len(json.dumps([[x.id for x in res.heads(first)], [x.id for x in res.chain(first)]]))
    size += len(json.dumps([f.to_json() for f in check(res)]))
    size += len(json.dumps(digest(res), default=str))
    size += len(truth_view(res).doubt)
    return size


def write(snap: Snapshot, root) -> None:
    """The shape as a letterbox on disk at ``root`` (seats alpha and beta)."""
    import os

    for seat in snap.seats:
        for folder in ("inbox", "processed"):
            os.makedirs(os.path.join(root, seat, folder), exist_ok=True)
    for x in snap.letters:
        head = "".join(f"{k}: {v}\n" for k, v in x.fields)
        with open(os.path.join(root, x.path), "w", encoding="utf-8") as f:
            f.write(f"---\n{head}---\nbody\n")


def scanned_work(root, letter_id: str) -> int:
    """What a reading command does from the letters: scan, then ``work``, and ``show``,
    ``current``, ``answered`` and the chain tree of one letter; the bytes written."""
    from letterbox_tui.core.resolve import resolve
    from letterbox_tui.core.scan import scan
    from letterbox_tui.core.views.chain import chain_tree
    from letterbox_tui.core.views.letter import answered_view, current_view, show_view

    snap = scan(root)
    size = work(snap)
    res = resolve(snap, AT)
    for view in (show_view, current_view, answered_view):
        size += len(json.dumps(view(res, letter_id), default=str))
    return size + len(chain_tree(res, res.by_id(letter_id)[0]).lines)

"""Invariants of the resolver over random letterboxes (hypothesis).

Random supersession graphs with cycles, forks, duplicated ids, dangling and malformed
pointers, disputes and rulings, unreadable files and unsupported entries. Letters go
through the real header grammar (``parse_header`` + ``build``), in memory.

Run as a script for the scale check (not a test): ``python tests/core/test_resolve_properties.py``.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from letterbox_tui.core.header import parse_header
from letterbox_tui.core.letters import build
from letterbox_tui.core.model import INFO_CODES, REASON_CODES, Letter, Scope, Snapshot, Unreadable, Unsupported
from letterbox_tui.core.resolve import resolve
from tests.core.helpers import reaches_cycle

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
POOL = [f"l{i}" for i in range(6)]
SEATS = ["alpha", "beta", "external-bridge"]
TIMES = ["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00+02:00", "2026-04-01T00:00:00", ""]

pointer = st.one_of(
    st.just(""),
    st.sampled_from(POOL),
    st.sampled_from(["gone", "l1?", "l2 l3", "???"]),
)

# Supersedes names a letter of the pool most of the time, so cycles, lead-ins and forks are common.
supersedes = st.one_of(st.sampled_from(POOL), st.sampled_from(POOL), st.sampled_from(POOL), pointer)

letter_spec = st.fixed_dictionaries({
    "id": st.sampled_from(POOL),
    "from": st.sampled_from(SEATS),
    "to": st.sampled_from(SEATS),
    "type": st.sampled_from(["decision", "request", "result", "nack", "ack", "dispute", "ruling"]),
    "supersedes": supersedes,
    "re": pointer,
    "thread": st.one_of(st.just(""), st.sampled_from(POOL[:3])),
    "requires_ack": st.sampled_from(["true", "false", ""]),
    "deadline": st.sampled_from(["", "2026-03-01T00:00:00Z", "2026-09-01T00:00:00Z", "soon"]),
    "sent": st.sampled_from(TIMES),
    "disputes": st.one_of(st.just(""), st.lists(st.sampled_from(POOL), min_size=2, max_size=3).map(",".join)),
    "rules_on": pointer,
    "upholds": pointer,
    "folder": st.sampled_from(["inbox", "processed"]),
})

unreadable_spec = st.fixed_dictionaries({
    "legible": st.dictionaries(
        st.sampled_from(["id", "re", "supersedes", "from", "to", "type"]),
        st.sampled_from(POOL + ["alpha", "beta", "result", "ack"]), max_size=3,
    ),
    "illegible": st.one_of(st.just(""), st.sampled_from(POOL).map(lambda t: f"garbage {t}\x01")),
})

box_spec = st.fixed_dictionaries({
    "letters": st.lists(letter_spec, min_size=1, max_size=12),
    "unreadable": st.lists(unreadable_spec, max_size=2),
    "unsupported": st.booleans(),
    "partial": st.booleans(),
    "atomic": st.booleans(),
    "seed": st.integers(0, 2**16),
})


def make_letter(spec: dict, n: int) -> Letter:
    keys = ("id", "from", "to", "type", "re", "thread", "requires_ack", "deadline", "sent",
            "supersedes", "disputes", "rules_on", "upholds")
    header = "".join(f"{k}: {spec[k]}\n" for k in keys if spec[k])
    seat = spec["to"]
    item = build(
        parse_header(f"---\n{header}---\n".encode()),
        path=f"{seat}/{spec['folder']}/{spec['id']}-{n}.md", seat=seat, folder=spec["folder"],
        name=f"{spec['id']}-{n}.md",
    )
    assert isinstance(item, Letter), item
    return item


def make_snapshot(spec: dict) -> Snapshot:
    letters = [make_letter(s, n) for n, s in enumerate(spec["letters"])]
    unreadable = [
        Unreadable(f"beta/inbox/broken-{n}.md", "beta", "inbox", "bad line", dict(u["legible"]), u["illegible"])
        for n, u in enumerate(spec["unreadable"])
    ]
    unsupported = [Unsupported("beta/archive", "archive folders are not read")] if spec["unsupported"] else []
    scope = Scope(
        root="/box", participants=["beta"] if spec["partial"] else list(SEATS), files=len(letters),
        letters=len(letters), partial=spec["partial"], atomic=spec["atomic"],
    )
    return Snapshot("/box", letters, unreadable, unsupported, scope, seats=list(SEATS))


def everything(snapshot: Snapshot) -> dict:
    """Every answer of the resolution, keyed by path so scan order cannot matter."""
    res = resolve(snapshot, AT)
    out: dict = {}
    for x in snapshot.letters:
        head = res.head(x)
        out[x.path] = (
            res.current(x), res.superseded(x), res.answered(x), res.accepted(x), res.state(x), res.late(x),
            [y.path for y in res.chain(x)], head.path if head else None, [y.path for y in res.heads(x)],
            [y.path for y in res.children(x)], [y.path for y in res.replies(x)], [y.path for y in res.acks(x)],
            [y.path for y in res.superseders(x)], [y.path for y in res.rulings(x)],
        )
    out["forks"] = res.forks()
    out["cycles"] = res.cycles()
    out["open"] = [(d.dispute.path, [y.path for y in d.disputed]) for d in res.open_disputes()]
    out["dangling"] = [(d.letter.path, d.field, d.target) for d in res.dangling()]
    out["threads"] = {t: [y.path for y in res.thread(t)] for t in POOL}
    return out


FAST = settings(max_examples=50, deadline=None)


@FAST
@given(box_spec)
def test_never_an_exception_and_reasons_are_well_formed(spec):
    snapshot = make_snapshot(spec)
    answers = everything(snapshot)
    res = resolve(snapshot, AT)
    for x in snapshot.letters:
        for about, ans in (("current", res.current(x)), ("superseded", res.superseded(x)),
                           ("answered", res.answered(x)), ("accepted", res.accepted(x)),
                           ("state", res.state(x)), ("late", res.late(x))):
            for r in ans.reasons:
                assert r.about == about
                assert r.code in (REASON_CODES if ans.value == "unknown" else INFO_CODES)
            assert (ans.value == "unknown") == bool([r for r in ans.reasons if r.code in REASON_CODES])
        assert (res.superseded(x).value == "yes") == (res.current(x).value == "no")
        head = res.head(x)
        assert head is None or res.current(head).value == "yes"
    assert answers


@FAST
@given(box_spec)
def test_a_cycle_member_is_never_current(spec):
    snapshot = make_snapshot(spec)
    res = resolve(snapshot, AT)
    cyclic = reaches_cycle(snapshot)
    for x in snapshot.letters:
        ans = res.current(x)
        if x.id in cyclic:
            assert ans.value == "unknown" and [r.code for r in ans.reasons] == ["cycle"]
        else:
            assert "cycle" not in [r.code for r in ans.reasons]


@FAST
@given(box_spec, st.randoms(use_true_random=False))
def test_scan_order_never_changes_any_answer(spec, rnd):
    snapshot = make_snapshot(spec)
    before = everything(snapshot)
    rnd.shuffle(snapshot.letters)
    rnd.shuffle(snapshot.unreadable)
    assert everything(snapshot) == before


@FAST
@given(box_spec, st.randoms(use_true_random=False))
def test_sent_times_never_change_supersession(spec, rnd):
    before = everything(make_snapshot(spec))
    times = [s["sent"] for s in spec["letters"]]
    rnd.shuffle(times)
    shuffled = dict(spec, letters=[dict(s, sent=t) for s, t in zip(spec["letters"], times)])
    after = everything(make_snapshot(shuffled))
    for path, answers in before.items():
        if path.endswith(".md"):
            # current, superseded, chain, head, heads: the supersession answers
            assert (answers[0], answers[1], answers[6], answers[7], answers[8]) == (
                after[path][0], after[path][1], after[path][6], after[path][7], after[path][8]
            )
    assert before["forks"] == after["forks"] and before["cycles"] == after["cycles"]


# --- scale check (not a test) --------------------------------------------------------


def synthetic(n: int, chain_length: int = 10, seed: int = 1) -> Snapshot:
    """``n`` letters in chains, with requests, replies, forks and disputes sprinkled in."""
    rng = random.Random(seed)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    letters = []
    for i in range(n):
        pos = i % chain_length
        lid = f"2026-01-01T000000-alpha-request-c{i // chain_length}-v{pos}"
        sup = f"2026-01-01T000000-alpha-request-c{i // chain_length}-v{pos - 1}" if pos else ""
        if pos == 3 and rng.random() < 0.1:  # a fork: v3 also supersedes v1
            sup = f"2026-01-01T000000-alpha-request-c{i // chain_length}-v1"
        letters.append(Letter(
            id=lid, sender="alpha", recipient="beta", type="request", requires_ack="true",
            supersedes=sup, re="", thread="", deadline="2026-02-01T00:00:00Z",
            deadline_at=t0 + timedelta(days=31), sent_at=t0 + timedelta(seconds=i),
            disputes=(), malformed=(), flags=(), seat="beta", folder="inbox", path=f"beta/inbox/{lid}.md",
        ))
        if rng.random() < 0.2:
            rid = lid + "--beta--result"
            letters.append(Letter(
                id=rid, sender="beta", recipient="alpha", type="result", requires_ack="false", re=lid,
                supersedes="", thread="", disputes=(), malformed=(), flags=(), seat="alpha",
                folder="inbox", path=f"alpha/inbox/{rid}.md",
            ))
    scope = Scope(root="/box", participants=["alpha", "beta"], files=len(letters), letters=len(letters))
    return Snapshot("/box", letters, [], [], scope, seats=["alpha", "beta"])


def _bench() -> None:
    import time

    for n in (25_000, 50_000, 100_000):
        snapshot = synthetic(n)
        t = time.process_time()
        res = resolve(snapshot, AT)
        t_index = time.process_time() - t
        for x in snapshot.letters:
            res.current(x), res.superseded(x), res.answered(x), res.state(x), res.late(x), res.accepted(x)
        for x in snapshot.letters[::97]:
            res.head(x)
        res.forks(), res.cycles(), res.open_disputes()
        total = time.process_time() - t
        print(f"{len(snapshot.letters):>7} letters: index {t_index:.2f} s, every answer {total:.2f} s CPU "
              f"({total / len(snapshot.letters) * 1e6:.1f} us/letter)")
    # Long chains: 100,000 letters in chains of 1,000 (reply-to-superseded walks them).
    snapshot = synthetic(100_000, chain_length=1000)
    t = time.process_time()
    res = resolve(snapshot, AT)
    for x in snapshot.letters:
        res.current(x), res.answered(x), res.late(x)
    print(f"100,000 letters in chains of 1,000: {time.process_time() - t:.2f} s")


if __name__ == "__main__":
    _bench()

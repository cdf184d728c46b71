"""The resolver's fast paths give exactly the answers of the full analysis.

``Resolution`` answers plain letters and letters of simple chains from answers built once at
indexing (``_fast_paths``). A subclass with the fast paths off runs the full per-letter and
per-chain analysis; on random letterboxes every answer about every letter must be equal,
whatever order the answers are asked in.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from letterbox_tui.core.model import Letter, Scope, Snapshot, Unreadable, Unsupported
from letterbox_tui.core.resolve import Resolution, resolve
from letterbox_tui.core.scan import scan
from tests.core.test_resolve_properties import box_spec, make_letter, make_snapshot

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
SEATS = ["alpha", "beta", "gamma", "external-bridge"]


class SlowResolution(Resolution):
    _fast_paths = False


def answers(res: Resolution, snapshot: Snapshot, order: str) -> dict:
    """Every per-letter answer, asked in one of several orders (caches must not matter)."""
    kinds = {
        "forward": ("current", "superseded", "answered", "accepted", "state", "late"),
        "backward": ("late", "state", "accepted", "answered", "superseded", "current"),
        "query": ("state", "answered", "late", "current"),
    }[order]
    out: dict = {}
    if order == "query":  # as query rows do: the head before anything else is cached
        heads_first = {x.path: getattr(res.head(x), "path", None) for x in snapshot.letters}
    for x in snapshot.letters:
        row = {k: getattr(res, k)(x) for k in kinds}
        row["late_later"] = res.late(x, AT + timedelta(days=400))
        row["late_earlier"] = res.late(x, AT - timedelta(days=400))
        row["again"] = (res.answered(x), res.state(x), res.late(x), res.current(x), res.superseded(x))
        out[x.path] = row
    for x in snapshot.letters:
        head = res.head(x)
        out[x.path]["chain"] = (
            [y.path for y in res.chain(x)], res.chain_ids(x), head.path if head else None,
            [y.path for y in res.heads(x)], [y.path for y in res.replies(x)], [y.path for y in res.acks(x)],
        )
    if order == "query":
        assert heads_first == {x.path: out[x.path]["chain"][2] for x in snapshot.letters}
    out["forks"] = res.forks()
    out["cycles"] = res.cycles()
    out["dangling"] = [(d.letter.path, d.field, d.target) for d in res.dangling()]
    return out


def assert_same(snapshot: Snapshot) -> None:
    for order in ("forward", "backward", "query"):
        fast = answers(resolve(snapshot, AT), snapshot, order)
        slow = answers(SlowResolution(snapshot, AT), snapshot, order)
        assert fast.keys() == slow.keys()
        for key in fast:
            assert fast[key] == slow[key], (order, key)


# Random letterboxes with many ids, so most letters are plain or in simple chains, and
# every kind of doubt sprinkled in.
IDS = [f"2026-05-{d:02d}T000000-alpha-request-x{d}" for d in range(1, 21)]
pointer = st.one_of(st.just(""), st.just(""), st.sampled_from(IDS), st.sampled_from(["gone", f"{IDS[0]}?", "a b"]))

letter_spec = st.fixed_dictionaries({
    "id": st.sampled_from(IDS),
    "from": st.sampled_from(SEATS),
    "to": st.sampled_from(SEATS),
    "type": st.sampled_from(["request", "request", "result", "nack", "ack", "info", "dispute", "ruling"]),
    "supersedes": pointer,
    "re": pointer,
    "thread": st.one_of(st.just(""), st.sampled_from(IDS[:3])),
    "requires_ack": st.sampled_from(["true", "true", "false", ""]),
    "deadline": st.sampled_from(["", "2026-03-01T00:00:00Z", "2026-09-01T00:00:00Z", "2026-05-01T00:00:00", "soon"]),
    "sent": st.just(""),
    "disputes": st.one_of(st.just(""), st.lists(st.sampled_from(IDS), min_size=2, max_size=3).map(",".join)),
    "rules_on": pointer,
    "upholds": pointer,
    "folder": st.sampled_from(["inbox", "inbox", "processed"]),
})

unreadable_spec = st.fixed_dictionaries({
    "legible": st.dictionaries(
        st.sampled_from(["id", "re", "supersedes", "from", "to", "type"]),
        st.sampled_from(IDS[:6] + SEATS + ["result", "nack", "ack"]), max_size=3,
    ),
    "illegible": st.one_of(st.just(""), st.sampled_from(IDS).map(lambda t: f"garbage {t}\x01")),
})

wide_box = st.fixed_dictionaries({
    "letters": st.lists(letter_spec, min_size=1, max_size=25),
    "unreadable": st.lists(unreadable_spec, max_size=3),
    "unsupported": st.booleans(),
    "partial": st.booleans(),
    "atomic": st.booleans(),
    "sidecars": st.lists(st.integers(0, 24), max_size=4),
})


def wide_snapshot(spec: dict) -> Snapshot:
    letters: list[Letter] = [make_letter(s, n) for n, s in enumerate(spec["letters"])]
    unreadable = [
        Unreadable(f"beta/inbox/broken-{n}.md", "beta", "inbox", "bad line", dict(u["legible"]), u["illegible"])
        for n, u in enumerate(spec["unreadable"])
    ]
    unsupported = [Unsupported("beta/archive", "archive folders are not read")] if spec["unsupported"] else []
    scope = Scope(
        root="/box", participants=["beta", "gamma"] if spec["partial"] else list(SEATS), files=len(letters),
        letters=len(letters), partial=spec["partial"], atomic=spec["atomic"],
    )
    sidecars = frozenset(letters[i].path + ".ack" for i in spec["sidecars"] if i < len(letters))
    return Snapshot("/box", letters, unreadable, unsupported, scope, seats=list(SEATS), sidecars=sidecars)


@settings(max_examples=80, deadline=None)
@given(wide_box)
def test_fast_paths_agree_with_the_full_analysis(spec):
    assert_same(wide_snapshot(spec))


@settings(max_examples=40, deadline=None)
@given(box_spec)
def test_fast_paths_agree_on_dense_letterboxes(spec):
    # few ids: duplicates, cycles, forks and disputes everywhere
    assert_same(make_snapshot(spec))


def test_fast_paths_agree_on_long_chains_with_replies(box):
    # a chain of 15 requests, every third one answered, and a second chain with a fork
    ids = [f"2026-05-01T0000{i:02d}-alpha-request-c{i}" for i in range(15)]
    for i, lid in enumerate(ids):
        box.letter(lid, frm="alpha", to="beta", type="request", requires_ack="true",
                   supersedes=ids[i - 1] if i else "")
        if i % 3 == 0:
            box.letter(lid + "--beta--result", frm="beta", to="alpha", type="result", re=lid)
    box.letter("2026-05-02T000000-alpha-request-f0", frm="alpha", to="beta", type="request")
    box.letter("2026-05-02T000001-alpha-request-f1", frm="alpha", to="beta", type="request",
               supersedes="2026-05-02T000000-alpha-request-f0")
    box.letter("2026-05-02T000002-alpha-request-f2", frm="alpha", to="beta", type="request",
               supersedes="2026-05-02T000000-alpha-request-f0")
    snapshot = scan(box.root)
    assert_same(snapshot)
    res = resolve(snapshot, AT)
    head = next(x for x in snapshot.letters if x.id == ids[-1])
    assert res.current(head).value == "yes"
    # reply-to-superseded names the nearest answered versions first, at most 10
    answered = res.answered(head)
    assert answered.value == "unknown"
    assert answered.reasons[0].code == "reply-to-superseded"
    assert answered.reasons[0].letters[:4] == (ids[12], ids[9], ids[6], ids[3])


def test_the_slow_subclass_really_takes_the_slow_path(box):
    box.letter("2026-05-01T000000-alpha-request-a", frm="alpha", to="beta", type="request")
    snapshot = scan(box.root)
    slow = SlowResolution(snapshot, AT)
    fast = resolve(snapshot, AT)
    for res in (slow, fast):
        for x in snapshot.letters:
            res.current(x), res.answered(x), res.state(x)
    assert slow._supersession.chains._chains and slow._supersession._current and slow._replies._state
    assert not fast._supersession.chains._chains and not fast._supersession._current and not fast._replies._state


def test_a_duplicated_id_with_a_reply_is_not_closed_by_it(box):
    # answered is unknown (duplicate-id), so state is not closed, on both paths
    lid = "2026-05-01T000000-alpha-request-dup"
    box.letter(lid, frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-02-01T00:00:00Z")
    box.letter(lid, frm="alpha", to="beta", type="request", requires_ack="true", deadline="2026-02-01T00:00:00Z",
               name="copy.md")
    box.letter(lid + "--beta--result", frm="beta", to="alpha", type="result", re=lid)
    snapshot = scan(box.root)
    assert_same(snapshot)
    res = resolve(snapshot, AT)
    for x in res.by_id(lid):
        assert res.answered(x).value == "unknown"
        assert res.state(x).value == "unknown"
        assert res.late(x).value == "unknown"


def test_unreadable_replies_matched_by_their_legible_parties(box):
    box.letter("2026-05-01T000000-alpha-request-a", frm="alpha", to="beta", type="request", requires_ack="true")
    box.letter("2026-05-01T000001-beta-request-b", frm="beta", to="alpha", type="request", requires_ack="true")
    # legible to: alpha only (no from): may be a reply to anything alpha sent
    box.raw("alpha/inbox/broken.md", "---\nto: alpha\nthis line is broken\n---\n")
    snapshot = scan(box.root)
    assert [u.path for u in snapshot.unreadable] == ["alpha/inbox/broken.md"]
    assert_same(snapshot)
    res = resolve(snapshot, AT)
    (a,) = res.by_id("2026-05-01T000000-alpha-request-a")
    (b,) = res.by_id("2026-05-01T000001-beta-request-b")
    assert [r.code for r in res.answered(a).reasons] == ["unreadable-file"]
    assert res.answered(a).reasons[0].paths == ("alpha/inbox/broken.md",)
    assert res.answered(b).value == "no"
    assert res.state(b).value == "open"


def test_the_collector_is_running_again_after_a_failed_resolve():
    import gc

    assert gc.isenabled()
    broken = Snapshot("/box", None, [], [], Scope(root="/box", participants=["beta"]))  # type: ignore[arg-type]
    try:
        resolve(broken, AT)
    except TypeError:
        pass
    else:  # pragma: no cover - a snapshot without letters cannot index
        raise AssertionError("resolve accepted letters=None")
    assert gc.isenabled()

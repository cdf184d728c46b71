"""Fuzzing the query layer (issue 7) with hypothesis.

What ``test_resolve_properties.py`` already covers (the resolver's own answers under random
supersession graphs, scan order and ``sent`` permutations) is not repeated here. This file
adds:

- the query-term parser on arbitrary strings and on near-valid terms: a term is parsed or
  refused with a one-line ``LetterboxError``, never anything else;
- every query term, alone and in pairs, run over random letterboxes whose letters reply to
  each other with random parties (``ack``/``nack``/``result``/``info`` with ``re`` to real,
  dangling, malformed and duplicated ids; sidecars; external-bridge routes; supersession
  with cycles and forks; unreadable files that may be replies): never an exception; a
  letter is a match, an unknown or excluded, never two of these; results are the same
  whatever the scan order, and whatever the ``sent`` times (time-window terms aside);
- answered / accepted / state against an oracle written from SPEC 5, independently of the
  resolver; a letter on or leading into a supersession cycle never matches ``current=yes``
  or ``superseded=head``;
- a two-term query is the Kleene AND of its terms run one at a time.
"""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.header import parse_header
from letterbox_tui.core.letters import build
from letterbox_tui.core.model import Letter, Scope, Snapshot, Unreadable, Unsupported
from letterbox_tui.core.query import KEYS, parse_query, parse_term, run_query
from letterbox_tui.core.resolve import resolve
from tests.core.helpers import reaches_cycle

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POOL = [f"l{i}" for i in range(9)]
SEATS = ["alpha", "beta", "gamma", "external-bridge"]
SENT = ["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00+02:00", "2026-04-01T00:00:00",
        "", "yesterday"]
MALFORMED = ["l1?", "l2 l3", "???", "l4,l5"]

# --- the parser ---------------------------------------------------------------------------

OPS = ["=", "~=", "<=", ">=", "<", ">", "==", ":", ""]
VALUES = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["yes", "no", "unknown", "head", "open", "closed", "any", "a,b", "a,,b", ",", " x", "x ",
                     "2026-01-01T00:00:00Z", "2026-01-01T00:00:00", "2026-13-45T99:99:99Z", "9999-12-31T23:59:59-23:59",
                     "0001-01-01T00:00:00+14:00", "\x1b]0;PWNED\x07", "\u202e", "\x00", "\n", "[@click=app.quit]"]),
)
NEAR_TERMS = st.builds(
    lambda k, op, v: f"{k}{op}{v}",
    st.one_of(st.sampled_from(KEYS), st.text(max_size=8), st.sampled_from(["FROM", "from ", "_", "due_"])),
    st.sampled_from(OPS),
    VALUES,
)


def assert_one_line_refusal(exc: LetterboxError) -> None:
    assert isinstance(exc, LetterboxError)
    assert "\n" not in str(exc) and str(exc)


@FUZZ
@given(st.text(max_size=60))
def test_any_string_parses_as_a_term_or_is_refused_in_one_line(raw):
    try:
        term = parse_term(raw)
    except LetterboxError as exc:
        assert_one_line_refusal(exc)
        return
    assert term.key in KEYS and term.values and all(term.values)


@FUZZ
@given(st.lists(st.one_of(NEAR_TERMS, st.text(max_size=20)), max_size=6))
def test_any_list_of_terms_parses_or_is_refused_and_a_parsed_query_runs(raws):
    try:
        query = parse_query(raws)
    except LetterboxError as exc:
        assert_one_line_refusal(exc)
        return
    # Whatever parsed runs over a letterbox without raising.
    res = resolve(make_snapshot(_FIXED_BOX), AT)
    result = run_query(query, res)
    assert not {id(x) for x in result.matches} & {id(x) for x, _ in result.unknown}


@FUZZ
@given(st.binary(max_size=40))
def test_terms_decoded_leniently_from_any_bytes_are_parsed_or_refused(data):
    """Terms as a shell hands them over: bytes decoded with surrogateescape."""
    raw = data.decode("utf-8", "surrogateescape")
    try:
        parse_query([raw, raw[::-1]])
    except LetterboxError as exc:
        assert_one_line_refusal(exc)


# --- random letterboxes -----------------------------------------------------------------

# Each letter, reply and unreadable file is decoded from one drawn integer (a seed):
# drawing a whole dictionary field by field costs hypothesis ~50 ms per example, a seed
# almost nothing, and the example hypothesis prints is still the decoded dictionary.


def _pick(*options):
    return lambda rng: rng.choice(options)


def _seeded(fields: dict):
    def decode(seed: int) -> dict:
        rng = random.Random(seed)
        return {k: f(rng) for k, f in fields.items()}
    return st.integers(0, 2**48).map(decode)


_POINTER = ["", *POOL, *POOL, *MALFORMED, "gone"]

letter_spec = _seeded({
    "id": _pick(*POOL),
    "from": _pick(*SEATS[:3], *SEATS),
    "to": _pick(*SEATS[:3], *SEATS),
    "type": _pick("request", "request", "info", "decision", "ack", "result", "result", "nack", "dispute", "ruling"),
    "re": _pick(*_POINTER),
    "supersedes": _pick("", "", "", *POOL, *POOL, *MALFORMED),
    "thread": _pick("", "", *POOL[:3]),
    "requires_ack": _pick("true", "false", "true", ""),
    "priority": _pick("now", "next", "whenever", "soon"),
    "deadline": _pick("", "2026-03-01T00:00:00Z", "2026-09-01T00:00:00Z", "tomorrow"),
    "sent": _pick(*SENT),
    "disputes": lambda rng: "" if rng.random() < 0.7 else ",".join(rng.sample(POOL, rng.randint(2, 3))),
    "rules_on": _pick("", "", *POOL),
    "upholds": _pick("", "", *POOL),
    "subject": _pick("", "Renewal plan", "[@click=app.quit]"),
    "folder": _pick("inbox", "inbox", "processed"),
    "sidecar": _pick(False, True),
})

unreadable_spec = _seeded({
    "legible": lambda rng: {
        k: rng.choice(POOL + SEATS + ["result", "nack", "ack"])
        for k in rng.sample(["id", "re", "from", "to", "type", "supersedes"], rng.randint(0, 4))
    },
    "illegible": lambda rng: rng.choice(["", f"re {rng.choice(POOL)}\x01"]),
    "folder": _pick("inbox", "processed"),
})

# Replies built from a chosen parent, mostly with reversed parties, so that answered,
# accepted and reply-to-superseded are reached often; sometimes with the wrong parties or
# an id that collides with another letter's.
reply_spec = _seeded({
    "parent": lambda rng: rng.randint(0, 9),
    "type": _pick("ack", "result", "nack", "info", "result"),
    "parties": _pick("reversed", "reversed", "reversed", "same", "third"),
    "id": _pick("fresh", "fresh", "fresh", "r0", "l0"),
    "re": _pick("parent", "parent", "parent", "malformed"),
    "sent": _pick(*SENT),
    "folder": _pick("inbox", "inbox", "processed"),
})

box_spec = st.fixed_dictionaries({
    "letters": st.lists(letter_spec, min_size=1, max_size=8),
    "replies": st.lists(reply_spec, max_size=5),
    "unreadable": st.lists(unreadable_spec, max_size=2),
    "unsupported": st.sampled_from([False, False, False, True]),
    "partial": st.sampled_from([False, False, False, True]),
    "atomic": st.sampled_from([True, True, True, False]),
})

_HEADER_KEYS = ("id", "sent", "from", "to", "type", "re", "thread", "supersedes", "priority", "requires_ack",
                "deadline", "disputes", "rules_on", "upholds", "subject")


def make_snapshot(spec: dict) -> Snapshot:
    """Letters through the real header grammar, each in its recipient's folder under its
    canonical name where that is free (a duplicated id gets an alias name)."""
    letters: list[Letter] = []
    taken: set[str] = set()
    sidecars = set()
    specs = list(spec["letters"])
    for n, r in enumerate(spec.get("replies", ())):
        parent = spec["letters"][r["parent"] % len(spec["letters"])]
        sender, recipient = {
            "reversed": (parent["to"], parent["from"]),
            "same": (parent["from"], parent["to"]),
            "third": ("gamma", parent["from"]),
        }[r["parties"]]
        specs.append(dict(
            _BLANK, id=f"r-{n}" if r["id"] == "fresh" else r["id"], type=r["type"], sent=r["sent"], folder=r["folder"],
            re=parent["id"] if r["re"] == "parent" else parent["id"] + "?", thread=parent["thread"] or parent["id"],
            **{"from": sender, "to": recipient},
        ))
    for n, s in enumerate(specs):
        header = "".join(f"{k}: {s[k]}\n" for k in _HEADER_KEYS if s[k])
        seat = s["to"]
        name = f"{s['id']}.md"
        if f"{seat}/{s['folder']}/{name}" in taken:
            name = f"{s['id']}-copy{n}.md"
        path = f"{seat}/{s['folder']}/{name}"
        taken.add(path)
        item = build(parse_header(f"---\n{header}---\nbody\n".encode()), path=path, seat=seat,
                     folder=s["folder"], name=name)
        assert isinstance(item, Letter), item
        letters.append(item)
        if s["sidecar"] and s["folder"] == "inbox":
            sidecars.add(path + ".ack")
    unreadable = [
        Unreadable(f"beta/{u['folder']}/broken-{n}.md", "beta", u["folder"], "bad header line",
                   dict(u["legible"]), u["illegible"])
        for n, u in enumerate(spec["unreadable"])
    ]
    unsupported = [Unsupported("gamma/inbox/pipe.md", "fifo")] if spec["unsupported"] else []
    participants = ["beta"] if spec["partial"] else list(SEATS)
    scope = Scope(
        root="/box", participants=participants, files=len(letters) + len(unreadable) + len(unsupported),
        letters=len(letters), partial=spec["partial"], atomic=spec["atomic"],
        unreadable=[{"path": u.path, "error": u.error} for u in unreadable],
        unsupported=[{"path": u.path, "reason": u.reason} for u in unsupported],
    )
    return Snapshot("/box", letters, unreadable, unsupported, scope, seats=list(SEATS), sidecars=frozenset(sidecars))


_BLANK = {k: "" for k in _HEADER_KEYS} | {"requires_ack": "false", "priority": "next", "sidecar": False}

_FIXED_BOX = {
    "letters": [
        dict(id="l0", **{"from": "alpha"}, to="beta", type="request", re="", supersedes="", thread="",
             requires_ack="true", priority="now", deadline="2026-03-01T00:00:00Z", sent=SENT[0], disputes="",
             rules_on="", upholds="", subject="Plan", folder="inbox", sidecar=True),
        dict(id="l1", **{"from": "beta"}, to="alpha", type="result", re="l0", supersedes="", thread="l0",
             requires_ack="false", priority="next", deadline="", sent=SENT[3], disputes="",
             rules_on="", upholds="", subject="", folder="inbox", sidecar=False),
        dict(id="l2", **{"from": "alpha"}, to="beta", type="decision", re="", supersedes="l2", thread="",
             requires_ack="", priority="next", deadline="tomorrow", sent=SENT[5], disputes="",
             rules_on="", upholds="", subject="", folder="processed", sidecar=False),
    ],
    "unreadable": [], "unsupported": False, "partial": False, "atomic": True,
}

TIME_TERMS = ["since=2026-02-01T00:00:00Z", "until=2026-03-01T00:00:00Z"]
ALL_TERMS = [
    "from=alpha", "to=beta,gamma", "type=request", "type=result,nack", "re=l1", "id=l0,l2", "priority=now",
    "thread=l0", "task=yes", "task=no", "slug~=l", "subject~=plan",
    "due<=2026-05-01T00:00:00Z", "due>2026-05-01T00:00:00Z",
    "state=open", "state=closed", "state=any", "state=unknown",
    "answered=yes", "answered=no", "answered=unknown",
    "accepted=yes", "accepted=no", "accepted=unknown",
    "current=yes", "current=no", "current=unknown",
    "late=yes", "late=no", "late=unknown",
    "superseded=yes", "superseded=no", "superseded=head", "superseded=unknown",
] + TIME_TERMS
THREE_VALUED = ("answered", "accepted", "current", "late")


def outcomes(snapshot: Snapshot, terms: list[str], res=None) -> dict[str, tuple[str, tuple[str, ...]]]:
    """path -> (yes | unknown | no, sorted reason codes) for one query."""
    result = run_query(parse_query(terms), res or resolve(snapshot, AT))
    out = {x.path: ("no", ()) for x in snapshot.letters}
    for x in result.matches:
        out[x.path] = ("yes", ())
    for x, reasons in result.unknown:
        assert out[x.path] == ("no", ()), f"{x.path} both matched and unknown for {terms}"
        out[x.path] = ("unknown", tuple(sorted(r.code for r in reasons)))
    return out


def every_term(snapshot: Snapshot, terms=ALL_TERMS) -> dict[str, dict]:
    res = resolve(snapshot, AT)
    return {t: outcomes(snapshot, [t], res) for t in terms}


@FUZZ
@given(box_spec)
def test_every_term_runs_and_three_valued_terms_partition_the_letters(spec):
    snapshot = make_snapshot(spec)
    results = every_term(snapshot)
    for key in THREE_VALUED:
        for x in snapshot.letters:
            hits = [v for v in ("yes", "no", "unknown") if results[f"{key}={v}"][x.path][0] == "yes"]
            if len(hits) == 1:
                # Asking for the unknown ones never leaves a letter unknown itself.
                assert results[f"{key}=unknown"][x.path][0] in ("yes", "no")
                continue
            # The letter's answer is unknown: yes/no leave it unknown, "unknown" matches it.
            assert hits == ["unknown"] and results[f"{key}=yes"][x.path][0] == "unknown", (key, x.path)
            assert results[f"{key}=no"][x.path][0] == "unknown"
    for x in snapshot.letters:
        assert results["state=any"][x.path] == ("yes", ())
        states = [v for v in ("open", "closed", "unknown") if results[f"state={v}"][x.path][0] == "yes"]
        assert len(states) == 1, (x.path, states)


@FUZZ
@given(box_spec, st.randoms(use_true_random=False))
def test_scan_order_never_changes_a_query_result(spec, rnd):
    snapshot = make_snapshot(spec)
    before = every_term(snapshot)
    rnd.shuffle(snapshot.letters)
    rnd.shuffle(snapshot.unreadable)
    assert every_term(snapshot) == before


@FUZZ
@given(box_spec, st.randoms(use_true_random=False))
def test_sent_times_change_only_the_time_window_terms(spec, rnd):
    terms = [t for t in ALL_TERMS if t not in TIME_TERMS]
    before = every_term(make_snapshot(spec), terms)
    times = [s["sent"] for s in spec["letters"]]
    rnd.shuffle(times)
    shuffled = dict(spec, letters=[dict(s, sent=t) for s, t in zip(spec["letters"], times)])
    assert every_term(make_snapshot(shuffled), terms) == before


@FUZZ
@given(box_spec)
def test_a_cycle_never_yields_current_yes(spec):
    snapshot = make_snapshot(spec)
    cyclic = reaches_cycle(snapshot)
    current = outcomes(snapshot, ["current=yes"])
    head = outcomes(snapshot, ["superseded=head"])
    for x in snapshot.letters:
        if x.id in cyclic:
            assert current[x.path][0] == "unknown" and "cycle" in current[x.path][1]
            assert head[x.path][0] != "yes"


@FUZZ
@given(box_spec, st.sampled_from(ALL_TERMS), st.sampled_from(ALL_TERMS))
def test_two_terms_are_the_kleene_and_of_each(spec, a, b):
    ta, tb = parse_term(a), parse_term(b)
    if (ta.key, ta.op) == (tb.key, tb.op):
        with pytest.raises(LetterboxError):
            parse_query([a, b])
        return
    try:
        parse_query([a, b])
    except LetterboxError as exc:
        # Only a time range no instant satisfies is refused (since after until, crossed due bounds).
        assert_one_line_refusal(exc)
        assert {ta.key, tb.key} <= {"since", "until", "due"}, (a, b)
        return
    snapshot = make_snapshot(spec)
    both = outcomes(snapshot, [a, b])
    one, two = outcomes(snapshot, [a]), outcomes(snapshot, [b])
    for x in snapshot.letters:
        values = {one[x.path][0], two[x.path][0]}
        want = "no" if "no" in values else "unknown" if "unknown" in values else "yes"
        assert both[x.path][0] == want, (x.path, a, b)
        if want == "unknown":
            assert set(both[x.path][1]) == set(one[x.path][1]) | set(two[x.path][1])


# --- answered / accepted / state against SPEC 5, written independently -------------------------


def _holders(snapshot: Snapshot, letter_id: str) -> list[tuple[str, str]]:
    found = [(x.path, x.folder) for x in snapshot.letters if x.id == letter_id]
    found += [(u.path, u.folder) for u in snapshot.unreadable if u.legible.get("id") == letter_id]
    return found


def _terminal(snapshot: Snapshot, x: Letter) -> list[Letter]:
    return [r for r in snapshot.letters
            if r.type in ("result", "nack") and r.re == x.id and r.sender == x.recipient and r.recipient == x.sender]


def _chain_ids(snapshot: Snapshot, x: Letter) -> set[str]:
    """Every id connected to x by supersedes pointers, in either direction (raw values)."""
    edges: dict[str, set[str]] = {}
    for y in snapshot.letters:
        if y.supersedes:
            edges.setdefault(y.id, set()).add(y.supersedes)
            edges.setdefault(y.supersedes, set()).add(y.id)
    seen, todo = {x.id}, [x.id]
    while todo:
        for v in edges.get(todo.pop(), ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


@FUZZ
@given(box_spec)
def test_answered_accepted_and_state_follow_the_spec(spec):
    snapshot = make_snapshot(spec)
    res = resolve(snapshot, AT)
    no_doubt = (not snapshot.unreadable and not snapshot.unsupported and snapshot.scope.atomic
                and not snapshot.scope.partial and not any("re" in y.malformed for y in snapshot.letters))
    for x in snapshot.letters:
        answered = res.answered(x)
        external = "external-bridge" in (x.sender, x.recipient)
        duplicated = len(_holders(snapshot, x.id)) > 1
        replies = _terminal(snapshot, x)
        if external:
            assert answered.value == "unknown" and [r.code for r in answered.reasons] == ["external-route"]
        elif duplicated:
            assert answered.value == "unknown" and [r.code for r in answered.reasons] == ["duplicate-id"]
        elif replies:
            assert answered.value == "yes"
            assert set(answered.reasons[0].letters) == {r.id for r in replies}
        else:
            assert answered.value != "yes"
            chain_replied = any(_terminal(snapshot, y) for y in snapshot.letters
                                if y.id in _chain_ids(snapshot, x) and y.id != x.id)
            if no_doubt and not chain_replied:
                assert answered.value == "no", (x.path, answered)

        acks = [a for a in snapshot.letters
                if a.type == "ack" and a.re == x.id and a.sender == x.recipient and a.recipient == x.sender]
        sidecar = x.path + ".ack" in snapshot.sidecars
        assert res.accepted(x).value == ("yes" if acks or sidecar else "no")

        state = res.state(x).value
        folders = {folder for _, folder in _holders(snapshot, x.id)}
        if x.folder == "processed" or answered.value == "yes":
            assert state == "closed"
        elif {"inbox", "processed"} <= folders or (
            answered.value == "unknown" and "external-route" not in [r.code for r in answered.reasons]
        ):
            assert state == "unknown"
        else:
            assert state == "open"


def test_the_fixed_letterbox_is_what_the_fuzzers_think_it_is():
    """The hand-built letterbox the parser fuzzers run queries over, checked once by hand."""
    snapshot = make_snapshot(_FIXED_BOX)
    assert outcomes(snapshot, ["answered=yes"])["beta/inbox/l0.md"] == ("yes", ())
    assert outcomes(snapshot, ["accepted=yes"])["beta/inbox/l0.md"] == ("yes", ())
    assert outcomes(snapshot, ["current=yes"])["beta/processed/l2.md"] == ("unknown", ("cycle",))
    assert outcomes(snapshot, ["since=2026-01-15T00:00:00Z"])["alpha/inbox/l1.md"][0] == "unknown"


def test_the_random_letterboxes_reach_the_cases_they_are_for():
    """Guard against a strategy that silently stops producing replies, cycles or doubt."""
    seen = {"answered-yes": 0, "cycle": 0, "reply-to-superseded": 0, "duplicate-id": 0, "external-route": 0}

    @settings(max_examples=100, deadline=None, database=None, derandomize=True)
    @given(box_spec)
    def count(spec):
        snapshot = make_snapshot(spec)
        res = resolve(snapshot, AT)
        for x in snapshot.letters:
            a, c = res.answered(x), res.current(x)
            seen["answered-yes"] += a.yes
            for code in [r.code for r in a.reasons + c.reasons]:
                if code in seen:
                    seen[code] += 1

    count()
    assert all(seen.values()), seen

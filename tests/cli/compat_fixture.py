"""The letterboxes the ``query --compat-v2`` goldens were made on (``golden_compat/``).

``build(root, variant)`` writes one: ``mixed`` holds every letter type, a settled fork (a
dispute and a ruling), an unsettled one, replies of every kind (one by the wrong party, one
with a malformed ``re``), an alias, a duplicated id, a mismatched name, a letter without an
id, one without a type, invalid and missing ``sent`` values, an opaque thread label, a
dangling pointer, a letter from ``external-bridge`` and a non-reply slug holding ``--``.
``cycle`` adds a supersession cycle; ``malformed`` adds an unterminated header; ``leftovers``
adds a writer's lifecycle lock directory and an ``archive/``. The goldens themselves were
made by running the protocol's own compat query on these letterboxes (outside this
repository); ``tests/cli/test_compat.py`` compares ours with them.
"""

from __future__ import annotations

from pathlib import Path

SEATS = ("alpha", "beta", "gamma", "external-bridge")


def _write(root: Path, rel: str, fields: list[tuple[str, str]], body: str = "body\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n" + "".join(f"{k}: {v}\n" for k, v in fields) + "---\n" + body, encoding="utf-8")


def _letter(root: Path, seat: str, folder: str, letter_id: str | None, frm: str, to: str, type: str, *,
            name: str | None = None, sent: str | None = "2026-11-20T10:00:00Z", **more: str) -> str:
    fields: list[tuple[str, str]] = []
    if letter_id is not None:
        fields.append(("id", letter_id))
    fields += [("from", frm), ("to", to), ("type", type)]
    for key in ("re", "thread", "supersedes", "disputes", "rules_on", "upholds"):
        if key in more:
            fields.append((key, more.pop(key)))
    fields += [("priority", more.pop("priority", "next")), ("requires_ack", more.pop("requires_ack", "false")),
               ("deadline", more.pop("deadline", ""))]
    if sent is not None:
        fields.append(("sent", sent))
    fields += list(more.items())
    _write(root, f"{seat}/{folder}/{name or (letter_id or 'no-id') + '.md'}", fields)
    return letter_id or ""


def build(root: Path, variant: str = "mixed") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "locks").mkdir(exist_ok=True)
    for seat in SEATS:
        for folder in ("inbox", "processed"):
            (root / seat / folder).mkdir(parents=True, exist_ok=True)
    a = "2026-11-20T100000-alpha-"
    # a task answered with a result (the letter filed by its holder), one acked and open,
    # one nacked, one answered only by the wrong party
    done = _letter(root, "beta", "processed", a + "request-renewal-plan-3f9a1c07", "alpha", "beta", "request",
                   requires_ack="true", deadline="2026-11-25T17:00:00Z")
    _letter(root, "alpha", "inbox", done + "--beta--result", "beta", "alpha", "result", re=done, thread=done)
    acked = _letter(root, "beta", "inbox", a + "delegate-migrate-ledger-0a1b2c3d", "alpha", "beta", "delegate",
                    requires_ack="true", priority="now")
    _letter(root, "alpha", "inbox", acked + "--beta--ack", "beta", "alpha", "ack", re=acked, thread=acked)
    (root / "beta" / "inbox" / f"{acked}.md.ack").write_text(
        f"ack_id: {acked}--beta--ack\nacked_at: 2026-11-20T11:00:00Z\nby: beta\n", encoding="utf-8")
    nacked = _letter(root, "gamma", "processed", a + "request-rewrite-all-11112222", "alpha", "gamma", "request",
                     requires_ack="true")
    _letter(root, "alpha", "inbox", nacked + "--gamma--nack", "gamma", "alpha", "nack", re=nacked)
    wrong = _letter(root, "beta", "inbox", a + "request-wrong-party-33334444", "alpha", "beta", "request",
                    requires_ack="true")
    _letter(root, "alpha", "inbox", wrong + "--gamma--result", "gamma", "alpha", "result", re=wrong)
    # a reply whose re cannot be read, between alpha and beta
    _letter(root, "alpha", "inbox", "2026-11-21T090000-beta-result-garbled-55556666", "beta", "alpha", "result",
            re="not a valid id!")
    # the other protocol types, and ours
    for kind, tail in (("blocker", "aaaa0001"), ("status", "aaaa0002"), ("info", "aaaa0003")):
        _letter(root, "beta", "inbox", f"{a}{kind}-weekly-{tail}", "alpha", "beta", kind)
    _letter(root, "alpha", "inbox", "2026-11-22T080000-gamma-review-owed-and-late-aaaa0004", "gamma", "alpha",
            "review")
    # a fork settled by a dispute and a ruling
    x = _letter(root, "beta", "inbox", a + "decision-api-shape-bbbb0001", "alpha", "beta", "decision")
    y = _letter(root, "beta", "inbox", "2026-11-21T100000-alpha-decision-api-shape-rest-bbbb0002", "alpha", "beta",
                "decision", supersedes=x, thread=x)
    z = _letter(root, "beta", "inbox", "2026-11-21T100001-gamma-decision-api-shape-rpc-bbbb0003", "gamma", "beta",
                "decision", supersedes=x, thread=x)
    d = _letter(root, "beta", "inbox", "2026-11-21T120000-beta-dispute-api-shape-bbbb0004", "beta", "beta",
                "dispute", disputes=f"{y},{z}", thread=x)
    _letter(root, "beta", "inbox", "2026-11-21T130000-beta-ruling-api-shape-bbbb0005", "beta", "beta", "ruling",
            rules_on=d, upholds=y, thread=x)
    # an unsettled fork
    f = _letter(root, "gamma", "inbox", a + "info-naming-cccc0001", "alpha", "gamma", "info")
    _letter(root, "gamma", "inbox", a + "info-naming-snake-cccc0002", "alpha", "gamma", "info", supersedes=f)
    _letter(root, "gamma", "inbox", a + "info-naming-camel-cccc0003", "alpha", "gamma", "info", supersedes=f)
    # legacy and degraded files
    alias = a + "info-old-writer-dddd0001"
    _letter(root, "gamma", "inbox", alias, "alpha", "gamma", "info", name=alias + "-deadbeef.md")
    dup = a + "info-twice-dddd0002"
    _letter(root, "gamma", "inbox", dup, "alpha", "gamma", "info")
    _letter(root, "beta", "inbox", dup, "alpha", "beta", "info")
    _letter(root, "gamma", "inbox", a + "info-renamed-dddd0003", "alpha", "gamma", "info", name="renamed.md")
    _letter(root, "gamma", "inbox", None, "alpha", "gamma", "info", name="no-id.md")
    _letter(root, "gamma", "inbox", a + "info-no-type-dddd0004", "alpha", "gamma", "")
    _letter(root, "gamma", "inbox", a + "info-bad-sent-dddd0005", "alpha", "gamma", "info", sent="yesterday")
    _letter(root, "gamma", "inbox", "2026-11-19T000000-alpha-request-no-sent-dddd0006", "alpha", "gamma",
            "request", sent=None, requires_ack="true")
    _letter(root, "gamma", "inbox", a + "info-opaque-thread-dddd0007", "alpha", "gamma", "info",
            thread="Q3 planning")
    _letter(root, "gamma", "inbox", a + "info-points-nowhere-dddd0008", "alpha", "gamma", "info",
            supersedes="2026-01-01T000000-alpha-info-gone-00000000")
    _letter(root, "alpha", "inbox", "2026-11-23T000000-external-bridge-request-from-outside-eeee0001",
            "external-bridge", "alpha", "request", requires_ack="true")
    # the protocol's writer turns "Q3 plan - draft" into q3-plan---draft
    _letter(root, "beta", "inbox", a + "info-q3-plan---draft-ffff0001", "alpha", "beta", "info",
            session="s-1")
    if variant == "cycle":
        p, q = a + "info-loop-one-99990001", a + "info-loop-two-99990002"
        _letter(root, "beta", "inbox", p, "alpha", "beta", "info", supersedes=q)
        _letter(root, "beta", "inbox", q, "alpha", "beta", "info", supersedes=p)
    elif variant == "malformed":
        (root / "beta" / "inbox" / "broken.md").write_text("---\nid: broken\nfrom: alpha\n", encoding="utf-8")
    elif variant == "leftovers":
        (root / "beta" / "inbox" / f"{acked}.md.lifecycle.lock").mkdir()
        (root / "gamma" / "archive").mkdir()
        (root / "gamma" / "archive" / "old.md").write_text("never read\n", encoding="utf-8")
    elif variant != "mixed":
        raise ValueError(variant)
    return root

"""The demo letterbox (SPEC 7 ``demo``): a small agent team's last three weeks of mail.

The story is told as of ``DEMO_NOW`` and written as of the clock it is given: every time
in it (sent, deadlines, the dates its letters speak of) moves by the same amount, so a
demo written today says what the story says ("LATE 5d", "no review for 7 days") today,
and one written at ``DEMO_NOW`` (tests, screenshots) is the same bytes every day.

Deterministic for a seed and a clock: every ordinary letter goes through the one write
gate with the demo's own clock and a seeded id suffix; the deliberately broken letters
(an older writer's, a copying sync's, a broken tool's) are written directly, because they
are the point: every case of SPEC 5 occurs somewhere in it.

The team: ``planner`` plans, ``builder`` builds, ``reviewer`` reviews, ``researcher``
researches, ``simon`` is the human who rules, and ``external-bridge`` relays customer
mail from outside.
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from .errors import LetterboxError
from .grammar import valid_seat
from .root import is_letterbox
from .write import Draft, deliver, file_letter, init_letterbox, publish_bytes, reply, review_draft, sent_stamp

DEMO_NOW = datetime(2026, 11, 29, 9, 0, 0, tzinfo=timezone.utc)
DEMO_SEATS = ("planner", "builder", "reviewer", "researcher", "simon", "external-bridge")
UTC = timezone.utc

#: Each case's key in ``DemoReport.cases`` and what it shows.
CASES = {
    "acked": "request with a deadline, acknowledged (.md.ack sidecar)",
    "late": "late work (deadline passed, unanswered)",
    "filed": "a non-task letter filed into processed/",
    "reply-to-superseded": "reply to a superseded version (the result answers v1, not v2)",
    "result": "request answered with a result (moved to processed/)",
    "fork": "unresolved fork (two letters supersede the same one, no ruling)",
    "nack": "request declined with a nack (moved to processed/)",
    "review": "a previous review letter",
    "ruled": "a dispute and a ruling that settles a fork",
    "chain": "a supersession chain (three versions, one current)",
    "open-dispute": "an open dispute (no ruling yet)",
    "external": "a letter across the external bridge",
    "truth": "decisions forming current truth",
    "ambiguous-timestamp": "ambiguous timestamps (an older writer: no sent, a deadline without offset)",
    "alias": "a legacy alias file name (<id>-<8 hex>.md)",
    "duplicate": "a duplicated id (a sync copied the file into two inboxes)",
    "ambiguous-reference": "a pointer to a duplicated id (ambiguous reference)",
    "cycle": "a supersession cycle (two letters supersede each other)",
    "malformed": "a malformed pointer (a supersedes value with a comment in it)",
    "unreadable": "an unreadable letter (a TAB in its header): may be the licence audit's result",
    "unacked": "open tasks not yet acknowledged",
}

#: The demo's unsupported entry (SPEC 7): an older tool's archive folder in a seat.
ARCHIVE = "researcher/archive"
#: what the summary calls it
ARCHIVE_SAID = "an unsupported entry (an older tool's archive folder, never read)"


SETTINGS = """\
# letterbox-tui settings for the demo letterbox
[queries]
"Late requests" = "type=request late=yes"
"Decisions in force" = "type=decision current=yes"
"Unanswered tasks" = "task=yes answered=no state=open"
"""


@dataclass(slots=True)
class DemoReport:
    """What ``write_demo`` wrote: the root, letter ids by SPEC 5 case, and counts."""

    root: Path
    cases: dict[str, list[str]] = field(default_factory=dict)
    letters: int = 0
    existing: bool = False

    def summary(self) -> list[str]:
        root = str(self.root)
        if self.existing:
            head = [f"{root} already holds a demo letterbox; left it as it is."]
        else:
            head = [f"wrote a demo letterbox to {root}: {self.letters} letter files, "
                    f"seats {', '.join(DEMO_SEATS)}."]
        lines = list(head)
        archived = (self.root / ARCHIVE).is_dir()  # (a demo left as it is may have lost it)
        if self.cases:  # (a demo left as it is was not read again: its cases are not known)
            lines += ["", "Every case of SPEC 5 occurs in it:"]
            for case, ids in self.cases.items():
                lines.append(f"  {CASES.get(case, case)}:")
                lines += [f"    {i}" for i in ids]
            if archived:
                lines += [f"  {ARCHIVE_SAID}:", f"    {ARCHIVE}/"]
        elif archived:
            lines += ["", f"It holds {ARCHIVE_SAID}: {ARCHIVE}/"]
        q = shlex.quote(root)
        if archived:
            lines += [
                "",
                "The scope is incomplete while it is there: a letter in it could answer or",
                "supersede any other, so every answer it could change is unknown, with the",
                "reason unsupported-entry. To see those answers settle, remove it:",
                f"  rm -r {shlex.quote(str(self.root / ARCHIVE))}",
            ]
        lines += [
            "",
            "Try:",
            f"  letterbox-tui --root {q} owed",
            f"  letterbox-tui --root {q} query state=open answered=no type=request until=today",
            f"  letterbox-tui --root {q} disputes",
            f"  letterbox-tui --root {q} check",
            f"  letterbox-tui --root {q} digest",
            f"  letterbox-tui --root {q}            (the terminal app)",
        ]
        return lines


def remove_archive(root: str | os.PathLike[str]) -> None:
    """Take the demo's unsupported entry away, as its summary suggests: every answer only
    it held open then settles (the screenshots and tests use this)."""
    shutil.rmtree(Path(root) / ARCHIVE)


def is_previous_demo(directory: Path) -> bool:
    """A letterbox whose seats are exactly the demo's."""
    if not is_letterbox(directory):
        return False
    try:
        seats = {e.name for e in os.scandir(directory) if e.is_dir(follow_symlinks=False) and valid_seat(e.name)}
    except OSError:
        return False
    return seats == set(DEMO_SEATS)


def write_demo(directory: str | os.PathLike[str], *, seed: int = 7, now: datetime = DEMO_NOW) -> DemoReport:
    """Write the demo letterbox into ``directory`` (new or empty).

    A directory that already holds a previous demo is left as it is (the report says so);
    any other non-empty directory is refused.
    """
    root = Path(directory)
    if os.path.lexists(root):
        if not root.is_dir() or root.is_symlink():
            raise LetterboxError(f"{root} exists and is not a directory")
        try:
            entries = os.listdir(root)
        except OSError as exc:
            raise LetterboxError(f"cannot read {root}: {exc.strerror}") from None
        if entries:
            if is_previous_demo(root):
                return DemoReport(root, existing=True)
            raise LetterboxError(f"{root} is not empty and not a demo letterbox; give a new or empty DIR")
    init_letterbox(root, DEMO_SEATS)
    demo = _Demo(root, seed, now)
    try:
        demo.write()
    except OSError as exc:
        raise LetterboxError(f"cannot write the demo into {root}: {exc.strerror or exc}") from None
    report = DemoReport(root, demo.cases)
    report.letters = sum(
        1 for seat in DEMO_SEATS for folder in ("inbox", "processed")
        for name in os.listdir(root / seat / folder) if name.endswith(".md")
    )
    return report


class _Demo:
    def __init__(self, root: Path, seed: int, now: datetime) -> None:
        self.root = root
        self.rng = random.Random(seed)
        #: how far the clock is from the story's: every time in it moves by this (whole minutes)
        self.shift = (now.astimezone(UTC) - DEMO_NOW) // timedelta(minutes=1) * timedelta(minutes=1)
        self.cases: dict[str, list[str]] = {}

    # --- helpers ---------------------------------------------------------------------
    def at(self, days_before: float, hour: int, minute: int = 0) -> datetime:
        """A moment of the story: ``days_before`` days before ``DEMO_NOW``, at
        ``hour:minute`` UTC, moved to the demo's clock."""
        day = (DEMO_NOW - timedelta(days=days_before)).replace(hour=hour, minute=minute, second=0)
        return day + timedelta(seconds=self.rng.randrange(60)) + self.shift

    def due(self, story: str) -> str:
        """A deadline of the story (RFC 3339, or without an offset as an older writer left
        it), moved to the demo's clock and written the same way."""
        naive = not story.endswith("Z")
        when = datetime.fromisoformat(story.removesuffix("Z")).replace(tzinfo=UTC) + self.shift
        return when.strftime("%Y-%m-%dT%H:%M:%S" + ("" if naive else "Z"))

    def day(self, story: str, form: str = "%A %Y-%m-%d") -> str:
        """A date the story speaks of (``2026-12-10``: its 12:00 UTC), moved as its times are:
        ``Thursday 2026-12-10``, or as ``form`` says."""
        noon = datetime.fromisoformat(story).replace(hour=12, tzinfo=UTC) + self.shift
        return noon.strftime(form)

    def token(self) -> str:
        return f"{self.rng.getrandbits(32):08x}"

    def case(self, name: str, *ids: str) -> None:
        self.cases.setdefault(name, []).extend(ids)

    def send(self, when: datetime, frm: str, to: str, type: str, slug: str, body: str, **kw) -> str:
        draft = Draft(sender=frm, recipient=to, type=type, slug=slug, body=body, **kw)
        return deliver(self.root, draft, now=when, token=self.token).id

    def reply(self, when: datetime, letter_id: str, kind: str, seat: str, body: str) -> str:
        return reply(self.root, letter_id, kind, seat=seat, body=body, now=when, token=self.token).id

    def raw(self, rel: str, header: list[tuple[str, str]] | bytes, body: str) -> None:
        """Write a file directly (an older writer's letter), still atomically."""
        if isinstance(header, bytes):
            data = header + body.encode()
        else:
            lines = ["---"] + [f"{k}: {v}" if v else f"{k}:" for k, v in header] + ["---", ""]
            data = ("\n".join(lines) + body).encode()
        folder, name = rel.rsplit("/", 1)
        publish_bytes(self.root, tuple(folder.split("/")), name, data)

    def stamp(self, when: datetime) -> str:
        return when.strftime("%Y-%m-%dT%H%M%S")

    # --- the story -------------------------------------------------------------------
    def write(self) -> None:
        d = self.at
        c = self.case

        # Week 1: plans, the first decisions, work handed out.
        release_1 = self.send(d(20, 10), "planner", "simon", "decision", "release-date",
                              f"Release 1.4 ships on {self.day('2026-12-10')}.\n\n"
                              "Scope: ledger migration, session store, API versioning.\n",
                              subject="Release 1.4 date")
        migration = self.send(d(19, 9, 15), "planner", "builder", "request", "ledger-migration",
                              "GOAL: Move the invoices table onto the new ledger schema.\n"
                              "DONE-WHEN: all five tables migrate on a staging copy and the\n"
                              "reconciliation report shows zero drift.\n",
                              requires_ack=True, priority="now", deadline=self.due("2026-12-04T17:00:00Z"))
        self.reply(d(19, 11, 2), migration, "ack", "builder",
                   "ACK: starting with invoices and credit notes; will report by table.\n")
        c("acked", migration)
        cache_v1 = self.send(d(18, 8, 40), "planner", "builder", "request", "cache-config",
                             "GOAL: Set the response cache TTL to 300 s on the billing API.\n"
                             "DONE-WHEN: the TTL is live on staging.\n",
                             requires_ack=True, deadline=self.due("2026-11-18T17:00:00Z"))
        auth = self.send(d(17, 9, 30), "planner", "reviewer", "request", "auth-review",
                         "GOAL: Review the token refresh path in src/auth/refresh.ts.\n"
                         "DONE-WHEN: findings filed, or a clean bill.\n",
                         requires_ack=True, deadline=self.due("2026-11-20T17:00:00Z"))
        self.reply(d(17, 13, 5), cache_v1, "result", "builder",
                   "RESULT: TTL is 300 s on staging (commit 4e1a9b2).\n")
        info_hours = self.send(d(17, 15), "planner", "builder", "info", "office-hours",
                               "Office hours move to Tuesdays 15:00 UTC from next week.\n")
        benchmarks = self.send(d(16, 10, 20), "planner", "researcher", "request", "vendor-benchmarks",
                               "GOAL: Benchmark the two ledger vendors on our invoice mix.\n"
                               "DONE-WHEN: a table of p50/p99 write latency and cost per million rows.\n",
                               requires_ack=True, deadline=self.due("2026-11-24T17:00:00Z"))
        c("late", benchmarks)
        self.reply(d(15, 9, 12), auth, "ack", "reviewer", "ACK: reading it today.\n")
        caching = self.send(d(15, 14), "researcher", "planner", "decision", "caching-layer",
                            "Put a CDN in front of the static invoice PDFs; keep the API uncached\n"
                            "at the edge.\n")
        api_v1 = self.send(d(14, 10), "planner", "builder", "decision", "api-versioning",
                           "Version the public API in the URL path (/v2/...).\n")
        store_v1 = self.send(d(13, 11), "researcher", "planner", "decision", "session-store",
                             "Session store: Redis, as today.\n")
        deploys = self.send(d(14, 16), "planner", "builder", "decision", "deploy-window",
                            "Production deploys on Tuesdays and Thursdays only, 10:00-14:00 UTC.\n")
        file_letter(self.root, info_hours, seat="builder")
        c("filed", info_hours)

        # Week 2: the release slips, versions multiply, people disagree.
        release_2 = self.send(d(13, 16), "planner", "simon", "decision", "release-date",
                              f"Release 1.4 moves to {self.day('2026-12-14')}: the ledger migration slipped a week.\n",
                              supersedes=release_1, thread=release_1, subject="Release 1.4 date")
        cache_v2 = self.send(d(12, 9, 5), "planner", "builder", "request", "cache-config",
                             "GOAL: Correction: TTL 120 s, and cover the search endpoints too.\n"
                             "DONE-WHEN: both live on staging.\n",
                             requires_ack=True, deadline=self.due("2026-12-01T17:00:00Z"), supersedes=cache_v1,
                             thread=cache_v1)
        c("reply-to-superseded", cache_v2)
        self.reply(d(11, 16, 30), auth, "result", "reviewer",
                   "RESULT: two findings filed (refresh race, missing audience check); no blockers.\n")
        c("result", auth)
        signoff = self.send(d(10, 9), "planner", "reviewer", "request", "load-test-signoff",
                            "GOAL: Sign off the load test plan for the ledger cutover.\n",
                            requires_ack=True, deadline=self.due("2026-11-23T17:00:00Z"))
        api_header = self.send(d(10, 14), "builder", "planner", "decision", "api-versioning",
                               "Use an Accept-Version header instead of URL versioning.\n",
                               supersedes=api_v1, thread=api_v1)
        api_breaking = self.send(d(10, 14, 40), "reviewer", "planner", "decision", "api-versioning",
                                 "Keep URL versioning, but only bump it for breaking changes.\n",
                                 supersedes=api_v1, thread=api_v1)
        c("fork", api_header, api_breaking)
        self.reply(d(9, 8, 50), signoff, "nack", "reviewer",
                   "NACK: load testing is not my area; researcher owns the harness.\n")
        c("nack", signoff)
        store_pg = self.send(d(9, 11), "builder", "planner", "decision", "session-store",
                             "Session store: Postgres. One less system to run.\n",
                             supersedes=store_v1, thread=store_v1)
        store_valkey = self.send(d(9, 11, 30), "researcher", "planner", "decision", "session-store",
                                 "Session store: Valkey (the Redis fork), for the licence.\n",
                                 supersedes=store_v1, thread=store_v1)
        postmortem = self.send(d(9, 15), "simon", "builder", "request", "incident-postmortem",
                               f"GOAL: Write the postmortem for the {self.day('2026-11-19', '%m-%d')} double-invoice incident.\n"
                               "DONE-WHEN: timeline, cause, and three follow-ups.\n",
                               requires_ack=True, deadline=self.due("2026-11-27T12:00:00Z"))
        dispute_store = self.send(d(8, 10), "planner", "planner", "dispute", "session-store",
                                  "These two decisions cannot both hold: Postgres or Valkey?\n",
                                  disputes=[store_pg, store_valkey], thread=store_v1)
        self.reply(d(8, 10, 30), postmortem, "ack", "builder", "ACK: drafting it tomorrow.\n")
        licence = self.send(d(8, 14), "planner", "researcher", "request", "licence-audit",
                            "GOAL: Audit the licences of the three new dependencies.\n",
                            requires_ack=True, deadline=self.due("2026-12-02T17:00:00Z"))

        # The previous review, as it was recorded a week ago.
        from .scan import scan

        review_at = d(7, 9)
        draft = review_draft(scan(self.root, now=review_at), "simon", review_at)
        previous_review = deliver(self.root, draft, now=review_at, token=self.token).id
        c("review", previous_review)

        ruling = self.send(d(7, 11), "simon", "planner", "ruling", "session-store",
                           "Postgres. Fewer moving parts beats the licence question for now.\n",
                           rules_on=dispute_store, upholds=store_pg, thread=store_v1)
        c("ruled", dispute_store, ruling)
        release_3 = self.send(d(6, 9), "planner", "simon", "decision", "release-date",
                              f"Release 1.4 ships {self.day('2026-12-17')}; code freeze "
                              f"{self.day('2026-12-15', '%A %m-%d')}.\n",
                              supersedes=release_2, thread=release_1, subject="Release 1.4 date")
        c("chain", release_1, release_2, release_3)
        roadmap = self.send(d(5, 10), "simon", "planner", "request", "q1-roadmap",
                            "GOAL: A one-page Q1 roadmap draft.\nDONE-WHEN: in my inbox.\n",
                            requires_ack=True, deadline=self.due("2026-12-05T17:00:00Z"))
        dispute_api = self.send(d(5, 15), "reviewer", "reviewer", "dispute", "api-versioning",
                                "The header and the breaking-changes-only decisions disagree.\n",
                                disputes=[api_header, api_breaking], thread=api_v1)
        self.send(d(5, 15, 5), "reviewer", "builder", "info", "api-versioning",
                  f"Dispute {dispute_api} names your letter {api_header}.\n",
                  re=dispute_api, thread=api_v1)  # (the dispute's thread, as notify_drafts)
        c("open-dispute", dispute_api)
        self.send(d(4, 16), "builder", "planner", "status", "ledger-migration",
                  "Three of five tables migrate cleanly on the staging copy.\n",
                  re=migration, thread=migration)
        self.send(d(3, 9, 20), "researcher", "planner", "info", "vendor-benchmarks",
                  "Running late on the benchmarks: two more days for the p99 runs.\n",
                  re=benchmarks, thread=benchmarks)
        escalation = self.send(d(2, 18), "external-bridge", "simon", "request", "customer-escalation",
                               "Forwarded from support: a customer reports being invoiced twice for\n"
                               f"{self.day('2026-10-15', '%B')}. Needs an answer by {self.day('2026-12-01', '%A')}.\n",
                               requires_ack=True, priority="now", deadline=self.due("2026-12-01T17:00:00Z"))
        c("external", escalation)
        c("truth", release_3, store_pg, deploys)

        # What older writers, a copying sync and a broken tool left behind.
        t = self.stamp
        z = sent_stamp
        old_req = f"{t(d(13, 8))}-planner-request-staging-access-9c8d7e6f"
        self.raw(f"builder/inbox/{old_req}.md", [
            ("id", old_req), ("from", "planner"), ("to", "builder"), ("type", "request"), ("re", ""),
            ("priority", "next"), ("requires_ack", "true"), ("deadline", self.due("2026-11-20T17:00:00")),
        ], "GOAL: Give the researcher read access to the staging ledger.\n")
        c("ambiguous-timestamp", old_req)
        when = d(21, 9)
        kickoff = f"{t(when)}-simon-info-kickoff-notes-3a7c5e21"
        self.raw(f"planner/processed/{kickoff}-0badf00d.md", [
            ("id", kickoff), ("sent", z(when)), ("from", "simon"),
            ("to", "planner"), ("type", "info"), ("re", ""), ("priority", "whenever"),
            ("requires_ack", "false"), ("deadline", ""),
        ], "Kickoff notes: release 1.4 scope and owners.\n")
        c("alias", kickoff)
        when = d(11, 8)
        standup = f"{t(when)}-planner-status-standup-notes-5d4c3b2a"
        standup_fields = [
            ("id", standup), ("sent", z(when)), ("from", "planner"),
            ("to", "builder"), ("type", "status"), ("re", ""), ("priority", "whenever"),
            ("requires_ack", "false"), ("deadline", ""),
        ]
        self.raw(f"builder/inbox/{standup}.md", standup_fields, "Standup: migration on track; auth review done.\n")
        self.raw(f"reviewer/inbox/{standup}.md", standup_fields, "Standup: migration on track; auth review done.\n")
        c("duplicate", standup)
        when = d(10, 8)
        standup_2 = f"{t(when)}-planner-status-standup-notes-1e2d3c4b"
        self.raw(f"builder/inbox/{standup_2}.md", [
            ("id", standup_2), ("sent", z(when)), ("from", "planner"),
            ("to", "builder"), ("type", "status"), ("re", ""), ("supersedes", standup),
            ("priority", "whenever"), ("requires_ack", "false"), ("deadline", ""),
        ], "Standup (corrected): migration one day behind.\n")
        c("ambiguous-reference", standup_2)
        when_a, when_b = d(12, 10), d(12, 10, 5)
        style_a = f"{t(when_a)}-reviewer-decision-style-guide-1a2b3c4d"
        style_b = f"{t(when_b)}-reviewer-decision-style-guide-5e6f7a8b"
        for this, other, when, text in ((style_a, style_b, when_a, "Use 100-column lines."),
                                        (style_b, style_a, when_b, "Use 120-column lines.")):
            self.raw(f"builder/inbox/{this}.md", [
                ("id", this), ("sent", z(when)), ("from", "reviewer"),
                ("to", "builder"), ("type", "decision"), ("re", ""), ("supersedes", other),
                ("priority", "whenever"), ("requires_ack", "false"), ("deadline", ""),
            ], text + "\n")
        c("cycle", style_a, style_b)
        when = d(6, 13)
        caching_2 = f"{t(when)}-researcher-decision-caching-layer-7f6e5d4c"
        self.raw(f"planner/inbox/{caching_2}.md", [
            ("id", caching_2), ("sent", z(when)), ("from", "researcher"),
            ("to", "planner"), ("type", "decision"), ("re", ""), ("supersedes", f"{caching} (see thread)"),
            ("priority", "next"), ("requires_ack", "false"), ("deadline", ""),
        ], "Cache the API at the edge after all, 30 s.\n")
        c("malformed", caching_2)
        broken = f"{licence}--researcher--result"
        header = (
            "---\n"
            f"id: {broken}\n"
            f"sent: {z(d(1, 17))}\n"
            "from: researcher\nto: planner\ntype: result\n"
            f"re: {licence}\nthread: {licence}\n"
            "priority: next\nrequires_ack: false\ndeadline:\n"
            "summary: licences\tall three MIT\n"
            "---\n"
        ).encode()
        self.raw(f"planner/inbox/{broken}.md", header, "RESULT: all three dependencies are MIT licensed.\n")
        c("unreadable", broken)

        # A little more of the everyday, and the seats' own notes.
        for seat, state, note in (("builder", "working", "ledger migration, table 4 of 5"),
                                  ("reviewer", "idle", ""), ("researcher", "blocked", "waiting on benchmark quota")):
            text = f"state: {state}\nsince: {z(d(1, 8))}\nnotes: {note}\n"
            publish_bytes(self.root, (seat,), "status.md", text.encode())
        publish_bytes(self.root, (), "letterbox-tui.toml", SETTINGS.encode())
        c("unacked", roadmap, cache_v2)

        # An older tool kept closed letters in an archive folder the layout does not hold.
        # Nothing in it is read: the scope is incomplete (SPEC 2, 7).
        (self.root / ARCHIVE).mkdir()
        self.raw(f"{ARCHIVE}/{self.stamp(d(40, 9))}-planner-request-q3-vendor-scan.md", [
            ("id", f"{self.stamp(d(40, 9))}-planner-request-q3-vendor-scan"), ("from", "planner"),
            ("to", "researcher"), ("type", "request"), ("requires_ack", "true"), ("sent", z(d(40, 9))),
        ], "GOAL: List the ledger vendors worth a benchmark.\n")

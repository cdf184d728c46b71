"""The small letterbox the app tests open, and the fixed clock the app runs at.

    planner asks builder for a plan (late), a review (due soon) and notes (no deadline);
    builder asked planner for a budget (late) and for access (answered by a result);
    decision v1 is superseded by v2, which is forked by v3a and v3b; a dispute names v3a
    and v3b and a ruling upholds v3a; a second dispute is open; a review was recorded
    three days before the clock.
"""

from __future__ import annotations

from datetime import datetime, timezone

from tests.conftest import Box

NOW = datetime(2026, 11, 29, 15, 0, 0, tzinfo=timezone.utc)


def fill(box: Box) -> Box:
    box.seat("planner", "builder", "reviewer")
    L = box.letter
    L("2026-11-20T090000-planner-request-renewal-plan-aaaa0001", frm="planner", to="builder", type="request",
      requires_ack="true", deadline="2026-11-27T17:00:00Z", sent="2026-11-20T09:00:00Z",
      subject="Renewal plan for the storage cluster", body="# Plan\n\nPlease draft the **renewal plan**.\n")
    L("2026-11-28T100000-planner-request-review-docs-aaaa0002", frm="planner", to="builder", type="request",
      requires_ack="true", deadline="2026-11-30T09:00:00Z", sent="2026-11-28T10:00:00Z", subject="Review the docs")
    L("2026-11-28T110000-planner-request-notes-aaaa0003", frm="planner", to="builder", type="request",
      requires_ack="true", sent="2026-11-28T11:00:00Z", subject="Write release notes")
    L("2026-11-21T090000-builder-request-budget-aaaa0004", frm="builder", to="planner", type="request",
      requires_ack="true", deadline="2026-11-25T12:00:00Z", sent="2026-11-21T09:00:00Z", subject="Approve the budget")
    # answered: a result from planner closes builder's earlier ask
    L("2026-11-22T090000-builder-request-access-aaaa0005", frm="builder", to="planner", type="request",
      requires_ack="true", sent="2026-11-22T09:00:00Z", subject="Grant access", folder="processed", seat="planner")
    L("2026-11-22T090000-builder-request-access-aaaa0005--planner--result", frm="planner", to="builder", type="result",
      re="2026-11-22T090000-builder-request-access-aaaa0005", thread="2026-11-22T090000-builder-request-access-aaaa0005",
      sent="2026-11-22T12:00:00Z", body="Access granted.\n")
    # a supersession chain with a fork settled by a ruling
    v1 = "2026-11-10T090000-planner-decision-db-choice-bbbb0001"
    v2 = "2026-11-12T090000-planner-decision-db-choice-bbbb0002"
    v3a = "2026-11-14T090000-planner-decision-db-choice-bbbb0003"
    v3b = "2026-11-14T100000-builder-decision-db-choice-bbbb0004"
    L(v1, frm="planner", to="builder", type="decision", sent="2026-11-10T09:00:00Z", subject="Use Postgres")
    L(v2, frm="planner", to="builder", type="decision", supersedes=v1, sent="2026-11-12T09:00:00Z", subject="Use Postgres 17")
    L(v3a, frm="planner", to="builder", type="decision", supersedes=v2, sent="2026-11-14T09:00:00Z", subject="Use Postgres 17 with replicas")
    L(v3b, frm="builder", to="planner", type="decision", supersedes=v2, sent="2026-11-14T10:00:00Z", subject="Use SQLite instead")
    d = "2026-11-15T090000-reviewer-dispute-db-choice-cccc0001"
    L(d, frm="reviewer", to="reviewer", type="dispute", disputes=f"{v3a},{v3b}", sent="2026-11-15T09:00:00Z",
      subject="Which database?")
    # a second, open dispute about two requests
    d2 = "2026-11-26T090000-reviewer-dispute-plans-cccc0002"
    L(d2, frm="reviewer", to="reviewer", type="dispute",
      disputes="2026-11-20T090000-planner-request-renewal-plan-aaaa0001,2026-11-21T090000-builder-request-budget-aaaa0004",
      sent="2026-11-26T09:00:00Z", subject="Plan and budget disagree")
    L("2026-11-26T090000-reviewer-review-review-dddd0001", frm="reviewer", to="reviewer", type="review",
      sent="2026-11-26T09:00:00Z", subject="Review: 3 owed, 1 late", body="Reviewed.\n")
    box.raw("planner/status.md", "Drafting the Q1 plan; back Monday.\n")
    return box


def ruling(box: Box) -> None:
    box.letter("2026-11-16T090000-reviewer-ruling-db-choice-eeee0001", frm="reviewer", to="reviewer", type="ruling",
               rules_on="2026-11-15T090000-reviewer-dispute-db-choice-cccc0001",
               upholds="2026-11-14T090000-planner-decision-db-choice-bbbb0003", sent="2026-11-16T09:00:00Z")

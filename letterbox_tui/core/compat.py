"""The protocol's ``letterbox.query.compat.v2`` document (SPEC 7 ``query --compat-v2``).

Programs written against the protocol's ``letterbox query --compat-v2`` (its herdr plugin
among them) read this JSON: the same keys, values and exit codes as the protocol's compat
mode prints on the same letterbox, so such a program can be pointed at ours. Its values are
the protocol's own, and they are not our answers: there a fork leaves every branch a head,
a ruling settles nothing, a partial scope answers ``no``, one unreadable file (or a writer's
lock directory in an inbox) makes every answer ``unknown``, and a slug is what precedes the
first ``--``. Mapping our answers onto its shape would print values the protocol never
would, so this module states the protocol's compat rules once, over the files as its walk
sees them: every ``*.md`` name of each seat's ``inbox/`` and ``processed/`` (dot names
included), anything nested there or an ``archive/`` a scope issue. Headers are read with
the one grammar (``core.header``); an unreadable one is named with the protocol's code.

``compat_document(root, participants, terms, max_names)`` returns ``(document, exit)``:
exit 0 when the document is complete, 2 otherwise (an invalid term included: then the
document names the error), as the protocol's.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .compat_walk import MAX_NAMES, CompatError, Leaf, Walked, walk

SCHEMA = "letterbox.query.compat.v2"
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,243}")
_CARD_FIELDS = ("id", "from", "to", "type", "re", "thread", "supersedes", "priority", "requires_ack",
                "deadline", "session", "sent")
_TERMINAL = ("result", "nack")
_BRIDGE = "external-bridge"


# --- the facts ------------------------------------------------------------------------

def publication(fields: dict[str, str]) -> tuple[datetime | None, str]:
    """A letter's time and its basis: only a valid ``sent`` with an offset gives one."""
    raw = fields.get("sent", "")
    if not raw:
        return None, "id_unspecified"
    try:
        when = datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith("Z") else raw)
    except (ValueError, OverflowError):
        return None, "invalid_sent"
    if when.tzinfo is None:
        return None, "invalid_sent"
    try:
        return when.astimezone(timezone.utc), "sent_utc"
    except OverflowError:
        return None, "invalid_sent"


@dataclass
class Fact:
    leaf: Leaf
    fields: dict[str, str]
    identity: str | None
    storage: str  # canonical, alias, unresolved
    issues: list[str]
    voided: tuple[str, ...]  # re/supersedes values that are no id
    opaque_thread: bool
    occurrences: int = 0
    eligible: bool = False
    answered: str = "unknown"
    answer_reasons: tuple[str, ...] = ()
    head: str = "unknown"
    head_reasons: tuple[str, ...] = ()
    state: str = "unknown"
    state_reasons: tuple[str, ...] = ()

    @property
    def klass(self) -> str:
        if self.occurrences > 1:
            return "repeated"
        if not self.eligible:
            return "unresolved"
        if self.voided or self.opaque_thread:
            return "relation_degraded"
        if self.fields.get("sent") and publication(self.fields)[1] == "invalid_sent":
            return "time_degraded"
        return self.storage


def _fact(leaf: Leaf) -> Fact:
    fields = leaf.fields or {}
    raw = fields.get("id", "")
    ident = raw if _ID.fullmatch(raw) else None
    issues = []
    if ident is None:
        storage = "unresolved"
        issues.append("invalid_id" if raw else "missing_id")
    elif leaf.name == ident + ".md":
        storage = "canonical"
    elif re.fullmatch(re.escape(ident) + r"-[0-9a-f]{8}\.md", leaf.name):
        storage = "alias"
        issues.append("filename_alias")
    else:
        storage = "unresolved"
        issues.append("id_filename_mismatch_unclassified")
    if not all(fields.get(k) for k in ("from", "to", "type")):
        issues.append("missing_provenance")
    voided = tuple(k for k in ("re", "supersedes") if fields.get(k) and not _ID.fullmatch(fields[k]))
    opaque = bool(fields.get("thread")) and not _ID.fullmatch(fields["thread"])
    return Fact(leaf, fields, ident, storage, issues, voided, opaque)


def _cycles(edges: dict[str, str]) -> list[tuple[str, ...]]:
    done: set[str] = set()
    found = []
    for start in sorted(edges):
        path: list[str] = []
        at: dict[str, int] = {}
        node = start
        while node in edges and node not in done:
            if node in at:
                ring = path[at[node]:]
                low = ring.index(min(ring))
                found.append(tuple(ring[low:] + ring[:low]))
                break
            at[node] = len(path)
            path.append(node)
            node = edges[node]
        done.update(path)
    return sorted(found)


@dataclass
class Graph:
    walked: Walked
    facts: list[Fact]
    cycles: list[tuple[str, ...]]
    complete: bool
    dangling: list[str] | None


def evaluate(walked: Walked) -> Graph:
    """Every readable file's facts, before any term (a hidden reply still closes)."""
    facts = [_fact(x) for x in walked.leaves if x.fields is not None and x.issue is None]
    counts = Counter(f.identity for f in facts if f.identity is not None)
    for f in facts:
        f.occurrences = counts[f.identity] if f.identity is not None else 0
        if f.occurrences > 1:
            f.issues.append("repeated_id")
        f.eligible = (f.occurrences == 1 and f.storage in ("canonical", "alias")
                      and "missing_provenance" not in f.issues)
    eligible = {f.identity for f in facts if f.eligible}
    known = set(counts)
    whole = walked.complete and len(facts) == len(walked.leaves)

    terminals: set[tuple[str, str, str]] = set()
    doubts: dict[tuple[str | None, str | None, str | None], set[str]] = defaultdict(set)
    superseded: set[str] = set()
    head_doubts: dict[str, set[str]] = defaultdict(set)
    everywhere: set[str] = set()
    edges: dict[str, str] = {}
    dangling: set[str] = set()
    for f in facts:
        re_, kind = f.fields.get("re", ""), f.fields.get("type", "")
        if re_ and (kind in _TERMINAL or not kind):
            valid = bool(_ID.fullmatch(re_))
            if f.eligible and kind in _TERMINAL and valid:
                terminals.add((re_, f.fields["from"], f.fields["to"]))
            else:
                sender, recipient = f.fields.get("from") or None, f.fields.get("to") or None
                if not valid:
                    why = "malformed_relation_bounded" if sender and recipient else "malformed_relation_unbounded"
                else:
                    why = "ambiguous_terminal" if f.occurrences > 1 else "unclassified_terminal"
                doubts[(re_ if valid else None, sender, recipient)].add(why)
        old = f.fields.get("supersedes", "")
        if not old:
            continue
        if not _ID.fullmatch(old):
            everywhere.add("malformed_supersedes_global")
        elif f.eligible and old in eligible:
            edges[f.identity] = old  # type: ignore[index]
            superseded.add(old)
        elif f.eligible and old not in known:
            dangling.add(old)
        elif not f.eligible:
            head_doubts[old].add("ambiguous_edge" if f.occurrences > 1 else "unclassified_superseder")

    cycles = _cycles(edges) if whole else []
    complete = whole and not cycles
    for f in facts:
        filed = f.leaf.location.split("/")[1:] == ["processed"]
        relay = _BRIDGE in (f.fields.get("from"), f.fields.get("to"))
        if not complete:
            why = ("incomplete_scan",) if not whole else ("supersession_cycle",)
            f.answered, f.answer_reasons, f.head, f.head_reasons = "unknown", why, "unknown", why
            f.state, f.state_reasons = ("closed", ("filed",)) if filed else ("unknown", why)
            continue
        if not f.eligible:
            why = ("repeated_id" if f.occurrences > 1 else "missing_provenance" if "missing_provenance" in f.issues
                   else "unresolved_identity")
            f.answered, f.head, f.head_reasons = "unknown", "unknown", (why,)
            f.answer_reasons = ("relay", why) if relay else (why,)
            f.state, f.state_reasons = ("closed", ("filed",)) if filed else ("unknown", (why,))
            continue
        me, sender, recipient = f.identity, f.fields["to"], f.fields["from"]
        closed = (me, sender, recipient) in terminals
        doubt: set[str] = set()
        for target in (me, None):
            for s in (sender, None):
                for r in (recipient, None):
                    doubt |= doubts.get((target, s, r), set())
        if relay:
            f.answered, f.answer_reasons = "unknown", ("relay",)
        elif closed:
            f.answered, f.answer_reasons = "yes", ("eligible_terminal",)
        elif doubt:
            f.answered, f.answer_reasons = "unknown", tuple(sorted(doubt))
        else:
            f.answered, f.answer_reasons = "no", ("no_terminal_in_scope",)
        head_doubt = everywhere | head_doubts.get(me, set())  # type: ignore[arg-type]
        if me in superseded:
            f.head, f.head_reasons = "no", ("eligible_superseder",)
        elif head_doubt:
            f.head, f.head_reasons = "unknown", tuple(sorted(head_doubt))
        else:
            f.head, f.head_reasons = "yes", ("no_superseder_in_scope",)
        if filed:
            f.state, f.state_reasons = "closed", ("filed",)
        elif closed:
            f.state, f.state_reasons = "closed", ("eligible_terminal",)
        elif doubt:
            f.state, f.state_reasons = "unknown", tuple(sorted(doubt))
        else:
            f.state, f.state_reasons = "open", ("no_terminal_in_scope",)
    return Graph(walked, facts, cycles, complete, sorted(dangling) if complete else None)


# --- the terms ------------------------------------------------------------------------

_KEYS = ("from", "to", "type", "thread", "state", "answered", "head", "superseded", "legacy", "since",
         "until", "slug~")
_CHOICES = {"state": ("any", "open", "closed", "unknown"), "answered": ("yes", "no", "unknown"),
            "head": ("yes", "no", "unknown"), "superseded": ("yes", "no", "head", "unknown"),
            "legacy": ("yes", "no", "any")}


def parse_terms(terms: Iterable[str]) -> list[tuple[str, str]]:
    """The compat mode's filters, sorted by key; ``CompatError`` with the protocol's code."""
    got: dict[str, str] = {}
    for term in terms:
        key, sep, value = term.partition("=")
        if (not sep or key not in _KEYS or key in got or not value or len(value) > 4096
                or any(ord(c) < 32 or ord(c) == 127 for c in value)):
            raise CompatError("invalid_filter")
        if key in _CHOICES and value not in _CHOICES[key]:
            raise CompatError("invalid_filter_value")
        if key in ("since", "until") and publication({"sent": value})[0] is None:
            raise CompatError("invalid_filter_time")
        got[key] = value
    if "head" in got and "superseded" in got:
        raise CompatError("conflicting_head_filters")
    if "since" in got and "until" in got and publication({"sent": got["since"]})[0] > publication(
            {"sent": got["until"]})[0]:
        raise CompatError("reversed_time_range")
    return sorted(got.items())


def slug(f: Fact) -> str | None:
    """The label the protocol's strict reader shows: the text before the id's first ``--``,
    less its time, ``<from>-<type>-`` and token."""
    if f.identity is None:
        return None
    topic = re.sub(r"^\d{4}-\d\d-\d\dT\d{6}-", "", f.identity.split("--", 1)[0])
    lead = f"{f.fields.get('from', '')}-{f.fields.get('type', '')}-"
    if topic.startswith(lead):
        topic = topic[len(lead):]
    elif "--" in f.identity:
        topic = re.sub(r"^.*?-(?:request|delegate|info|status|blocker|result|ack|nack)-", "", topic, count=1)
    return re.sub(r"-[0-9a-f]{8}$", "", topic)


def _known(actual: str, wanted: str) -> bool | None:
    if wanted == "unknown":
        return actual == "unknown"
    return None if actual == "unknown" else actual == wanted


def _term(f: Fact, key: str, wanted: str) -> bool | None:
    if key in ("from", "to", "type", "thread"):
        return f.fields.get(key, "") == wanted
    if key == "state" and wanted == "any":
        return True
    if key in ("state", "answered", "head"):
        return _known(getattr(f, key), wanted)
    if key == "superseded":
        return _known(f.head, {"yes": "no", "no": "yes", "head": "yes", "unknown": "unknown"}[wanted])
    if key == "legacy":
        return True if wanted == "any" else (f.klass == "canonical") == (wanted == "no")
    if key in ("since", "until"):
        when, bound = publication(f.fields)[0], publication({"sent": wanted})[0]
        if when is None or bound is None:
            return None
        return when >= bound if key == "since" else when <= bound
    label = slug(f)  # slug~
    return None if label is None else wanted.casefold() in label.casefold()


# --- the document ---------------------------------------------------------------------

def _card(f: Fact, locations: dict[str, list[str]]) -> dict[str, Any]:
    when, basis = publication(f.fields)
    voided = list(f.voided) + (["thread"] if f.opaque_thread else []) + (["sent"] if basis == "invalid_sent" else [])
    klass = f.klass
    return {
        "source_ref": f.leaf.ref,
        "fields": {k: f.fields.get(k, "") for k in _CARD_FIELDS},
        "identity": f.identity,
        "primary_class": klass,
        "storage_class": f.storage,
        "canonical": klass == "canonical",
        "legacy_reasons": f.issues + ["invalid_" + k for k in f.voided] + (["opaque_thread"] if f.opaque_thread else [])
        + (["invalid_sent"] if basis == "invalid_sent" else []),
        "structural_participation": "none" if not f.eligible or klass == "unresolved"
        else "fields-voided" if voided else "full",
        "voided_fields": voided,
        "location": f.leaf.location,
        "locations": locations.get(f.identity, [f.leaf.ref]) if f.identity else [f.leaf.ref],
        "duplicate_group": f.identity if f.occurrences > 1 else None,
        "occurrences": f.occurrences,
        "state": f.state, "state_reasons": list(f.state_reasons),
        "answered": f.answered, "answer_reasons": list(f.answer_reasons),
        "head": f.head, "head_reasons": list(f.head_reasons),
        "reply_route": "external" if _BRIDGE in (f.fields.get("from"), f.fields.get("to")) else "letterbox",
        "time_basis": basis,
        "publication_utc": when.isoformat().replace("+00:00", "Z") if when else None,
        "time_ambiguous": when is None,
        "slug": slug(f),
    }


def document(graph: Graph, terms: list[tuple[str, str]], *, discovered: bool) -> dict[str, Any]:
    """The compat-v2 document of ``graph`` under ``terms`` (cards in path order)."""
    locations: dict[str, list[str]] = defaultdict(list)
    for f in graph.facts:
        if f.identity:
            locations[f.identity].append(f.leaf.ref)
    locations = {k: sorted(v) for k, v in locations.items()}
    ordered = sorted(graph.facts, key=lambda f: f.leaf.ref)
    warnings = [{"code": "invalid_sent", "field": "sent", "identity": f.identity, "source_ref": f.leaf.ref}
                for f in ordered if publication(f.fields)[1] == "invalid_sent"]
    cards, diagnostics = [], []
    selected = excluded = undecided = 0
    for f in ordered:
        if f.klass == "unresolved":
            diagnostics.append({"code": "unresolved_envelope", "record": _card(f, locations), "source_ref": f.leaf.ref})
            continue
        values = [(key, _term(f, key, wanted)) for key, wanted in terms]
        if any(v is False for _, v in values):
            excluded += 1
            continue
        unknown = [key for key, v in values if v is None]
        card = _card(f, locations)
        card["selection"] = "indeterminate" if unknown else "selected"
        card["unknown_filters"] = unknown
        undecided += bool(unknown)
        selected += not unknown
        cards.append(card)
    diagnostics += [{"source_ref": x.ref, "code": x.issue or "missing_header"}
                    for x in graph.walked.leaves if x.fields is None or x.issue is not None]
    diagnostics.sort(key=lambda d: d["source_ref"])
    issues: list[dict[str, Any]] = [{"domain": "scope", "source_ref": ref, "code": code}
                                    for ref, code in graph.walked.issues]
    issues += [{"domain": "graph", "code": "supersession_cycle", "identifiers": list(c), "source_refs": []}
               for c in graph.cycles]
    scanned = len(graph.walked.leaves)
    unknown_time = scanned - sum(publication(f.fields)[0] is not None for f in graph.facts)
    classes = Counter(f.klass for f in graph.facts)
    observed = {
        "count": selected, "scanned": scanned, "selected": selected, "nonselected": excluded + undecided,
        "nonselected_known": excluded, "indeterminate": undecided, "cards": len(cards),
        "diagnostics": len(diagnostics), "issues": len(issues), "unknown_time": unknown_time,
        "invalid_sent": len(warnings), "alias": classes["alias"], "unclassified": classes["unresolved"],
        "relation_degraded": classes["relation_degraded"], "repeated": classes["repeated"],
        "canonical": classes["canonical"], "time_degraded": classes["time_degraded"],
        "conflict_ids": len({f.identity for f in graph.facts if f.occurrences > 1}),
    }
    walked_complete = graph.walked.complete
    return {
        "schema": SCHEMA, "version": 2, "complete": graph.complete, "partial": not graph.complete,
        "scope": {
            "participants": list(graph.walked.participants),
            "participant_selection": "discovered_matching_root_names" if discovered else "explicit",
            "discovery_pattern": "[a-z][a-z0-9-]* except locks" if discovered else None,
            "folder_patterns": ["inbox", "processed"], "leaf_pattern": "*.md", "direct_leaves_only": True,
            "enumeration_header_complete": walked_complete,
            "completeness_basis": "enumeration_and_header_syntax", "consistency": "non-atomic",
            "whole_tree_absence_claim": False,
        },
        "filters": dict(terms),
        "order": "source_ref_lexical_not_chronological", "time_ambiguous": bool(unknown_time),
        "time_semantics": "explicit_header_sent_not_transport_delivery",
        "observed_counts": observed,
        "complete_counts": dict(observed) if graph.complete else None,
        "dangling_supersedes": graph.dangling,
        "query_empty": graph.complete and not cards and not diagnostics,
        "cards": cards, "diagnostics": diagnostics, "issues": issues, "field_warnings": warnings,
    }


def compat_document(root: str, participants: Sequence[str] | None, terms: Iterable[str],
                    max_names: int = MAX_NAMES) -> tuple[dict[str, Any], int]:
    """``(document, exit code)`` of ``query --compat-v2 TERMS`` over ``root``."""
    try:
        parsed = parse_terms(terms)
        doc = document(evaluate(walk(root, participants, max_names)), parsed, discovered=participants is None)
    except CompatError as exc:
        doc = {"schema": SCHEMA, "complete": False, "error": str(exc)}
    return doc, 0 if doc["complete"] else 2


def dumps(doc: dict[str, Any]) -> str:
    """The document as the protocol prints it: one line, keys sorted, ASCII only."""
    return json.dumps(doc, ensure_ascii=True, sort_keys=True, separators=(",", ":"))

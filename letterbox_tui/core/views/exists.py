"""Did this ever happen? (SPEC 7 ``exists``): ``yes`` when a letter matches; ``no`` only on
a complete scope with no unknown row; otherwise ``unknown``, with the unknown rows' reasons
and the scope's own (why an incomplete scope cannot prove absence)."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Reason, Scope, Snapshot
from ..query import QueryResult, dedupe


def scope_reasons(snapshot: Snapshot) -> list[Reason]:
    """Why the scope cannot prove absence, as reasons about the match."""
    scope = snapshot.scope
    out = []
    for u in snapshot.unreadable:
        legible = u.legible.get("id", "")
        out.append(Reason("unreadable-file", "match", u.error, (legible,) if legible else (), (u.path,)))
    for e in snapshot.unsupported:
        out.append(Reason("unsupported-entry", "match", e.reason, (), (e.path,)))
    if scope.partial:
        out.append(Reason("outside-scope", "match", "partial scope: " + ", ".join(scope.participants) + " only"))
    if not scope.atomic:
        out.append(Reason("non-atomic-scan", "match", "files changed while the scan ran"))
    return out


@dataclass(slots=True, frozen=True)
class Exists:
    value: str  # yes, no, unknown
    matches: int
    unknown: int
    reasons: tuple[Reason, ...]
    scope: Scope

    def to_json(self) -> dict:
        """The ``exists --json`` document."""
        return {
            "exists": self.value,
            "matches": self.matches,
            "unknown": self.unknown,
            "reasons": [r.to_json() for r in self.reasons],
            "scope": self.scope.to_json(),
        }


def exists_view(result: QueryResult, snapshot: Snapshot) -> Exists:
    scope = snapshot.scope
    if result.matches:
        value, reasons = "yes", ()
    elif scope.complete and not result.unknown:
        value, reasons = "no", ()
    else:
        collected = [r for _, why in result.unknown for r in why] + scope_reasons(snapshot)
        value, reasons = "unknown", tuple(dedupe(collected))
    return Exists(value, len(result.matches), len(result.unknown), reasons, scope)

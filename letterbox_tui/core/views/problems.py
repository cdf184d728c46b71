"""Problems and warnings (SPEC 7 ``check``): ``core.check``'s findings, the one ``Finding``
both faces show, with their counts."""

from __future__ import annotations

from dataclasses import dataclass

from ..check import Finding, check
from ..resolve import Resolution


@dataclass(slots=True, frozen=True)
class ProblemsView:
    findings: tuple[Finding, ...]  # problems first, then warnings (check's order)
    res: Resolution

    @property
    def problems(self) -> int:
        return sum(1 for f in self.findings if f.problem)

    @property
    def warnings(self) -> int:
        return len(self.findings) - self.problems

    def with_findings(self, more: list[Finding]) -> ProblemsView:
        """The view with ``more`` findings (``check``'s stale temporaries) in order."""
        from ..check import ordered

        return ProblemsView(tuple(ordered([*self.findings, *more])), self.res)

    def to_json(self) -> dict:
        """The ``check --json`` document."""
        return {"findings": [f.to_json() for f in self.findings], "scope": self.res.snapshot.scope.to_json()}


def problems_view(res: Resolution) -> ProblemsView:
    return ProblemsView(tuple(check(res)), res)

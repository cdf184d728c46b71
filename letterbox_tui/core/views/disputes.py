"""Open disputes (SPEC 7 ``disputes``): where we still disagree. A dispute is open until a
readable ruling names it; each disputed letter is shown with whether it is current."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Answer, Letter
from ..resolve import Resolution
from ..rows import row


@dataclass(slots=True, frozen=True)
class OpenDispute:
    dispute: Letter
    disputed: tuple[tuple[Letter, Answer], ...]  # each readable letter it names, and its current


@dataclass(slots=True, frozen=True)
class DisputesView:
    disputes: tuple[OpenDispute, ...]
    res: Resolution

    def to_json(self) -> dict:
        """The ``disputes --json`` document."""
        res = self.res
        return {
            "disputes": [
                {"dispute": row(d.dispute, res), "disputed": [row(x, res) for x, _ in d.disputed]}
                for d in self.disputes
            ],
            "scope": res.snapshot.scope.to_json(),
        }


def disputes_view(res: Resolution) -> DisputesView:
    return DisputesView(
        tuple(OpenDispute(od.dispute, tuple((x, res.current(x)) for x in od.disputed)) for od in res.open_disputes()),
        res,
    )

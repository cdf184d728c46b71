"""Current truth: what holds now. The decisions in force, the rulings and other heads of
supersession chains in force, and the chains whose head the record cannot settle (each
candidate head with its reasons). ``digest`` (``core.digest``) cites the same decisions,
open disputes, owed and uncertain answers as a document; this is the list a face shows."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Answer, Letter
from ..resolve import Resolution
from .order import newest_first


@dataclass(slots=True, frozen=True)
class TruthItem:
    letter: Letter
    current: Answer

    @property
    def ruled(self) -> bool:
        return any(r.code == "ruled" for r in self.current.reasons)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(sorted({r.code for r in self.current.reasons}))


@dataclass(slots=True, frozen=True)
class TruthView:
    decisions: tuple[TruthItem, ...]  # decisions in force, newest first
    others: tuple[TruthItem, ...]  # rulings and other superseding letters in force
    doubt: tuple[TruthItem, ...]  # candidate heads of chains in doubt, one chain once


def truth_view(res: Resolution) -> TruthView:
    seen_chains: set[str] = set()
    decisions: list[TruthItem] = []
    others: list[TruthItem] = []
    doubt: list[TruthItem] = []
    for x in newest_first(res.snapshot.letters):
        in_chain = bool(x.supersedes) or bool(res.superseders(x))
        if not in_chain and x.type not in ("decision", "ruling"):
            continue
        cur = res.current(x)
        if cur.yes:
            (decisions if x.type == "decision" else others).append(TruthItem(x, cur))
        elif cur.unknown:
            # one chain once: its key, not its letters (listing the chain for each of its
            # letters in doubt was quadratic in a wide fork)
            key = "chain:" + res.chain_key(x) if in_chain else "path:" + x.path
            if key in seen_chains:
                continue
            seen_chains.add(key)
            for h in (res.heads(x) if in_chain else []) or [x]:
                doubt.append(TruthItem(h, res.current(h)))
    return TruthView(tuple(decisions), tuple(others), tuple(doubt))

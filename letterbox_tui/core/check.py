"""Everything ``check`` reports (SPEC 7): problems and warnings, each naming its letters
and files. Problems make ``check`` exit 1; warnings do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import Letter, Snapshot
from .resolve import Resolution

PROBLEM = "problem"
WARNING = "warning"

#: Every finding code, in the order findings are listed.
CODES: dict[str, str] = {
    "unreadable-file": PROBLEM,
    "unsupported-entry": PROBLEM,
    "non-atomic-scan": PROBLEM,
    "duplicate-id": PROBLEM,
    "malformed-pointer": PROBLEM,
    "cycle": PROBLEM,
    "fork": PROBLEM,
    "filename-alias": WARNING,
    "id-filename-mismatch": WARNING,
    "dangling-pointer": WARNING,
    "ambiguous-timestamp": WARNING,
    "time-from-id": WARNING,
    "missing-requires-ack": WARNING,
    "orphan-sidecar": WARNING,
    "ignored-entry": WARNING,
    "settled-fork": WARNING,
}
_RANK = {code: i for i, code in enumerate(CODES)}
_CHECKED_POINTERS = ("re", "supersedes", "rules_on", "upholds")


@dataclass(slots=True, frozen=True)
class Finding:
    code: str
    detail: str
    letters: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @property
    def severity(self) -> str:
        return CODES[self.code]

    @property
    def problem(self) -> bool:
        return self.severity == PROBLEM

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "detail": self.detail,
            "letters": list(self.letters),
            "paths": list(self.paths),
        }


def check(res: Resolution) -> list[Finding]:
    """Every finding over the resolution's snapshot: problems first, then warnings."""
    snap = res.snapshot
    out: list[Finding] = []
    out += _scope_findings(snap)
    by_id: dict[str, list[Letter]] = {}
    for letter in snap.letters:
        by_id.setdefault(letter.id, []).append(letter)
    for letter_id, copies in by_id.items():
        if len(copies) > 1:
            out.append(Finding(
                "duplicate-id", f"{len(copies)} files hold id {letter_id}",
                (letter_id,), tuple(c.path for c in copies),
            ))
    for letter in snap.letters:
        out += _letter_findings(letter, by_id, snap.scope.complete)
    out += _cycles(snap.letters)
    out += _forks(by_id, res)
    for rel in snap.orphan_sidecars:
        out.append(Finding("orphan-sidecar", "an .md.ack sidecar with no letter beside it", (), (rel,)))
    for name in snap.ignored:
        out.append(Finding("ignored-entry", "not a seat: ignored at the root", (), (name,)))
    out.sort(key=lambda f: (_RANK[f.code], f.paths, f.letters))
    return out


def has_problem(findings: list[Finding]) -> bool:
    return any(f.problem for f in findings)


def _scope_findings(snap: Snapshot) -> list[Finding]:
    out = []
    for u in snap.unreadable:
        legible_id = u.legible.get("id", "")
        out.append(Finding("unreadable-file", u.error, (legible_id,) if legible_id else (), (u.path,)))
    for e in snap.unsupported:
        out.append(Finding("unsupported-entry", e.reason, (), (e.path,)))
    if not snap.scope.atomic:
        out.append(Finding("non-atomic-scan", "files changed while the scan ran, and rescans did not settle"))
    return out


def _letter_findings(letter: Letter, by_id: dict[str, list[Letter]], complete: bool) -> list[Finding]:
    out = []
    mine = ((letter.id,), (letter.path,))
    for flag in ("filename-alias", "id-filename-mismatch", "missing-requires-ack", "time-from-id"):
        if flag in letter.flags:
            out.append(Finding(flag, _FLAG_DETAIL[flag].format(letter=letter), *mine))
    if letter.sent_at is None:
        what = "no sent time" if not letter.sent else f"sent {letter.sent!r} has no usable offset"
        out.append(Finding("ambiguous-timestamp", what, *mine))
    if letter.deadline and letter.deadline_at is None:
        out.append(Finding("ambiguous-timestamp", f"deadline {letter.deadline!r} has no usable offset", *mine))
    for key in letter.malformed:
        raw = letter.field(key) or ""
        out.append(Finding("malformed-pointer", f"{key}: {raw!r} is not a valid id", *mine))
    if complete:
        pointers = [(k, getattr(letter, k)) for k in _CHECKED_POINTERS if k not in letter.malformed]
        pointers += [("disputes", d) for d in letter.disputes]
        for key, target in pointers:
            if target and target not in by_id:
                out.append(Finding("dangling-pointer", f"{key}: {target} is not in the letterbox", *mine))
    return out


_FLAG_DETAIL = {
    "filename-alias": "legacy alias: file {letter.name} holds {letter.id}",
    "id-filename-mismatch": "file name {letter.name} does not match its id",
    "missing-requires-ack": "no requires_ack: treated as a non-task",
    "time-from-id": "no usable sent time: the id's UTC prefix is used",
}


def supersession_cycles(letters: list[Letter]) -> list[list[str]]:
    """Strongly connected groups of ids on a supersedes cycle (a self-loop included)."""
    edges: dict[str, set[str]] = {}
    for letter in letters:
        if letter.supersedes and "supersedes" not in letter.malformed:
            edges.setdefault(letter.id, set()).add(letter.supersedes)
    # Tarjan's algorithm, iterative (chains may be long).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(edges.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(edges.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1 or node in edges.get(node, ()):
                    cycles.append(sorted(group))
    return sorted(cycles)


def _cycles(letters: list[Letter]) -> list[Finding]:
    paths_of: dict[str, list[str]] = {}
    for letter in letters:
        paths_of.setdefault(letter.id, []).append(letter.path)
    out = []
    for group in supersession_cycles(letters):
        paths = tuple(p for i in group for p in paths_of.get(i, ()))
        out.append(Finding("cycle", "supersession cycle: " + " -> ".join(group), tuple(group), paths))
    return out


def _forks(by_id: dict[str, list[Letter]], res: Resolution) -> list[Finding]:
    """A fork: two or more letters supersede the same letter. Settled when a ruling settles
    it (the resolver marks the chain ``ruled`` and no answer in it is unknown for a fork)."""
    superseders: dict[str, dict[str, Letter]] = {}
    for copies in by_id.values():
        for letter in copies:
            if letter.supersedes and "supersedes" not in letter.malformed:
                superseders.setdefault(letter.supersedes, {}).setdefault(letter.id, letter)
    out = []
    for target, branches in sorted(superseders.items()):
        if len(branches) < 2:
            continue
        ids = tuple(sorted(branches))
        members = list(branches.values())
        paths = tuple(x.path for x in members)
        settled = fork_settled(target, members, res)
        if settled:
            detail = f"{len(ids)} letters supersede {target}; a ruling settles it"
            out.append(Finding("settled-fork", detail, (target, *ids), paths))
        else:
            detail = f"{len(ids)} letters supersede {target}; no ruling settles it"
            out.append(Finding("fork", detail, (target, *ids), paths))
    return out


def fork_settled(target: str, branches: list[Letter], res: Resolution) -> bool:
    """True when the resolver shows a ruling at work in the fork's chain and no letter of
    the chain is unknown because of a fork."""
    ruled = False
    for letter in res.chain(branches[0]):
        answer = res.current(letter)
        codes = {r.code for r in answer.reasons}
        if "fork" in codes:
            return False
        if "ruled" in codes:
            ruled = True
    return ruled

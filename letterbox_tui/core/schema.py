"""The JSON contract in code: every ``--json`` document as a ``TypedDict`` (SPEC 5-7).

The commands build plain dicts (no model object per row on the hot path); these types say
what those dicts hold. ``json_schema(command)`` publishes one as JSON Schema through
pydantic's ``TypeAdapter`` (imported only then: the reading commands never load pydantic),
``letterbox-tui schema [COMMAND]`` prints them, and the tests validate every command's real
output against them (``validate``). Every document forbids keys it does not name, so a key
added to an output without its type here fails the tests.

Adding a command's ``--json``: write its document's TypedDict below (reuse ``Row``,
``Reason``, ``Scope``), register it in ``DOCUMENTS`` under the command's name, and add a
test that validates a real output (``tests/core/test_schema.py`` shows the shape).
"""

from __future__ import annotations

from typing import Any, Literal, Union

from typing_extensions import NotRequired, TypedDict

Value = Literal["yes", "no", "unknown"]
State = Literal["open", "closed", "unknown"]
Code = Literal[
    # SPEC 5's reason codes, exactly; then the informational ones on yes/no answers
    "cycle", "fork", "malformed-pointer", "ambiguous-reference", "duplicate-id",
    "unreadable-file", "unsupported-entry", "outside-scope", "non-atomic-scan",
    "ambiguous-timestamp", "reply-to-superseded", "external-route",
    "answered-by", "accepted-by", "ruled",
]
About = Literal["current", "answered", "accepted", "state", "late", "superseded", "match"]


class Reason(TypedDict):
    """Why an answer is what it is (every ``unknown`` carries at least one)."""

    code: Code
    about: About
    detail: str
    letters: list[str]
    paths: list[str]


class Unreadable(TypedDict):
    path: str
    error: str


class Unsupported(TypedDict):
    path: str
    reason: str


class Sync(TypedDict):
    """How current a letterbox kept in git is (SPEC 9)."""

    head: str | None
    upstream: str | None
    ahead: int | None
    behind: int | None
    fetched_at: str | None
    uncommitted: int


class Scope(TypedDict):
    """What an answer was computed over (SPEC 5), attached to every document."""

    root: str
    participants: list[str]
    files: int
    letters: int
    legacy: int
    unreadable: list[Unreadable]
    unsupported: list[Unsupported]
    partial: bool
    atomic: bool
    complete: bool
    scanned_at: str
    sync: Sync | None


# Python keywords and dashes cannot be class attributes: the functional form keeps the
# spelling SPEC 6 fixes ("from").
Row = TypedDict("Row", {
    "id": str, "path": str, "seat": str, "folder": Literal["inbox", "processed"],
    "from": str, "to": str, "type": str, "re": str, "thread": str, "supersedes": str,
    "priority": str, "requires_ack": str, "deadline": str, "sent": str, "slug": str,
    "subject": str, "fields": dict[str, str], "state": State, "answered": Value,
    "accepted": Value, "current": Value, "head": Union[str, None], "superseded": Value,
    "late": Value, "legacy": list[str], "reasons": list[Reason],
})
Row.__doc__ = "One readable file as a row (SPEC 6): header fields as written, derived answers."


class Page(TypedDict):
    """The part of a long answer a document shows (``--limit``/``--offset``, ``core.paging``):
    ``shown`` rows from ``offset`` of ``total`` in all; ``next``: the offset of the rest."""

    offset: int
    limit: int | None
    total: int
    shown: int
    next: int | None


class QueryDocument(TypedDict):
    matches: list[Row]
    unknown: list[Row]
    scope: Scope
    page: NotRequired[Page]  # only with --limit or --offset


class ExistsDocument(TypedDict):
    exists: Value
    matches: int
    unknown: int
    reasons: list[Reason]
    scope: Scope


class AnswerDocument(TypedDict):
    value: str
    reasons: list[Reason]


class History(TypedDict):
    """The commit that first brought a letter's file into the repository (SPEC 9); every
    field null and ``unknown`` saying why when the clone's history is cut (shallow)."""

    commit: str | None
    committed_at: str | None
    author: str | None
    machine: str | None
    unknown: NotRequired[str]


class Provenance(TypedDict):
    path: str
    seat: str
    folder: str
    sha256: str | None
    sha256_bytes: int | None  # how many bytes the hash covers: the size, or a bounded prefix
    size: int | None
    changed_since_scan: bool | None
    legacy: list[str]
    malformed: list[str]
    error: str | None
    history: History | None  # a letterbox in git: the commit that brought the file


class Progress(TypedDict):
    """The holder's latest progress note, from the ack sidecar (``progress_at`` as written)."""

    note: str
    at: str | None


class DisputedBy(TypedDict):
    """A dispute naming the shown letter, and the rulings on it (empty: still open)."""

    dispute: str
    ruled_by: list[str]


class ShownLetter(TypedDict):
    id: str
    headers: dict[str, str]
    answers: dict[str, AnswerDocument]
    head: str | None
    heads: list[str]
    progress: Progress | None
    disputed_by: list[DisputedBy]  # (added) the disputes naming it, with their rulings
    provenance: Provenance
    body: str | None
    body_truncated: bool


class ShowDocument(TypedDict):
    id: str
    letters: list[ShownLetter]
    scope: Scope


class CurrentDocument(TypedDict):
    id: str
    current: Value
    head: str | None
    heads: list[str]
    chain: list[str]
    reasons: list[Reason]
    scope: Scope


class AnsweredDocument(TypedDict):
    id: str
    answered: Value
    replies: list[Row]
    acks: list[Row]
    progress: Progress | None
    reasons: list[Reason]
    scope: Scope


class ThreadNode(TypedDict):
    id: str
    children: list[ThreadNode]


class ThreadDocument(TypedDict):
    thread: str
    root: str | None
    tree: list[ThreadNode]
    scope: Scope


AttentionCode = Literal[
    # SPEC 7's attention codes, exactly (most urgent first)
    "late", "late-unknown", "never-acked", "accepted-silent", "owner-blocked", "lease-silent",
    "due-soon", "waiting-on-human", "owner-idle", "chased",
]


class Attention(TypedDict):
    """What an owed item waits on: since when the record shows it (null when that is not
    known), and why; a code whose record cannot be read has a ``detail`` starting
    ``unknown: `` and the reason (its ``since`` is null)."""

    code: AttentionCode
    since: str | None
    detail: str


OwedRow = TypedDict("OwedRow", {**Row.__annotations__, "attention": list[Attention]})
OwedRow.__doc__ = "An owed task: its row (SPEC 6) and its attention codes (SPEC 7)."


class OwedGroup(TypedDict):
    seat: str
    items: list[OwedRow]


class OwedDocument(TypedDict):
    at: str
    owed: list[OwedGroup]
    scope: Scope
    page: NotRequired[Page]  # only with --limit or --offset


class OpenDispute(TypedDict):
    dispute: Row
    disputed: list[Row]


class DisputesDocument(TypedDict):
    disputes: list[OpenDispute]
    scope: Scope


class Finding(TypedDict):
    code: str
    severity: Literal["problem", "warning"]
    detail: str
    letters: list[str]
    paths: list[str]


class CheckDocument(TypedDict):
    findings: list[Finding]
    scope: Scope


#: A letter cited by the digest: where it is, never its body.
Cite = TypedDict("Cite", {
    "id": str, "path": str, "from": str, "to": str, "type": str, "subject": str, "sent": str,
})
DigestDispute = TypedDict("DigestDispute", {
    "id": str, "path": str, "from": str, "to": str, "type": str, "subject": str, "sent": str,
    "disputed": list[Cite],
})
DigestOwedItem = TypedDict("DigestOwedItem", {
    "id": str, "path": str, "from": str, "to": str, "type": str, "subject": str, "sent": str,
    "deadline": str, "late": Value, "answered": Value, "attention": list[Attention],
})
#: one of the most urgent owed items: where it is, the seat that owes it, its codes
DigestUrgent = TypedDict("DigestUrgent", {
    "id": str, "path": str, "from": str, "to": str, "type": str, "subject": str, "sent": str,
    "seat": str, "attention": list[Attention],
})


class AttentionCount(TypedDict):
    """How many owed items carry a code, and how many carry it unknown."""

    known: int
    unknown: int


class DigestAttention(TypedDict):
    """The counts per attention code (every code), and the most urgent items (at most ten)."""

    counts: dict[AttentionCode, AttentionCount]
    urgent: list[DigestUrgent]
DigestUncertain = TypedDict("DigestUncertain", {
    "id": str, "path": str, "from": str, "to": str, "type": str, "subject": str, "sent": str,
    "answer": str, "value": Literal["unknown"], "reasons": list[Reason],
})


class DigestOwedGroup(TypedDict):
    seat: str
    items: list[DigestOwedItem]


class DigestDocument(TypedDict):
    at: str
    seat: str | None
    decisions: list[Cite]
    disputes: list[DigestDispute]
    owed: list[DigestOwedGroup]
    late: list[str]
    attention: DigestAttention
    uncertain: list[DigestUncertain]
    scope: Scope


class DigestFileDocument(TypedDict):
    """``digest --write PATH --json`` and ``digest --check PATH --json``."""

    path: str
    status: Literal["written", "unchanged", "current", "stale"]
    source: str  # "sha256:" and the hash over the letters the digest cites
    cited: int
    detail: str
    scope: Scope


class LastReview(TypedDict):
    id: str
    path: str
    sent: str


class ReviewCheckDocument(TypedDict):
    """``review --check --every INTERVAL --as S --json``."""

    seat: str
    every: str
    at: str
    due: bool
    last: LastReview | None
    scope: Scope


class SyncDocument(TypedDict):
    """``sync --json``: what one sync did, then how current the copy is."""

    remote: str | None  # None: the copy has no remote (--no-push commits here only)
    branch: str
    committed: list[str]  # letterbox paths this run committed
    commit: str | None  # the commit it made (before rebasing), if any
    rebased: int  # local commits replayed onto the upstream
    pulled: int  # paths the upstream added, changed or removed here
    pushed: bool  # the remote holds this copy's head (pushed now, or nothing was left to push)
    head: str | None
    waiting: list[str]  # left for the next sync (a lifecycle lock was held)
    restored: list[str]  # letters the remote deleted or rewrote, committed back (--restore-letters)
    sync: Sync | None


class LeaseEntry(TypedDict):
    """One entry of ``locks/`` (the protocol's ``letterbox lock``): who holds it since when;
    ``problems`` says what is wrong with it (empty for a well-formed lease held by a seat)."""

    name: str
    path: str
    target: str
    owner: str | None
    session: str | None
    taken: str | None
    problems: list[str]


class LeasesDocument(TypedDict):
    leases: list[LeaseEntry]
    more: int
    scope: Scope


class InboxCounts(TypedDict):
    letters: int  # every readable letter in the inbox, hidden ones included
    live: int
    stale: int
    hidden: int  # stale letters ``--recent`` left out


class InboxItem(TypedDict):
    """One letter of a seat's inbox: its activity as the protocol reckons it, and its row."""

    display_id: str
    activity: str
    activity_from: Literal["id", "mtime", "acked_at", "progress_at"]
    age: str
    stale: bool
    progress: Progress | None
    letter: Row


class InboxDocument(TypedDict):
    seat: str
    at: str
    stale_days: int
    counts: InboxCounts
    letters: list[InboxItem]  # live first, then stale; each part newest activity first
    unreadable: list[Unreadable]
    scope: Scope


#: Each command's ``--json`` document, by command name.
DOCUMENTS: dict[str, Any] = {
    "query": QueryDocument,
    "exists": ExistsDocument,
    "show": ShowDocument,
    "current": CurrentDocument,
    "answered": AnsweredDocument,
    "thread": ThreadDocument,
    "owed": OwedDocument,
    "disputes": DisputesDocument,
    "check": CheckDocument,
    "digest": Union[DigestDocument, DigestFileDocument],
    "review": ReviewCheckDocument,
    "sync": SyncDocument,
    "leases": LeasesDocument,
    "inbox": InboxDocument,
}


def _forbid_extra_keys() -> None:
    """Every TypedDict here forbids keys it does not name (pydantic reads
    ``__pydantic_config__``; set as ``pydantic.with_config`` would, without importing it)."""
    for value in list(globals().values()):
        if isinstance(value, type) and hasattr(value, "__required_keys__") and value.__module__ == __name__:
            value.__pydantic_config__ = {"extra": "forbid"}  # type: ignore[attr-defined]


_forbid_extra_keys()


def _adapter(command: str) -> Any:
    from pydantic import TypeAdapter

    try:
        kind = DOCUMENTS[command]
    except KeyError:
        from .errors import LetterboxError

        raise LetterboxError(f"no JSON schema for {command!r}: one of {', '.join(DOCUMENTS)}") from None
    return TypeAdapter(kind)


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema of ``command``'s ``--json`` document."""
    schema = _plain(_adapter(command).json_schema())
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"letterbox-tui {command} --json"
    return schema


def _plain(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as the same constraints in fewer subschemas, which a validator checks in
    about two thirds of the time (an MCP client checks every result against it): a choice
    among bare types (pydantic's ``anyOf`` for ``str | None``) becomes one ``type`` list,
    and a definition that does not refer to itself is written where it is used."""
    defs = schema.pop("$defs", {})

    def refers(name: str) -> set[str]:
        found: set[str] = set()
        stack = [defs[name]]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref", "")
                if ref.startswith("#/$defs/") and (target := ref[8:]) not in found:
                    found.add(target)
                    stack.append(defs[target])
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return found

    kept = {name for name in defs if name in refers(name)}

    def plain(node: Any) -> Any:
        if isinstance(node, list):
            return [plain(x) for x in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref", "")
        if len(node) == 1 and ref.startswith("#/$defs/") and ref[8:] not in kept:
            return plain(defs[ref[8:]])
        node = {k: plain(v) for k, v in node.items()}
        choice = node.get("anyOf")
        if choice and all(isinstance(x, dict) and set(x) == {"type"} and isinstance(x["type"], str)
                          for x in choice):
            del node["anyOf"]
            node["type"] = [x["type"] for x in choice]
        return node

    schema = plain(schema)
    if kept:
        schema["$defs"] = {name: plain(defs[name]) for name in sorted(kept)}
    return schema


def validate(command: str, document: Any) -> None:
    """Raise ``pydantic.ValidationError`` unless ``document`` is what ``command`` prints
    (strict: no coercion, no extra key)."""
    _adapter(command).validate_python(document, strict=True)

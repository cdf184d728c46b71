"""The value types every layer shares: letters, unreadable files, scope, answers.

Data flows one way: files on disk -> scan (``Snapshot``) -> resolve (``Answer`` values)
-> query and views. Nothing here reads files or knows about Textual.

Letters are plain slotted classes rather than frozen dataclasses or pydantic models: a
scan builds one per file and 100,000 of them must cost little. Treat them as immutable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter

from .grammar import id_time, parse_time
from typing import Literal

AnswerValue = Literal["yes", "no", "unknown"]

#: Reason codes of SPEC 5, exactly.
REASON_CODES = (
    "cycle",
    "fork",
    "malformed-pointer",
    "ambiguous-reference",
    "duplicate-id",
    "unreadable-file",
    "unsupported-entry",
    "outside-scope",
    "non-atomic-scan",
    "ambiguous-timestamp",
    "reply-to-superseded",
    "external-route",
)
#: Informational reasons carried on yes/no answers.
INFO_CODES = ("answered-by", "accepted-by", "ruled")

#: The legacy flags: every flag a readable letter may carry (SPEC 3), each marking a letter
#: written an older or laxer way than the protocol's writers do today. One definition for
#: both places that speak of them: a row's ``legacy`` lists the letter's flags, and
#: ``scope.legacy`` counts the readable letters with any (a naive ``sent`` was flagged
#: ``ambiguous-sent`` in the row but not counted). ``letters.build`` sets no other flag.
LEGACY_FLAGS = frozenset({
    "filename-alias", "id-filename-mismatch", "missing-sent", "ambiguous-sent", "time-from-id",
    "ambiguous-deadline", "missing-requires-ack",
})

#: Header fields whose values are letter ids (pointers). ``disputes`` is a list of ids.
POINTER_FIELDS = ("re", "thread", "supersedes", "rules_on", "upholds", "disputes")

EXTERNAL_BRIDGE = "external-bridge"


class Later:
    """Where a letter's time is to be read from when first asked (``FROM_FIELD``, ``FROM_ID``)."""

    __slots__ = ("source",)

    def __init__(self, source: str) -> None:
        self.source = source

    def __repr__(self) -> str:
        return f"Later({self.source!r})"


#: a time read from the letter's own field (``sent``, ``deadline``) when first asked
FROM_FIELD = Later("field")
#: a ``sent_at`` read from the letter's id's time prefix when first asked (``time-from-id``)
FROM_ID = Later("id")


class Letter:
    """One readable letter file: its header fields and where it lies.

    ``header_keys`` and ``header_values`` give every header line as written, in order: the
    keys (one tuple shared by the letters written with the same keys) and their values;
    ``fields`` gives the same lines as (key, value) pairs. Named attributes are the fields
    the spec gives meaning to, as strings ("" when absent). The values are not kept twice:
    when every key is a named text field (``NAMED_TEXT``), as for most letters, they are
    read from the named attributes when asked.
    ``sent_at`` and ``deadline_at`` are aware datetimes, or None when absent or ambiguous;
    a reader that knows where a time comes from may give ``FROM_FIELD`` or ``FROM_ID``
    instead, and the time is then read from that text when first asked.
    ``path`` is where the letter lies, relative to the root, with "/" separators, and
    ``name`` its file name (its last part, not kept twice); ``size``, ``mtime_ns``, ``inode`` and ``ctime_ns`` its file's stat when it was read.
    """

    __slots__ = (
        "id", "sender", "recipient", "type", "re", "thread", "priority", "requires_ack",
        "deadline", "sent", "supersedes", "disputes", "rules_on", "upholds", "subject",
        "header_keys", "_values", "seat", "folder", "path", "_name", "_sent_at", "_deadline_at", "flags",
        "malformed", "size", "mtime_ns", "inode", "ctime_ns",
    )

    # The parameters may be given by position, in this order: the scanner's build() does,
    # since matching 27 keywords cost more than the stores (0.45 s -> 0.17 s per 100,000).
    # The header is given either as ``fields`` (pairs) or, as the readers give it, as
    # ``header_keys`` and ``header_values`` (the last two; ``fields`` then is not read).
    # ``header_values`` None with ``header_keys`` given says the named attributes hold the
    # values (the readers know it from ``header_getter``); given, they are kept only when
    # the named attributes do not hold them.
    def __init__(
        self,
        id: str = "",  # noqa: A002 - the protocol's field name
        sender: str = "",
        recipient: str = "",
        type: str = "",  # noqa: A002 - the protocol's field name
        re: str = "",
        thread: str = "",
        priority: str = "",
        requires_ack: str = "",
        deadline: str = "",
        sent: str = "",
        supersedes: str = "",
        disputes: tuple[str, ...] = (),
        rules_on: str = "",
        upholds: str = "",
        subject: str = "",
        fields: tuple[tuple[str, str], ...] = (),
        seat: str = "",
        folder: str = "",
        path: str = "",
        name: str | None = "",
        sent_at: datetime | Later | None = None,
        deadline_at: datetime | Later | None = None,
        flags: tuple[str, ...] = (),
        malformed: tuple[str, ...] = (),
        size: int = 0,
        mtime_ns: int = 0,
        inode: int = 0,
        ctime_ns: int = 0,
        header_keys: tuple[str, ...] | None = None,
        header_values: tuple[str, ...] | None = None,
    ) -> None:
        # Straight-line stores: a scan builds 100,000 of these.
        self.id = id
        self.sender = sender
        self.recipient = recipient
        self.type = type
        self.re = re
        self.thread = thread
        self.priority = priority
        self.requires_ack = requires_ack
        self.deadline = deadline
        self.sent = sent
        self.supersedes = supersedes
        self.disputes = disputes
        self.rules_on = rules_on
        self.upholds = upholds
        self.subject = subject
        self.seat = seat
        self.folder = folder
        self.path = path
        # None: the last part of ``path`` (the readers give it so); a name given that is not
        # (a letter made by hand) is kept as given
        self._name = None if name is None or path[path.rfind("/") + 1:] == name else name
        self._sent_at = sent_at
        self._deadline_at = deadline_at
        self.flags = flags
        self.malformed = malformed
        self.size = size
        self.mtime_ns = mtime_ns
        self.inode = inode
        self.ctime_ns = ctime_ns
        if header_keys is None:
            header_keys = tuple([k for k, _ in fields])
            header_values = tuple([v for _, v in fields])
        self.header_keys = header_keys
        if header_values is not None:
            getter = header_getter(header_keys)
            if getter is not None and getter(self) == header_values:
                header_values = None
        self._values = header_values

    # Declared for type checkers; assigned in __init__.
    id: str
    sender: str
    recipient: str
    type: str
    re: str
    thread: str
    priority: str
    requires_ack: str
    deadline: str
    sent: str
    supersedes: str
    disputes: tuple[str, ...]
    rules_on: str
    upholds: str
    subject: str
    header_keys: tuple[str, ...]
    _values: tuple[str, ...] | None  # the header's values when the named attributes do not hold them
    seat: str
    folder: str
    path: str
    _name: str | None  # the file name when it is not the last part of ``path``
    _sent_at: datetime | Later | None
    _deadline_at: datetime | Later | None
    flags: tuple[str, ...]
    malformed: tuple[str, ...]  # pointer field names whose value is not a valid id
    size: int
    mtime_ns: int
    inode: int
    ctime_ns: int

    @property
    def sent_at(self) -> datetime | None:
        """When the letter was sent: its ``sent`` (or, where the letterbox says ids are UTC,
        its id's time prefix), or None when absent or ambiguous."""
        at = self._sent_at
        if type(at) is Later:
            at = self._sent_at = parse_time(self.sent) if at is FROM_FIELD else id_time(self.id)
        return at  # type: ignore[return-value]

    @sent_at.setter
    def sent_at(self, value: datetime | None) -> None:
        self._sent_at = value

    @property
    def deadline_at(self) -> datetime | None:
        """The letter's ``deadline``, or None when absent or ambiguous."""
        at = self._deadline_at
        if type(at) is Later:
            at = self._deadline_at = parse_time(self.deadline)
        return at  # type: ignore[return-value]

    @deadline_at.setter
    def deadline_at(self, value: datetime | None) -> None:
        self._deadline_at = value

    @property
    def name(self) -> str:
        """The letter's file name."""
        name = self._name
        if name is None:
            path = self.path
            return path[path.rfind("/") + 1:]
        return name

    @name.setter
    def name(self, value: str) -> None:
        path = self.path
        self._name = None if path[path.rfind("/") + 1:] == value else value

    @property
    def header_values(self) -> tuple[str, ...]:
        """The value of each of ``header_keys``, as written."""
        values = self._values
        if values is None:
            return header_getter(self.header_keys)(self)  # type: ignore[misc]
        return values

    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        """Every header line as written, in order, as (key, value) pairs."""
        return tuple(zip(self.header_keys, self.header_values))

    def field_dict(self) -> dict[str, str]:
        """The header as a dict (a key appears once: a repeated key makes a file unreadable)."""
        return dict(zip(self.header_keys, self.header_values))

    @property
    def task(self) -> bool:
        """A task is owed an ack, nack or final result."""
        return self.requires_ack == "true"

    @property
    def thread_id(self) -> str:
        """The thread this letter belongs to: its ``thread`` label, or its own id."""
        return self.thread or self.id

    @property
    def legacy(self) -> bool:
        """The letter carries a legacy flag (it counts towards ``scope.legacy``)."""
        return not LEGACY_FLAGS.isdisjoint(self.flags)

    def field(self, key: str) -> str | None:
        """The value of the header line ``key``, or None when the header has none."""
        try:
            return self.header_values[self.header_keys.index(key)]
        except ValueError:
            return None

    def __repr__(self) -> str:
        return f"Letter({self.id!r} at {self.path!r})"


#: a header key -> the ``Letter`` attribute holding its value as written (``disputes`` is
#: not one: its attribute is a tuple of the ids it names)
NAMED_TEXT = {
    "id": "id", "from": "sender", "to": "recipient", "type": "type", "re": "re", "thread": "thread",
    "priority": "priority", "requires_ack": "requires_ack", "deadline": "deadline", "sent": "sent",
    "supersedes": "supersedes", "rules_on": "rules_on", "upholds": "upholds", "subject": "subject",
}
#: a header's keys -> ``header_getter``'s answer for them (the first few thousand kept)
_GETTERS: dict[tuple[str, ...], Callable[[Letter], tuple[str, ...]] | None] = {}


def header_getter(keys: tuple[str, ...]) -> Callable[[Letter], tuple[str, ...]] | None:
    """What gives the values of ``keys`` from a letter's named attributes, or None when a key
    is not a named text field (``NAMED_TEXT``)."""
    try:
        return _GETTERS[keys]
    except KeyError:
        pass
    getter: Callable[[Letter], tuple[str, ...]] | None = None
    if all(k in NAMED_TEXT for k in keys):
        names = [NAMED_TEXT[k] for k in keys]
        if len(names) > 1:
            getter = attrgetter(*names)
        else:
            def getter(letter: Letter, names: list[str] = names) -> tuple[str, ...]:
                return tuple([getattr(letter, n) for n in names])
    if len(_GETTERS) < 4096:
        _GETTERS[keys] = getter
    return getter


@dataclass(slots=True)
class Unreadable:
    """A ``*.md`` letter entry whose header could not be read.

    ``legible`` holds the header lines that parse as ``key: value`` with a valid key (a
    repeated key only when all its values agree); ``illegible`` is the rest of the header
    text (decoded leniently), kept so the resolver can look for id mentions in it.
    """

    path: str
    seat: str
    folder: str
    error: str
    legible: dict[str, str] = field(default_factory=dict)
    illegible: str = ""
    size: int = 0
    mtime_ns: int = 0
    inode: int = 0
    ctime_ns: int = 0


@dataclass(slots=True, frozen=True)
class Unsupported:
    """An entry the scan may not read or follow; it makes the scope incomplete."""

    path: str
    reason: str


@dataclass(slots=True)
class Scope:
    """What an answer was computed over (SPEC 5, "Scope")."""

    root: str
    participants: list[str]
    files: int = 0
    letters: int = 0
    legacy: int = 0
    unreadable: list[dict[str, str]] = field(default_factory=list)
    unsupported: list[dict[str, str]] = field(default_factory=list)
    partial: bool = False
    atomic: bool = True
    scanned_at: str = ""
    #: how current this copy is when the letterbox is kept in git (SPEC 9: ``head``,
    #: ``upstream``, ``ahead``, ``behind``, ``fetched_at``, ``uncommitted``), else None;
    #: filled by whoever makes the scope for a face (``core.sync.status(root)``)
    sync: dict[str, object] | None = field(default=None, compare=False)

    @property
    def all_read(self) -> bool:
        """Every file the scope takes in was read: none unreadable or unsupported, none
        changed while the scan ran (a partial scope may still be all read)."""
        return not self.unreadable and not self.unsupported and self.atomic

    @property
    def complete(self) -> bool:
        return self.all_read and not self.partial

    def to_json(self) -> dict[str, object]:
        return {
            "root": self.root,
            "participants": list(self.participants),
            "files": self.files,
            "letters": self.letters,
            "legacy": self.legacy,
            "unreadable": list(self.unreadable),
            "unsupported": list(self.unsupported),
            "partial": self.partial,
            "atomic": self.atomic,
            "complete": self.complete,
            "sync": self.sync,
            "scanned_at": self.scanned_at,
        }

    def none_found(self, said: str) -> str:
        """What an empty answer says: ``said`` ("nothing owed") only when the scope is
        complete; else that it is so among the letters read, and what was not read."""
        if self.complete:
            return said
        parts = []
        if unread := len(self.unreadable) + len(self.unsupported):
            parts.append(f"{unread} file{'s' if unread != 1 else ''} unread (see check)")
        if self.partial:
            seats = list(self.participants)
            parts.append(f"only {', '.join(seats)} {'was' if len(seats) == 1 else 'were'} read")
        if not self.atomic:
            parts.append("files changed while the scan ran")
        return f"{said} among the letters read; " + "; ".join(parts)

    def why_incomplete(self) -> list[str]:
        """Plain words for each cause of incompleteness (empty when complete)."""
        why = []
        if self.unreadable:
            n = len(self.unreadable)
            why.append(f"{n} unreadable file{'s' if n != 1 else ''}")
        if self.unsupported:
            n = len(self.unsupported)
            why.append(f"{n} unsupported entr{'ies' if n != 1 else 'y'}")
        if self.partial:
            why.append("partial scope (" + ", ".join(self.participants) + " only)")
        if not self.atomic:
            why.append("files changed during the scan")
        return why


@dataclass(slots=True)
class Snapshot:
    """The result of one scan: letters, what could not be read, and the scope."""

    root: str
    letters: list[Letter]
    unreadable: list[Unreadable]
    unsupported: list[Unsupported]
    scope: Scope
    #: every seat found at the root (even those outside a partial scope)
    seats: list[str] = field(default_factory=list)
    #: relative paths of ``.md.ack`` sidecars whose letter exists beside them
    sidecars: frozenset[str] = frozenset()
    #: relative paths of ``.md.ack`` sidecars with no ``.md`` beside them
    orphan_sidecars: list[str] = field(default_factory=list)
    #: seat -> relative path of its ``status.md``
    status_notes: dict[str, str] = field(default_factory=dict)
    #: root entries that are neither seats nor known files (warnings for ``check``)
    ignored: list[str] = field(default_factory=list)
    #: each scanned folder ("seat/inbox") -> the device it lies on (the files' stat
    #: identity is the device, their inode and their times: ``Letter``, ``Unreadable``)
    devices: dict[str, int] = field(default_factory=dict)

    def has_sidecar(self, letter: Letter) -> bool:
        return letter.path + ".ack" in self.sidecars


@dataclass(slots=True, frozen=True)
class Reason:
    """Why an answer is what it is. ``about`` names the answer it belongs to."""

    code: str
    about: str
    detail: str = ""
    letters: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "about": self.about,
            "detail": self.detail,
            "letters": list(self.letters),
            "paths": list(self.paths),
        }


@dataclass(slots=True, frozen=True, eq=False)
class Answer:
    """A derived answer: yes, no or unknown, with its reasons.

    Two answers are equal when their values and reasons are, whichever kind of ``Answer``
    each is (the store's decodes its reasons when first read: ``store.records``)."""

    value: AnswerValue
    reasons: tuple[Reason, ...] = ()

    def __post_init__(self) -> None:
        if self.value not in ("yes", "no", "unknown"):
            raise ValueError(f"bad answer value {self.value!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Answer):
            return NotImplemented
        return self.value == other.value and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.value, self.reasons))

    @property
    def yes(self) -> bool:
        return self.value == "yes"

    @property
    def no(self) -> bool:
        return self.value == "no"

    @property
    def unknown(self) -> bool:
        return self.value == "unknown"


YES = Answer("yes")
NO = Answer("no")


# --- finding a few letters of a scan without looking at every one ----------------------

#: the one plain list of letters indexed last (the list itself, how many letters it held
#: then, and its indexes made so far): a scan's list is never changed once made, so one
#: index serves every question asked of one snapshot's letters
_INDEXED: tuple = (None, -1, {})


def _index(letters, kind: str) -> dict:
    """``letters`` by path, id or thread (``kind``), made once for the last list asked of.
    A key held by one letter maps to that letter, one held by more to a list of them in
    scan order (100,000 one-item lists would cost the cyclic collector walks over them)."""
    global _INDEXED
    kept, n, made = _INDEXED  # one tuple, read once: another thread may replace it
    if kept is not letters or n != len(letters):
        made = {}
        _INDEXED = (letters, len(letters), made)
    found = made.get(kind)
    if found is None:
        if kind == "path":
            found = {x.path: x for x in letters}
        else:
            found = {}
            first = found.setdefault
            for x in letters:
                key = x.id if kind == "id" else x.thread or x.id
                one = first(key, x)
                if one is not x:
                    if type(one) is list:
                        one.append(x)
                    else:
                        found[key] = [one, x]
        made[kind] = found
    return found


def forget_index(letters) -> None:
    """Let go of the index made of ``letters``, if it is the one kept: a process done with
    a scan's letters (a resident server opening the next generation) would otherwise keep
    them, and their indexes, alive until another plain list is asked of."""
    global _INDEXED
    if _INDEXED[0] is letters and letters is not None:
        _INDEXED = (None, -1, {})


def _held(letters, kind: str, key: str) -> list[Letter]:
    one = _index(letters, kind).get(key)
    return [] if one is None else list(one) if type(one) is list else [one]


def letter_at(letters, path: str) -> Letter | None:
    """The letter of ``letters`` whose file is ``path``, None when none is."""
    own = getattr(letters, "letter_at", None)
    if own is not None:
        return own(path)
    return _index(letters, "path").get(path)


def letters_with_id(letters, letter_id: str) -> list[Letter]:
    """The letters of ``letters`` holding ``letter_id``, in scan order."""
    own = getattr(letters, "letters_with_id", None)
    if own is not None:
        return list(own(letter_id))
    return _held(letters, "id", letter_id)


def letters_with_thread(letters, thread_id: str) -> list[Letter]:
    """The letters of ``letters`` whose ``thread_id`` is ``thread_id``, in scan order."""
    own = getattr(letters, "letters_with_thread", None)
    if own is not None:
        return list(own(thread_id))
    return _held(letters, "thread", thread_id)

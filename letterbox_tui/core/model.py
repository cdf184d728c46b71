"""The value types every layer shares: letters, unreadable files, scope, answers.

Data flows one way: files on disk -> scan (``Snapshot``) -> resolve (``Answer`` values)
-> query and views. Nothing here reads files or knows about Textual.

Letters are plain slotted classes rather than frozen dataclasses or pydantic models: a
scan builds one per file and 100,000 of them must cost little. Treat them as immutable.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from datetime import datetime
from collections.abc import Callable
from operator import attrgetter
from typing import Any, Literal

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


#: header key -> the ``Letter`` slot holding its value as written ("" for a list slot,
#: whose value is a tuple): ``core.letters`` fills it from its field table
FIELD_SLOT_OF: dict[str, str] = {}


#: keys tuple -> what reads a letter's values back from its slots (``Letter.field_values``);
#: the C reader shares one keys tuple among the letters with the same keys
_VALUES_OF: dict[tuple[str, ...], Callable[[Letter], tuple[str, ...]]] = {}


def _values_getter(keys: tuple[str, ...]) -> Callable[[Letter], tuple[str, ...]]:
    slots = [FIELD_SLOT_OF[key] for key in keys]
    if len(slots) > 1 and all(slots):  # one C call for every value
        return attrgetter(*slots)
    return lambda letter: tuple([getattr(letter, slot) if slot else "" for slot in slots])


class Letter:
    """One readable letter file: its header fields and where it lies.

    ``fields`` keeps every header line as written, in order. Named attributes are the
    fields the spec gives meaning to, as strings ("" when absent). ``sent_at`` and
    ``deadline_at`` are aware datetimes, or None when absent or ambiguous.

    ``fields`` is made on first use when the letter came from the derived cache, which
    keeps the keys and the values apart (``_field_keys``, ``_field_values``): a warm scan
    rebuilds 100,000 letters and most of them never show their fields (pairing them all
    up front was half the cost of rebuilding a letter).
    """

    __slots__ = (
        "id", "sender", "recipient", "type", "re", "thread", "priority", "requires_ack",
        "deadline", "sent", "supersedes", "disputes", "rules_on", "upholds", "subject",
        "_fields", "seat", "folder", "_path", "name", "sent_at", "deadline_at", "flags",
        "malformed", "size", "mtime_ns", "inode", "_field_keys", "_field_values",
    )

    # The parameters may be given by position, in this order: the scanner's build() does,
    # since matching 27 keywords cost more than the stores (0.45 s -> 0.17 s per 100,000).
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
        name: str = "",
        sent_at: datetime | None = None,
        deadline_at: datetime | None = None,
        flags: tuple[str, ...] = (),
        malformed: tuple[str, ...] = (),
        size: int = 0,
        mtime_ns: int = 0,
        inode: int = 0,
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
        self._fields = fields
        self._field_keys = self._field_values = None
        self.seat = seat
        self.folder = folder
        self._path = path
        self.name = name
        self.sent_at = sent_at
        self.deadline_at = deadline_at
        self.flags = flags
        self.malformed = malformed
        self.size = size
        self.mtime_ns = mtime_ns
        self.inode = inode

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
    seat: str
    folder: str
    _path: str | None
    name: str
    sent_at: datetime | None
    deadline_at: datetime | None
    flags: tuple[str, ...]
    malformed: tuple[str, ...]  # pointer field names whose value is not a valid id
    size: int
    mtime_ns: int
    inode: int

    @property
    def path(self) -> str:
        """Where the letter lies, relative to the root, with "/" separators. A letter the
        speed wing's reader made keeps no path of its own (None: at 100,000 letters the
        paths are 12 MB): it is its seat, folder and file name, joined when asked for."""
        path = self._path
        return path if path is not None else f"{self.seat}/{self.folder}/{self.name}"

    @path.setter
    def path(self, value: str) -> None:
        self._path = value

    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        """Every header line as written, in order, as (key, value) pairs."""
        pairs = self._fields
        if pairs is None:
            pairs = self._fields = tuple(zip(self._field_keys, self.field_values()))
        return pairs

    def field_dict(self) -> dict[str, str]:
        """``dict(self.fields)``, without keeping the pairs on the letter (a row's fields:
        at 100,000 letters the pairs ``fields`` keeps are megabytes)."""
        pairs = self._fields
        if pairs is None:
            return dict(zip(self._field_keys, self.field_values()))
        return dict(pairs)

    def field_values(self) -> tuple[str, ...]:
        """The header's values, in the order of its keys. A letter the speed wing's reader
        made from a header whose every key has a slot keeps no values apart (``None``):
        each is read back from its slot (``FIELD_SLOT_OF``; a list slot such a letter has
        is empty, as its header's value was)."""
        values = self._field_values
        if values is None:
            keys = self._field_keys
            get = _VALUES_OF.get(keys)
            if get is None:
                get = _VALUES_OF[keys] = _values_getter(keys)
            values = get(self)
        return values

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
        for k, v in self.fields:
            if k == key:
                return v
        return None

    def __repr__(self) -> str:
        return f"Letter({self.id!r} at {self.path!r})"


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
    def complete(self) -> bool:
        return not self.unreadable and not self.unsupported and not self.partial and self.atomic

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


class SeenState:
    """The file-system state a scan read, for ``core.speed.memo``: each directory it opened as
    (rel, inode, mtime_ns, ctime_ns, mode), in the order opened (the root is ""), and per
    folder the stat of each file it made a letter or an unreadable from, as (name, size,
    mtime_ns, inode, ctime_ns), in scan order (``files``).

    A folder's files are kept packed until asked for (``packed``: the names, and an
    ``array('q')`` of size, mtime_ns, inode, ctime_ns for each): at 100,000 letters a tuple
    of five a file was 10 MB kept until the answer was out."""

    __slots__ = ("dirs", "packed", "_files")

    def __init__(self, dirs: list[tuple[str, int, int, int, int]],
                 files: dict[str, list[tuple[str, int, int, int, int]]] | None = None,
                 packed: dict[str, tuple[list[str], Any]] | None = None) -> None:
        self.dirs = dirs
        self.packed = packed if packed is not None else {}
        self._files = files

    @property
    def files(self) -> dict[str, list[tuple[str, int, int, int, int]]]:
        files = self._files
        if files is None:
            files = self._files = {
                rel: [(name, *stats[4 * i : 4 * i + 4]) for i, name in enumerate(names)]
                for rel, (names, stats) in self.packed.items()
            }
        return files

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SeenState):
            return NotImplemented
        return self.dirs == other.dirs and self.files == other.files

    def __repr__(self) -> str:
        return f"SeenState({len(self.dirs)} directories, {len(self.packed or self.files)} folders)"


class SeenFolder:
    """What ``SeenState`` keeps of one folder's files, packed, as a scan records it
    (``core.scan``): their names, and an ``array('q')`` of (size, mtime_ns, inode,
    ctime_ns) for each (a list instead once a value does not fit in 64 bits)."""

    __slots__ = ("packed", "rel", "names", "stats")

    def __init__(self, packed: dict, rel: str) -> None:
        self.packed = packed
        self.rel = rel
        self.names: list[str] = []
        self.stats: array | list[int] = array("q")
        packed[rel] = (self.names, self.stats)

    def add(self, name: str, stats: tuple[int, int, int, int]) -> None:
        self.names.append(name)
        try:
            self.stats.extend(stats)
        except OverflowError:
            self.unpacked()(stats)

    def extend(self, names, stats) -> None:
        """``add`` for several files: their names, and their stats four words a file (an
        ``array('q')`` or a list)."""
        self.names.extend(names)
        self.stats.extend(stats)

    def unpacked(self):
        """Keep the stats as a list from now on (the last name's, which did not fit, are
        added again); its ``extend``."""
        if type(self.stats) is not list:
            del self.stats[4 * (len(self.names) - 1) :]  # an extend that failed may have added some
            self.stats = list(self.stats)
            self.packed[self.rel] = (self.names, self.stats)
        return self.stats.extend


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
    #: what the scan saw of the file system (None when not made by ``core.scan``)
    seen: SeenState | None = None

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


@dataclass(slots=True, frozen=True)
class Answer:
    """A derived answer: yes, no or unknown, with its reasons."""

    value: AnswerValue
    reasons: tuple[Reason, ...] = ()

    def __post_init__(self) -> None:
        if self.value not in ("yes", "no", "unknown"):
            raise ValueError(f"bad answer value {self.value!r}")

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

"""How the store keeps a letter, an unreadable file and a letter's answers: one text record
each, with a checksum kept beside it.

A readable letter's header holds no code point below 32 (SPEC 3), so the record separates
its parts with the control characters U+001C-U+001F, which no value can contain. An
unreadable file's legible fields and illegible text may hold anything: it is kept as JSON.
Decoding checks the checksum first and the shape after; a record that fails either raises
``Damaged`` (the store is then not trusted: the answer comes from the letters).
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Callable
from operator import itemgetter

from letterbox_tui.core.letters import header_keys
from letterbox_tui.core.model import FROM_FIELD, FROM_ID, Answer, Letter, Reason, Unreadable
from letterbox_tui.core.resolve import StateAnswer

_PART = "\x1f"  # between a record's parts
_PAIR = "\x1e"  # between a letter's header lines
_KEY = "\x1d"  # between a header line's key and value
_ITEM = "\x1c"  # before each item of a tuple (disputes, flags, malformed)
_intern = sys.intern


class Damaged(Exception):
    """A stored record does not match its checksum or its shape."""


def checksum(path: str, record: bytes) -> int:
    """The checksum of a file's record, the path it belongs to included."""
    return zlib.crc32(record, zlib.crc32(path.encode()))


def _items(values: tuple[str, ...]) -> str:
    return "".join(_ITEM + v for v in values)


#: the header fields a Letter names, in the order ``decode_item`` takes them
_NAMED = ("id", "from", "to", "type", "re", "thread", "priority", "requires_ack", "deadline", "sent",
          "supersedes", "rules_on", "upholds", "subject")
#: a record's key line -> (``letters.header_keys``'s answer for its keys, a getter of the
#: ``_NAMED`` values from its values with "" appended); most letters of a letterbox are
#: written by a few writers, in a few key orders
_KEY_LINES: dict[str, tuple[tuple[str, ...], tuple[int, ...], bool, itemgetter]] = {}
#: a record's flags, malformed or disputes text -> its tuple
_TUPLES: dict[str, tuple[str, ...]] = {"": ()}


def _keys(line: str) -> tuple[tuple[str, ...], tuple[int, ...], bool, itemgetter]:
    found = _KEY_LINES.get(line)
    if found is None:
        keys, shared, named = header_keys(tuple(line.split(_PAIR)) if line else ())
        at = {k: i for i, k in enumerate(keys)}
        found = (keys, shared, named, itemgetter(*(at.get(k, len(keys)) for k in _NAMED)))
        if len(_KEY_LINES) < 4096:
            _KEY_LINES[line] = found
    return found


#: a letter's folder path ("<seat>/<folder>") -> its seat and folder, one string each
_places: dict[str, tuple[str, str]] = {}


def _place(path: str) -> tuple[str, str]:
    try:
        seat, folder, _ = path.split("/")
    except ValueError:
        raise Damaged(f"the record kept for {path} is not a letter's") from None
    found = (sys.intern(seat), sys.intern(folder))
    if len(_places) < 4096:
        _places[f"{seat}/{folder}"] = found
    return found


def _unitems(text: str) -> tuple[str, ...]:
    found = _TUPLES.get(text)
    if found is None:
        found = tuple(sys.intern(v) for v in text[1:].split(_ITEM))
        if len(_TUPLES) < 4096:
            _TUPLES[text] = found
    return found


def letter_record(letter: Letter) -> bytes:
    """The record of a readable letter: its header lines as written, and what the header
    alone does not say. Its path and stat are kept in columns of their own; its named
    fields are its header's values (``letters.build``), so they are not kept twice."""
    sent_code = "" if letter.sent_at is None else ("2" if "time-from-id" in letter.flags else "1")
    return _PART.join((
        "L", _PAIR.join(letter.header_keys), _PAIR.join(letter.header_values),
        _items(letter.disputes), sent_code, "" if letter.deadline_at is None else "1",
        _items(letter.flags), _items(letter.malformed),
    )).encode()


def unreadable_record(item: Unreadable) -> bytes:
    return ("U" + json.dumps(
        [item.path, item.seat, item.folder, item.error, item.legible, item.illegible],
        ensure_ascii=False, separators=(",", ":"),
    )).encode()


def item_record(item: Letter | Unreadable) -> bytes:
    return letter_record(item) if type(item) is Letter else unreadable_record(item)


def decode_item(path: str, record: bytes, crc: int, size: int, mtime_ns: int, inode: int,
                ctime_ns: int) -> Letter | Unreadable:
    """The letter or unreadable file at ``path`` that ``item_record`` kept, with the stat
    given."""
    if zlib.crc32(record, zlib.crc32(path.encode())) != crc:
        raise Damaged("a file's record does not match its checksum")
    try:
        text = record.decode()
        if text[:1] == "U":
            kept_path, seat, folder, error, legible, illegible = json.loads(text[1:])
            if kept_path != path:
                raise Damaged(f"the record kept for {path} is another file's")
            return Unreadable(path, seat, folder, error, legible, illegible, size, mtime_ns, inode, ctime_ns)
        kind, key_line, value_line, disputes, sent_code, deadline_code, flags, malformed = text.split(_PART)
        place = _places.get(path[:path.rindex("/")])
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        raise Damaged(f"a file's record has another shape ({exc})") from None
    seat, folder = place or _place(path)
    keys, shared, named, get_named = _keys(key_line)
    values = value_line.split(_PAIR) if keys else []
    if kind != "L" or len(values) != len(keys):
        raise Damaged("a file's record has another shape")
    for i in shared:  # the values many letters carry: one string each (letters.share_values)
        values[i] = _intern(values[i])
    header_values = None if named else tuple(values)  # None: the named fields hold them
    values.append("")
    (letter_id, sender, recipient, type_, re_, thread, priority, requires_ack, deadline, sent, supersedes,
     rules_on, upholds, subject) = get_named(values)
    sent_at = None if not sent_code else (FROM_FIELD if sent_code == "1" else FROM_ID)
    if ctime_ns == mtime_ns:  # a file not renamed since it was written: one int for both
        ctime_ns = mtime_ns
    return Letter(
        letter_id, sender, recipient, type_, re_, thread, priority, requires_ack, deadline, sent, supersedes,
        _unitems(disputes) if disputes else (), rules_on, upholds, subject,
        (), seat, folder, path, None,
        sent_at, FROM_FIELD if deadline_code else None,
        _unitems(flags) if flags else (), _unitems(malformed) if malformed else (),
        size, mtime_ns, inode, ctime_ns, keys, header_values,
    )


# --- a letter's answers ------------------------------------------------------------

#: the answers a letter's record keeps with their reasons, in order (``late`` is not kept:
#: it depends on the clock, and is derived from ``state`` and ``answered`` at the clock asked)
ANSWERS = ("state", "answered", "accepted", "current", "superseded")
#: what the store asks the resolver of each letter it keeps (``answers_record``): the
#: answers, and the structure around the letter (``Resolution.structure``)
KEPT = ANSWERS + ("structure",)

#: the parts of an answers record: the values of ``ANSWERS``, the head's path, the reasons
#: of each value of ``ANSWERS`` ("" for none), then the structure ("" for none), each
#: decoded only when asked
ANSWER_PARTS = 2 * len(ANSWERS) + 2
_HEAD = len(ANSWERS)
#: where a decoded record's structure is
STRUCTURE = ANSWER_PARTS - 1

_VALUES = {"state": ("open", "closed", "unknown")} | {name: ("yes", "no", "unknown") for name in ANSWERS[1:]}


def answers_record(found: dict, head_path: str) -> bytes:
    """``found`` (every name of ``KEPT``) and the path of the letter's head ("" for none)."""
    parts = [found[name].value for name in ANSWERS]
    parts.append(head_path)
    for name in ANSWERS:
        why = found[name].reasons
        parts.append(json.dumps([[r.code, r.about, r.detail, list(r.letters), list(r.paths)] for r in why],
                                ensure_ascii=False, separators=(",", ":")) if why else "")
    structure = found["structure"]
    parts.append(json.dumps(structure, ensure_ascii=False, separators=(",", ":")) if structure else "")
    return _PART.join(parts).encode()


def with_structure(record: bytes, structure: dict) -> bytes:
    """The answers record ``record`` (checked already) with another structure."""
    parts = record.split(_PART.encode())
    parts[STRUCTURE] = json.dumps(structure, ensure_ascii=False, separators=(",", ":")).encode() if structure else b""
    return _PART.encode().join(parts)


def answers_checksum(path: str, record: bytes) -> int:
    """The checksum of a letter's answers, the path they belong to included."""
    return zlib.crc32(record, zlib.crc32(path.encode() + b"\0"))


#: the values part of a record -> its answers without reasons (a few dozen combinations)
_PLAINS: dict[tuple[bytes, ...], tuple[Answer | StateAnswer, ...]] = {}


def _plain(values: tuple[bytes, ...]) -> tuple[Answer | StateAnswer, ...]:
    found = _PLAINS.get(values)
    if found is None:
        texts = [v.decode() for v in values]
        for name, value in zip(ANSWERS, texts):
            if value not in _VALUES[name]:
                raise Damaged(f"a letter's {name} is not one of {', '.join(_VALUES[name])}")
        found = _PLAINS[values] = tuple(
            StateAnswer(v) if name == "state" else Answer(v) for name, v in zip(ANSWERS, texts))  # type: ignore[arg-type]
    return found


def decode_answers(path: str, record: bytes, crc: int) -> list:
    """The parts of the answers ``answers_record`` kept for the letter at ``path``: at
    ``i`` < ``len(ANSWERS)`` the answer without its reasons, then the head's path (bytes),
    then each answer's reasons as kept (see ``with_reasons``), then the structure as kept
    (see ``structure_of``)."""
    if answers_checksum(path, record) != crc:
        raise Damaged("a letter's answers do not match their checksum")
    parts = record.split(_PART.encode())
    if len(parts) != ANSWER_PARTS:
        raise Damaged("a letter's answers have another shape")
    kept: list = list(_plain(tuple(parts[:_HEAD])))
    kept.extend(parts[_HEAD:])
    return kept


def with_reasons(kept: list, i: int, instead: Callable[[Damaged], tuple[Reason, ...]]) -> Answer | StateAnswer:
    """The ``i``-th answer of ``ANSWERS`` in ``kept`` (from ``decode_answers``) with its
    reasons: a state's decoded now, any other's when first read (``KeptAnswer``; reasons
    found damaged then are ``instead``'s, given why)."""
    plain = kept[i]
    why = kept[_HEAD + 1 + i]
    if not why:
        return plain
    if type(plain) is StateAnswer:
        return StateAnswer(plain.value, decode_reasons(why))
    return KeptAnswer(plain.value, why, instead)


def decode_reasons(why: bytes) -> tuple[Reason, ...]:
    """The reasons ``answers_record`` kept as ``why``."""
    try:
        return tuple(Reason(c, a, d, tuple(ls), tuple(ps)) for c, a, d, ls, ps in json.loads(why.decode()))
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        raise Damaged(f"a letter's reasons have another shape ({exc})") from None


class KeptAnswer(Answer):
    """An answer read back from the store: its value at once, its reasons decoded when
    first read (the evaluator and the rows ask most answers only for their value)."""

    __slots__ = ("_why", "_instead")

    def __init__(self, value: str, why: bytes, instead: Callable[[Damaged], tuple[Reason, ...]]) -> None:
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "_why", why)
        object.__setattr__(self, "_instead", instead)

    @property
    def reasons(self) -> tuple[Reason, ...]:  # type: ignore[override]
        why = self._why
        if type(why) is tuple:
            return why
        try:
            found = decode_reasons(why)
        except Damaged as exc:
            found = self._instead(exc)
        object.__setattr__(self, "_why", found)
        object.__setattr__(self, "_instead", None)
        return found


def head_path(kept: list) -> str:
    """The path of the head kept in ``kept`` ("" for none)."""
    try:
        return kept[_HEAD].decode()
    except UnicodeDecodeError:
        raise Damaged("a letter's head is not a path") from None


#: the keys a kept structure may hold, and the type of each (``Resolution.structure``)
_STRUCTURE_KEYS = {"c": list, "s": list, "d": list, "r": list, "k": str, "i": list, "h": list, "w": dict}
_SCAN_KEYS = ("forks", "cycles", "dangling", "open")


def structure_of(kept: list) -> dict:
    """The structure kept in ``kept`` (from ``decode_answers``): {} for none."""
    text = kept[STRUCTURE]
    if not text:
        return {}
    try:
        found = json.loads(text.decode())  # (text, not bytes: no encoding to detect)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Damaged(f"a letter's structure has another shape ({exc})") from None
    if type(found) is not dict or any(_STRUCTURE_KEYS.get(k) is not type(v) for k, v in found.items()):
        raise Damaged("a letter's structure has another shape")
    scan = found.get("w")
    if scan is not None and (sorted(scan) != sorted(_SCAN_KEYS) or any(type(v) is not list for v in scan.values())):
        raise Damaged("the scan's structure has another shape")
    return found

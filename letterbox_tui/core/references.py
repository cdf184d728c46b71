"""References to a letter as the protocol's resolver takes them (SPEC 7 "References").

Wherever a command takes an ID, reading or writing, it may be given:

- the letter's full id;
- its display id, ``<timestamp> · <token>``: the id's leading ``YYYY-MM-DDTHHMMSS`` (or
  ``unknown`` when it has none), a middle dot between two spaces, and its token;
- its token alone when no other letter has it: the id's trailing ``-<8 hex>``, or, for an
  id without one (a reply's ``<parent>--<seat>--<kind>``), the first 8 hex digits of the
  SHA-256 of the id (the protocol's doorbell token);
- a path to the letter's file under the root (as given, else relative to the root).

A reference naming two or more different ids is refused, naming them: what acts on a
letter must never guess which. Copies of one id are not an ambiguity here: they are that
id's ``duplicate-id``, which the commands answer as they always do.

``resolve_reference`` is the one resolver: the reading views (``views.letter.copies``) and
the write gate (``write.gate.IdIndex.moving``) both call it.
"""

from __future__ import annotations

import hashlib
import os
import re

from .errors import LetterboxError
from .model import Snapshot, letter_at, letters_with_id, letters_with_thread
from .text import clean

_TOKEN = re.compile(r"[0-9a-f]{8}")
_TAIL = re.compile(r"-([0-9a-f]{8})$")
_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{6})")
_DISPLAY = re.compile(r"(?:\d{4}-\d{2}-\d{2}T\d{6}|unknown) · [0-9a-f]{8}")
#: an ambiguous reference names at most this many candidates
SHOWN = 10


def token(letter_id: str) -> str:
    """The protocol's 8-hex token of an id."""
    m = _TAIL.search(letter_id)
    if m is not None:
        return m.group(1)
    return hashlib.sha256(letter_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def display_id(letter_id: str) -> str:
    """The id as the protocol displays it: ``<timestamp> · <token>``."""
    m = _STAMP.match(letter_id)
    return f"{m.group(1) if m else 'unknown'} · {token(letter_id)}"


def _path_ids(root: str, ref: str, letters) -> list[str] | None:
    """The id of the letter whose file ``ref`` is, [] when it is a file under the root that
    holds no readable letter, None when ``ref`` names no file at all."""
    root_real = os.path.realpath(root)
    for candidate in (ref, os.path.join(root, ref)):
        try:
            if not os.path.isfile(candidate):
                continue
            real = os.path.realpath(candidate)
        except (OSError, ValueError):
            continue
        if os.path.commonpath([real, root_real]) != root_real:
            raise LetterboxError(f"{clean(ref, single_line=True)} is not under the letterbox {clean(root_real, single_line=True)}")
        rel = os.path.relpath(real, root_real).replace(os.sep, "/")
        found = letter_at(letters, rel)
        return [] if found is None else [found.id]
    return None


def names_a_path(ref: str) -> bool:
    """Is ``ref`` written as a path (never an id, a display id or a token)?"""
    return "/" in ref or os.sep in ref or ref.endswith(".md")


def resolve_reference(snapshot: Snapshot, ref: str) -> str | None:
    """The id ``ref`` names among ``snapshot``'s readable letters, None when it names none.

    A full id is looked up as it is (the letters holding it); otherwise ``ref`` is tried as
    a path, a display id and a token. Raises ``LetterboxError`` when it names two or more
    ids (naming them), or is a path outside the root.
    """
    letters = snapshot.letters
    if letters_with_id(letters, ref):
        return ref
    if names_a_path(ref):
        found = _path_ids(str(snapshot.root), ref, letters)
        if found is not None:
            return _one(ref, found)
    if _DISPLAY.fullmatch(ref):
        return _one(ref, [x.id for x in letters if display_id(x.id) == ref])
    if _TOKEN.fullmatch(ref):
        return _one(ref, [x.id for x in letters if token(x.id) == ref])
    return None


def _one(ref: str, ids: list[str]) -> str | None:
    ids = sorted(set(ids))
    if not ids:
        return None
    if len(ids) > 1:
        named = ", ".join(clean(i, single_line=True) for i in ids[:SHOWN])
        more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
        raise LetterboxError(f"ambiguous reference {clean(ref, single_line=True)}: it names {len(ids)} letters "
                             f"({named}{more}); give the full id")
    return ids[0]


def thread_reference(snapshot: Snapshot, ref: str) -> str | None:
    """The thread ``ref`` names (``thread``): the thread of the letter ``ref`` is the full
    id of; else a free thread label some letter carries; else the thread of the letter the
    reference names (display id, token, path). None when it names none."""
    letters = snapshot.letters
    same = letters_with_id(letters, ref)
    if same:
        return min(same, key=lambda x: x.path).thread_id
    if any(x.thread == ref for x in letters_with_thread(letters, ref)):
        return ref
    found = resolve_reference(snapshot, ref)
    if found is None:
        return None
    return min(letters_with_id(letters, found), key=lambda x: x.path).thread_id


def start_id(snapshot: Snapshot, ref: str) -> str:
    """The id the app opens on for ``--letter REF``: what ``ref`` names, else ``ref`` itself
    (the app then says there is no such letter; an ambiguous one names no single letter)."""
    try:
        return resolve_reference(snapshot, ref) or ref
    except LetterboxError:
        return ref

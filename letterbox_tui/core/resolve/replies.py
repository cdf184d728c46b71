"""Replies (SPEC 5): answered, accepted and state.

A *terminal reply* to L is a readable ``result`` or ``nack`` with ``re`` = L's id sent back
by L's recipient to its sender. Most letters are *plain* (see ``Plain``): nothing but the
snapshot-wide doubt bears on their answers, which are built once and shared.
"""

from __future__ import annotations

from ..model import EXTERNAL_BRIDGE, NO, YES, Answer, Letter, Reason
from .common import (
    CLOSED, LIST_ALL, MAX_NAMED, OPEN, Relabel, StateAnswer, about, first_unique, letter_key, more, names, outside_scope,
    sorted_letters,
)
from .index import Index
from .supersession import Supersession


class Plain:
    """The answered, state and late answers every *plain* letter shares.

    A letter is plain when nothing but the snapshot-wide doubt bears on those answers: no
    reply or supersedes pointer, readable or not, concerns its id, its id is held once, and
    neither party is the external bridge. Its answers then depend only on that doubt and,
    when unreadable files may be replies to anyone, on its pair of parties; they are built
    once and shared. When the scope is partial and the sender is outside it (``outside``),
    each answer adds an outside-scope reason naming the letter, built per letter.
    """

    __slots__ = ("answered", "state", "late_reasons", "late_overdue", "outside")

    def __init__(self, answered: Answer, outside: bool) -> None:
        self.answered = answered
        self.outside = outside
        if answered.no:
            self.state = OPEN
            self.late_reasons: tuple[Reason, ...] = ()
            self.late_overdue = YES
        else:
            self.state = StateAnswer("unknown", about(answered.reasons, "state"))
            self.late_reasons = about(answered.reasons, "late")
            self.late_overdue = Answer("unknown", self.late_reasons)


class Replies:
    """answered, accepted and state over one index (and its supersession, for replies to
    earlier versions)."""

    def __init__(self, index: Index, supersession: Supersession, fast: bool = True) -> None:
        self.index = index
        self.supersession = supersession
        self.fast = fast
        self._answered: dict[int, Answer] = {}
        self._state: dict[int, StateAnswer] = {}
        self._dup_answered: dict[str, Answer] = {}
        self._both: dict[str, Reason | None] = {}
        self._relabel = Relabel()
        #: (to, from) -> how many unreadable files without a legible re may be a terminal
        #: reply from ``to`` to ``from``, and the first MAX_NAMED of their paths
        self._open_pairs: dict[tuple[str, str], tuple[int, tuple[str, ...]]] = {}
        # Plain letters: ids with no terminal reply, supersedes edge, unreadable or
        # malformed reply pointer, and not duplicated.
        special = set(index.replied_ids)
        special.update(index.out)
        special.update(index.unreadable_reply_by_re)
        special.update(index.malformed_re)
        special.update(index.duplicated_ids)
        self._special = special
        self._plain_by_pair: dict[tuple[str, str], Plain] = {}
        self._plain_all: Plain | None = None
        self._plain_all_outside: Plain | None = None
        if not index.unreadable_reply_open:
            self._plain_all = Plain(self._plain_answered("", ""), False)
            self._plain_all_outside = Plain(self._plain_all.answered, True)

    # --- plain letters ------------------------------------------------------------
    def plain(self, letter: Letter) -> Plain | None:
        """The shared answers of a plain letter, or None when its id or parties need a
        closer look."""
        if letter.id in self._special or not self.fast:
            return None
        sender = letter.sender
        recipient = letter.recipient
        if sender == EXTERNAL_BRIDGE or recipient == EXTERNAL_BRIDGE:
            return None
        index = self.index
        if self._plain_all is not None:
            if index.partial and sender not in index.participants:
                return self._plain_all_outside
            return self._plain_all
        # unreadable files may be replies to some pairs of parties
        pair = (recipient, sender)
        plain = self._plain_by_pair.get(pair)
        if plain is None:
            outside = index.partial and sender not in index.participants
            plain = self._plain_by_pair[pair] = Plain(self._plain_answered(recipient, sender), outside)
        return plain

    def _plain_answered(self, to: str, frm: str) -> Answer:
        """``answered`` of a plain letter from ``frm`` to ``to``."""
        reasons: list[Reason] = []
        maybe = self._open_reason(to, frm)
        if maybe is not None:
            reasons.append(maybe)
        reasons.extend(self.index.global_reasons("answered", partial=False))
        return Answer("unknown", tuple(reasons)) if reasons else NO

    def _open_replies(self, to: str, frm: str) -> tuple[int, tuple[str, ...], Reason | None]:
        """The unreadable files with no legible ``re`` that may be a terminal reply from
        ``to`` to ``frm``: how many, the first ``MAX_NAMED`` paths, and the reason naming
        them (None when there are none). Worked out once for each pair of parties."""
        key = (to, frm)
        found = self._open_pairs.get(key)
        if found is None:
            reply_open = self.index.unreadable_reply_open
            groups = [reply_open.get(k, ()) for k in ((to, frm), (to, None), (None, frm), (None, None))]
            count = sum(map(len, groups))
            paths = tuple(sorted(u.path for g in groups for u in g)[:MAX_NAMED])
            found = self._open_pairs[key] = (count, paths, _unreadable_reply_reason(count, paths) if count else None)
        return found

    def _open_reason(self, to: str, frm: str) -> Reason | None:
        return self._open_replies(to, frm)[2] if self.index.unreadable_reply_open else None

    def closed_by_reply(self, letter: Letter) -> bool:
        """``answered`` is yes (so ``state`` is closed), without building the answer."""
        index = self.index
        return (
            letter.id in index.replied_ids
            and letter.id not in index.duplicated_ids
            and letter.sender != EXTERNAL_BRIDGE
            and letter.recipient != EXTERNAL_BRIDGE
            and bool(index.terminal_replies(letter))
        )

    # --- answered -----------------------------------------------------------------
    def answered(self, letter: Letter) -> Answer:
        plain = self.plain(letter)
        if plain is not None:
            if plain.outside:
                return Answer("unknown", plain.answered.reasons + (outside_scope(letter, "answered"),))
            return plain.answered
        key = id(letter)
        cached = self._answered.get(key)
        if cached is None:
            cached = self._compute_answered(letter)
            if not cached.yes:  # state and late do not need a yes (``closed_by_reply``)
                self._answered[key] = cached
        return cached

    def _compute_answered(self, letter: Letter) -> Answer:
        index = self.index
        if letter.sender == EXTERNAL_BRIDGE or letter.recipient == EXTERNAL_BRIDGE:
            return Answer("unknown", (Reason(
                "external-route", "answered",
                f"the letter crosses {EXTERNAL_BRIDGE}: no receipt is on disk", (letter.id,), (letter.path,),
            ),))
        if letter.id in index.duplicated_ids:
            return self._duplicated(letter.id)
        replies = index.terminal_replies(letter)
        if len(replies) == 1:
            r = replies[0]
            return Answer("yes", (Reason(
                "answered-by", "answered", "terminal reply from " + letter.recipient + ": " + r.id,
                (r.id,), (r.path,),
            ),))
        if replies:
            return Answer("yes", (Reason(
                "answered-by", "answered",
                "terminal reply from " + letter.recipient + ": " + ", ".join(r.id for r in replies[:5])
                + more(len(replies), f"`letterbox-tui answered {letter.id} --json` lists them all"),
                tuple(r.id for r in replies[:MAX_NAMED]), tuple(r.path for r in replies[:MAX_NAMED]),
            ),))
        reasons: list[Reason] = []
        if letter.id in index.out:
            chain = self.supersession.chain_of(letter.id)
            below = chain.reply_below.get(letter.id, ())
            if below:
                # each earlier version's replies are sorted: its first MAX_NAMED are enough
                replies = sorted({r for b in below for r in chain.replied[b][:MAX_NAMED]}, key=letter_key)
                reasons.append(Reason(
                    "reply-to-superseded", "answered",
                    "a terminal reply answers an earlier version this letter supersedes: " + ", ".join(below[:5]),
                    (below + first_unique((r.id for r in replies), MAX_NAMED))[:MAX_NAMED],
                    tuple(r.path for r in replies[:MAX_NAMED]),
                ))
        by_re = index.unreadable_reply_by_re.get(letter.id, ())
        if not by_re:
            maybe = self._open_reason(letter.recipient, letter.sender)
            if maybe is not None:
                reasons.append(maybe)
        else:  # those naming this letter, and those that may be a reply to anyone of its parties
            count, paths, _ = self._open_replies(letter.recipient, letter.sender)
            paths = tuple(sorted([u.path for u in by_re] + list(paths)))[:MAX_NAMED]
            reasons.append(_unreadable_reply_reason(len(by_re) + count, paths))
        mal = index.malformed_re.get(letter.id, ())
        if mal:
            reasons.append(Reason(
                "malformed-pointer", "answered",
                "a letter's re could not be read and mentions this letter's id",
                names(h.id for h in mal), tuple(sorted(h.path for h in mal))[:MAX_NAMED],
            ))
        reasons.extend(index.global_reasons("answered", partial=False))
        if index.partial and letter.sender not in index.participants:
            reasons.append(outside_scope(letter, "answered"))
        return Answer("unknown", tuple(reasons)) if reasons else NO

    def _duplicated(self, letter_id: str) -> Answer:
        """answered of every copy of a duplicated id: one answer, shared by the copies."""
        answer = self._dup_answered.get(letter_id)
        if answer is None:
            paths = self.index.held_by(letter_id)
            answer = self._dup_answered[letter_id] = Answer("unknown", (Reason(
                "duplicate-id", "answered",
                f"{len(paths)} files hold the id {letter_id}" + more(len(paths)),
                (letter_id,), paths[:MAX_NAMED],
            ),))
        return answer

    def children(self, letter: Letter) -> list[Letter]:
        """Every readable letter whose ``re`` is this letter's id (any party, any type)."""
        return sorted_letters(self.index.kids(letter.id))

    # --- accepted -----------------------------------------------------------------
    def accepted(self, letter: Letter) -> Answer:
        acks = self.index.acks(letter)
        sidecar = letter.path in self.index.sidecar_letters
        if not acks:
            if not sidecar:
                return NO
            return Answer("yes", (Reason(
                "accepted-by", "accepted", "sidecar " + letter.path + ".ack", (), (letter.path + ".ack",),
            ),))
        if len(acks) == 1 and not sidecar:
            a = acks[0]
            return Answer("yes", (Reason(
                "accepted-by", "accepted", "ack from " + letter.recipient + ": " + a.id, (a.id,), (a.path,),
            ),))
        paths = tuple([a.path for a in acks[:MAX_NAMED]])
        detail = "ack from " + letter.recipient + ": " + ", ".join([a.id for a in acks[:5]])
        detail += more(len(acks), f"`letterbox-tui answered {letter.id} --json` lists them all")
        if sidecar:
            paths = paths[:MAX_NAMED - 1] + (letter.path + ".ack",)
            detail += "; sidecar " + letter.path + ".ack"
        return Answer("yes", (Reason("accepted-by", "accepted", detail, tuple([a.id for a in acks[:MAX_NAMED]]), paths),))

    # --- state --------------------------------------------------------------------
    def state(self, letter: Letter) -> StateAnswer:
        if letter.folder == "processed":
            return CLOSED
        plain = self.plain(letter)
        if plain is not None:
            if plain.outside:
                return StateAnswer("unknown", plain.state.reasons + (outside_scope(letter, "state"),))
            return plain.state
        if self.fast and self.closed_by_reply(letter):
            return CLOSED
        key = id(letter)
        cached = self._state.get(key)
        if cached is None:
            cached = self._compute_state(letter)
            self._state[key] = cached
        return cached

    def _compute_state(self, letter: Letter) -> StateAnswer:
        if letter.folder == "processed":
            return CLOSED
        answered = self.answered(letter)
        if answered.yes:
            return CLOSED
        index = self.index
        reasons: list[Reason] = []
        if letter.id in index.duplicated_ids:
            both = self._in_both_folders(letter.id)
            if both is not None:
                reasons.append(both)
        if answered.unknown and not any(r.code == "external-route" for r in answered.reasons):
            present = {r.code for r in reasons}
            reasons.extend(r for r in self._relabel(answered.reasons, "state") if r.code not in present)
        return StateAnswer("unknown", tuple(reasons)) if reasons else OPEN


    def _in_both_folders(self, letter_id: str) -> Reason | None:
        """The duplicate-id reason of state when copies of the id lie in both inbox/ and
        processed/, else None: once per id (every copy asks)."""
        if letter_id in self._both:
            return self._both[letter_id]
        index = self.index
        folders = {x.folder for x in index.holding(letter_id)}
        folders |= {u.folder for u in index.unreadable_holders.get(letter_id, ())}
        found = None
        if {"inbox", "processed"} <= folders:
            paths = index.held_by(letter_id)
            found = Reason(
                "duplicate-id", "state",
                f"copies of {letter_id} lie in both inbox/ and processed/" + more(len(paths)),
                (letter_id,), paths[:MAX_NAMED],
            )
        self._both[letter_id] = found
        return found


def _unreadable_reply_reason(n: int, paths: tuple[str, ...]) -> Reason:
    return Reason(
        "unreadable-file", "answered",
        f"{n} unreadable file{'s' if n != 1 else ''} may be a terminal reply to this letter"
        + (f"; the first {MAX_NAMED} named, {LIST_ALL}" if n > MAX_NAMED else ""),
        (), paths,
    )

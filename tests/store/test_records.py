"""A file's record in the store gives back the letter it was made of, field for field, and
letters read back share the strings many letters carry instead of copying them."""

from __future__ import annotations

import pytest

from letterbox_tui.core.demo import write_demo
from letterbox_tui.core.letters import COMPARED
from letterbox_tui.core.model import Letter
from letterbox_tui.core.scan import scan
from letterbox_tui.store.records import Damaged, checksum, decode_item, item_record


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "box"
    write_demo(root)
    (root / "planner" / "inbox" / "broken.md").write_text("---\nid: \nfrom: x\n---\n")
    snap = scan(root)
    assert snap.unreadable
    return [*snap.letters, *snap.unreadable]


def _read_back(item):
    record = item_record(item)
    return decode_item(item.path, record, checksum(item.path, record), item.size, item.mtime_ns, item.inode,
                       item.ctime_ns)


def test_every_item_comes_back_whole(items):
    for item in items:
        back = _read_back(item)
        assert type(back) is type(item)
        if type(item) is Letter:
            for name in COMPARED:  # every slot, as its attribute gives it
                assert getattr(back, name) == getattr(item, name), (item.path, name)
        else:
            assert back == item


def test_letters_read_back_share_their_common_strings(items):
    letters = [_read_back(x) for x in items if type(x) is Letter]
    by_sender: dict[str, list[Letter]] = {}
    for x in letters:
        by_sender.setdefault(x.sender, []).append(x)
    many = max(by_sender.values(), key=len)
    assert len(many) > 1
    first = many[0]
    for x in many[1:]:
        assert x.sender is first.sender
        if x.header_keys == first.header_keys:
            assert x.header_keys is first.header_keys  # one tuple of keys for all
        assert x.field("from") is first.field("from")  # one string for all
    inbox = [x.folder for x in letters if x.folder == "inbox"]
    assert len(inbox) > 1 and all(f is inbox[0] for f in inbox)
    for x in letters:  # a named field is its header value, not a copy of it
        assert x.id is x.field("id")


def test_a_record_under_another_path_is_damaged(items):
    letter = next(x for x in items if type(x) is Letter)
    record = item_record(letter)
    other = letter.path.rsplit("/", 1)[0] + "/other.md"
    with pytest.raises(Damaged):
        decode_item(other, record, checksum(letter.path, record), 0, 0, 0, 0)


def test_letters_with_the_same_keys_share_one_tuple_of_them_on_both_paths(items):
    """A letter's keys are one tuple for every letter written with them, whether it was
    read from its file or from the store; its header lines come out as written."""
    parsed = [x for x in items if type(x) is Letter]
    by_keys: dict[tuple[str, ...], tuple[str, ...]] = {}
    for x in parsed + [_read_back(x) for x in parsed]:
        assert by_keys.setdefault(x.header_keys, x.header_keys) is x.header_keys
    assert len(by_keys) < len(parsed)
    for x in parsed:
        back = _read_back(x)
        assert back.fields == x.fields == tuple(zip(x.header_keys, x.header_values))
        assert back.field_dict() == dict(x.fields) and back.field("nope") is None


@pytest.mark.parametrize("sent", ["sent: 2026-11-29T14:05:12+05:30\n", ""])
def test_a_letters_times_are_read_from_its_record_when_first_asked(sent):
    """A time read back is read from the letter's own text when asked, the way the letter's
    file was read: its ``sent`` (offset kept) or, absent, its id's time prefix."""
    from letterbox_tui.core.header import parse_header
    from letterbox_tui.core.letters import build, letters_equal
    from letterbox_tui.core.model import FROM_FIELD, FROM_ID

    lid = "2026-11-29T140512-alpha-request-plan-3f9a1c07"
    text = f"---\nid: {lid}\nfrom: alpha\nto: beta\ntype: request\nrequires_ack: true\n{sent}deadline: 2026-12-01T17:00:00Z\n---\n"
    letter = build(parse_header(text.encode()), path=f"beta/inbox/{lid}.md", seat="beta", folder="inbox",
                   name=f"{lid}.md", id_time_is_utc=True)
    back = _read_back(letter)
    assert back._sent_at is (FROM_FIELD if sent else FROM_ID) and back._deadline_at is FROM_FIELD
    assert letters_equal(back, letter)  # asks both times
    assert back.sent_at == letter.sent_at and back.sent_at.utcoffset() == letter.sent_at.utcoffset()
    assert back.deadline_at == letter.deadline_at and back._deadline_at is not FROM_FIELD  # read once, kept
    assert ("time-from-id" in back.flags) == (not sent)


def test_a_kept_answer_decodes_its_reasons_once_when_first_read_and_equals_a_plain_one(monkeypatch):
    from letterbox_tui.core.model import Answer, Reason
    from letterbox_tui.store import records
    from letterbox_tui.store.records import KeptAnswer, answers_record, decode_answers, with_reasons

    why = (Reason("replied-by", "answered", "result r-1", ("r-1",), ("a/inbox/r-1.md",)),)
    found = {name: Answer("yes", why) if name == "answered" else Answer("no") for name in records.ANSWERS[1:]}
    found |= {"state": records.StateAnswer("closed"), "structure": {}}
    record = answers_record(found, "")
    kept = decode_answers("b/inbox/q-1.md", record, records.answers_checksum("b/inbox/q-1.md", record))
    decoded = []
    real = records.decode_reasons
    monkeypatch.setattr(records, "decode_reasons", lambda b: (decoded.append(b), real(b))[1])
    answered = with_reasons(kept, 1, lambda exc: pytest.fail(str(exc)))
    assert isinstance(answered, KeptAnswer) and answered.value == "yes" and not decoded
    assert answered.reasons == why and answered.reasons == why and len(decoded) == 1
    assert answered == Answer("yes", why) and Answer("yes", why) == answered
    assert hash(answered) == hash(Answer("yes", why)) and answered != Answer("yes")
    assert with_reasons(kept, 2, lambda exc: pytest.fail(str(exc))) is kept[2]  # no reasons: the plain answer

"""From a header to a Letter or an Unreadable (SPEC 3): names, times, pointers, flags."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from letterbox_tui.core.header import parse_header
from letterbox_tui.core.letters import build
from letterbox_tui.core.model import Letter, Unreadable
from letterbox_tui.core.scan import scan

ID = "2026-11-29T140512-alpha-request-plan-3f9a1c07"


def one(box, **kw):
    """Scan the box and return its single letter or unreadable file."""
    snap = scan(box.root, id_time_is_utc=kw.pop("id_time_is_utc", False))
    items = snap.letters + snap.unreadable
    assert len(items) == 1, items
    return items[0]


def make(text: str, name: str = "x.md", id_time_is_utc: bool = False):
    return build(
        parse_header(text.encode()), path=f"beta/inbox/{name}", seat="beta", folder="inbox", name=name,
        id_time_is_utc=id_time_is_utc,
    )


# --- required fields --------------------------------------------------------------------


def test_a_complete_letter(box):
    box.letter(ID, frm="alpha", to="beta", type="request", requires_ack="true", priority="now",
               deadline="2026-12-01T17:00:00Z", sent="2026-11-29T14:05:12Z", subject="The plan")
    letter = one(box)
    assert isinstance(letter, Letter)
    assert (letter.id, letter.sender, letter.recipient, letter.type) == (ID, "alpha", "beta", "request")
    assert letter.task and letter.priority == "now" and letter.subject == "The plan"
    assert letter.sent_at == datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)
    assert letter.deadline_at == datetime(2026, 12, 1, 17, tzinfo=timezone.utc)
    assert (letter.seat, letter.folder, letter.path, letter.name) == ("beta", "inbox", f"beta/inbox/{ID}.md", f"{ID}.md")
    assert letter.flags == () and letter.malformed == () and not letter.legacy
    assert letter.thread_id == ID


@pytest.mark.parametrize(
    "drop,error",
    [("id", "id"), ("from", "from"), ("to", "to"), ("type", "type")],
)
def test_missing_required_field_is_unreadable(box, drop, error):
    values = {"id": "a-1", "from": "alpha", "to": "beta", "type": "info"}
    del values[drop]
    box.raw("beta/inbox/a-1.md", "---\n" + "".join(f"{k}: {v}\n" for k, v in values.items()) + "---\n")
    item = one(box)
    assert isinstance(item, Unreadable)
    assert error in item.error
    # everything that was legible is kept
    assert item.legible == values


@pytest.mark.parametrize("key", ["id", "from", "to", "type"])
def test_empty_required_field_is_unreadable(key):
    values = {"id": "a-1", "from": "alpha", "to": "beta", "type": "info", key: ""}
    item = make("---\n" + "".join(f"{k}: {v}\n" for k, v in values.items()) + "---\n", name="a-1.md")
    assert isinstance(item, Unreadable) and key in item.error


def test_id_of_243_characters_is_fine_244_is_not(box):
    """Ids are read up to 243 characters, the protocol's compat reader's limit (SPEC 3)."""
    box.letter("a" * 243)
    box.letter("b" * 244)
    snap = scan(box.root)
    assert [letter.id for letter in snap.letters] == ["a" * 243]
    assert [u.path for u in snap.unreadable] == ["beta/inbox/" + "b" * 244 + ".md"]
    assert "invalid 'id'" in snap.unreadable[0].error
    assert snap.unreadable[0].legible["id"] == "b" * 244


@pytest.mark.parametrize("bad", ["a b", "a/b", "caf\u00e9", "a,b", "a@b"])
def test_invalid_id_is_unreadable(bad):
    assert isinstance(make(f"---\nid: {bad}\nfrom: a\nto: b\ntype: info\n---\n"), Unreadable)


# --- file names ---------------------------------------------------------------------------


def test_canonical_name_has_no_flag(box):
    box.letter("a-1", requires_ack="false")
    assert one(box).flags == ()


def test_legacy_alias_name(box):
    box.letter("a-1", name="a-1-0123abcd.md")
    letter = one(box)
    assert isinstance(letter, Letter)
    assert letter.flags == ("filename-alias",) and letter.legacy
    assert letter.name == "a-1-0123abcd.md"


@pytest.mark.parametrize(
    "name",
    ["b-2.md", "a-1-0123ABCD.md", "a-1-0123abc.md", "a-1-0123abcde.md", "a-10123abcd.md", "x-a-1-0123abcd.md",
     "a-1.md.md", "A-1.md"],
)
def test_other_mismatched_names(box, name):
    box.letter("a-1", name=name)
    letter = one(box)
    assert isinstance(letter, Letter) and letter.flags == ("id-filename-mismatch",) and letter.legacy


def test_scope_counts_legacy_letters(box):
    box.letter("a-1", name="a-1-0123abcd.md")
    box.letter("b-2", name="other.md")
    box.letter("c-3")
    box.letter("d-4", requires_ack=None)
    box.letter("e-5", sent="2026-01-01T00:00:00")  # ambiguous-sent: a legacy flag like the rest
    scope = scan(box.root).scope
    assert (scope.files, scope.letters, scope.legacy) == (5, 5, 4)


# --- time -----------------------------------------------------------------------------------


def test_missing_sent_is_flagged_and_ambiguous(box):
    box.letter(ID, sent=None)
    letter = one(box)
    assert letter.sent_at is None and "missing-sent" in letter.flags


@pytest.mark.parametrize(
    "sent", ["2026-11-29T14:05:12", "2026-11-29T14:05:12-00:00", "soon", "2026-11-29", "2026-02-30T00:00:00Z"]
)
def test_naive_invalid_or_unknown_offset_sent_is_ambiguous(box, sent):
    box.letter(ID, sent=sent)
    letter = one(box)
    assert isinstance(letter, Letter) and letter.sent_at is None
    assert letter.sent == sent
    assert "missing-sent" not in letter.flags and "time-from-id" not in letter.flags


def test_sent_keeps_its_offset_and_Z_is_accepted(box):
    box.letter(ID, sent="2026-11-29T16:05:12+02:00")
    assert one(box).sent_at == datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)


def test_id_time_is_utc_uses_the_id_prefix(box):
    box.letter(ID, sent=None)
    letter = one(box, id_time_is_utc=True)
    assert letter.sent_at == datetime(2026, 11, 29, 14, 5, 12, tzinfo=timezone.utc)
    assert "time-from-id" in letter.flags and letter.legacy


@pytest.mark.parametrize("sent", ["2026-11-29T14:05:12", "garbage", "2026-11-29T14:05:12-00:00"])
def test_id_time_never_replaces_a_present_but_ambiguous_sent(box, sent):
    # As the protocol's reader: the id prefix stands in only for a missing `sent`.
    box.letter(ID, sent=sent)
    letter = one(box, id_time_is_utc=True)
    assert letter.sent_at is None and "time-from-id" not in letter.flags
    assert "ambiguous-sent" in letter.flags


@pytest.mark.parametrize("sent", [None, ""])
def test_id_time_for_a_missing_or_empty_sent(box, sent):
    box.letter(ID, sent=sent)
    letter = one(box, id_time_is_utc=True)
    assert letter.sent_at is not None and letter.flags == ("missing-sent", "time-from-id")


def test_id_time_never_overrides_a_valid_sent(box):
    box.letter(ID, sent="2026-11-30T00:00:00Z")
    letter = one(box, id_time_is_utc=True)
    assert letter.sent_at == datetime(2026, 11, 30, tzinfo=timezone.utc) and "time-from-id" not in letter.flags


def test_id_time_needs_the_setting(box):
    box.letter(ID, sent=None)
    assert one(box, id_time_is_utc=False).sent_at is None


def test_id_time_needs_a_prefix(box):
    box.letter("plain-id", sent=None)
    letter = one(box, id_time_is_utc=True)
    assert letter.sent_at is None and "time-from-id" not in letter.flags


@pytest.mark.parametrize("frm,to", [("external-bridge", "beta"), ("alpha", "external-bridge")])
def test_id_time_never_for_the_external_bridge(box, frm, to):
    box.seat("external-bridge")
    box.letter(ID, frm=frm, to=to, sent=None)
    letter = one(box, id_time_is_utc=True)
    assert letter.sent_at is None and "time-from-id" not in letter.flags


def test_id_time_setting_read_from_the_letterbox(box):
    box.letter(ID, sent=None)
    box.raw("letterbox-tui.toml", "[time]\nid_time_is_utc = true\n")
    letter = scan(box.root).letters[0]
    assert "time-from-id" in letter.flags and letter.sent_at is not None


@pytest.mark.parametrize("deadline", ["2026-12-01T17:00:00", "2026-12-01T17:00:00-00:00", "friday"])
def test_ambiguous_deadline(box, deadline):
    box.letter(ID, deadline=deadline, requires_ack="true")
    letter = one(box)
    assert letter.deadline == deadline and letter.deadline_at is None
    assert "ambiguous-deadline" in letter.flags


def test_no_deadline_is_not_ambiguous(box):
    box.letter(ID, deadline="")
    letter = one(box)
    assert letter.deadline_at is None and "ambiguous-deadline" not in letter.flags


def test_deadline_with_offset(box):
    box.letter(ID, deadline="2026-12-01T12:00:00-05:00")
    assert one(box).deadline_at == datetime(2026, 12, 1, 17, tzinfo=timezone.utc)


def test_deadline_never_taken_from_the_id(box):
    box.letter(ID, deadline="2026-12-01T12:00:00", sent=None)
    letter = one(box, id_time_is_utc=True)
    assert letter.deadline_at is None and letter.sent_at is not None


# --- requires_ack -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, ""])
def test_missing_or_empty_requires_ack_is_a_flagged_non_task(box, value):
    box.letter(ID, requires_ack=value)
    letter = one(box)
    assert not letter.task and "missing-requires-ack" in letter.flags and letter.legacy


@pytest.mark.parametrize("value,task", [("true", True), ("false", False), ("True", False), ("yes", False)])
def test_only_true_makes_a_task(box, value, task):
    box.letter(ID, requires_ack=value)
    letter = one(box)
    assert letter.task is task and "missing-requires-ack" not in letter.flags


# --- pointers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["re", "thread", "supersedes", "rules_on", "upholds"])
def test_malformed_single_pointer_is_flagged_and_the_letter_stays_readable(box, key):
    box.letter(ID, **{key: "not an id!"})
    letter = one(box)
    assert isinstance(letter, Letter)
    assert letter.malformed == (key,)
    assert getattr(letter, key) == "not an id!"  # the raw value is kept for the resolver


@pytest.mark.parametrize("key", ["re", "thread", "supersedes", "rules_on", "upholds"])
def test_valid_and_empty_pointers_are_not_malformed(box, key):
    box.letter(ID, **{key: "x" * 243})
    assert one(box).malformed == ()


def test_pointer_of_244_characters_is_malformed(box):
    box.letter(ID, supersedes="x" * 244)
    assert one(box).malformed == ("supersedes",)


def test_disputes_is_a_comma_separated_list(box):
    box.letter(ID, type="dispute", disputes="a-1, b-2,c-3")
    letter = one(box)
    assert letter.disputes == ("a-1", "b-2", "c-3") and letter.malformed == ()


@pytest.mark.parametrize("value", ["a-1, b c", "a-1,,b-2", "a-1,", "a-1;b-2", "a-1, " + "z" * 244])
def test_malformed_element_of_disputes(box, value):
    box.letter(ID, type="dispute", disputes=value)
    letter = one(box)
    assert isinstance(letter, Letter) and letter.malformed == ("disputes",)
    assert all(len(d) <= 243 and " " not in d and ";" not in d for d in letter.disputes)
    assert ("a-1" in letter.disputes) is (";" not in value)


def test_several_malformed_pointers(box):
    box.letter(ID, re="?", supersedes="a b", disputes="ok-1,?")
    assert set(one(box).malformed) == {"re", "supersedes", "disputes"}


def test_thread_label_and_own_thread(box):
    box.letter("a-1", thread="topic-7")
    box.letter("b-2", thread="")
    by_id = {letter.id: letter for letter in scan(box.root).letters}
    assert by_id["a-1"].thread_id == "topic-7" and by_id["b-2"].thread_id == "b-2"


# --- unknown fields, types ------------------------------------------------------------------------


def test_unknown_fields_kept_in_order(box):
    box.letter(ID, zulu="1", alpha="2", Mixed_Case="3", session="s-9")
    letter = one(box)
    keys = [k for k, _ in letter.fields]
    assert keys[-4:] == ["zulu", "alpha", "Mixed_Case", "session"]
    assert letter.field("session") == "s-9" and letter.field("nope") is None
    assert ("re", "") in letter.fields  # empty fields are kept as written


def test_unknown_type_is_readable_as_it_is(box):
    box.letter(ID, type="memo")
    assert one(box).type == "memo"


def test_letter_is_not_a_dataclass_but_behaves_like_a_value(box):
    box.letter(ID)
    letter = one(box)
    assert repr(letter) == f"Letter({ID!r} at 'beta/inbox/{ID}.md')"
    assert letter.size > 0 and letter.mtime_ns > 0 and letter.inode > 0


# --- an unreadable file keeps what is legible -------------------------------------------------------


def test_unreadable_keeps_path_folder_and_legible_fields(box):
    box.raw("beta/processed/bad.md", "---\nid: bad-1\nfrom: alpha\nsupersedes: old-1\njunk line old-2\n---\n")
    item = one(box)
    assert isinstance(item, Unreadable)
    assert (item.path, item.seat, item.folder) == ("beta/processed/bad.md", "beta", "processed")
    assert item.legible == {"id": "bad-1", "from": "alpha", "supersedes": "old-1"}
    assert "old-2" in item.illegible


# --- legacy flags: one definition for the row's list and the scope's count ----------

def test_every_flag_the_builder_sets_is_a_legacy_flag():
    import ast
    import inspect

    from letterbox_tui.core import letters
    from letterbox_tui.core.model import LEGACY_FLAGS

    tree = ast.parse(inspect.getsource(letters))
    appended = {
        node.args[0].value for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "flags"
        and node.args and isinstance(node.args[0], ast.Constant)
    }
    assert {"ambiguous-sent", "filename-alias"} <= appended
    assert appended == LEGACY_FLAGS


def test_scope_legacy_counts_the_rows_whose_legacy_list_is_not_empty(box):
    from letterbox_tui.core.resolve import resolve
    from letterbox_tui.core.rows import row

    box.letter(ID, name=f"{ID}-0123abcd.md")  # filename-alias
    box.letter("named-wrong", name="other.md")  # id-filename-mismatch
    box.letter("no-sent", sent=None)  # missing-sent
    box.letter("naive-sent", sent="2026-01-01T00:00:00")  # ambiguous-sent
    box.letter("naive-deadline", deadline="2026-01-01T00:00:00")  # ambiguous-deadline
    box.letter("no-ack-field", requires_ack=None)  # missing-requires-ack
    box.letter("clean")
    snap = scan(box.root)
    res = resolve(snap, datetime(2026, 6, 1, tzinfo=timezone.utc))
    rows = {x.id: row(x, res)["legacy"] for x in snap.letters}
    assert rows["naive-sent"] == ["ambiguous-sent"] and rows["clean"] == []
    assert snap.scope.legacy == sum(1 for flags in rows.values() if flags) == 6
    assert [x.legacy for x in snap.letters].count(True) == 6


# --- a letter kept and restored (what a derived store keeps) ---------------------------


def _every_slot_distinct() -> Letter:
    """A letter whose every slot holds a value no other slot holds."""
    from letterbox_tui.core.letters import FIELD_SLOTS

    fields = tuple((key, f"{key}-value") for key, _, _, _ in FIELD_SLOTS) + (("extra", "x"),)
    letter = Letter(*[f"v{i}" for i in range(15)], fields, "seat", "folder", "seat/folder/n.md", "n.md",
                    datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), None, ("flag",), ("re",), 11, 12, 13, 14)
    letter.sent = "2026-01-02T03:04:05Z"
    letter.disputes = ("d-1", "d-2")
    return letter


def test_state_and_restore_keep_every_slot():
    """A slot added to Letter must be kept by state() and given back by restore()."""
    from letterbox_tui.core.letters import COMPARED, letters_equal, restore, state

    letter = _every_slot_distinct()
    back = restore(state(letter))
    assert letters_equal(back, letter)
    for slot in COMPARED:  # every slot, as its attribute gives it
        assert getattr(back, slot) == getattr(letter, slot), slot
    assert restore(state(back)).fields == letter.fields
    assert all(type(v) in (str, int, tuple) for v in state(letter))  # plain data only


@pytest.mark.parametrize("damage", ["short", "int-for-str", "int-in-values", "keys-values-differ", "list"])
def test_restore_refuses_what_state_never_gives(damage):
    """A kept letter of another shape or type (a damaged derived file) is refused, never
    made into a letter."""
    from letterbox_tui.core.letters import restore, state

    kept = list(state(_every_slot_distinct()))
    if damage == "short":
        kept = kept[:-1]
    elif damage == "int-for-str":
        kept[0] = 7
    elif damage == "int-in-values":
        kept[16] = kept[16][:-1] + (7,)
    elif damage == "keys-values-differ":
        kept[16] = kept[16][:-1]
    with pytest.raises((TypeError, ValueError)):
        restore(kept if damage == "list" else tuple(kept))


def test_the_field_table_is_what_build_does():
    """FIELD_SLOTS says where build() puts each header field."""
    from letterbox_tui.core.letters import COMPARED, FIELD_SLOTS, FILE_SLOTS

    covered = [slot for _, slot, _, _ in FIELD_SLOTS] + [t for _, _, _, t in FIELD_SLOTS if t] + list(FILE_SLOTS)
    assert sorted(covered) == sorted(COMPARED) and len(COMPARED) == len(Letter.__slots__)  # every slot, once
    values = {"id": ID, "sent": "2026-11-29T14:05:12Z", "deadline": "2026-12-01T17:00:00Z",
              "disputes": "d-1, d-2"}
    values.update({key: f"{key} is no id" for key, _, kind, _ in FIELD_SLOTS if kind == "pointer"})
    header = "".join(f"{key}: {values.get(key, key + '-x')}\n" for key, _, _, _ in FIELD_SLOTS)
    letter = make(f"---\n{header}---\n", name=f"{ID}.md")
    for key, slot, kind, time_slot in FIELD_SLOTS:
        expected = values.get(key, key + "-x")
        if kind == "list":
            assert getattr(letter, slot) == ("d-1", "d-2")
        else:
            assert getattr(letter, slot) == expected, key
        if time_slot:
            assert getattr(letter, time_slot) is not None
    pointers = {key for key, _, kind, _ in FIELD_SLOTS if kind == "pointer"}
    assert set(letter.malformed) == pointers


# --- the header kept once ---------------------------------------------------------------


def test_a_header_of_named_fields_is_kept_once_and_given_back_as_written():
    letter = make(f"---\nid: {ID}\nfrom: alpha\nto: beta\ntype: info\nrequires_ack: false\nsent: 2026-11-29T14:05:12Z\n"
                  "re: \n---\nbody\n", name=f"{ID}.md")
    assert letter._values is None  # no second copy of values the named fields hold
    assert letter.header_keys == ("id", "from", "to", "type", "requires_ack", "sent", "re")
    assert letter.header_values == (ID, "alpha", "beta", "info", "false", "2026-11-29T14:05:12Z", "")
    assert letter.fields == tuple(zip(letter.header_keys, letter.header_values))
    assert letter.field_dict() == dict(letter.fields) and letter.field("re") == "" and letter.field("x") is None


@pytest.mark.parametrize("extra", ["disputes: a-1, b-2", "session: s-9"])
def test_a_header_with_a_value_no_named_field_holds_is_kept_as_written(extra):
    letter = make(f"---\nid: {ID}\nfrom: alpha\nto: beta\ntype: info\nrequires_ack: false\n{extra}\n---\n",
                  name=f"{ID}.md")
    key, value = extra.split(": ")
    assert letter._values is not None and letter.fields[-1] == (key, value)
    assert letter.field(key) == value


def test_a_letter_made_from_fields_gives_back_those_fields():
    """Given as pairs that the named attributes hold, or do not, the same pairs come back."""
    same = Letter(ID, "alpha", "beta", "info", fields=(("id", ID), ("from", "alpha"), ("type", "info")))
    assert same._values is None and same.fields == (("id", ID), ("from", "alpha"), ("type", "info"))
    other = Letter(ID, "alpha", fields=(("id", ID), ("from", "omega")))
    assert other._values is not None and other.fields == (("id", ID), ("from", "omega"))
    assert Letter(ID, fields=(("id", ID),)).fields == (("id", ID),) and Letter().fields == ()


def test_letters_are_equal_only_to_themselves():
    """Letters are compared and hashed by identity (sets and dicts of letters rely on it),
    whatever their header holds."""
    a, b = (make(f"---\nid: {ID}\nfrom: alpha\nto: beta\ntype: info\n---\n", name=f"{ID}.md") for _ in range(2))
    assert a.fields == b.fields and a != b and a == a and len({a, b, a}) == 2


def test_a_letters_file_name_is_its_paths_last_part_kept_once():
    letter = make(f"---\nid: {ID}\nfrom: alpha\nto: beta\ntype: info\n---\n", name=f"{ID}-0123abcd.md")
    assert letter.name == f"{ID}-0123abcd.md" and letter.path == f"beta/inbox/{ID}-0123abcd.md"
    assert letter._name is None and "filename-alias" in letter.flags
    assert Letter(ID, path="beta/inbox/x.md", name="y.md").name == "y.md"  # made by hand: as given
    assert Letter(ID, path="beta/inbox/x.md").name == "" and Letter(ID, path="x.md", name="x.md").name == "x.md"

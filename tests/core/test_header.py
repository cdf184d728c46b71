"""The header grammar of SPEC 3, rule by rule, on ``parse_header`` and through the scanner."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from letterbox_tui.core.header import MAX_HEADER, MAX_LINE, needs_more, parse_header
from letterbox_tui.core.letters import build
from letterbox_tui.core.model import Letter, Unreadable
from letterbox_tui.core.reader import read_header_bytes
from letterbox_tui.core.scan import scan

GOOD = b"id: a-1\nfrom: alpha\nto: beta\ntype: info\n"


def fields(data: bytes) -> dict[str, str]:
    result = parse_header(data)
    assert result.fields is not None, result.error
    return dict(result.fields)


def unreadable(data: bytes) -> str:
    result = parse_header(data)
    assert result.fields is None, f"expected unreadable, got {result.fields}"
    assert result.error
    return result.error


# --- the opening line ---------------------------------------------------------------


def test_well_formed_header_keeps_fields_in_order():
    result = parse_header(b"---\n" + GOOD + b"zeta: 1\nalpha: 2\n---\nbody\n")
    assert result.fields == (
        ("id", "a-1"), ("from", "alpha"), ("to", "beta"), ("type", "info"), ("zeta", "1"), ("alpha", "2"),
    )
    assert result.error == ""


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf---\n" + GOOD + b"---\n",  # byte-order mark
        b" ---\n" + GOOD + b"---\n",
        b"--- \n" + GOOD + b"---\n",
        b"----\n" + GOOD + b"---\n",
        b"\n---\n" + GOOD + b"---\n",
        b"id: a-1\n---\n",
        b"",
        b"---",
    ],
    ids=["bom", "leading-space", "trailing-space", "four-dashes", "blank-first-line", "no-open", "empty", "only-open"],
)
def test_first_line_must_be_exactly_three_dashes(data):
    unreadable(data)


def test_bom_error_names_the_byte_order_mark():
    assert "byte-order mark" in unreadable(b"\xef\xbb\xbf---\n" + GOOD + b"---\n")


# --- key: value lines -----------------------------------------------------------------


def test_split_at_first_colon_and_value_trimmed():
    f = fields(b"---\n" + GOOD + b"deadline:   2026-12-01T17:00:00Z  \nnote:a:b: c\n---\n")
    assert f["deadline"] == "2026-12-01T17:00:00Z"
    assert f["note"] == "a:b: c"


def test_empty_value_is_kept_as_empty_string():
    assert fields(b"---\n" + GOOD + b"re:\nthread: \n---\n")["re"] == ""


@pytest.mark.parametrize("key", ["a", "Z9", "requires_ack", "x-y_z", "A" * 200])
def test_valid_keys(key):
    assert key in fields(b"---\n" + GOOD + key.encode() + b": v\n---\n")


@pytest.mark.parametrize("key", ["9a", "_a", "-a", "a b", "a.b", " a", "a ", "", "\xe9t\xe9", "a$"])
def test_invalid_keys_make_the_file_unreadable(key):
    assert "key: value" in unreadable(b"---\n" + GOOD + key.encode() + b": v\n---\n")


@pytest.mark.parametrize("line", [b"no colon here", b"::", b": value", b"-", b"--", b"----", b"--- "])
def test_line_that_is_not_key_value_is_unreadable(line):
    unreadable(b"---\n" + GOOD + line + b"\n---\n")


def test_blank_and_whitespace_only_lines_are_ignored():
    f = fields(b"---\n\nid: a-1\n   \nfrom: alpha\n\n\nto: beta\ntype: info\n\n---\n")
    assert list(f) == ["id", "from", "to", "type"]


def test_repeated_key_is_unreadable_even_with_equal_values():
    assert "repeats" in unreadable(b"---\n" + GOOD + b"re: x\nre: x\n---\n")


def test_key_case_matters_for_repeats():
    f = fields(b"---\n" + GOOD + b"Re: x\nre: y\n---\n")
    assert f["Re"] == "x" and f["re"] == "y"


def test_closing_delimiter_is_the_first_exact_dash_line():
    data = b"---\n" + GOOD + b"---\nbody: not a field\n---\nmore\n"
    assert "body" not in fields(data)


def test_closing_delimiter_at_end_of_file_without_newline():
    assert fields(b"---\n" + GOOD + b"---")["id"] == "a-1"
    assert fields(b"---\n" + GOOD + b"---\r")["id"] == "a-1"


def test_empty_header_is_readable_grammar_but_has_no_id():
    assert parse_header(b"---\n---\n").fields == ()


@pytest.mark.parametrize(
    "data",
    [b"---\n" + GOOD, b"---\n" + GOOD + b"--- \n", b"---\n" + GOOD + b"---x\n", b"---\n" + GOOD + b" ---\n"],
    ids=["eof", "dash-space", "dash-x", "space-dash"],
)
def test_no_closing_delimiter_is_unreadable(data):
    unreadable(data)


# --- line endings ---------------------------------------------------------------------


def test_crlf_accepted():
    data = b"---\r\n" + GOOD.replace(b"\n", b"\r\n") + b"---\r\nbody\r\n"
    assert fields(data) == fields(b"---\n" + GOOD + b"---\n")


def test_mixed_crlf_and_lf_lines_accepted():
    data = b"---\r\nid: a-1\nfrom: alpha\r\nto: beta\ntype: info\r\n---\nbody\n"
    assert fields(data)["to"] == "beta"


@pytest.mark.parametrize("line", [b"to: be\rta\n", b"to: beta\r\n\r\n\r", b"x: \ry\r\n", b"\r \n"])
def test_carriage_return_inside_a_line_is_a_control_character(line):
    unreadable(b"---\nid: a-1\nfrom: alpha\ntype: info\n" + line + b"to: beta\n---\n")


def test_a_run_of_carriage_returns_before_lf_ends_the_line_as_the_protocol_reads_it():
    # The protocol's reader strips trailing CR and LF from each line.
    data = b"---\r\r\nid: a-1\r\r\nfrom: alpha\nto: beta\r\n\r\r\ntype: info\r\r\r\n---\r\r\nbody\n"
    assert fields(data) == {"id": "a-1", "from": "alpha", "to": "beta", "type": "info"}


def test_line_length_counts_every_carriage_return():
    assert "4096" in unreadable(b"---\n" + GOOD + line_of(4096, b"\r\r\n")[:-3] + b"\r\r\r\n---\n")


# --- control characters ---------------------------------------------------------------


@pytest.mark.parametrize("code", [c for c in range(32) if c not in (10, 13)] + [127])
def test_control_character_in_a_line_is_unreadable(code):
    error = unreadable(b"---\n" + GOOD + b"subject: a" + bytes([code]) + b"b\n---\n")
    assert "control" in error


def test_tab_is_a_control_character_even_in_blank_looking_lines():
    unreadable(b"---\n" + GOOD + b"\t\n---\n")
    unreadable(b"---\n" + GOOD + b"subject:\tx\n---\n")


def test_c1_and_other_code_points_are_allowed():
    f = fields("---\nid: a-1\nfrom: alpha\nto: beta\ntype: info\nsubject: caf\u00e9 \u0085 \u202e \U0001f4ec\n---\n".encode())
    assert "\u202e" in f["subject"]


# --- sizes ----------------------------------------------------------------------------


def line_of(total: int, ending: bytes = b"\n") -> bytes:
    """A ``subject:`` line exactly ``total`` bytes long, counting its ending."""
    return b"subject: " + b"x" * (total - len(b"subject: ") - len(ending)) + ending


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_line_of_exactly_4096_bytes_counting_its_ending_is_fine(ending):
    line = line_of(MAX_LINE, ending)
    assert len(line) == 4096
    assert len(fields(b"---\n" + GOOD + line + b"---\n")["subject"]) == 4096 - 9 - len(ending)


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_line_of_4097_bytes_is_unreadable(ending):
    assert "4096" in unreadable(b"---\n" + GOOD + line_of(MAX_LINE + 1, ending) + b"---\n")


def test_long_line_rule_applies_to_the_last_field_line():
    assert "4096" in unreadable(b"---\n" + GOOD + line_of(MAX_LINE + 1) + b"---")


def header_of(total: int, close: bytes = b"---\n") -> bytes:
    """A header exactly ``total`` bytes long counting both delimiters."""
    head = b"---\n" + GOOD
    room = total - len(head) - len(close)
    lines = []
    n = 0
    while room > 0:
        size = min(room, 2000)
        if room - size and room - size < 12:  # keep every padding line long enough
            size = room - 12
        lines.append(b"p" + str(n).encode() + b": " + b"y" * (size - len(str(n)) - 4) + b"\n")
        room -= size
        n += 1
    data = head + b"".join(lines) + close
    assert len(data) == total
    return data


@pytest.mark.parametrize("close", [b"---\n", b"---\r\n", b"---"])
def test_header_of_exactly_32768_bytes_is_fine(close):
    data = header_of(MAX_HEADER, close)
    body = b"body\n" * 1000 if close.endswith(b"\n") else b""  # a bare '---' closes only at the end
    assert parse_header(data + body).fields is not None


@pytest.mark.parametrize("close", [b"---\n", b"---\r\n"])
def test_header_of_32769_bytes_is_unreadable(close):
    assert "32768" in unreadable(header_of(MAX_HEADER + 1, close) + b"body\n")


def test_huge_header_without_close_is_unreadable_by_size():
    assert "32768" in unreadable(b"---\n" + GOOD + b"z: " + b"a" * 100 + b"\n" * 40000)


# --- encoding -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\xf4\x90\x80\x80"],
    ids=["ff", "truncated", "overlong", "surrogate", "cut-3byte", "above-max"],
)
def test_header_that_is_not_utf8_is_unreadable(raw):
    assert "UTF-8" in unreadable(b"---\n" + GOOD + b"subject: " + raw + b"\n---\n")


def test_body_is_not_judged():
    data = b"---\n" + GOOD + b"---\n\xff\x00\x01 not a header line\n" + b"x" * 100000
    assert fields(data)["id"] == "a-1"


# --- legible fields of a broken header (SPEC 5) ----------------------------------------


def test_legible_fields_kept_from_a_broken_header():
    result = parse_header(b"---\nid: a-1\nfrom: alpha\nthis is junk mentioning b-2\nsupersedes: c-3\n---\n")
    assert result.fields is None
    assert result.legible == {"id": "a-1", "from": "alpha", "supersedes": "c-3"}
    assert "b-2" in result.illegible


def test_repeated_key_legible_only_when_values_agree():
    agree = parse_header(b"---\n" + GOOD + b"re: x-1\nre: x-1\n---\n")
    assert agree.fields is None and agree.legible["re"] == "x-1"
    differ = parse_header(b"---\n" + GOOD + b"re: x-1\nre: y-2\n---\n")
    assert differ.fields is None and "re" not in differ.legible
    assert "x-1" in differ.illegible and "y-2" in differ.illegible
    assert differ.legible["id"] == "a-1"


def test_lines_with_control_or_bad_utf8_are_illegible_but_kept_for_mentions():
    result = parse_header(b"---\nid: a-1\nsupersedes: old-1\x01\nre: \xffparent-9\n---\n")
    assert result.fields is None
    assert "supersedes" not in result.legible and "re" not in result.legible
    assert "old-1" in result.illegible and "parent-9" in result.illegible


def test_cut_line_of_an_oversized_header_is_never_legible():
    # The header has no closing delimiter within 32768 bytes: the line cut by the limit
    # must not pass for a complete (shorter) value.
    prefix = header_of(MAX_HEADER - 40, close=b"")
    data = prefix + b"supersedes: " + b"z" * 60 + b"\n" + b"q: r\n" * 10
    result = parse_header(data[: MAX_HEADER + 8])
    assert result.fields is None
    assert "supersedes" not in result.legible
    assert result.legible["id"] == "a-1"


def test_no_open_delimiter_keeps_nothing_legible():
    result = parse_header(b"id: a-1\nfrom: alpha\n---\n")
    assert result.fields is None and result.legible == {}


# --- reading stops at the closing delimiter -------------------------------------------


def test_needs_more_until_a_line_ended_closing_delimiter():
    assert needs_more(b"---\n" + GOOD, at_eof=False)
    assert not needs_more(b"---\n" + GOOD, at_eof=True)
    assert not needs_more(b"---\n" + GOOD + b"---\n", at_eof=False)
    # '---' cut at the end of a read may be the start of '---x': not settled yet.
    assert needs_more(b"---\n" + GOOD + b"---", at_eof=False)
    assert needs_more(b"---\n" + GOOD + b"---\r", at_eof=False)


def test_dashes_cut_at_the_read_boundary_are_not_taken_for_a_close(tmp_path):
    # Regression: the 4096-byte first read ended right after '\n---' of a '---x' line,
    # and the header was taken as closed there.
    head = b"---\n" + GOOD
    pad = line_of(4096 - len(head) - 3 - 0)
    data = head + pad + b"---x: not closed\nsubject: late\n---\nbody\n"
    assert data.index(b"---x") + 3 == 4096
    path = tmp_path / "f.md"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = read_header_bytes(fd)
    finally:
        os.close(fd)
    assert len(got) > 4096
    assert parse_header(got).fields is None  # '---x: ...' is not key: value


def test_scanner_reads_one_4k_block_for_a_small_header_and_a_10mib_body(box, monkeypatch):
    path = box.letter("a-1", body="x" * (10 << 20))
    assert path.stat().st_size > 10 << 20
    sizes: list[int] = []
    real_read = os.read

    def recording_read(fd, n):
        sizes.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", recording_read)
    snap = scan(box.root)
    assert [letter.id for letter in snap.letters] == ["a-1"]
    assert sizes == [4096]


def test_scanner_reads_a_long_header_up_to_its_limit_only(box, monkeypatch):
    data = header_of(20000) + b"x" * (5 << 20)
    box.raw("beta/inbox/a-1.md", data)
    total = 0
    real_read = os.read

    def counting_read(fd, n):
        nonlocal total
        out = real_read(fd, n)
        total += len(out)
        return out

    monkeypatch.setattr(os, "read", counting_read)
    snap = scan(box.root)
    assert [letter.id for letter in snap.letters] == ["a-1"]
    assert total <= MAX_HEADER + 8


# --- properties -----------------------------------------------------------------------


def _build(data: bytes):
    return build(parse_header(data), path="beta/inbox/x.md", seat="beta", folder="inbox", name="x.md")


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=6000))
def test_any_bytes_give_a_letter_or_unreadable(data):
    assert isinstance(_build(data), (Letter, Unreadable))


_LINES = st.lists(
    st.one_of(
        st.sampled_from([b"---", b"id: a-1", b"from: alpha", b"to: beta", b"type: info", b"", b"re: x", b"\t",
                         b"sent: 2026-01-01T00:00:00Z", b"deadline: 2026-01-01T00:00:00-00:00", b"\xef\xbb\xbf---"]),
        st.binary(max_size=40),
        st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")),
    ),
    max_size=30,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES, st.sampled_from([b"\n", b"\r\n"]), st.booleans())
def test_any_line_soup_gives_a_letter_or_unreadable(lines, ending, opened):
    data = (b"---" + ending if opened else b"") + ending.join(lines)
    item = _build(data)
    assert isinstance(item, (Letter, Unreadable))
    if isinstance(item, Unreadable):
        assert item.error


_KEYS = st.builds(
    lambda a, b: a + b,
    st.sampled_from("abcXYZ"),
    st.text(alphabet="abcxyzABC019_-", max_size=12),
)
_VALUES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters=[chr(c) for c in range(32)] + ["\x7f"]),
    max_size=60,
).map(str.strip)


@settings(max_examples=200)
@given(st.dictionaries(_KEYS, _VALUES, max_size=12), st.sampled_from([b"\n", b"\r\n"]), st.binary(max_size=200))
def test_round_trip_of_valid_fields(extra, ending, body):
    header = {"id": "a-1", "from": "alpha", "to": "beta", "type": "info"}
    for k, v in extra.items():
        header.setdefault(k, v)
    text = ending.join(f"{k}: {v}".encode() for k, v in header.items())
    data = b"---" + ending + text + ending + b"---" + ending + body
    result = parse_header(data)
    assert result.fields == tuple(header.items())


# --- differential: the fast parser against a plain line-by-line reading of SPEC 3 ----------


_ANY_CONTROL = re.compile("[\x00-\x1f\x7f]")


def reference_reading(data: bytes) -> tuple[tuple[str, str], ...] | None:
    """The header grammar read the slow, obvious way: one line at a time, as a protocol
    reader does. None when the file is unreadable."""
    at = 0
    used = 0
    lines_seen = 0
    found: dict[str, str] = {}
    while True:
        nl = data.find(b"\n", at)
        raw = data[at:] if nl < 0 else data[at : nl + 1]
        at += len(raw)
        used += len(raw)
        if not raw or len(raw) > MAX_LINE or used > MAX_HEADER:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        while text and text[-1] in "\r\n":
            text = text[:-1]
        if _ANY_CONTROL.search(text):
            return None
        lines_seen += 1
        if lines_seen == 1:
            if text != "---":
                return None
            continue
        if text == "---":
            return tuple(found.items())
        if text.strip() == "":
            continue
        key, colon, value = text.partition(":")
        if not colon or not key or not (key[0].isascii() and key[0].isalpha()):
            return None
        if any(not (c.isascii() and (c.isalnum() or c in "_-")) for c in key) or key in found:
            return None
        found[key] = value.strip()


_SOUP_LINES = st.one_of(
    st.sampled_from([
        b"---", b"--- ", b"----", b"id: a-1", b"from: alpha", b"re:", b"re: x", b"", b" ", b"\t", b"\r",
        b"\x85", "\u3000".encode(), b"k\x00: v", b"k: v\x7f", b"k: \xff", b"9k: v", b"k v", b": v", b"k-_9: :v:",
        b"a" * 5000 + b": v", b"k: " + b"v" * 4092, b"k: " + b"v" * 4093, b"\xef\xbb\xbf---",
    ]),
    st.binary(max_size=12),
    st.text(alphabet=st.characters(max_codepoint=0x3000, blacklist_categories=("Cs",)), max_size=12).map(str.encode),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(_SOUP_LINES, st.sampled_from([b"\n", b"\r\n", b"\r\r\n", b"\r", b""])), max_size=14),
    st.booleans(),
)
def test_parser_agrees_with_a_line_by_line_reading(lines, open_first):
    data = (b"---\n" if open_first else b"") + b"".join(line + end for line, end in lines)
    assert parse_header(data).fields == reference_reading(data)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=MAX_HEADER - 300, max_value=MAX_HEADER + 300), st.sampled_from([b"\n", b"\r\n"]))
def test_parser_agrees_at_the_header_size_limit(total, ending):
    head = b"---" + ending + b"id: a-1" + ending
    room = total - len(head) - 3 - len(ending)
    pad = []
    while room > 0:
        n = min(room, 4000)
        if 0 < room - n < 6:
            n -= 6
        pad.append(b"p" + str(len(pad)).encode().rjust(4, b"0") + b":" + b"v" * (n - 6 - len(ending)) + ending)
        room -= n
    data = head + b"".join(pad) + b"---" + ending + b"body"
    assert parse_header(data).fields == reference_reading(data)
    assert (parse_header(data).fields is not None) == (data.index(b"---" + ending + b"body") + 3 + len(ending) <= MAX_HEADER)

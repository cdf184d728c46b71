"""first_bad_line: the header line a reader cannot take, with its number and byte offset."""

from letterbox_tui.core.header import first_bad_line


def test_a_tab_in_a_field_is_the_bad_line_with_its_offset():
    data = b"---\nid: x\nfrom: a\nsummary: licences\tall three MIT\n---\nbody\n"
    bad = first_bad_line(data)
    assert bad is not None
    assert bad.number == 4 and bad.offset == data.index(b"summary") and bad.raw == b"summary: licences\tall three MIT"
    assert "control character" in bad.why


def test_a_readable_header_has_no_bad_line():
    assert first_bad_line(b"---\nid: x\nfrom: a\n---\nbody\n") is None


def test_other_failures():
    assert first_bad_line(b"hello\n---\n").number == 1
    bad = first_bad_line(b"---\nid: x\nno colon here\n---\n")
    assert (bad.number, bad.offset, bad.why) == (3, 10, "line is not 'key: value'")
    bad = first_bad_line(b"---\nid: x\nid: y\n---\n")
    assert bad.number == 3 and "repeats" in bad.why
    bad = first_bad_line(b"---\nid: x\nfrom: \xff\xfe\n---\n")
    assert bad.number == 3 and "UTF-8" in bad.why
    # no closing delimiter: not one line's fault
    assert first_bad_line(b"---\nid: x\n") is None

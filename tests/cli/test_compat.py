"""``query --compat-v2`` prints what the protocol's compat mode prints on the same
letterbox (issue 23 parity item 1): every golden in ``golden_compat/`` was made by running
the protocol's own ``letterbox query --compat-v2`` on a letterbox ``compat_fixture.build``
writes, and ours must print it byte for byte, with the same exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from letterbox_tui.core.compat_walk import header_code
from letterbox_tui.core.header import parse_header
from tests.cli.compat_fixture import build
from tests.cli.helpers import cli

GOLDEN = Path(__file__).parent / "golden_compat"
CASES = sorted(p.stem for p in GOLDEN.glob("*.json"))


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    base = tmp_path_factory.mktemp("compat")
    return {v: build(base / v, v) for v in ("mixed", "cycle", "malformed", "leftovers")}


class _Box:
    def __init__(self, root: Path) -> None:
        self.root = root


def test_the_goldens_cover_the_issue():
    assert len(CASES) >= 20
    argvs = [" ".join(json.loads((GOLDEN / f"{c}.json").read_text())["argv"]) for c in CASES]
    for needle in ("head=", "legacy=", "state=unknown", "superseded=unknown", "--participant", "--max-names"):
        assert any(needle in a for a in argvs), needle


@pytest.mark.parametrize("case", CASES)
def test_compat_v2_equals_the_protocol_s_output(case, fixtures, capsys, tmp_path):
    golden = json.loads((GOLDEN / f"{case}.json").read_text())
    root = fixtures[golden["fixture"]]
    if golden.get("via_symlink"):
        link = tmp_path / "link"
        link.symlink_to(root, target_is_directory=True)
        root = link
    code, out, err = cli(capsys, _Box(root), "query", "--compat-v2", *golden["argv"])
    assert err == ""
    assert (code, out) == (golden["exit"], golden["stdout"])


def test_the_document_is_what_the_issue_names(fixtures, capsys):
    """A reader of the goldens' meaning, so a wrong golden cannot pass unseen."""
    code, out, _ = cli(capsys, _Box(fixtures["mixed"]), "query", "--compat-v2")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "letterbox.query.compat.v2" and doc["complete"] is True
    cards = {c["identity"]: c for c in doc["cards"]}
    fork = "2026-11-20T100000-alpha-decision-api-shape-bbbb0001"
    branches = [i for i in cards if cards[i]["fields"]["supersedes"] == fork]
    assert cards[fork]["head"] == "no" and [cards[b]["head"] for b in branches] == ["yes", "yes"]  # no ruling there
    assert cards["2026-11-20T100000-alpha-info-q3-plan---draft-ffff0001"]["slug"] == "q3-plan"
    assert cards["2026-11-23T000000-external-bridge-request-from-outside-eeee0001"]["answered"] == "unknown"
    code, out, _ = cli(capsys, _Box(fixtures["malformed"]), "query", "--compat-v2")
    doc = json.loads(out)
    assert code == 2 and {c["answered"] for c in doc["cards"]} == {"unknown"}
    assert {"source_ref": "beta/inbox/broken.md", "code": "unterminated_header"} in doc["diagnostics"]


@pytest.mark.parametrize("data,code", [
    (b"", "unterminated_header"),
    (b"\xef\xbb\xbf---\nid: x\n---\n", "missing_opening_delimiter"),
    (b"---\nid: x\n", "unterminated_header"),
    (b"---\nid: x\nid: y\n---\n", "duplicate_key"),
    (b"---\nnot a field\n---\n", "invalid_field"),
    (b"---\nid: \x01\n---\n", "control_character"),
    (b"---\nid: \xff\n---\n", "invalid_encoding"),
    (b"---\n" + b"k: " + b"v" * 5000 + b"\n---\n", "header_limit"),
])
def test_unreadable_headers_get_the_protocol_s_codes(data, code):
    assert parse_header(data).fields is None
    assert header_code(data) == code

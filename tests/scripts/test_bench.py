"""``scripts/bench.py`` and its generator: the bench deletes nothing it did not write, says
every path through the sanitizer, and a tiny run prints every measure."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import bench, benchgen
from tests.conftest import make_box

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "bench.py"
HOSTILE = "box\x1b]0;owned\x07\x1b[31m\u202e"
MEASURES = ("cold", "again", "other1", "other2", "owed", "disputes", "digest", "check",
            "show", "current", "answered", "thread", "exists")


def run_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


def real_letters(root: Path, n: int):
    box = make_box(root, "alpha", "beta")
    for i in range(n):
        box.letter(f"2026-01-01T0000{i:02d}-alpha-request-real-{i:08x}", frm="alpha", to="beta",
                   type="request", requires_ack="true", body=f"real work {i}\n")
    return box


def forge_old_marker(root: Path, letters: int = 40, seed: int = 1) -> None:
    """The marker and manifest the old ``bench`` trusted: a manifest naming every file
    beside them, and a marker naming the manifest's hash (and another letter count than
    the run asks for, so that the old bench removed it to generate its own)."""
    dirs = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    manifest = ("".join(f"d {d}\n" for d in dirs) + "".join(f"f {f}\n" for f in files)).encode()
    (root / ".letterbox-bench-manifest").write_bytes(manifest)
    (root / ".letterbox-bench").write_text(json.dumps({
        "generator": "letterbox-tui bench", "format": 2, "letters": letters, "seed": seed, "version": 1,
        "manifest": hashlib.blake2b(manifest, digest_size=16).hexdigest(), "files": len(files),
    }, sort_keys=True) + "\n")


def test_a_forged_marker_and_manifest_beside_real_letters_delete_nothing(tmp_path):
    box = real_letters(tmp_path / "letterbox", 47)
    forge_old_marker(box.root)
    before = box.tree_bytes()
    assert sum(1 for x in before if x.endswith(".md")) == 47
    got = run_bench("--letters", "50", "--dir", str(box.root), "--repeat", "1", "--no-app")
    assert got.returncode == 2 and "nothing was deleted" in got.stderr, got.stderr
    assert run_bench("--dir", str(box.root), "--remove").returncode == 2
    assert box.tree_bytes() == before  # all 47 letters kept, byte for byte


def test_a_marker_exactly_as_the_generator_writes_it_still_deletes_no_real_letter(tmp_path):
    box = real_letters(tmp_path / "letterbox", 47)
    (box.root / benchgen.MARKER).write_bytes(benchgen._marker_bytes(50, 1))
    before = box.tree_bytes()
    with pytest.raises(benchgen.NotOurs):
        benchgen.remove(box.root)
    assert run_bench("--letters", "50", "--dir", str(box.root), "--repeat", "1", "--no-app").returncode == 2
    assert box.tree_bytes() == before


@pytest.mark.parametrize("change", ["one byte", "one file more", "a symlink", "a folder more"])
def test_a_generated_letterbox_changed_anywhere_is_not_deleted_at_all(tmp_path, change):
    root = benchgen.generate(tmp_path / "b", 60, seed=2)
    letter = sorted(root.glob("*/inbox/*.md"))[3]
    if change == "one byte":
        data = bytearray(letter.read_bytes())
        data[-2] ^= 1
        letter.write_bytes(bytes(data))
    elif change == "one file more":
        (root / "planner" / "inbox" / "mine.md").write_text("---\nid: mine\n---\nkeep me\n")
    elif change == "a symlink":
        (tmp_path / "elsewhere.md").write_bytes(letter.read_bytes())
        letter.unlink()
        letter.symlink_to(tmp_path / "elsewhere.md")
    else:
        (root / "planner" / "drafts").mkdir()
    before = _tree(root)
    with pytest.raises(benchgen.NotOurs):
        benchgen.remove(root)
    assert _tree(root) == before


def _tree(root: Path) -> dict:
    out = {}
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(top) / name
            out[str(p.relative_to(root))] = os.readlink(p) if p.is_symlink() else (
                p.read_bytes() if p.is_file() else "dir")
    return out


def test_a_generated_letterbox_is_removed_wholly(tmp_path):
    root = benchgen.generate(tmp_path / "b", 60, seed=2)
    assert benchgen.is_current(root, 60, 2) and not benchgen.is_current(root, 61, 2)
    got = run_bench("--dir", str(root), "--remove")
    assert got.returncode == 0, got.stderr
    assert not root.exists() and os.listdir(tmp_path) == []


def test_an_interrupted_generation_is_removed_too(tmp_path):
    root = benchgen.generate(tmp_path / "b", 60, seed=2)
    for p in sorted(root.glob("*/processed/*.md"))[:10]:
        p.unlink()
    assert not benchgen.is_current(root, 60, 2)
    assert benchgen.remove(root) == [] and not root.exists()


def test_dir_is_reused_when_it_is_the_same_and_regenerated_when_it_is_another_bench_letterbox(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "SETTLE_S", 0)
    root = tmp_path / "b"
    assert bench.prepare(root, 60, 1).startswith("generated")
    first = _tree(root)
    assert bench.prepare(root, 60, 1) == "reused" and _tree(root) == first
    assert bench.prepare(root, 70, 1).startswith("generated")
    assert benchgen.is_current(root, 70, 1) and not benchgen.is_current(root, 60, 1)


def test_the_generator_is_deterministic_exact_and_realistic(tmp_path):
    from letterbox_tui.core.scan import scan

    a = benchgen.generate(tmp_path / "a", 400, seed=3)
    b = benchgen.generate(tmp_path / "b", 400, seed=3)
    assert _tree(a) == _tree(b)
    plan = benchgen.expected(400, 3)
    assert sorted(plan.files) == sorted(k for k, v in _tree(a).items() if v != "dir")
    snap = scan(a, id_time_is_utc=False)
    assert snap.scope.files == len(snap.letters) == 400 and snap.scope.complete
    assert {"request", "delegate", "ack", "result", "info"} <= {x.type for x in snap.letters}
    assert any(x.supersedes for x in snap.letters) and any(x.thread for x in snap.letters)
    assert any(x.folder == "processed" and x.type == "request" for x in snap.letters)
    assert snap.sidecars and len(snap.seats) == 8


def test_a_hostile_path_is_printed_sanitized(tmp_path):
    where = tmp_path / HOSTILE
    real_letters(where, 2)
    refused = run_bench("--letters", "50", "--dir", str(where), "--no-app")
    generated = benchgen.generate(tmp_path / (HOSTILE + "2"), 20)
    removed = run_bench("--dir", str(generated), "--remove")
    assert refused.returncode == 2 and removed.returncode == 0, (refused.stderr, removed.stderr)
    for text in (refused.stderr, removed.stdout):
        assert "box" in text and not any(c in text for c in "\x1b\x07\u202e"), repr(text)


def test_bad_arguments_are_one_line_and_exit_2(tmp_path):
    for args in (["--letters", "0"], ["--repeat", "0"], ["--remove"]):
        got = run_bench(*args, "--no-app")
        assert got.returncode == 2 and len(got.stderr.strip().splitlines()) == 1, got.stderr


@pytest.mark.slow
def test_a_tiny_run_prints_every_measure(tmp_path):
    got = run_bench("--letters", "50", "--repeat", "1", "--no-app", "--json")
    assert got.returncode == 0, got.stderr
    report = json.loads(got.stdout)
    assert report["letters"] == 50 and report["raw_read"] > 0 and report["load_average_start"]
    assert [m["key"] for m in report["measures"]] == list(MEASURES)
    for m in report["measures"]:
        assert "error" not in m and set(m["exit"]) <= {0, 1, 3}, m
        assert m["ratio"] > 0 and m["peak_mb"] > 0 and m["cpu"] > 0 and len(m["runs"]) == 1
        assert bench.line(m, judged=False).splitlines()[0] in got.stderr  # its line in the table
    assert not Path(report["dir"]).exists()  # the temporary letterbox is gone


@pytest.mark.slow
def test_the_app_measures_its_first_frame_and_owed_filled(tmp_path):
    got = run_bench("--letters", "50", "--repeat", "1", "--json")
    assert got.returncode == 0, got.stderr
    app = {m["key"]: m for m in json.loads(got.stdout)["measures"]}
    assert "error" not in app["app_first_frame"] and "error" not in app["app_owed_filled"], got.stderr
    assert 0 < app["app_first_frame"]["seconds"] <= app["app_owed_filled"]["seconds"]
    assert app["app_owed_filled"]["runs"][0]["owed_rows"] > 0


@pytest.mark.slow
def test_an_existing_letterbox_is_measured_as_found_and_left_as_it_was(tmp_path):
    box = real_letters(tmp_path / "letterbox", 12)
    before = box.tree_bytes()
    got = run_bench("--letterbox", str(box.root), "--repeat", "1", "--no-app", "--json")
    assert got.returncode == 0, got.stderr
    assert [m["key"] for m in json.loads(got.stdout)["measures"]] == list(MEASURES)
    assert box.tree_bytes() == before

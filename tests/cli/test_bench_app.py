"""``bench``'s app measures (``cli.bench_app``): a fresh process runs the app headless on a
letterbox, opens every view and scrolls, and reports each step. Counts and shapes only:
no figure is judged here."""

from __future__ import annotations

from letterbox_tui.cli import bench_app
from letterbox_tui.core.speed import benchgen


def test_the_app_is_measured_in_a_fresh_process_through_every_view_and_scroll(tmp_path, capsys):
    root = benchgen.generate(tmp_path / "box", 60)
    report = bench_app.measure_app(root, repeat=1)
    assert report["measured"], report.get("reason")
    assert report["complete"]
    (run,) = report["runs"]
    assert len(run["switch_each"]) == bench_app.SWITCH_ROUNDS * len(bench_app.VIEW_KEYS)
    assert len(run["scroll_each"]) == len(bench_app.SCROLL_KEYS)
    assert run["all_rows"] == 60  # scrolled in All letters
    assert run["owed_rows"] > 0
    # the order of events: imported, painted, owed shown, everything loaded
    assert 0 < run["imported_from_start"] <= run["first_paint_from_start"] <= run["owed_view_from_start"]
    assert run["owed_view_from_start"] <= run["loaded_from_start"]
    bench_app.print_lines(report, raw_s=0.5)
    out = capsys.readouterr().out
    assert "owed view filled in" in out and "switch view" in out and "scroll a key" in out


def test_a_child_that_fails_is_reported_not_raised(tmp_path):
    report = bench_app.measure_app(tmp_path / "not-a-letterbox", repeat=1)
    assert report["measured"] is False
    assert "failed" in report["reason"]

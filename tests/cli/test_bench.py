"""``letterbox-tui bench`` prints each measure as it is made, reports the index build's own
figures and a different question asked during the build, and from ``HEAVY_AT`` letters on
runs the measures from an empty cache once."""

from __future__ import annotations

import json

from letterbox_tui.cli import bench, main


def test_bench_reports_as_it_goes_and_runs_cold_measures_once_when_big(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bench, "HEAVY_AT", 100)  # 300 letters count as "big" here
    where = tmp_path / "bench"
    assert main(["bench", "--letters", "300", "--no-app", "--dir", str(where), "--json", "--repeat", "2"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)  # stdout is the JSON alone; the lines went to stderr, in order
    order = ["raw read", "scan only", "query subprocess, empty cache", "index build (detached",
             "same query again at once", "a different query during the build", "exists ...", "peak memory"]
    at = [err.index(x) for x in order]
    assert at == sorted(at), err
    assert "run once (not --repeat 2)" in err
    assert len(report["query_cold"]["runs"]) == 1 and len(report["query_again_at_once"]["runs"]) == 1
    assert len(report["query_warm"]["runs"]) == 2  # (the index measures run once below 1,000 letters)
    build = report["query_cold"]["index_build"]
    assert build["letters"] == 300 and build["peak_mb"] > 0 and build["seconds"] > 0 and build["cpu"] > 0
    during = report["query_different_during_build"]
    assert during["exit"] in (0, 3) and during["cold_seconds"] > 0 and len(during["each"]) == 1
    assert during["vs_cold"] == during["seconds"] / during["cold_seconds"]

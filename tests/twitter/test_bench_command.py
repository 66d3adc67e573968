"""``corpusforge bench`` runs end to end on a tiny archive and reports every figure.

Only the report's shape and its item counts are checked: speed is measured, never asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from corpusforge.commands.bench import bench


@pytest.mark.slow  # every stage on both engines at two scales: about 40 s on a quiet laptop
def test_bench_reports_every_stage_and_the_scaling(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command()(bench)
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        app,
        [
            "--tweets",
            "300",
            "--runs",
            "1",
            "--scales",
            "1,2",
            "--workdir",
            str(tmp_path),
            "--json",
            str(out),
            "--workers",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    stages = {s["stage"].strip(): s for s in report["stages"]}
    builds = [name for name in stages if name.startswith("whole build")]
    assert report["workers"] == 2
    local, beam = "whole build (local engines, 2 workers)", "whole build (Beam, in-process)"
    assert builds[:2] == [local, beam]
    # Prism's and Flink's whole builds when scripts/prism.sh and scripts/flink.sh built them
    runners = [r for r in ("prism", "flink") if r not in report]
    assert len(builds) == 2 + len(runners)
    assert len(stages) == 12 + len(builds)
    one_thread = "same, 1 worker, 1 decoder thread"
    assert {"same, 2 processes", "same, 2 workers", one_thread} <= set(stages)
    assert set(report["build_seconds"]) == set(builds)
    tweets = {s["items"] for s in report["stages"] if s["unit"] == "tweets"}
    assert len(tweets) == 1  # both pair engines and the bare functions read the same rows
    lines = {s["items"] for s in report["stages"] if s["unit"] == "lines"}
    assert len(lines) == 1  # both ceilings and every reader saw the same lines
    ratios = (
        "local_extract_speedup",
        "local_extract_speedup_one_thread_each",
        "local_extract_over_parallel_ceiling",
        "local_build_over_ceiling",
        "local_build_over_parallel_ceiling",
    )
    assert all(report[r] > 0 for r in ratios)
    assert all(s["seconds"] > 0 and s["peak_rss_mb"] > 0 for s in report["stages"])
    points = report["scaling"]["points"]
    assert [p["scale"] for p in points] == [1, 2]
    assert points[1]["lines"] > points[0]["lines"]
    month = report["scaling"]["month_extrapolation"]
    assert {"extract_rss_gb", "pairs_rss_gb", "pairs_unpartitioned_rss_gb"} <= set(month)
    assert month["month_partitions"] >= 1
    assert all(p["conversation_records"] > 0 for p in points)
    assert all(p["pairs_partitioned_rss_mb"] > 0 for p in points)
    assert "local pair engine / Beam pair stage" in result.output
    assert "extract / ceiling" in result.output
    assert "2 workers / 1 worker" in result.output
    assert "with one decoder thread per worker" in " ".join(result.output.split())
    assert "whole local build (2 workers) / ceiling" in result.output

"""``corpusforge bench``: measure the Twitter stages on a synthetic archive and print figures."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table


def bench(
    tweets: Annotated[int, typer.Option(help="tweets in the synthetic archive")] = 100_000,
    layout: Annotated[
        str, typer.Option(help="archive layout: zip-2020 (bz2) or tar-2022 (gz)")
    ] = "zip-2020",
    runs: Annotated[int, typer.Option(help="runs per stage; the median is reported")] = 3,
    scales: Annotated[
        str, typer.Option(help="comma-separated size multiples for the memory extrapolation")
    ] = "1",
    workdir: Annotated[
        str | None, typer.Option(help="folder for archives and releases (reused)")
    ] = None,
    json_out: Annotated[
        str | None, typer.Option("--json", help="also write the report here")
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            help="processes of the parallel ceiling, the local extract and the local whole "
            "build (0: one per core)"
        ),
    ] = 0,
) -> None:
    """Ceiling (stdlib decode + orjson, on 1 and on --workers processes) vs our extract,
    pairing, whole builds on each runner, and peak RSS."""
    from corpusforge.perf import run_bench

    if runs < 1:
        raise typer.BadParameter("runs must be >= 1")
    if workers < 0:
        raise typer.BadParameter(f"workers must be >= 0 (0: one per core), got {workers}")
    report = run_bench(
        tweets, layout, runs, tuple(int(s) for s in scales.split(",")), workdir, workers or None
    )
    if json_out:
        with open(json_out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    console = Console()
    console.print(
        f"archive {report['archive']} ({report['archive_bytes'] / 1e6:.1f} MB, {tweets:,} tweets, "
        f"{layout}); median of {runs} runs, each in a fresh process; {report['workers']} workers"
    )
    table = Table("stage", "items", "seconds", "rate", "peak RSS MB")
    for s in report["stages"]:
        table.add_row(
            s["stage"],
            f"{s['items']:,} {s['unit']}",
            f"{s['seconds']:.2f}",
            f"{s['rate']:,.0f} {s['unit']}/s",
            f"{s['peak_rss_mb']:,.0f}",
        )
    console.print(table)
    console.print(f"local pair engine / Beam pair stage: {report['local_pairs_over_beam']:.2f}")
    if "prism" in report:
        console.print(f"whole build on Prism: {report['prism']}")
    if "flink" in report:
        console.print(f"whole build on Flink: {report['flink']}")
    console.print(
        f"extract / ceiling: {report['extract_over_ceiling']:.2f} (functions, 2 decoder "
        f"threads), {report['extract_1_thread_over_ceiling']:.2f} (1 thread), "
        f"{report['extract_stdlib_over_ceiling']:.2f} (stdlib bz2), "
        f"{report['local_extract_over_ceiling']:.2f} (whole local stage, 1 worker), "
        f"{report['beam_extract_over_ceiling']:.2f} (whole Beam stage)"
    )
    console.print(
        f"local extract stage, {report['workers']} workers / 1 worker: "
        f"{report['local_extract_speedup']:.2f} (speed-up; "
        f"{report['local_extract_speedup_one_thread_each']:.2f} with one decoder thread per "
        f"worker); {report['workers']} workers / "
        f"{report['workers']}-process ceiling: {report['local_extract_over_parallel_ceiling']:.2f}"
    )
    console.print(
        f"whole local build ({report['workers']} workers) / ceiling: "
        f"{report['local_build_over_ceiling']:.2f} (1 loop), "
        f"{report['local_build_over_parallel_ceiling']:.2f} ({report['workers']} loops)"
    )
    if "scaling" in report:
        scaling = Table(
            "scale",
            "lines",
            "conversation records",
            "extract RSS MB",
            "pairs RSS MB (K=1)",
            "pairs RSS MB (K=scale)",
            "extract s",
            "pairs s (K=1)",
        )
        for pt in report["scaling"]["points"]:
            scaling.add_row(
                f"{pt['scale']}x",
                f"{pt['lines']:,}",
                f"{pt['conversation_records']:,}",
                f"{pt['extract_rss_mb']:,.0f}",
                f"{pt['pairs_rss_mb']:,.0f}",
                f"{pt['pairs_partitioned_rss_mb']:,.0f}",
                f"{pt['extract_s']:.1f}",
                f"{pt['pairs_s']:.1f}",
            )
        console.print(scaling)
        month = report["scaling"]["month_extrapolation"]
        console.print(
            "month ({:,} lines) extrapolated peak RSS: extract {:.1f} GB for one archive holding "
            "the whole month ({:+.0f} MB per million lines); pairs {:.1f} GB with the {} "
            "partitions the engine would choose (global {:.0f} MB and partitioned {:.0f} MB "
            "per million lines), {:.1f} GB unpartitioned; benchmarks of {} queries, whose "
            "candidate pool is bounded by their size".format(
                report["scaling"]["month_lines"],
                month["extract_rss_gb"],
                month["extract_mb_per_million_lines"],
                month["pairs_rss_gb"],
                month["month_partitions"],
                month["pairs_global_mb_per_million_lines"],
                month["pairs_partition_mb_per_million_lines"],
                month["pairs_unpartitioned_rss_gb"],
                report["scaling"]["benchmark_queries"],
            )
        )

"""``corpusforge bitext …``: build a translation-pair release from OPUS bitext files."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from corpusforge.commands.common import (
    BUILD_CONTEXT,
    Quiet,
    RunnerOption,
    config_from_options,
    configure_logging,
    run_and_report,
    where_manifest,
    with_settings,
)
from corpusforge.config.bitext import BitextConfig

app = typer.Typer(
    help="OPUS bitext (Moses, TMX, XCES, TSV) -> translation pairs.", no_args_is_help=True
)


@app.command(
    context_settings=BUILD_CONTEXT,
)
@with_settings(BitextConfig)
def build(
    ctx: typer.Context, runner: RunnerOption = None, quiet: Quiet = False, **settings: Any
) -> None:
    """Build a release: read, clean, filter and deduplicate pairs; write Parquet and manifest.json.

    Extra ``--flag=value`` arguments are passed to Beam as pipeline options.
    """
    configure_logging(quiet)
    config, parsed = config_from_options(BitextConfig, ctx, runner, settings)
    from corpusforge.builds.bitext import build as run_build

    run_and_report(run_build, config, parsed, out=config.out, quiet=quiet, summarise=print_summary)


def print_summary(manifest: dict[str, Any], out: str) -> None:
    """A short human summary of a bitext or ParaNMT release."""
    console = Console()
    counts = manifest["counts"]
    console.print(f"[bold]release[/bold] {out}  ({where_manifest(out)})")
    skipped = sum(counts["skipped"].values())
    dead_lines = counts.get("dead_letter_lines", counts["dead_letter"])
    console.print(
        f"read {counts['lines_read']:,} lines or records from {len(manifest['inputs'])} files: "
        f"{counts['pairs_read']:,} pairs, {skipped:,} empty alignments skipped, "
        f"{dead_lines:,} lines in {counts['dead_letter']:,} dead letter(s); "
        f"kept {counts['rows']:,} pairs"
    )
    for line in refused_file_pairs(manifest, out):
        console.print(f"[red]refused[/red] {line}")
    table = Table("dataset", "group", "pairs", "candidates", "top drop reasons")
    for name, ds in manifest["datasets"].items():
        groups = ds.get("lang_pairs") or {"": ds}
        for group, tally in groups.items():
            top = sorted(tally["dropped"].items(), key=lambda kv: -kv[1])[:3]
            table.add_row(
                name,
                group,
                f"{tally['rows']:,}",
                f"{tally['candidates']:,}",
                ", ".join(f"{k} {v:,}" for k, v in top),
            )
    console.print(table)
    balanced = manifest["accounting"]["balanced"]
    console.print(
        "accounting: " + ("[green]balanced[/green]" if balanced else "[red]NOT balanced[/red]")
    )


MISMATCH = "align_line_count_mismatch"


def refused_file_pairs(manifest: dict[str, Any], out: str) -> list[str]:
    """One line per Moses file pair refused because its sides' line counts differ.

    Read from the release's dead letters (their excerpt names both sides and counts); when
    they cannot be read, one line with the number of refused pairs.
    """
    n = manifest["counts"]["dead_letter_reasons"].get(MISMATCH, 0)
    if not n:
        return []
    why = "line counts differ, so no pair of it is published (dead letter " + MISMATCH + ")"
    paths = [f["path"] for f in manifest["files"] if f["path"].startswith("dead_letter/")]
    try:
        import pyarrow.parquet as pq

        names = sorted(
            row["excerpt"]
            for path in paths
            for row in pq.read_table(
                f"{out.rstrip('/')}/{path}", columns=["reason", "excerpt"]
            ).to_pylist()
            if row["reason"] == MISMATCH
        )
    except (OSError, ValueError):
        return [f"{n} Moses file pair(s): {why}"]
    return [f"{name}: {why}" for name in names]

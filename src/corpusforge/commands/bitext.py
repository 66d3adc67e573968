"""``corpusforge bitext …``: build a translation-pair release from OPUS bitext files."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from corpusforge.commands.common import (
    BUILD_CONTEXT,
    LidModel,
    Lowercase,
    Quiet,
    RowsPerShard,
    Runner,
    configure_logging,
    inputs_and_beam_args,
    run_and_report,
    where_manifest,
)

app = typer.Typer(
    help="OPUS bitext (Moses, TMX, XCES, TSV) -> translation pairs.", no_args_is_help=True
)


@app.command(
    context_settings=BUILD_CONTEXT,
)
def build(
    ctx: typer.Context,
    inputs: Annotated[
        list[str],
        typer.Argument(help="bitext files: paths, globs or URIs (Moses sides, TMX, XCES, TSV)"),
    ],
    out: Annotated[str, typer.Option("--out", help="release directory (path or URI)")],
    dataset: Annotated[
        str | None, typer.Option(help="corpus name for every pair (default: from file names)")
    ] = None,
    format: Annotated[
        str | None, typer.Option("--format", help="moses, tmx, xces or tsv (default: detect)")
    ] = None,
    documents_root: Annotated[
        str | None,
        typer.Option(help="folder of the XCES sentence documents (default: the alignment's)"),
    ] = None,
    tsv_layout: Annotated[
        str | None,
        typer.Option(help="TSV columns: pair, tatoeba, wikimatrix, english_first (default: guess)"),
    ] = None,
    src_lang: Annotated[
        str | None,
        typer.Option(
            help="first-side language where file names do not say; with --trg-lang, two plain "
            "files whose names carry no language are one Moses pair, this one's first by name"
        ),
    ] = None,
    trg_lang: Annotated[
        str | None, typer.Option(help="second-side language where file names do not say")
    ] = None,
    lid_model: LidModel = None,
    clean: Annotated[
        str, typer.Option(help="cleaning profile: none (default: bitext as distributed), paper, ct")
    ] = "none",
    lowercase: Lowercase = None,
    min_tokens: Annotated[
        int, typer.Option(help="fewest words per side (scripts without spaces: by letters)")
    ] = 3,
    max_tokens: Annotated[int, typer.Option(help="most words per side")] = 100,
    max_length_ratio: Annotated[
        float,
        typer.Option(
            help="drop a pair whose longer side has this many times the tokens of the shorter "
            "(OpusFilter's LengthRatioFilter); 0: no limit"
        ),
    ] = 3.0,
    max_pairs_per_lang: Annotated[
        int, typer.Option(help="pairs kept per dataset and language pair; 0 keeps all")
    ] = 500_000,
    min_lid_confidence: Annotated[
        float, typer.Option(help="lowest fastText probability of the expected language")
    ] = 0.0,
    seed: Annotated[int, typer.Option(help="seed of every hashed choice")] = 0,
    rows_per_shard: RowsPerShard = 250_000,
    runner: Runner = None,
    quiet: Quiet = False,
) -> None:
    """Build a release: read, clean, filter and deduplicate pairs; write Parquet and manifest.json.

    Extra ``--flag=value`` arguments are passed to Beam as pipeline options.
    """
    configure_logging(quiet)
    inputs, args = inputs_and_beam_args(ctx, inputs, runner)
    from corpusforge.builds.bitext import build as run_build
    from corpusforge.config.bitext import BitextConfig
    from corpusforge.pairing.filters import BitextFilterConfig, LanguageFilterConfig

    try:
        config = BitextConfig(
            inputs=tuple(inputs),
            out=out,
            dataset=dataset,
            format=format,
            documents_root=documents_root,
            tsv_layout=tsv_layout,
            src_lang=src_lang,
            trg_lang=trg_lang,
            lid_model=lid_model,
            clean=clean,
            lowercase=lowercase,
            filters=BitextFilterConfig(min_tokens, max_tokens, max_length_ratio or None),
            language=LanguageFilterConfig(min_lid_confidence),
            max_pairs_per_lang=max_pairs_per_lang or None,
            seed=seed,
            rows_per_shard=rows_per_shard,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    run_and_report(run_build, config, args, out=out, quiet=quiet, summarise=print_summary)


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

"""``corpusforge twitter …``: build a weak-pair release from Archive Team Twitter archives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from corpusforge.commands.common import (
    BUILD_CONTEXT,
    LidModel,
    Quiet,
    RowsPerShard,
    Runner,
    configure_logging,
    inputs_and_beam_args,
    run_and_report,
    where_manifest,
)

if TYPE_CHECKING:
    from corpusforge.config.twitter import TwitterConfig

app = typer.Typer(help="Twitter archives -> weakly similar pairs.", no_args_is_help=True)


@app.command(
    context_settings=BUILD_CONTEXT,
)
def build(
    ctx: typer.Context,
    inputs: Annotated[list[str], typer.Argument(help="archive paths, globs or URIs")],
    out: Annotated[str, typer.Option("--out", help="release directory (path or URI)")],
    lang: Annotated[
        list[str], typer.Option("--lang", help="language to keep, by the tweet's lang field")
    ] = ["en"],  # noqa: B006  (typer needs a literal default)
    clean: Annotated[str, typer.Option(help="cleaning profile: paper or ct")] = "paper",
    min_chars: Annotated[int, typer.Option(help="minimum cleaned text length")] = 20,
    seed: Annotated[int, typer.Option(help="seed of every hashed choice")] = 0,
    rows_per_shard: RowsPerShard = 250_000,
    max_line_bytes: Annotated[int, typer.Option(help="longer lines are dead-lettered")] = 1 << 20,
    max_member_bytes: Annotated[int, typer.Option(help="cap on decompressed bytes per member")] = 4
    << 30,
    max_member_ratio: Annotated[
        float,
        typer.Option(
            help="cap on a member's decompressed/compressed bytes past its first 8 MiB "
            "(a decompression bomb is cut, read_member_ratio_too_high); 0: off"
        ),
    ] = 100,
    benchmark_queries: Annotated[
        int, typer.Option(help="queries per held-out benchmark (dq, dr, cq, cr); 0: none")
    ] = 5000,
    benchmark_positives: Annotated[int, typer.Option(help="positives per query")] = 5,
    benchmark_negatives: Annotated[int, typer.Option(help="negatives per query")] = 25,
    pairs_per_dataset: Annotated[
        int | None, typer.Option(help="sample each dataset to N pairs (paper: 250000)")
    ] = None,
    decontaminate: Annotated[
        list[str] | None,
        typer.Option(help="evaluation file (STS, STSb, PIT, Twitter URL, plain) kept out"),
    ] = None,
    lid: Annotated[
        str, typer.Option(help="language from the tweet's lang field, or fastText: field|fasttext")
    ] = "field",
    lid_model: LidModel = None,
    bz2_threads: Annotated[
        int, typer.Option(help="fast bz2 decoder threads per member (0: stdlib; 2: both cores)")
    ] = 2,
    extract_engine: Annotated[
        str,
        typer.Option(help="extract stage: local (this process), beam (on the runner), auto"),
    ] = "auto",
    pair_engine: Annotated[
        str,
        typer.Option(help="pair stage: local (this process), beam (on the runner), auto"),
    ] = "auto",
    pair_partitions: Annotated[
        int, typer.Option(help="local pair engine's key-space partitions (0: from input size)")
    ] = 0,
    runner: Runner = None,
    quiet: Quiet = False,
) -> None:
    """Build a release: extract tweets, pair them, write Parquet and manifest.json.

    Extra ``--flag=value`` arguments are passed to Beam as pipeline options.
    """
    configure_logging(quiet)
    inputs, args = inputs_and_beam_args(ctx, inputs, runner)
    from corpusforge.config.twitter import TwitterConfig
    from corpusforge.pairing.benchmarks import BenchmarkConfig
    from corpusforge.sources.twitter.archive import ReadLimits

    try:
        config = TwitterConfig(
            inputs=tuple(inputs),
            out=out,
            langs=tuple(lang),
            clean=clean,
            min_chars=min_chars,
            seed=seed,
            rows_per_shard=rows_per_shard,
            limits=ReadLimits(max_line_bytes, max_member_bytes, bz2_threads, max_member_ratio),
            benchmarks=BenchmarkConfig(benchmark_queries, benchmark_positives, benchmark_negatives),
            pairs_per_dataset=pairs_per_dataset,
            decontaminate=tuple(decontaminate or ()),
            lid=lid,
            lid_model=lid_model,
            extract_engine=extract_engine,
            pair_engine=pair_engine,
            pair_partitions=pair_partitions,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    from corpusforge import progress

    run_and_report(
        _build_with_card,
        config,
        args,
        out=out,
        quiet=quiet,
        summarise=print_summary,
        around=progress.local_reporter(enabled=not quiet and progress.runs_in_process(args)),
    )


def _build_with_card(config: TwitterConfig, args: list[str]) -> dict[str, Any]:
    """The build, with the dataset card written into a local release before it is published."""
    import functools
    import os

    from corpusforge.builds.twitter import build as run_build
    from corpusforge.inspect.card import write_card

    name = os.path.basename(os.path.abspath(config.out))
    return run_build(config, args, finish_draft=functools.partial(write_card, name=name))


UNREADABLE_SHOWN = 20


def _print_unreadable(console: Console, manifest: dict[str, Any], out: str) -> None:
    """Name the archives and members that could not be read at all (dead_letter/ has them)."""
    from rich.markup import escape

    from corpusforge.inspect.unreadable import describe, unreadable_inputs

    unreadable = unreadable_inputs(out, manifest)
    if not unreadable:
        return
    console.print(
        f"[yellow]{len(unreadable):,} unreadable archive(s) or member(s)[/yellow], "
        "left out of the release (rows in dead_letter/):"
    )
    for item in unreadable[:UNREADABLE_SHOWN]:
        console.print(f"  {escape(describe(item))}", soft_wrap=True)
    if len(unreadable) > UNREADABLE_SHOWN:
        console.print(f"  … and {len(unreadable) - UNREADABLE_SHOWN:,} more")


def print_summary(manifest: dict[str, Any], out: str) -> None:
    """A short human summary of a release."""
    console = Console()
    counts = manifest["counts"]
    console.print(f"[bold]release[/bold] {out}  ({where_manifest(out)})")
    console.print(
        f"read {counts['lines_read']:,} lines from {counts['members_read']:,} members of "
        f"{len(manifest['inputs'])} archive(s): {counts['tweets']:,} tweets, "
        f"{counts['delete_notices']:,} delete notices, {counts['other_messages']:,} other, "
        f"{counts['dead_letter']:,} dead-lettered"
    )
    _print_unreadable(console, manifest, out)
    table = Table("dataset", "pairs", "candidates", "top drop reasons")
    for name, ds in manifest["datasets"].items():
        top = sorted(ds.get("dropped", {}).items(), key=lambda kv: -kv[1])[:3]
        table.add_row(
            name,
            f"{ds['rows']:,}",
            f"{ds['candidates']:,}" if "candidates" in ds else "",
            ", ".join(f"{k} {v:,}" for k, v in top),
        )
    console.print(table)
    if manifest.get("benchmarks"):
        bench = Table("benchmark", "queries", "requested", "eligible roots")
        for name, b in manifest["benchmarks"].items():
            style = "yellow" if b["shortfall"] else ""
            bench.add_row(
                name,
                f"{b['rows']:,}",
                f"{b['requested']:,}",
                f"{b['eligible_queries']:,}",
                style=style,
            )
        console.print(bench)
    balanced = manifest["accounting"]["balanced"]
    console.print(
        "accounting: " + ("[green]balanced[/green]" if balanced else "[red]NOT balanced[/red]")
    )

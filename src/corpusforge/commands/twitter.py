"""``corpusforge twitter …``: build a weak-pair release from Archive Team Twitter archives."""

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
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig

app = typer.Typer(help="Twitter archives -> weakly similar pairs.", no_args_is_help=True)


@app.command(
    context_settings=BUILD_CONTEXT,
)
@with_settings(TwitterConfig)
def build(
    ctx: typer.Context, runner: RunnerOption = None, quiet: Quiet = False, **settings: Any
) -> None:
    """Build a release: extract tweets, pair them, write Parquet and manifest.json.

    Extra ``--flag=value`` arguments are passed to Beam as pipeline options.
    """
    configure_logging(quiet)
    config, parsed = config_from_options(TwitterConfig, ctx, runner, settings)
    from corpusforge import progress

    run_and_report(
        _build_with_card,
        config,
        parsed,
        out=config.out,
        quiet=quiet,
        summarise=print_summary,
        around=progress.local_reporter(enabled=not quiet and parsed.in_process),
    )


def _build_with_card(config: TwitterConfig, runner: Runner) -> dict[str, Any]:
    """The build, with the dataset card written into a local release before it is published;
    the inputs are hashed on another core while the build's modules are imported."""
    import functools
    import os

    from corpusforge.release.io import DigestsAhead

    ahead = DigestsAhead(config.inputs)
    from corpusforge.builds.twitter import build as run_build
    from corpusforge.inspect.card import write_card

    name = os.path.basename(os.path.abspath(config.out))
    return run_build(
        config,
        runner,
        finish_draft=functools.partial(write_card, name=name),
        digest=ahead.digest,
    )


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

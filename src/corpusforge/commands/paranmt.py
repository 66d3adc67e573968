"""``corpusforge paranmt …``: build a paraphrase-pair release from ParaNMT-50M files."""

from __future__ import annotations

from typing import Any

import typer

from corpusforge.commands.bitext import print_summary
from corpusforge.commands.common import (
    BUILD_CONTEXT,
    Quiet,
    RunnerOption,
    config_from_options,
    configure_logging,
    run_and_report,
    with_settings,
)
from corpusforge.config.bitext import ParaphraseConfig

app = typer.Typer(help="ParaNMT-50M -> filtered English paraphrase pairs.", no_args_is_help=True)


@app.command(
    context_settings=BUILD_CONTEXT,
)
@with_settings(ParaphraseConfig)
def build(
    ctx: typer.Context, runner: RunnerOption = None, quiet: Quiet = False, **settings: Any
) -> None:
    """Build a release: parse, filter (P-SP) and deduplicate pairs; write Parquet and manifest.

    Extra ``--flag=value`` arguments are passed to Beam as pipeline options.
    """
    configure_logging(quiet)
    config, parsed = config_from_options(ParaphraseConfig, ctx, runner, settings)
    from corpusforge.builds.paranmt import build as run_build

    run_and_report(run_build, config, parsed, out=config.out, quiet=quiet, summarise=print_summary)

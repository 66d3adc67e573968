"""``corpusforge paranmt …``: build a paraphrase-pair release from ParaNMT-50M files."""

from __future__ import annotations

from typing import Annotated

import typer

from corpusforge.commands.bitext import print_summary
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
)

app = typer.Typer(help="ParaNMT-50M -> filtered English paraphrase pairs.", no_args_is_help=True)


@app.command(
    context_settings=BUILD_CONTEXT,
)
def build(
    ctx: typer.Context,
    inputs: Annotated[
        list[str], typer.Argument(help="ParaNMT files (reference TAB paraphrase TAB score)")
    ],
    out: Annotated[str, typer.Option("--out", help="release directory (path or URI)")],
    dataset: Annotated[str, typer.Option(help="dataset name (the pairs/<dataset>/ folder)")] = (
        "paranmt"
    ),
    lid_model: LidModel = None,
    clean: Annotated[
        str, typer.Option(help="cleaning profile: none (default: ParaNMT as released), paper, ct")
    ] = "none",
    lowercase: Lowercase = None,
    min_score: Annotated[float, typer.Option(help="lowest paraphrase score kept")] = 0.4,
    max_score: Annotated[float, typer.Option(help="highest paraphrase score kept")] = 1.0,
    max_overlap: Annotated[
        float, typer.Option(help="highest word-trigram overlap of the two sides kept")
    ] = 0.7,
    min_mean_tokens: Annotated[
        float, typer.Option(help="lowest mean whitespace-token length of the two sides")
    ] = 5.0,
    max_mean_tokens: Annotated[
        float, typer.Option(help="highest mean whitespace-token length of the two sides")
    ] = 40.0,
    min_lid_confidence: Annotated[
        float, typer.Option(help="lowest fastText probability of English, per side")
    ] = 0.0,
    rows_per_shard: RowsPerShard = 250_000,
    runner: Runner = None,
    quiet: Quiet = False,
) -> None:
    """Build a release: parse, filter (P-SP) and deduplicate pairs; write Parquet and manifest.

    Extra ``--flag=value`` arguments are passed to Beam as pipeline options.
    """
    configure_logging(quiet)
    inputs, args = inputs_and_beam_args(ctx, inputs, runner)
    from corpusforge.builds.paranmt import build as run_build
    from corpusforge.config.bitext import ParaphraseConfig
    from corpusforge.pairing.filters import LanguageFilterConfig, ParaphraseFilterConfig

    try:
        config = ParaphraseConfig(
            inputs=tuple(inputs),
            out=out,
            dataset=dataset,
            lid_model=lid_model,
            clean=clean,
            lowercase=lowercase,
            filters=ParaphraseFilterConfig(
                min_mean_tokens=min_mean_tokens,
                max_mean_tokens=max_mean_tokens,
                min_score=min_score,
                max_score=max_score,
                max_trigram_overlap=max_overlap,
            ),
            language=LanguageFilterConfig(min_lid_confidence),
            rows_per_shard=rows_per_shard,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    run_and_report(run_build, config, args, out=out, quiet=quiet, summarise=print_summary)

"""``corpusforge paranmt …``: build a paraphrase-pair release from ParaNMT-50M files."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from corpusforge.commands.bitext import print_summary

app = typer.Typer(help="ParaNMT-50M -> filtered English paraphrase pairs.", no_args_is_help=True)


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
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
    lid_model: Annotated[
        str | None,
        typer.Option(
            help="fastText lid.176.bin/.ftz (default: $CORPUSFORGE_LID_MODEL, else bundled)"
        ),
    ] = None,
    clean: Annotated[
        str, typer.Option(help="cleaning profile: none (default: ParaNMT as released), paper, ct")
    ] = "none",
    lowercase: Annotated[
        bool | None,
        typer.Option("--lowercase/--no-lowercase", help="override the profile's lowercasing"),
    ] = None,
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
    rows_per_shard: Annotated[int, typer.Option(help="target rows per Parquet shard")] = 250_000,
    runner: Annotated[
        str | None, typer.Option(help="Beam runner (default: the in-process FnApiRunner)")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="print only errors")] = False,
) -> None:
    """Build a release: parse, filter (P-SP) and deduplicate pairs; write Parquet and manifest.

    Extra ``--flag=value`` arguments are passed to Beam as pipeline options.
    """
    from corpusforge.options_bitext import ParaphraseConfig
    from corpusforge.release.paranmt_build import build as run_build
    from corpusforge.text.pairfilters import LanguageFilterConfig, ParaphraseFilterConfig

    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format="%(message)s")
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
    beam_args = list(ctx.args)
    if runner:
        beam_args.append(f"--runner={runner}")
    try:
        manifest = run_build(config, beam_args)
    except FileNotFoundError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if not quiet:
        print_summary(manifest, out)
    if not manifest["accounting"]["balanced"]:
        raise typer.Exit(code=3)

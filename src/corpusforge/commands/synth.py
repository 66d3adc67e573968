"""``corpusforge synth``: write synthetic source archives with a ground truth beside them.

    corpusforge synth twitter --out demo.zip --tweets 20000
    corpusforge synth twitter --out twitter-stream-20220301.tar --tweets 5000 --layout tar-2022
    corpusforge synth twitter --out t.tar --tweets 1000 --layout tar-2019 --api v2 --seed 3

The archive is written to ``--out`` as given and its truth to ``--out`` + ``.truth.json``;
``corpusforge.synth.twitter`` documents the layouts and what is imitated.
"""

from __future__ import annotations

import time
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from corpusforge.synth import twitter as synth

app = typer.Typer(
    help="Write synthetic source archives (with their ground truth) for tests and benchmarks.",
    no_args_is_help=True,
)


@app.callback()
def synth_group() -> None:
    """Write synthetic source archives (with their ground truth) for tests and benchmarks."""


class Layout(StrEnum):
    """The archive layouts of ``synth.LAYOUTS``."""

    zip_2020 = "zip-2020"
    tar_2019 = "tar-2019"
    tar_2022 = "tar-2022"
    tar_2013 = "tar-2013"
    tar_gz = "tar-gz"


class Api(StrEnum):
    """Line formats: Twitter API v1.1 or v2."""

    v1 = "v1"
    v2 = "v2"


@app.command()
def twitter(
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="archive file to write (name used as given); truth: OUT.truth.json"
        ),
    ],
    tweets: Annotated[
        int, typer.Option("--tweets", min=1, help="tweet lines (retweets included)")
    ] = 10_000,
    layout: Annotated[
        Layout,
        typer.Option(
            "--layout",
            help="zip-2020: twitter-stream-YYYY-MM-DD.zip; tar-2019: "
            "twitter_stream_YYYY_MM_DD.tar; tar-2022: twitter-stream-YYYYMMDD.tar (API v2); "
            "tar-2013: monthly archiveteam-twitter-stream-YYYY-MM.tar; tar-gz: tar-2019 gzipped",
        ),
    ] = Layout.zip_2020,
    api: Annotated[
        Api | None, typer.Option("--api", help="line format (default: v2 for tar-2022, else v1)")
    ] = None,
    seed: Annotated[int, typer.Option(help="same arguments and seed: identical bytes")] = 0,
    start: Annotated[
        datetime | None,
        typer.Option(
            formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"],
            help="archive-local time (UTC-7) of the first minute member (default: 2021-01-01 "
            "for zip-2020, 2019-01-01 for tar-2019 and tar-gz, 2022-03-01 for tar-2022, "
            "2013-01-01 for tar-2013)",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="processes (default: 1 below 5,000 tweets, else the cores)"),
    ] = None,
    bz2_level: Annotated[
        int,
        typer.Option(min=1, max=9, help="bz2 level: 9 as in the real archives; 1 is ~30% faster"),
    ] = synth.DEFAULT_BZ2_LEVEL,
    truth: Annotated[bool, typer.Option("--truth/--no-truth", help="write OUT.truth.json")] = True,
) -> None:
    """Write a synthetic Archive Team twitterstream archive and print a one-line summary."""
    began = time.perf_counter()
    try:
        result = synth.write_synthetic_archive(
            out,
            tweets=tweets,
            layout=layout.value,
            api=api.value if api is not None else None,
            seed=seed,
            start=start,
            truth=truth,
            workers=workers,
            bz2_level=bz2_level,
        )
    except ValueError as err:
        raise typer.BadParameter(str(err)) from err
    elapsed = time.perf_counter() - began
    members = len(result.members)
    truth_note = f"; truth in {synth.truth_path(out).name}" if truth else ""
    typer.echo(
        f"wrote {out} ({result.layout}, api {result.api}, seed {result.seed}): "
        f"{members} member{'s' if members != 1 else ''}, {result.lines:,} lines = "
        f"{result.tweet_lines:,} tweets + {result.delete_notices:,} deletes + "
        f"{result.other_messages:,} other; {_size(out.stat().st_size)} "
        f"({result.uncompressed_bytes / max(result.lines, 1):,.0f} B/line uncompressed) "
        f"in {elapsed:.1f} s{truth_note}"
    )


def _size(n: int) -> str:
    """``n`` bytes for people: 812 B, 3.4 kB, 33.7 MB, 1.2 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"

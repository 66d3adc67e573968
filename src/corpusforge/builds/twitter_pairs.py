"""Twitter extracts -> pairs and benchmarks in the build's staging folder: the second stage.

    corpusforge twitter build twitter-stream-2021-01-01.zip --out release/

Normalised tweets and delete notices (the extracts of :mod:`corpusforge.builds.twitter_extract`)
become the four pair datasets and ``all`` (``pairs/<dataset>/part-*.parquet``,
``schemas/pair.v1``) and the benchmarks (``benchmarks/<name>.parquet``), written under
``_staging/`` with ``_files.json`` and ``_counts.json``; the driver
(:mod:`corpusforge.builds.twitter`) moves them into the release. The stage runs in this
process (the local engine, :mod:`corpusforge.local.pairs`) or as a Beam pipeline
(:class:`~corpusforge.transforms.twitter.TwitterPairs`); both write the same files.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from corpusforge.beamflags import choose_engine
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import DATASETS, TwitterConfig
from corpusforge.local.machine import default_workers, memory_budget
from corpusforge.local.pairs import (
    PairSettings,
    pair_tweets,
    pair_workers,
    rows_per_bucket,
    rows_per_partition,
)
from corpusforge.local.shards import FrameShards
from corpusforge.local.spill import PAIR_SPILL_ROWS
from corpusforge.release.io import (
    COUNTS,
    FILES,
    ensure_dir,
    file_list,
    join,
    write_json,
)
from corpusforge.release.layout import BENCHMARKS, PAIRS, benchmark_file
from corpusforge.schemas import BENCHMARK, PAIR, arrow_schema
from corpusforge.sinks.shards import write_rows
from corpusforge.sources.twitter.archive import archive_name
from corpusforge.text.clean import clean_text
from corpusforge.text.decontam import Decontaminator


def pair_engine(config: TwitterConfig, runner: Runner) -> str:
    """The engine of the pair stage (``--pair-engine``)."""
    return choose_engine(config.pair_engine, (config.out,), runner)


def run_pairs(
    tweet_files: list[str],
    delete_files: list[str],
    config: TwitterConfig,
    runner: Runner,
    staging: str,
    benchmarks_written: Callable[[str], object] | None = None,
) -> None:
    """Stage 2: normalised tweets -> pairs and benchmarks in ``staging``.

    Writes the shards, ``_files.json`` and ``_counts.json`` under ``staging``;
    :func:`corpusforge.builds.twitter.build` publishes them. The local engine and the Beam
    pipeline write the same files.

    Args:
        tweet_files: tweet extracts.
        delete_files: delete-notice extracts.
        config: the build's settings.
        runner: where a Beam pipeline runs.
        staging: the folder written.
        benchmarks_written: called with ``staging``'s benchmark folder once the local engine
            has written every benchmark file there, before it chooses the pairs (the files
            stay until the stage's caller publishes them); the Beam pipeline never calls it.
    """
    ensure_dir(staging)  # marks the stage as started, for whoever watches the release folder
    if pair_engine(config, runner) == "local":
        _run_pairs_locally(tweet_files, delete_files, config, staging, benchmarks_written)
    else:
        _run_pairs_on_beam(tweet_files, delete_files, config, runner, staging)


def _pair_settings(config: TwitterConfig) -> PairSettings:
    return PairSettings(
        profile=config.profile,
        min_chars=config.min_chars,
        langs=config.langs,
        seed=config.seed,
        benchmarks=config.benchmarks,
        pairs_per_dataset=config.pairs_per_dataset,
        decontaminator=_decontaminator(config),
        lid_model=(config.lid_model or "") if config.lid == "fasttext" else None,
    )


def _run_pairs_locally(
    tweet_files: list[str],
    delete_files: list[str],
    config: TwitterConfig,
    staging: str,
    benchmarks_written: Callable[[str], object] | None,
) -> None:
    settings = _pair_settings(config)
    budget = memory_budget(config.memory_limit)
    queries = config.benchmarks.queries
    workers = pair_workers(budget, config.workers or default_workers(), queries)
    bench_files: list[dict[str, Any]] = []

    def write_benchmarks(benchmarks: dict[str, list[dict[str, Any]]]) -> None:
        for bench, rows in sorted(benchmarks.items()):
            ensure_dir(join(staging, BENCHMARKS))
            bench_files.append(_write_benchmark((bench, rows), staging))
        if benchmarks_written is not None:
            benchmarks_written(join(staging, BENCHMARKS))

    with pair_tweets(
        tweet_files,
        delete_files,
        settings,
        partitions=config.pair_partitions,
        partition_rows=rows_per_partition(budget, workers, queries),
        bucket_rows=rows_per_bucket(budget),
        workdir=staging,
        spill_rows=PAIR_SPILL_ROWS,
        workers=workers,
        on_benchmarks=write_benchmarks,
    ) as stage:
        shards = os.path.join(stage.spill, "shards")
        writer = FrameShards(PAIR, list(PAIR_SORT), config.rows_per_shard, shards)
        for dest in ("all", *DATASETS):
            ensure_dir(join(staging, PAIRS, dest))
        for frame in stage.pairs.frames():
            writer.add(join(staging, PAIRS, "all"), frame)
            for (dataset,), part in frame.partition_by("dataset", as_dict=True).items():
                writer.add(join(staging, PAIRS, str(dataset)), part)
        files = writer.close() + bench_files
    write_json(join(staging, FILES), file_list(files))
    write_json(join(staging, COUNTS), dict(sorted(stage.counts.items())))


def _run_pairs_on_beam(
    tweet_files: list[str],
    delete_files: list[str],
    config: TwitterConfig,
    runner: Runner,
    staging: str,
) -> None:
    from corpusforge.builds.twitter_beam import pairs_on_beam

    pairs_on_beam(
        tweet_files,
        delete_files,
        _pair_settings(config),
        config,
        runner,
        staging,
        pair_key=_pair_key,
        write_benchmark=_write_benchmark,
    )


def _decontaminator(config: TwitterConfig) -> Decontaminator | None:
    if not config.decontaminate:
        return None
    profile = config.profile
    names = [archive_name(path) for path in config.decontaminate]
    if len(set(names)) < len(names):
        names = list(config.decontaminate)
    return Decontaminator.from_files(
        list(zip(names, config.decontaminate, strict=True)),
        normalise=functools.partial(clean_text, profile=profile),
    )


def _write_benchmark(element: tuple[str, Iterable[dict[str, Any]]], staging: str) -> dict[str, Any]:
    bench, rows = element
    ordered = sorted(rows, key=lambda r: r["query_id"])
    return write_rows(join(staging, benchmark_file(bench)), ordered, arrow_schema(BENCHMARK))


PAIR_SORT = ("anchor_id", "positive_id", "dataset")
"""Orders a pair shard's rows and places them; unique within ``all`` too: a tweet replying to
and quoting one root is in qt and rp."""


def _pair_key(row: Mapping[str, Any]) -> tuple[int, int, str]:
    """:data:`PAIR_SORT`'s values, as the Beam sink takes them."""
    return int(row["anchor_id"]), int(row["positive_id"]), row["dataset"]

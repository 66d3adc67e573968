"""The two stages of a Twitter build as Beam pipelines, on any runner.

    corpusforge twitter build twitter-stream-2021-01-01.zip --out release/ --runner prism

:func:`extract_on_beam` writes the files of :mod:`corpusforge.builds.twitter_extract` and
:func:`pairs_on_beam` those of :mod:`corpusforge.builds.twitter_pairs`, byte for byte as the
local engine does. The stage modules import this one only when a stage runs on Beam, so a
build on the local engine never imports Beam.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import apache_beam as beam

from corpusforge.config.beam import pipeline_options
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig
from corpusforge.jobs import job
from corpusforge.local.pairs import PairSettings
from corpusforge.release.deadletter import extract_dead_letter_key
from corpusforge.release.io import COUNTS, FILES, file_list, join
from corpusforge.release.layout import PAIRS
from corpusforge.schemas import DELETE, PAIR, TWEET
from corpusforge.sinks.parquet import WriteDeadLetters, WriteParquetShards
from corpusforge.transforms.sidefiles import WriteJsonPerKeyFn, read_parquet
from corpusforge.transforms.twitter import ExtractedTweets, TwitterPairs

Row = Mapping[str, Any]


def extract_on_beam(
    tweet_dirs: dict[str, str],
    dead_dirs: dict[str, str],
    config: TwitterConfig,
    runner: Runner,
    tweet_key: Callable[[Row], Any],
) -> None:
    """Archives -> their extract folders, in one pipeline.

    Args:
        tweet_dirs: each archive's extract folder, by archive URI.
        dead_dirs: each extract folder's dead-letter folder.
        config: the build's settings.
        runner: where the pipeline runs.
        tweet_key: the sort key of tweet and delete rows.
    """
    with job(pipeline_options(runner)) as p:
        ex = (
            p
            | "Archives" >> beam.Create(sorted(tweet_dirs))
            | "Extract" >> ExtractedTweets(tweet_dirs, config.limits)
        )
        tweet_files = (
            ex["tweets"]
            | "TweetDest" >> beam.Map(lambda kv: (join(kv[0], "tweets"), kv[1]))
            | "WriteTweets" >> WriteParquetShards(TWEET, tweet_key, config.rows_per_shard)
        )
        delete_files = (
            ex["deletes"]
            | "DeleteDest" >> beam.Map(lambda kv: (join(kv[0], "deletes"), kv[1]))
            | "WriteDeletes" >> WriteParquetShards(DELETE, tweet_key, config.rows_per_shard)
        )
        dead_files = (
            ex["dead"]
            | "DeadDest" >> beam.Map(lambda kv, d: (d[kv[0]], kv[1]), dead_dirs)
            | "WriteDead" >> WriteDeadLetters(config.rows_per_shard, extract_dead_letter_key)
        )
        (
            (tweet_files, delete_files, dead_files)
            | "AllFiles" >> beam.Flatten()
            | "FilesByExtract" >> beam.Map(_extract_of, list(dead_dirs.items()))
            | "GroupFiles" >> beam.GroupByKey()
            | "WriteFileLists"
            >> beam.ParDo(WriteJsonPerKeyFn(FILES, functools.partial(file_list, root=config.out)))
        )
        (
            ex["counts"]
            | "CountsByExtract" >> beam.Map(lambda kv: (kv[0][0], (kv[0][1], kv[1])))
            | "GroupCounts" >> beam.GroupByKey()
            | "WriteCounts" >> beam.ParDo(WriteJsonPerKeyFn(COUNTS, lambda kvs: dict(sorted(kvs))))
        )


def _extract_of(
    info: dict[str, Any], dead_dirs: list[tuple[str, str]]
) -> tuple[str, dict[str, Any]]:
    path = info["path"]
    for tweet_dir, dead_dir in dead_dirs:
        if path.startswith(tweet_dir.rstrip("/") + "/") or path.startswith(
            dead_dir.rstrip("/") + "/"
        ):
            return tweet_dir, info
    raise ValueError(f"file {path} is outside every extract folder")


def pairs_on_beam(
    tweet_files: list[str],
    delete_files: list[str],
    settings: PairSettings,
    config: TwitterConfig,
    runner: Runner,
    staging: str,
    *,
    pair_key: Callable[[Row], Any],
    write_benchmark: Callable[[tuple[str, Any], str], dict[str, Any]],
) -> None:
    """Extracts -> pairs, benchmarks and their side files under ``staging``, in one pipeline.

    The rows are read once; nothing that grows with them reaches a worker whole
    (:mod:`corpusforge.transforms.twitter.pairs`). The file list and the counts are each
    gathered under one key: one entry per file written and per count, never per row.

    Args:
        tweet_files: tweet Parquet files of every archive.
        delete_files: delete-notice Parquet files of every archive.
        settings: the pair stage's settings.
        config: the build's settings (``rows_per_shard``).
        runner: where the pipeline runs.
        staging: the staging folder.
        pair_key: the sort key of pair rows.
        write_benchmark: writes one benchmark's rows into ``staging``.
    """
    with job(pipeline_options(runner)) as p:
        tweets = read_parquet(p, "Tweets", tweet_files)
        deletes = read_parquet(p, "Deletes", delete_files, ["id"])
        inputs = {"tweets": tweets, "deletes": deletes}
        result = inputs | "Pairs" >> TwitterPairs(
            settings.profile,
            settings.min_chars,
            settings.langs,
            settings.seed,
            benchmarks=settings.benchmarks,
            pairs_per_dataset=settings.pairs_per_dataset,
            decontaminator=settings.decontaminator,
            lid_model=settings.lid_model,
        )
        pair_files = (
            result["pairs"]
            | "PairDest"
            >> beam.FlatMap(
                lambda r: [
                    (join(staging, PAIRS, r["dataset"]), r),
                    (join(staging, PAIRS, "all"), r),
                ]
            )
            | "WritePairs" >> WriteParquetShards(PAIR, pair_key, config.rows_per_shard)
        )
        bench_files = (
            result["benchmarks"]
            | "GroupBenchmark" >> beam.GroupByKey()
            | "WriteBenchmark" >> beam.Map(write_benchmark, staging)
        )
        (
            (pair_files, bench_files)
            | "StagedFiles" >> beam.Flatten()
            | "OneFileList" >> beam.Map(lambda info: (staging, info))
            | "GroupPairFiles" >> beam.GroupByKey()
            | "WritePairFileList" >> beam.ParDo(WriteJsonPerKeyFn(FILES, file_list))
        )
        (
            result["counts"]
            | "OneCounts" >> beam.Map(lambda kv: (staging, kv))
            | "GroupPairCounts" >> beam.GroupByKey()
            | "WritePairCounts"
            >> beam.ParDo(WriteJsonPerKeyFn(COUNTS, lambda kvs: dict(sorted(kvs))))
        )

"""The release step of a bitext or ParaNMT Beam pipeline: :class:`WriteRelease`.

The Beam half of :mod:`corpusforge.release.pipeline`, kept apart so that a build on the local
engine, which publishes through :func:`~corpusforge.release.pipeline.publish_release` itself,
never imports Beam (issue 38: about a second of CPU and 100 MiB a build).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import apache_beam as beam

from corpusforge.pairing.rejects import sort_key as rejected_sort_key
from corpusforge.release.io import join
from corpusforge.release.layout import DEAD_LETTERS
from corpusforge.release.manifest import describe_input
from corpusforge.release.pipeline import ReleaseSpec, publish_release
from corpusforge.schemas import REJECTED as REJECTED_SCHEMA
from corpusforge.sinks.parquet import WriteDeadLetters, WriteParquetShards
from corpusforge.transforms.bitext import CountKey


class WriteRelease(beam.PTransform):
    """Pairs, dead letters and counts -> Parquet shards, then the published release.

    Input: ``{"pairs": ((dataset, group), row), "dead": dead-letter row, "counts": (key, n),
    "inputs": input URI}`` and, with ``spec.keep_rejected``, ``"rejected": ((dataset, group),
    rejected row)``; with ``spec.holdout``, ``"heldout": ((dataset, group), row)``. Shards go
    to ``_staging/``; a last step (one element, with the files, counts and input descriptions
    as side inputs) moves them into place, writes an empty shard where a dataset or the dead
    letters have no row, and writes the manifest.
    Outputs that step's ``{"out", "balanced"}``.

    Args:
        spec: the release.
        sort_key: a unique, stable key of a pair row (orders and shards it).
        rows_per_shard: target rows per Parquet shard.
    """

    def __init__(
        self,
        spec: ReleaseSpec,
        sort_key: Callable[[Mapping[str, Any]], Any],
        rows_per_shard: int,
    ) -> None:
        super().__init__()
        self._spec = spec
        self._sort_key = sort_key
        self._rows_per_shard = rows_per_shard

    def expand(self, inputs: dict[str, beam.PCollection]) -> beam.PCollection:
        spec = self._spec
        pair_files = (
            inputs["pairs"]
            | "PairDest"
            >> beam.Map(lambda kv: (join(spec.staging, spec.pair_folder(*kv[0])), kv[1]))
            | "WritePairs"
            >> WriteParquetShards(spec.pair_schema, self._sort_key, self._rows_per_shard)
        )
        dead_files = (
            inputs["dead"]
            | "DeadDest" >> beam.Map(lambda row: (join(spec.staging, DEAD_LETTERS), row))
            | "WriteDead" >> WriteDeadLetters(self._rows_per_shard)
        )
        staged = [pair_files, dead_files]
        if spec.keep_rejected:
            staged.append(
                inputs["rejected"]
                | "RejectedDest"
                >> beam.Map(lambda kv: (join(spec.staging, spec.rejected_folder(*kv[0])), kv[1]))
                | "WriteRejected"
                >> WriteParquetShards(REJECTED_SCHEMA, rejected_sort_key, self._rows_per_shard)
            )
        if spec.holdout:
            staged.append(
                inputs["heldout"]
                | "HeldoutDest"
                >> beam.Map(lambda kv: (join(spec.staging, spec.heldout_folder(*kv[0])), kv[1]))
                | "WriteHeldout"
                >> WriteParquetShards(spec.pair_schema, self._sort_key, self._rows_per_shard)
            )
        files = tuple(staged) | "StagedFiles" >> beam.Flatten()
        counts = inputs["counts"] | "SumAllCounts" >> beam.CombinePerKey(sum)
        described = (
            inputs["inputs"]
            | "FanOutInputs" >> beam.Reshuffle()
            | "DescribeInputs" >> beam.Map(describe_input)
        )
        return (
            inputs["pairs"].pipeline
            | "ReleaseOnce" >> beam.Create([spec.out])
            | "Publish"
            >> beam.ParDo(
                _PublishFn(spec),
                files=beam.pvalue.AsList(files),
                counts=beam.pvalue.AsList(counts),
                inputs=beam.pvalue.AsList(described),
            )
        )


class _PublishFn(beam.DoFn):
    def __init__(self, spec: ReleaseSpec) -> None:
        self._spec = spec

    def process(
        self,
        out: str,
        files: list[dict[str, Any]],
        counts: list[tuple[CountKey, int]],
        inputs: list[dict[str, Any]],
    ) -> Iterator[dict[str, Any]]:
        manifest = publish_release(self._spec, files, counts, inputs)
        yield {"out": out, "balanced": manifest is not None and manifest["accounting"]["balanced"]}

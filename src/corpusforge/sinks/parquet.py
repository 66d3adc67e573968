"""Rows -> deterministic Parquet shards with an explicit schema.

``WriteParquetShards`` takes ``(destination_dir, row)`` pairs. It counts the rows of each
destination, picks the number of shards from that count, places each row in a shard by a
seeded hash of its sort key, sorts each shard by that key and writes
``destination/part-00000-of-00004.parquet`` (zstd). The same rows therefore give the same
bytes whatever the runner, worker count or arrival order. Each shard is written to a
temporary name and renamed, so a killed job never leaves a half-written shard under its
final name. The transform outputs one ``ShardInfo`` dict per file written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import apache_beam as beam

from corpusforge import heap
from corpusforge.release.deadletter import dead_letter_key
from corpusforge.release.io import join
from corpusforge.schemas import DEAD_LETTER, SchemaRef, arrow_schema
from corpusforge.sinks.shards import (
    ROW_GROUP_SIZE,
    Row,
    shard_count,
    shard_name,
    shard_of,
    table_bytes,
    write_rows,
)

__all__ = [
    "ROW_GROUP_SIZE",
    "WriteDeadLetters",
    "WriteParquetShards",
    "shard_count",
    "shard_name",
    "shard_of",
    "table_bytes",
    "write_rows",
]


class _WriteShardFn(beam.DoFn):
    def __init__(self, schema_ref: SchemaRef, sort_key: Callable[[Row], Any], prefix: str) -> None:
        self._schema_ref = schema_ref
        self._sort_key = sort_key
        self._prefix = prefix

    def setup(self) -> None:
        heap.bound_worker_heap()

    def process(
        self, element: tuple[tuple[str, int, int], Iterable[Row]]
    ) -> Iterator[dict[str, Any]]:
        (dest, shard, num_shards), rows = element
        ordered = sorted(rows, key=self._sort_key)
        path = join(dest, shard_name(shard, num_shards, self._prefix))
        yield write_rows(path, ordered, arrow_schema(self._schema_ref))


def _assign_shard(
    element: tuple[str, Row],
    counts: dict[str, int],
    rows_per_shard: int,
    sort_key: Callable[[Row], Any],
) -> tuple[tuple[str, int, int], Row]:
    dest, row = element
    num_shards = shard_count(counts[dest], rows_per_shard)
    return (dest, shard_of(sort_key(row), num_shards), num_shards), row


class WriteParquetShards(beam.PTransform):
    """``(destination_dir, row)`` -> Parquet shards; outputs a ShardInfo dict per file.

    Args:
        schema_ref: the schema every row follows (from ``schemas/``).
        sort_key: a unique, stable key of a row (e.g. its ids); orders rows inside a shard
            and places them in shards.
        rows_per_shard: target rows per shard; a destination gets ``ceil(n / rows_per_shard)``.
        prefix: file name prefix.
    """

    def __init__(
        self,
        schema_ref: SchemaRef,
        sort_key: Callable[[Row], Any],
        rows_per_shard: int = 250_000,
        prefix: str = "part",
    ) -> None:
        super().__init__()
        self._schema_ref = schema_ref
        self._sort_key = sort_key
        self._rows_per_shard = rows_per_shard
        self._prefix = prefix

    def expand(self, rows: beam.PCollection) -> beam.PCollection:
        counts = (
            rows
            | "DestOnly" >> beam.Map(lambda kv: (kv[0], 1))
            | "CountPerDest" >> beam.CombinePerKey(sum)
        )
        return (
            rows
            | "AssignShard"
            >> beam.Map(
                _assign_shard,
                counts=beam.pvalue.AsDict(counts),
                rows_per_shard=self._rows_per_shard,
                sort_key=self._sort_key,
            )
            | "GroupShard" >> beam.GroupByKey()
            | "WriteShard"
            >> beam.ParDo(_WriteShardFn(self._schema_ref, self._sort_key, self._prefix))
        )


class WriteDeadLetters(WriteParquetShards):
    """``(folder, dead-letter row)`` -> ShardInfo dicts of ``schemas/dead_letter.v1`` shards.

    Args:
        rows_per_shard: target rows per Parquet shard.
        key: a row's sort key (:func:`dead_letter_key`, :func:`extract_dead_letter_key`).
    """

    def __init__(
        self, rows_per_shard: int, key: Callable[[Mapping[str, Any]], Any] = dead_letter_key
    ) -> None:
        super().__init__(DEAD_LETTER, key, rows_per_shard)

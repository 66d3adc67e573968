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

import hashlib
import io
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from corpusforge.keys import seeded_hash
from corpusforge.schemas import SchemaRef, arrow_schema

ROW_GROUP_SIZE = 64_000
Row = dict[str, Any]


def shard_name(shard: int, num_shards: int, prefix: str = "part") -> str:
    """``part-00001-of-00004.parquet``."""
    return f"{prefix}-{shard:05d}-of-{num_shards:05d}.parquet"


def table_bytes(rows: list[Row], schema: pa.Schema) -> bytes:
    """Serialise ``rows`` (already in their final order) as one zstd Parquet file."""
    table = pa.Table.from_pylist(rows, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(
        table,
        buffer,
        compression="zstd",
        row_group_size=ROW_GROUP_SIZE,
        write_statistics=True,
    )
    return buffer.getvalue()


def write_file_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (local or URI) through a temporary name and a rename."""
    tmp = f"{path}.tmp"
    with FileSystems.create(tmp, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        f.write(data)
    if FileSystems.exists(path):
        FileSystems.delete([path])
    FileSystems.rename([tmp], [path])


def write_rows(path: str, rows: list[Row], schema: pa.Schema) -> dict[str, Any]:
    """Write one Parquet file and describe it (path, rows, bytes, sha256)."""
    data = table_bytes(rows, schema)
    write_file_atomically(path, data)
    return {
        "path": path,
        "rows": len(rows),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


class _WriteShardFn(beam.DoFn):
    def __init__(self, schema_ref: SchemaRef, sort_key: Callable[[Row], Any], prefix: str) -> None:
        self._schema_ref = schema_ref
        self._sort_key = sort_key
        self._prefix = prefix

    def process(
        self, element: tuple[tuple[str, int, int], Iterable[Row]]
    ) -> Iterator[dict[str, Any]]:
        (dest, shard, num_shards), rows = element
        ordered = sorted(rows, key=self._sort_key)
        path = FileSystems.join(dest, shard_name(shard, num_shards, self._prefix))
        yield write_rows(path, ordered, arrow_schema(self._schema_ref))


def shard_count(rows: int, rows_per_shard: int) -> int:
    """Shards of a destination with ``rows`` rows: ``ceil(rows / rows_per_shard)``, at least 1."""
    return max(1, math.ceil(rows / rows_per_shard))


def shard_of(key: Any, num_shards: int) -> int:
    """The shard of a row whose sort key is ``key``: a hash, so no order is involved."""
    return seeded_hash(0, "shard", key) % num_shards


def write_shards(
    dest: str,
    rows: list[Row],
    schema_ref: SchemaRef,
    sort_key: Callable[[Row], Any],
    rows_per_shard: int = 250_000,
    prefix: str = "part",
) -> list[dict[str, Any]]:
    """The files :class:`WriteParquetShards` writes for ``dest``, from one process.

    Same shards, same order, same bytes; nothing is written when ``rows`` is empty.
    """
    num_shards = shard_count(len(rows), rows_per_shard)
    shards: list[list[Row]] = [[] for _ in range(num_shards)]
    for row in rows:
        shards[shard_of(sort_key(row), num_shards)].append(row)
    schema = arrow_schema(schema_ref)
    return [
        write_rows(
            FileSystems.join(dest, shard_name(i, num_shards, prefix)),
            sorted(shard, key=sort_key),
            schema,
        )
        for i, shard in enumerate(shards)
        if shard
    ]


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

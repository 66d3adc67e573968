"""Where a row goes and how a shard is serialised: the rules every shard writer shares.

Both writers of Parquet shards follow them, so the same rows give the same files: the Beam
sink :class:`corpusforge.sinks.parquet.WriteParquetShards` (and the local engines'
:class:`~corpusforge.sinks.parquet.ShardedWriter`), and the columnar
:class:`corpusforge.local.shards.FrameShards`. A destination with ``n`` rows has
``ceil(n / rows_per_shard)`` shards; a row's shard is a seeded hash of its sort key; a shard
is sorted by that key and written as one zstd Parquet file with the explicit schema. No Beam
here.
"""

from __future__ import annotations

import io
import math
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from corpusforge.keys import seeded_hash

ROW_GROUP_SIZE = 64_000
Row = dict[str, Any]


def shard_name(shard: int, num_shards: int, prefix: str = "part") -> str:
    """``part-00001-of-00004.parquet``."""
    return f"{prefix}-{shard:05d}-of-{num_shards:05d}.parquet"


def shard_count(rows: int, rows_per_shard: int) -> int:
    """Shards of a destination with ``rows`` rows: ``ceil(rows / rows_per_shard)``, at least 1."""
    return max(1, math.ceil(rows / rows_per_shard))


def placement(key: Any) -> int:
    """The hash that places a row whose sort key is ``key`` (in every shard count)."""
    return seeded_hash(0, "shard", key)


def shard_of(key: Any, num_shards: int) -> int:
    """The shard of a row whose sort key is ``key``: a hash, so no order is involved."""
    return placement(key) % num_shards


def parquet_bytes(table: pa.Table) -> bytes:
    """Serialise ``table`` (its rows in their final order, its schema the explicit one) as
    one zstd Parquet file."""
    buffer = io.BytesIO()
    pq.write_table(
        table,
        buffer,
        compression="zstd",
        row_group_size=ROW_GROUP_SIZE,
        write_statistics=True,
    )
    return buffer.getvalue()


def table_bytes(rows: list[Row], schema: pa.Schema) -> bytes:
    """Serialise ``rows`` (already in their final order) as one zstd Parquet file."""
    return parquet_bytes(pa.Table.from_pylist(rows, schema=schema))

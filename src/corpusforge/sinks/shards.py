"""Where a row goes and how a shard is serialised: the rules every shard writer shares.

Both writers of Parquet shards follow them, so the same rows give the same files: the Beam
sink :class:`corpusforge.sinks.parquet.WriteParquetShards` and the local engines' columnar
:class:`corpusforge.local.shards.FrameShards`. A destination with ``n`` rows has
``ceil(n / rows_per_shard)`` shards; a row's shard is a seeded hash of its sort key; a shard
is sorted by that key and written as one zstd Parquet file with the explicit schema, landing
atomically (:func:`write_table`). No Beam here.
"""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusforge.keys import seeded_digests, seeded_hasher
from corpusforge.release import io as release_io

ROW_GROUP_SIZE = 64_000
_PARQUET: dict[str, Any] = {"compression": "zstd", "write_statistics": True}
"""How every shard is encoded, whether written whole or a row group at a time."""
Row = dict[str, Any]


def shard_name(shard: int, num_shards: int, prefix: str = "part") -> str:
    """``part-00001-of-00004.parquet``."""
    return f"{prefix}-{shard:05d}-of-{num_shards:05d}.parquet"


def shard_count(rows: int, rows_per_shard: int) -> int:
    """Shards of a destination with ``rows`` rows: ``ceil(rows / rows_per_shard)``, at least 1."""
    return max(1, math.ceil(rows / rows_per_shard))


_PLACEMENT = seeded_hasher(0, "shard")


def placement(key: Any) -> int:
    """The hash that places a row whose sort key is ``key`` (in every shard count)."""
    return _PLACEMENT(key)


def placements(keys: Iterable[Any]) -> np.ndarray:
    """:func:`placement` of each of ``keys``, by block, as a ``uint64`` array."""
    digests = seeded_digests(0, ("shard",), keys)
    return np.frombuffer(digests, dtype=">u8").astype(np.uint64)


def shard_of(key: Any, num_shards: int) -> int:
    """The shard of a row whose sort key is ``key``: a hash, so no order is involved."""
    return placement(key) % num_shards


def parquet_bytes(table: pa.Table) -> bytes:
    """Serialise ``table`` (its rows in their final order, its schema the explicit one) as
    one zstd Parquet file."""
    buffer = io.BytesIO()
    pq.write_table(table, buffer, row_group_size=ROW_GROUP_SIZE, **_PARQUET)
    return buffer.getvalue()


def table_bytes(rows: list[Row], schema: pa.Schema) -> bytes:
    """Serialise ``rows`` (already in their final order) as one zstd Parquet file."""
    return parquet_bytes(pa.Table.from_pylist(rows, schema=schema))


def write_rows(path: str, rows: list[Row], schema: pa.Schema) -> dict[str, Any]:
    """Write one Parquet file and describe it (path, rows, bytes, sha256)."""
    return write_table(path, pa.Table.from_pylist(rows, schema=schema))


def write_table(path: str, table: pa.Table) -> dict[str, Any]:
    """Write ``table`` (its rows in their final order, its schema the explicit one) as one
    Parquet file, atomically (:func:`corpusforge.release.io.write_file_atomically`), and
    describe it (path, rows, bytes, sha256)."""
    return _written(path, parquet_bytes(table), table.num_rows)


def write_row_groups(
    path: str, schema: pa.Schema, row_groups: Iterable[pa.Table]
) -> dict[str, Any]:
    """Write a shard given one row group at a time (each table ``ROW_GROUP_SIZE`` rows of
    ``schema``, the last fewer, the rows in their final order), atomically, and describe it
    as :func:`write_table` does.

    The bytes are those :func:`write_table` gives for the row groups' concatenation (each
    row group is encoded alone either way), but only one row group is held besides the
    encoded file: how the local engine writes a shard without a sorted copy of it.
    """
    buffer = io.BytesIO()
    rows = 0
    with pq.ParquetWriter(buffer, schema, **_PARQUET) as writer:
        for table in row_groups:
            writer.write_table(table, row_group_size=ROW_GROUP_SIZE)
            rows += table.num_rows
            del table  # not held while the next row group is made
    return _written(path, buffer.getvalue(), rows)


def _written(path: str, data: bytes, rows: int) -> dict[str, Any]:
    release_io.write_file_atomically(path, data)
    return {
        "path": path,
        "rows": rows,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }

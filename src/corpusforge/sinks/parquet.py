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
import operator
import os
import pickle
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from corpusforge.schemas import SchemaRef, arrow_schema
from corpusforge.sinks.shards import (
    ROW_GROUP_SIZE,
    Row,
    shard_count,
    shard_name,
    shard_of,
    table_bytes,
)

__all__ = [
    "ROW_GROUP_SIZE",
    "ShardedWriter",
    "WriteParquetShards",
    "shard_count",
    "shard_name",
    "shard_of",
    "table_bytes",
    "write_file_atomically",
    "write_rows",
]


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


class ShardedWriter:
    """Rows of many destinations -> the files :class:`WriteParquetShards` writes, from one
    process, holding a bounded number of rows.

    Rows are kept in memory until ``buffer_rows`` of them are held; then every buffer goes
    to a run file under ``spill`` (pickled value tuples) and memory is free again. When
    :meth:`close` is called each destination's row count is known, which fixes its number
    of shards: a destination still wholly in memory is split and written at once; one with
    runs on disk has its runs split into one file per shard, and each shard is then read,
    sorted and written alone. The files are those of :class:`WriteParquetShards`, byte for
    byte, whatever ``buffer_rows`` is.

    Args:
        schema_ref: the schema every row follows (from ``schemas/``).
        sort_key: a unique, stable key of a row; orders rows inside a shard and places them.
        rows_per_shard: target rows per shard; a destination gets ``ceil(n / rows_per_shard)``.
        spill: a folder for run files, or ``None`` to keep every row in memory.
        buffer_rows: rows held in memory before they are spilled; required with ``spill``
            (the callers' budgets are in :mod:`corpusforge.local.spill`).
        prefix: file name prefix.
    """

    def __init__(
        self,
        schema_ref: SchemaRef,
        sort_key: Callable[[Row], Any],
        rows_per_shard: int = 250_000,
        *,
        spill: str | None = None,
        buffer_rows: int | None = None,
        prefix: str = "part",
    ) -> None:
        if spill is not None and (buffer_rows is None or buffer_rows < 1):
            raise ValueError(f"buffer_rows must be >= 1 with a spill folder, got {buffer_rows}")
        self._schema = arrow_schema(schema_ref)
        self._names = tuple(self._schema.names)
        getter = operator.itemgetter(*self._names)
        self._values: Callable[[Row], tuple[Any, ...]] = (
            getter if len(self._names) > 1 else lambda row: (getter(row),)
        )
        self._sort_key = sort_key
        self._rows_per_shard = rows_per_shard
        self._spill = spill
        self._buffer_rows = buffer_rows or 0  # read only with a spill folder
        self._prefix = prefix
        self._buffers: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        self._held = 0
        self._counts: Counter[str] = Counter()
        self._runs: dict[str, list[str]] = defaultdict(list)
        self._ids: dict[str, int] = {}

    def add(self, dest: str, row: Row) -> None:
        """Add ``row`` (a mapping with the schema's fields) to destination folder ``dest``."""
        self._buffers[dest].append(self._values(row))
        self._counts[dest] += 1
        self._held += 1
        if self._spill is not None and self._held >= self._buffer_rows:
            for name in list(self._buffers):
                self._spill_buffer(name)

    def close(self) -> list[dict[str, Any]]:
        """Write every destination's shards; a ShardInfo dict per file, by destination."""
        files: list[dict[str, Any]] = []
        for dest in sorted(self._counts):
            num_shards = shard_count(self._counts[dest], self._rows_per_shard)
            if self._runs.get(dest):
                self._spill_buffer(dest)
                shards: Iterable[list[Row]] = self._spilled_shards(dest, num_shards)
            else:
                shards = self._split(self._buffers.pop(dest, []), num_shards)
            for shard, rows in enumerate(shards):
                if rows:
                    path = FileSystems.join(dest, shard_name(shard, num_shards, self._prefix))
                    rows.sort(key=self._sort_key)
                    files.append(write_rows(path, rows, self._schema))
        return files

    def _rows(self, values: Iterable[tuple[Any, ...]]) -> list[Row]:
        names = self._names
        return [dict(zip(names, v, strict=True)) for v in values]

    def _split(self, values: list[tuple[Any, ...]], num_shards: int) -> list[list[Row]]:
        shards: list[list[Row]] = [[] for _ in range(num_shards)]
        for row in self._rows(values):
            shards[shard_of(self._sort_key(row), num_shards)].append(row)
        values.clear()
        return shards

    def _file(self, dest: str, name: str) -> str:
        assert self._spill is not None
        dest_id = self._ids.setdefault(dest, len(self._ids))
        return os.path.join(self._spill, f"{dest_id}-{name}.pickle")

    def _spill_buffer(self, dest: str) -> None:
        values = self._buffers.pop(dest, [])
        if not values:
            return
        path = self._file(dest, f"run{len(self._runs[dest])}")
        with open(path, "wb") as f:
            pickle.dump(values, f, protocol=pickle.HIGHEST_PROTOCOL)
        self._runs[dest].append(path)
        self._held -= len(values)

    def _spilled_shards(self, dest: str, num_shards: int) -> Iterator[list[Row]]:
        """Split ``dest``'s runs into a file per shard, then read the shards one by one."""
        for run in self._runs.pop(dest):
            with open(run, "rb") as f:
                values = pickle.load(f)
            os.remove(run)
            parts: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
            for v, row in zip(values, self._rows(values), strict=True):
                parts[shard_of(self._sort_key(row), num_shards)].append(v)
            del values
            for shard, part in parts.items():
                with open(self._file(dest, f"shard{shard}"), "ab") as f:
                    pickle.dump(part, f, protocol=pickle.HIGHEST_PROTOCOL)
        for shard in range(num_shards):
            path = self._file(dest, f"shard{shard}")
            if not os.path.exists(path):
                yield []
                continue
            values = []
            with open(path, "rb") as f:
                while True:
                    try:
                        values += pickle.load(f)
                    except EOFError:
                        break
            os.remove(path)
            yield self._rows(values)


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

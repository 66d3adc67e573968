"""Polars frames of rows -> the Parquet shards the Beam sink writes, byte for byte, in bounded
memory.

:class:`FrameShards` is the local engine's writer: it takes whole frames of rows for a
destination folder, keeps them in an Arrow file per destination on local disk, and once every
row is in (so each destination's row count, and so its number of shards, is known) writes
each destination's shards by the rules of :mod:`corpusforge.sinks.shards`: a row's shard is
the seeded hash of its sort key, a shard is sorted by that key and written with the explicit
schema. Sorting is polars' (strings compare as UTF-8 bytes, which is code-point order, as
Python compares them), so the files equal those of
:class:`~corpusforge.sinks.parquet.WriteParquetShards` for the same rows. Memory holds one
shard at a time (``rows_per_shard`` rows), or one batch of a destination while it is split.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.ipc

from corpusforge.schemas import SchemaRef, arrow_schema
from corpusforge.sinks.shards import shard_count, shard_name, shard_of, write_table

SortKey = Callable[[tuple[Any, ...]], Any]
KEY_ROWS = 50_000
"""Rows whose sort keys are made Python values at once, to place them in shards."""


class FrameShards:
    """(destination folder, frame) -> Parquet shards, as :class:`WriteParquetShards` writes.

    Args:
        schema_ref: the schema of the files (its columns are taken from each frame).
        sort_columns: the columns whose values, in this order, order a shard's rows; they
            must be unique within a destination.
        rows_per_shard: target rows per shard.
        spill: a local folder of its own for the Arrow files (made if it does not exist).
        placement: a column holding each row's ``seeded_hash(0, "shard", sort key)``,
            computed where the rows were made (the local engine's workers), so placing a row
            is a vectorised modulo; ``None`` computes it here, row by row, from ``sort_key``.
        sort_key: without ``placement``, the sort key as the Beam sink computes it from the
            values of ``sort_columns`` (its ``str`` places a row in a shard); ``None``: the
            tuple of those values.
    """

    def __init__(
        self,
        schema_ref: SchemaRef,
        sort_columns: list[str],
        rows_per_shard: int,
        spill: str,
        *,
        placement: str | None = None,
        sort_key: SortKey | None = None,
    ) -> None:
        self._schema = arrow_schema(schema_ref)
        self._names = list(self._schema.names)
        extra = [placement] if placement else []
        self._columns = list(dict.fromkeys([*self._names, *sort_columns, *extra]))
        self._placement = placement
        self._sort_columns = sort_columns
        self._sort_key = sort_key
        self._rows_per_shard = rows_per_shard
        self._spill = spill
        os.makedirs(spill, exist_ok=True)
        self._counts: Counter[str] = Counter()
        self._writers: dict[str, pa.ipc.RecordBatchFileWriter] = {}
        self._paths: dict[str, str] = {}

    def add(self, dest: str, frame: pl.DataFrame) -> None:
        """Add ``frame``'s rows (the schema's columns and the sort columns) to ``dest``."""
        if not frame.height:
            return
        table = frame.select(self._columns).to_arrow()
        writer = self._writers.get(dest)
        if writer is None:
            path = os.path.join(self._spill, f"dest-{len(self._paths)}.arrow")
            self._paths[dest] = path
            writer = self._writers[dest] = pa.ipc.new_file(path, table.schema)
        writer.write_table(table)
        self._counts[dest] += frame.height

    def close(self) -> list[dict[str, Any]]:
        """Write every destination's shards; a ShardInfo dict per file, by destination."""
        for writer in self._writers.values():
            writer.close()
        files: list[dict[str, Any]] = []
        for dest in sorted(self._counts):
            num_shards = shard_count(self._counts[dest], self._rows_per_shard)
            for shard, frame in enumerate(self._shards(dest, num_shards)):
                if frame.height:
                    path = os.path.join(dest, shard_name(shard, num_shards))
                    # one copy of the shard at a time: each is let go once the next is made
                    frame = frame.sort(self._sort_columns).select(self._names)
                    table = frame.to_arrow()
                    del frame
                    table = self._typed(table)
                    files.append(write_table(path, table))
                    del table
            os.remove(self._paths[dest])
        return files

    def _frames(self, path: str) -> Iterator[pl.DataFrame]:
        with pa.OSFile(path) as source:  # read a batch at a time, not mapped
            reader = pa.ipc.open_file(source)
            for i in range(reader.num_record_batches):
                frame = pl.from_arrow(reader.get_batch(i))
                assert isinstance(frame, pl.DataFrame)
                yield frame

    def _shards(self, dest: str, num_shards: int) -> Iterator[pl.DataFrame]:
        """``dest``'s rows split into its shards, one shard in memory at a time."""
        frames = self._frames(self._paths[dest])
        if num_shards == 1:
            yield pl.concat(list(frames))
            return
        parts = [f"{self._paths[dest]}.{shard}" for shard in range(num_shards)]
        writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
        for frame in (f.slice(at, KEY_ROWS) for f in frames for at in range(0, f.height, KEY_ROWS)):
            if self._placement:
                placed = frame.with_columns((pl.col(self._placement) % num_shards).alias("_shard"))
            else:
                keys = zip(*(frame[c].to_list() for c in self._sort_columns), strict=True)
                key = self._sort_key or tuple
                placed = frame.with_columns(
                    pl.Series("_shard", [shard_of(key(k), num_shards) for k in keys])
                )
            for (shard,), part in placed.partition_by("_shard", as_dict=True).items():
                table = part.drop("_shard").to_arrow()
                writer = writers.get(int(shard))
                if writer is None:
                    s = int(shard)
                    writer = writers[s] = pa.ipc.new_file(parts[s], table.schema)
                writer.write_table(table)
        for writer in writers.values():
            writer.close()
        for shard, path in enumerate(parts):
            if shard not in writers:
                yield pl.DataFrame()
                continue
            yield pl.concat(list(self._frames(path)))
            os.remove(path)

    def _typed(self, table: pa.Table) -> pa.Table:
        """``table`` (the schema's columns, as polars made them) in the schema's types."""
        return pa.Table.from_arrays(
            [table.column(i).cast(f.type).combine_chunks() for i, f in enumerate(self._schema)],
            schema=self._schema,
        )

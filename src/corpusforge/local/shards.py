"""Polars frames of rows -> the Parquet shards the Beam sink writes, byte for byte, in bounded
memory.

:class:`FrameShards` is the local engine's writer: it takes whole frames of rows for a
destination folder, keeps them in an Arrow file per destination on local disk, and once every
row is in (so each destination's row count, and so its number of shards, is known) writes
each destination's shards by the rules of :mod:`corpusforge.sinks.shards`: a row's shard is
the seeded hash of its sort key, a shard is sorted by that key and written with the explicit
schema. A destination whose row count is declared first (:meth:`FrameShards.declare`) has
its rows put straight into an Arrow file per shard as they come, not split at the end.
Sorting is Arrow's (strings compare as UTF-8 bytes, which is code-point order, as Python
compares them), so the files equal those of
:class:`~corpusforge.sinks.parquet.WriteParquetShards` for the same rows. Memory holds one
shard at a time, or ``threads`` (``rows_per_shard`` rows each, as read, unsorted) with its
order and one Parquet row group of it sorted
(:func:`~corpusforge.sinks.shards.write_row_groups`), or one batch of a destination while
it is split.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc

from corpusforge.local.spill import ArrowFiles, by_partition, read_arrow
from corpusforge.schemas import SchemaRef, arrow_schema
from corpusforge.sinks.shards import (
    ROW_GROUP_SIZE,
    shard_count,
    shard_name,
    shard_of,
    write_row_groups,
)

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
        threads: shards written at once by :meth:`close`, each with its rows in memory.
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
        threads: int = 1,
    ) -> None:
        self._schema = arrow_schema(schema_ref)
        self._names = list(self._schema.names)
        extra = [placement] if placement else []
        self._columns = list(dict.fromkeys([*self._names, *sort_columns, *extra]))
        self._placement = placement
        self._sort_columns = sort_columns
        self._sort_key = sort_key
        self._rows_per_shard = rows_per_shard
        self._threads = threads
        self._spill = spill
        os.makedirs(spill, exist_ok=True)
        self._counts: Counter[str] = Counter()
        self._paths: dict[str, str] = {}
        self._files: ArrowFiles[str] = ArrowFiles(self._path)
        self._declared: dict[str, int] = {}
        self._by_shard: ArrowFiles[tuple[str, int]] = ArrowFiles(
            lambda key: f"{self._path(key[0])}.{key[1]}"
        )

    def declare(self, dest: str, rows: int) -> None:
        """Say that ``dest`` will get exactly ``rows`` rows (before any is added): its rows
        then go straight to their shards' files as they are added, and :meth:`close` only
        sorts and writes each shard (no second pass splitting ``dest``'s rows). Needs
        ``placement``; :meth:`close` fails if another number of rows came."""
        assert self._placement and dest not in self._counts, dest
        self._declared[dest] = rows

    def add(self, dest: str, frame: pl.DataFrame) -> None:
        """Add ``frame``'s rows (the schema's columns and the sort columns) to ``dest``."""
        if not frame.height:
            return
        self._counts[dest] += frame.height
        if dest in self._declared:
            self._add_to_shards(dest, frame.select(self._columns))
            return
        self._files.write(dest, self._compact(frame.select(self._columns).to_arrow()))

    def _path(self, dest: str) -> str:
        """``dest``'s Arrow file (its shards' files: ``.<shard>`` after it)."""
        path = self._paths.get(dest)
        if path is None:
            path = self._paths[dest] = os.path.join(self._spill, f"dest-{len(self._paths)}.arrow")
        return path

    def _add_to_shards(self, dest: str, frame: pl.DataFrame) -> None:
        """``frame``'s rows appended to their shards' files (a declared ``dest``), split by
        polars (a third of the CPU of Arrow's ``take`` on polars' chunks)."""
        num_shards = shard_count(self._declared[dest], self._rows_per_shard)
        assert self._placement
        shard_of_row = (pl.col(self._placement) % num_shards).alias("_shard")
        parts = frame.with_columns(shard_of_row).partition_by("_shard", as_dict=True)
        for (shard,), part in sorted(parts.items()):
            self._by_shard.write((dest, shard), self._compact(part.drop("_shard").to_arrow()))

    def close(self) -> list[dict[str, Any]]:
        """Write every destination's shards; a ShardInfo dict per file, by destination."""
        self._files.close()
        self._by_shard.close()
        for dest, rows in self._declared.items():
            if self._counts[dest] != rows:
                raise RuntimeError(f"{dest}: {self._counts[dest]} rows added, {rows} declared")
        files: list[dict[str, Any]] = []
        # Arrow reads, sorts, takes and encodes without the GIL: threads use as many cores
        with ThreadPoolExecutor(self._threads) as pool:
            for dest in sorted(self._counts):
                num_shards = shard_count(self._counts[dest], self._rows_per_shard)
                shards, sources = zip(*self._shard_files(dest, num_shards), strict=True)
                write = functools.partial(self._write_shard, dest, num_shards)
                files.extend(pool.map(write, shards, sources))
        return files

    def _write_shard(self, dest: str, num_shards: int, shard: int, source: str) -> dict[str, Any]:
        """Shard ``shard`` of ``dest`` from its rows' Arrow file ``source`` (then removed)."""
        table = read_arrow(source)
        path = os.path.join(dest, shard_name(shard, num_shards))
        written = write_row_groups(path, self._schema, self._row_groups(table))
        del table
        os.remove(source)
        # Arrow's allocator (mimalloc) keeps freed pages for reuse; give them back, or the
        # process holds about one more shard's worth for the rest of the build
        pa.default_memory_pool().release_unused()
        return written

    def _row_groups(self, table: pa.Table) -> Iterator[pa.Table]:
        """``table``'s rows sorted by the sort columns, a Parquet row group at a time, in the
        schema's columns and types: only the order and one row group are made, never a sorted
        copy of the shard. Nulls sort first, as in polars; the key is unique, so no tie."""
        keys = [(c, "ascending", "at_start") for c in self._sort_columns]
        order = pc.sort_indices(table.select(self._sort_columns), sort_keys=keys)
        rows = table.select(self._names)
        pool = pa.default_memory_pool()
        for at in range(0, len(order), ROW_GROUP_SIZE):
            yield self._typed(rows.take(order.slice(at, ROW_GROUP_SIZE)))
            pool.release_unused()

    def _batches(self, path: str) -> Iterator[pa.RecordBatch]:
        with pa.OSFile(path) as source:  # read a batch at a time, not mapped
            reader = pa.ipc.open_file(source)
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)

    def _shard_files(self, dest: str, num_shards: int) -> list[tuple[int, str]]:
        """``(shard, Arrow file of its rows)`` for each shard of ``dest`` that has rows: a
        declared destination's files as they were written, else ``dest``'s file split."""
        path = self._paths[dest]
        if dest in self._declared:
            return [(s, f"{path}.{s}") for d, s in self._by_shard.written() if d == dest]
        if num_shards == 1:
            return [(0, path)]
        parts = [f"{path}.{shard}" for shard in range(num_shards)]
        written = self._split(path, parts)
        os.remove(path)
        return [(shard, parts[shard]) for shard in written]

    def _split(self, path: str, parts: list[str]) -> list[int]:
        """The rows of the Arrow file ``path`` -> one Arrow file per shard (``parts``), a
        batch of ``KEY_ROWS`` at a time; the shards that have rows, in order."""
        num_shards = len(parts)
        files: ArrowFiles[int] = ArrowFiles(parts.__getitem__)
        batches = self._batches(path)
        for batch in (b.slice(at, KEY_ROWS) for b in batches for at in range(0, len(b), KEY_ROWS)):
            if self._placement:
                place = batch.column(self._placement).to_numpy()
                shards = (place % np.uint64(num_shards)).astype(np.int64)
            else:
                keys = zip(*(batch.column(c).to_pylist() for c in self._sort_columns), strict=True)
                key = self._sort_key or tuple
                shards = np.array([shard_of(key(k), num_shards) for k in keys], dtype=np.int64)
            for s, part in by_partition(pa.Table.from_batches([batch]), shards, num_shards):
                files.write(s, part)
        files.close()
        return files.written()

    def _compact(self, table: pa.Table) -> pa.Table:
        """``table`` (as polars made it) with the schema's columns in the schema's types and
        its other large strings as strings: a shard is read back smaller, and its row groups
        need no second copy to take the schema's types."""
        types = {f.name: f.type for f in self._schema}
        columns = []
        for name, column in zip(table.column_names, table.columns, strict=True):
            kind = types.get(name, column.type)
            columns.append(column.cast(pa.string() if pa.types.is_large_string(kind) else kind))
        return pa.table(columns, names=table.column_names)

    def _typed(self, table: pa.Table) -> pa.Table:
        """``table`` (the schema's columns) in the schema's types, one chunk a column."""
        return pa.Table.from_arrays(
            [table.column(i).cast(f.type).combine_chunks() for i, f in enumerate(self._schema)],
            schema=self._schema,
        )

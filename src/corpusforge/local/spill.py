"""Rows -> Arrow files by key-space partition, from any number of processes: the local
engines' spill.

What Beam would group with a ``GroupByKey`` (a tweet's records by id, delete notices by id),
the local engines group by writing rows to one Arrow file per partition of the key space
(:func:`partition_of`, a stable integer mix: every record of one id lands in one partition)
and reading one partition back at a time with polars. Each writing process owns its own files
(``<name>-<writer>.p<partition>.arrow``), so worker processes never share a file; a
partition is the union of every writer's file for it. Memory is one batch per writer while
writing and one partition while reading, whatever the input's size. Writing uses NumPy and
Arrow only, never polars, whose thread pool does not survive a ``fork``: writers run in
forked workers.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.ipc

PAIR_SPILL_ROWS = 50_000
"""Chosen pairs the local pair stage groups and appends to its files under ``_staging/`` at a
time (a partition's pairs arrive as one Arrow table). A memory bound only: what is written
does not depend on it."""


def partition_of(ids: np.ndarray, partitions: int) -> np.ndarray:
    """The partition of each id (a stable integer mix, the same on every machine)."""
    x = ids.astype(np.uint64, copy=True)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return (x % np.uint64(partitions)).astype(np.int64)


class PartitionWriter:
    """One process's rows of one kind -> an Arrow file per partition of their ``key``.

    Args:
        folder: the spill folder every writer of this kind shares.
        name: the kind of rows (``records``, ``deletes``); part of the file names.
        writer: this writer's number, unique among the processes writing ``name``.
        partitions: key-space partitions.
        key: the int64 column partitioned on.
    """

    def __init__(self, folder: str, name: str, writer: int, partitions: int, key: str) -> None:
        self._prefix = os.path.join(folder, f"{name}-{writer:04d}")
        self._partitions = partitions
        self._key = key
        self._writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}

    def add(self, table: pa.Table) -> None:
        """Append ``table``'s rows, each to its key's partition, in their order."""
        if not table.num_rows:
            return
        if self._partitions == 1:
            self._write(0, table)
            return
        parts = partition_of(table.column(self._key).to_numpy(), self._partitions)
        order = np.argsort(parts, kind="stable")
        ordered = table.take(pa.array(order))
        bounds = np.searchsorted(parts[order], np.arange(self._partitions + 1))
        for p in range(self._partitions):
            if bounds[p + 1] > bounds[p]:
                self._write(p, ordered.slice(bounds[p], bounds[p + 1] - bounds[p]))

    def _write(self, p: int, table: pa.Table) -> None:
        writer = self._writers.get(p)
        if writer is None:
            path = f"{self._prefix}.p{p:05d}.arrow"
            writer = self._writers[p] = pa.ipc.new_file(path, table.schema)
        writer.write_table(table)

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()


def read_partition(folder: str, name: str, p: int) -> pl.DataFrame | None:
    """Partition ``p`` of the rows every writer of ``name`` spilled to ``folder`` (in writer
    order), or ``None`` if no row fell in it. Its files are removed once read."""
    frames = []
    for table in read_tables(folder, name, p):
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        frames.append(frame)
    return pl.concat(frames, rechunk=False) if frames else None


def read_tables(folder: str, name: str, p: int) -> list[pa.Table]:
    """Partition ``p`` of ``name`` as Arrow tables, a table per writer, for processes that may
    fork (no polars). Its files are removed once read."""
    tables = []
    for path in sorted(glob.glob(os.path.join(folder, f"{name}-*.p{p:05d}.arrow"))):
        tables.append(read_arrow(path))
        os.remove(path)
    return tables


def read_arrow(path: str) -> pa.Table:
    """A whole Arrow file, read, not mapped: memory is what is held."""
    with pa.OSFile(path) as source:
        return pa.ipc.open_file(source).read_all()


def write_arrow(path: str, table: pa.Table, batch_rows: int | None = None) -> None:
    """``table`` as one Arrow file (record batches of at most ``batch_rows`` rows)."""
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=batch_rows)


def read_all(folder: str, name: str) -> Iterator[pl.DataFrame]:
    """Every partition of ``name`` in ``folder``, one at a time."""
    found = glob.glob(os.path.join(folder, f"{name}-*.p*.arrow"))
    for p in sorted({int(path.rsplit(".p", 1)[1].split(".")[0]) for path in found}):
        frame = read_partition(folder, name, p)
        if frame is not None:
            yield frame

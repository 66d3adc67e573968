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
import sys
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.ipc

PAIR_SPILL_ROWS = 50_000
"""Chosen pairs the local pair stage groups and appends to its files under ``_staging/`` at a
time (a partition's pairs arrive as one Arrow table). A memory bound only: what is written
does not depend on it."""
TEXT_PREFIX_BYTES = 16
"""Bytes of a text key that place it in a partition (:func:`text_partitions`)."""


def partition_of(ids: np.ndarray, partitions: int) -> np.ndarray:
    """The partition of each id (a stable integer mix, the same on every machine)."""
    x = ids.astype(np.uint64, copy=True)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return (x % np.uint64(partitions)).astype(np.int64)


def pyarrow_without_pandas() -> None:
    """Have pyarrow decide here, once, that no value it converts is a pandas object, without
    importing pandas: this process and the workers it forks then never import it.

    pyarrow's first conversion of Python values (``pa.array``, ``Table.from_pylist``) or
    first compute call (``Table.take``) imports pandas, when installed, only to ask whether
    the values are pandas objects, and remembers the answer; nothing in corpusforge makes a
    pandas object, so none can be one while pandas is not imported. The import costs about
    0.2-0.4 s of CPU in each process that makes it (the Twitter read workers, issue 38's
    fourth session; the bitext filter workers and the spill, its sixth). An explicit pandas
    call (``Table.to_pandas``) still imports it then. The values converted are the same
    either way.
    """
    if "pandas" in sys.modules:  # already imported: pyarrow will see it for free
        return
    sys.meta_path.insert(0, _NoPandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(_NoPandas)


class _NoPandas:
    """An import finder that has ``import pandas`` fail (pyarrow's own import of it skips
    ``None`` in ``sys.modules``)."""

    @staticmethod
    def find_spec(name: str, *args: object) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("not imported for pyarrow's check", name=name)
        return None


def text_partitions(texts: pa.Array | pa.ChunkedArray, partitions: int) -> np.ndarray:
    """The partition of each of ``texts`` (non-null strings), from its first
    ``TEXT_PREFIX_BYTES`` bytes only (mixed as :func:`partition_of` mixes an id): made for
    keys that are hashes in hex, such as dedup keys. Vectorised over Arrow's buffers."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    assert texts.null_count == 0, "text partitions of nulls"
    n = len(texts)
    width = np.int32 if pa.types.is_string(texts.type) else np.int64
    _, offsets_buffer, data_buffer = texts.buffers()
    window = slice(texts.offset, texts.offset + n + 1)
    offsets = np.frombuffer(offsets_buffer, dtype=width)[window].astype(np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer else np.zeros(0, np.uint8)
    at = np.arange(TEXT_PREFIX_BYTES)
    inside = at < (offsets[1:] - offsets[:-1])[:, None]
    prefixes = np.zeros((n, TEXT_PREFIX_BYTES), dtype=np.uint8)
    prefixes[inside] = data[(offsets[:-1, None] + at)[inside]]
    words = prefixes.view("<u8")  # (n, 2): a 16-byte prefix as two 64-bit words
    return partition_of(words[:, 0] * np.uint64(0x9E3779B97F4A7C15) + words[:, 1], partitions)


def by_partition(
    table: pa.Table, parts: np.ndarray, partitions: int
) -> Iterator[tuple[int, pa.Table]]:
    """``table``'s rows of each partition (``parts``: each row's), in their order, for each
    partition that has rows."""
    order = np.argsort(parts, kind="stable")
    ordered = table.take(pa.array(order))
    bounds = np.searchsorted(parts[order], np.arange(partitions + 1))
    for p in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist():
        yield p, ordered.slice(bounds[p], bounds[p + 1] - bounds[p])


K = TypeVar("K", bound=Hashable)


class ArrowFiles(Generic[K]):
    """Tables -> one Arrow file per key, each opened at its first table: how every spill
    here writes its files.

    Args:
        path: the file of a key.
        schema: every file's schema; ``None``: each file takes its first table's.
    """

    def __init__(self, path: Callable[[K], str], schema: pa.Schema | None = None) -> None:
        self._path = path
        self._schema = schema
        self._files: dict[K, pa.ipc.RecordBatchFileWriter | None] = {}  # None: closed

    def write(self, key: K, rows: pa.Table | pa.RecordBatch) -> None:
        """Append ``rows`` to ``key``'s file.

        Raises:
            ValueError: the file was closed.
        """
        writer = self._files.get(key)
        if writer is None:
            if key in self._files:
                raise ValueError(f"{self._path(key)}: written to once closed")
            writer = pa.ipc.new_file(self._path(key), self._schema or rows.schema)
            self._files[key] = writer
        writer.write(rows)

    def written(self) -> list[K]:
        """The keys written to, in order (also once closed)."""
        return sorted(self._files)  # type: ignore[type-var]

    def close(self) -> None:
        """Close every file (each is then a whole Arrow file); again, nothing."""
        for key, writer in self._files.items():
            if writer is not None:
                writer.close()
                self._files[key] = None


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
        prefix = os.path.join(folder, f"{name}-{writer:04d}")
        self._partitions = partitions
        self._key = key
        self._files: ArrowFiles[int] = ArrowFiles(lambda p: f"{prefix}.p{p:05d}.arrow")

    def add(self, table: pa.Table) -> None:
        """Append ``table``'s rows, each to its key's partition, in their order."""
        if not table.num_rows:
            return
        if self._partitions == 1:
            self._files.write(0, table)
            return
        parts = partition_of(table.column(self._key).to_numpy(), self._partitions)
        for p, rows in by_partition(table, parts, self._partitions):
            self._files.write(p, rows)

    def close(self) -> None:
        self._files.close()


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


def read_arrow(path: str, columns: list[str] | None = None) -> pa.Table:
    """A whole Arrow file, read, not mapped: memory is what is held; or only its
    ``columns``, mapped, so only theirs are read."""
    if columns is not None:
        return pa.ipc.open_file(pa.memory_map(path)).read_all().select(columns)
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

"""Chosen Twitter pairs and benchmark candidates -> the rows the local pair stage keeps, in
bounded memory.

Two collectors of the local pair engine (:mod:`corpusforge.local.pairs`), each exact over
partitions of the input: :class:`PairRows` deduplicates the chosen pair rows per text (and
samples them with ``pairs_per_dataset``) with polars, over groups of rows in Arrow files;
:class:`BenchmarkChoice` chooses each benchmark's queries and negatives partition by
partition, as over the whole input, holding its negatives as Arrow columns. Both keep only
bounded sets.
"""

from __future__ import annotations

import heapq
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from corpusforge.local.spill import ArrowFiles
from corpusforge.pairing.benchmarks import (
    BenchmarkConfig,
    PoolItem,
    QueryCandidate,
    assemble,
    held_out_items,
    held_out_sets,
    pool_items,
    query_candidates,
    rank_key,
)
from corpusforge.pairing.conversations import (
    CHILDREN_PER_PAIR,
    Conversation,
    DropReason,
    HeldOut,
    Node,
    duplicate_rank,
    sample_key,
)
from corpusforge.schemas import PAIR, arrow_schema

T = TypeVar("T")
SMALLEST_SLACK = 1024  # items a Smallest holds beyond 2 n before it trims


PAIR_COLUMNS = arrow_schema(PAIR).names
RANKS = pa.schema([("_dup", pa.uint64()), ("_sample", pa.uint64())])
DUP_ORDER = ["_dup", "root_id", "anchor_id", "positive_id"]
"""A pair's rank among identical texts (:func:`duplicate_rank`, then its ids, which never
decide: a root gives one pair per dataset): the first is kept."""
SAMPLE_ORDER = ["_sample", "anchor_id", "positive_id"]
"""A pair's order in ``pairs_per_dataset`` sampling (:func:`sample_key`): the first are kept."""
TEXTS = ["dataset", "anchor", "positive"]


def pair_table(rows: list[dict[str, Any]], seed: int) -> pa.Table:
    """``pair.v1`` rows -> an Arrow table of them with their duplicate rank and sample key
    (:data:`RANKS`), in their order (Arrow only: pair workers make it; they never use
    polars)."""
    ranks = {
        "_dup": [duplicate_rank(seed, row)[0] for row in rows],
        "_sample": [sample_key(seed, row)[0] for row in rows],
    }
    table = pa.Table.from_pylist(rows, schema=arrow_schema(PAIR))
    for name, values in ranks.items():
        table = table.append_column(RANKS.field(name), pa.array(values, pa.uint64()))
    return table


class PairRows:
    """The chosen pair rows, deduplicated per text and sampled with polars, in bounded memory.

    Rows come as tables made by :func:`pair_table` (each row with its duplicate rank and
    sample key), where they were chosen; each row is appended, ``buffer_rows`` rows at a
    time, to one of ``groups`` Arrow files by a hash of its (dataset, anchor, positive)
    texts, so every duplicate of a pair is in its group. :meth:`finish` deduplicates each
    group alone, exactly, one group in memory at a time (a group holds at most the pairs of
    a pair-stage partition's roots), and fixes the sample. The hash decides only which rows
    are compared with which, never which row is kept.

    :meth:`frames` gives the kept rows (the ``pair.v1`` columns and the two ranks), a frame
    per group, after :meth:`finish`; iterating gives them as dicts.
    """

    def __init__(self, groups: int, spill: str, buffer_rows: int) -> None:
        self._n = groups
        self._spill = spill
        self._buffer_rows = buffer_rows
        self._schema = pa.unify_schemas([arrow_schema(PAIR), RANKS])
        self._files: ArrowFiles[int] = ArrowFiles(self._path, self._schema)
        self._kept: pl.DataFrame | None = None  # the sample's keys, with pairs_per_dataset

    def add(self, table: pa.Table) -> None:
        """Add the rows of a :func:`pair_table`, in their order."""
        for start in range(0, table.num_rows, self._buffer_rows):
            self._group(table.slice(start, self._buffer_rows))

    def _group(self, table: pa.Table) -> None:
        """Append ``table``'s rows to the file of their group."""
        if self._n == 1:
            self._write(0, table)
            return
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        group = (pl.struct(TEXTS).hash(seed=0) % self._n).alias("_group")
        parts = frame.with_columns(group).partition_by("_group", as_dict=True, include_key=False)
        for (g,), part in parts.items():
            self._write(int(g), part.to_arrow())

    def _write(self, g: int, table: pa.Table) -> None:
        self._files.write(g, table.cast(self._schema))

    def _path(self, g: int, kind: str = "rows") -> str:
        return os.path.join(self._spill, f"pairs-{kind}-{g}.arrow")

    def finish(self, pairs_per_dataset: int | None, counts: Counter[str]) -> None:
        """Deduplicate every group (counting the drops) and fix the sample, if any; each
        group's file is replaced by its kept rows."""
        self._files.close()
        samples = []
        for g in range(self._n):
            if not os.path.exists(self._path(g)):
                continue
            frame = pl.read_ipc(self._path(g))
            os.remove(self._path(g))
            deduped = frame.sort(DUP_ORDER).unique(TEXTS, keep="first", maintain_order=True)
            before = dict(_per_dataset(frame))
            del frame
            deduped.write_ipc(self._path(g, "kept"))
            for dataset, n in _per_dataset(deduped):
                _count_drops(dataset, before[dataset] - n, counts)
                key = "rows" if pairs_per_dataset is None else "deduped"
                counts[f"pairs.{dataset}.{key}"] += n
            if pairs_per_dataset is not None:
                samples.append(_smallest(deduped, pairs_per_dataset))
        if pairs_per_dataset is not None and samples:
            self._kept = _smallest(pl.concat(samples), pairs_per_dataset)
            for dataset, n in _per_dataset(self._kept):
                counts[f"pairs.{dataset}.rows"] += n

    def frames(self) -> Iterator[pl.DataFrame]:
        """The kept rows, a frame per group (after :meth:`finish`; again until closed)."""
        for g in range(self._n):
            path = self._path(g, "kept")
            if not os.path.exists(path):
                continue
            frame = pl.read_ipc(path)
            if self._kept is not None:
                frame = frame.join(self._kept, on=["dataset", *SAMPLE_ORDER], how="semi")
            yield frame

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for frame in self.frames():
            yield from frame.select(PAIR_COLUMNS).iter_rows(named=True)


def _per_dataset(frame: pl.DataFrame) -> list[tuple[str, int]]:
    """(dataset, rows) of ``frame``, by dataset."""
    return [(d, n) for d, n in frame.group_by("dataset").len().sort("dataset").iter_rows()]


def _count_drops(dataset: str, dropped: int, counts: Counter[str]) -> None:
    """``pairs.<dataset>.dropped.pair_duplicate_text``: each dropped pair stands for its
    dataset's tweets per pair; no key where nothing was dropped (as in Beam)."""
    if dropped:
        key = f"pairs.{dataset}.dropped.{DropReason.PAIR_DUPLICATE_TEXT}"
        counts[key] += dropped * CHILDREN_PER_PAIR[dataset]


def _smallest(frame: pl.DataFrame, n: int) -> pl.DataFrame:
    """Each dataset's ``n`` rows with the smallest sample keys (the key columns only)."""
    keys = frame.select(["dataset", *SAMPLE_ORDER]).sort(["dataset", *SAMPLE_ORDER])
    return keys.group_by("dataset", maintain_order=True).head(n)


class Smallest(Generic[T]):
    """The ``n`` items with the smallest keys, holding at most about ``2 n`` at a time."""

    def __init__(self, n: int, key: Callable[[T], Any]) -> None:
        self._n = n
        self._key = key
        self._items: list[T] = []

    def add(self, item: T) -> None:
        self._items.append(item)
        if len(self._items) >= 2 * self._n + SMALLEST_SLACK:
            self._items = heapq.nsmallest(self._n, self._items, key=self._key)

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self.add(item)

    def result(self) -> list[T]:
        return heapq.nsmallest(self._n, self._items, key=self._key)


NEGATIVES = pa.schema(
    [("rank", pa.uint64()), ("id", pa.int64()), ("root_id", pa.int64()), ("text", pa.string())]
)
"""Possible negatives (:class:`PoolItem`) as Arrow columns: a quarter of their size as tuples.
Arrow, not polars: :func:`summarise_part` runs in forked workers, and polars' thread pool
does not survive a fork (a polars call there waits forever once the parent has used it)."""
NEGATIVE_ORDER = [("rank", "ascending"), ("id", "ascending")]
""":func:`rank_key` of a negative: the smallest are chosen."""


@dataclass(frozen=True)
class PartChoice:
    """What one partition gives the benchmark choice: its best query candidates per
    benchmark, every negative under their roots, the best negatives elsewhere (tables of
    :data:`NEGATIVES`), and the ``eligible_queries`` counts. Picklable: a worker process
    makes it."""

    eligible: Counter[str]
    best: dict[str, list[QueryCandidate]]
    pool: dict[str, pa.Table]
    elsewhere: dict[str, pa.Table]


def summarise_part(part: list[Conversation], seed: int, config: BenchmarkConfig) -> PartChoice:
    """One partition's share of the benchmark choice (:class:`BenchmarkChoice`)."""
    eligible: Counter[str] = Counter()
    local: dict[str, Smallest[QueryCandidate]] = {}
    for conversation in part:
        for bench, candidate in query_candidates(*conversation, seed=seed, config=config):
            eligible[f"benchmarks.{bench}.eligible_queries"] += 1
            local.setdefault(bench, Smallest(config.queries, rank_key)).add(candidate)
    best = {bench: s.result() for bench, s in local.items()}
    columns: defaultdict[str, tuple[list[Any], ...]] = defaultdict(lambda: ([], [], [], []))
    for root_id, _, quotes, replies in part:
        for bench, item in pool_items(root_id, quotes, replies, seed=seed):
            for column, value in zip(
                columns[bench], (item.rank, item.node.id, root_id, item.node.text), strict=True
            ):
                column.append(value)
    pool, elsewhere = {}, {}
    for bench, values in columns.items():
        arrays = [pa.array(v, f.type) for v, f in zip(values, NEGATIVES, strict=True)]
        table = pa.Table.from_arrays(arrays, schema=NEGATIVES)
        under = _under(table, best.get(bench, []))
        pool[bench] = table.filter(under)
        elsewhere[bench] = _smallest_negatives(table.filter(pc.invert(under)), config.pool_size)
    return PartChoice(eligible, best, pool, elsewhere)


def _under(negatives: pa.Table, queries: Iterable[QueryCandidate]) -> pa.ChunkedArray:
    """Which ``negatives`` are under one of the roots of ``queries``."""
    roots = pa.array([q.root_id for q in queries], pa.int64())
    return pc.is_in(negatives["root_id"], value_set=roots)


def _smallest_negatives(negatives: pa.Table, n: int) -> pa.Table:
    """The ``n`` ``negatives`` with the smallest :func:`rank_key` (a stable sort of the keys;
    only the rows kept are copied)."""
    keys = negatives.select([name for name, _ in NEGATIVE_ORDER])
    return negatives.take(pc.sort_indices(keys, sort_keys=NEGATIVE_ORDER).slice(0, n))


class BenchmarkChoice:
    """Choose the queries and negatives, partition by partition, exactly as over the whole
    input.

    A partition keeps its ``queries`` best candidates per benchmark (the global best are
    among them) and every negative under those candidates' roots (one of them may become a
    chosen query's root, or not). A negative elsewhere can never be excluded as a chosen
    query's own, so of those only the ``pool_size`` best over all partitions so far are
    kept. After each merge, the negatives under a root that has left the ``queries`` best
    so far join those elsewhere: a candidate once beaten stays beaten, since later
    partitions only add rivals. Memory is bounded by the benchmark size, not by the input
    or the partitions; the negatives are held as columns (:data:`NEGATIVES`).
    """

    def __init__(self, seed: int, config: BenchmarkConfig, counts: Counter[str]) -> None:
        self._seed = seed
        self._config = config
        self._counts = counts
        self._queries: dict[str, Smallest[QueryCandidate]] = {}
        self._pool: dict[str, pa.Table] = {}
        self._elsewhere: dict[str, pa.Table] = {}

    def merge(self, summary: PartChoice) -> None:
        """Take one partition's :func:`summarise_part` into the choice (in partition order:
        the choice is then the one over the whole input, ties included)."""
        self._counts.update(summary.eligible)
        for bench, chosen in summary.best.items():
            self._queries.setdefault(bench, Smallest(self._config.queries, rank_key)).extend(chosen)
        # A benchmark this partition gives nothing is as the last merge left it.
        for bench in summary.pool.keys() | summary.elsewhere.keys() | summary.best.keys():
            pool = _concat(self._pool.get(bench), summary.pool.get(bench))
            queries = self._queries.get(bench)
            under = _under(pool, queries.result() if queries else [])
            self._pool[bench] = pool.filter(under)
            elsewhere = _concat(
                self._elsewhere.get(bench),
                summary.elsewhere.get(bench),
                pool.filter(pc.invert(under)),
            )
            if elsewhere.num_rows > self._config.pool_size:
                elsewhere = _smallest_negatives(elsewhere, self._config.pool_size)
            self._elsewhere[bench] = elsewhere

    def pool_roots(self) -> dict[str, set[int]]:
        """Per benchmark, the roots whose negatives are held apart as possible query roots
        (at most ``queries`` roots, however many partitions were merged)."""
        return {bench: set(pool["root_id"].to_pylist()) for bench, pool in self._pool.items()}

    def result(self) -> tuple[dict[str, list[dict[str, Any]]], HeldOut]:
        """The ``benchmark.v1`` rows per benchmark and the tweets they hold out."""
        config, counts = self._config, self._counts
        selected = {bench: s.result() for bench, s in self._queries.items()}
        rows: dict[str, list[dict[str, Any]]] = {}
        for bench in sorted(set(selected) | set(self._pool) | set(self._elsewhere)):
            chosen = selected.get(bench, [])
            pool = _concat(self._pool.get(bench), self._elsewhere.get(bench))
            free = pool.filter(pc.invert(_under(pool, chosen)))
            negatives = _pool_items(_smallest_negatives(free, config.pool_size))
            assembled = assemble(
                bench, chosen, negatives, seed=self._seed, config=config, pool_in_order=True
            )
            counts[f"benchmarks.{bench}.selected_queries"] += assembled.eligible_queries
            counts[f"benchmarks.{bench}.queries_without_negatives"] += (
                assembled.queries_without_negatives
            )
            counts[f"benchmarks.{bench}.rows"] += len(assembled.rows)
            if assembled.rows:
                rows[bench] = assembled.rows
            del pool, free, negatives  # one benchmark's copies at a time
        held = held_out_sets(
            item for bench_rows in rows.values() for r in bench_rows for item in held_out_items(r)
        )
        return rows, held


def _pool_items(negatives: pa.Table) -> Iterator[PoolItem]:
    """``negatives`` as :class:`PoolItem`, in their order, a batch at a time; their nodes
    carry the id and text, all that :func:`assemble` reads of a negative."""
    for batch in negatives.to_batches(max_chunksize=4096):
        columns = (batch.column(name).to_pylist() for name in NEGATIVES.names)
        for rank, node_id, root_id, text in zip(*columns, strict=True):
            yield PoolItem(rank, root_id, Node(node_id, text, None, None, None, None))


def _concat(*tables: pa.Table | None) -> pa.Table:
    """The rows of ``tables`` (:data:`NEGATIVES`), in order; ``None`` is no rows."""
    present = [t for t in tables if t is not None]
    return pa.concat_tables(present) if present else NEGATIVES.empty_table()

"""Chosen Twitter pairs and benchmark candidates -> the rows the local pair stage keeps, in
bounded memory.

Two collectors of the local pair engine (:mod:`corpusforge.local.pairs`), each exact over
partitions of the input: :class:`PairRows` deduplicates the chosen pair rows per text (and
samples them with ``pairs_per_dataset``), spilling groups of rows to run files;
:class:`BenchmarkChoice` chooses each benchmark's queries and negatives partition by
partition, as over the whole input. Both keep only bounded sets, with :class:`Smallest`.
"""

from __future__ import annotations

import heapq
import operator
import os
import pickle
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any, Generic, TypeVar

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
    keep_first_duplicate,
    sample_key,
)

T = TypeVar("T")
SMALLEST_SLACK = 1024  # items a Smallest holds beyond 2 n before it trims


PAIR_FIELDS = ("anchor", "positive", "anchor_id", "positive_id", "root_id", "dataset", "lang")
PairValues = tuple[str, str, int, int, int, str, str]  # a pair.v1 row, in PAIR_FIELDS order


def _pair_dict(values: PairValues) -> dict[str, Any]:
    return dict(zip(PAIR_FIELDS, values, strict=True))


class PairRows:
    """The chosen pair rows, in groups of identical-text candidates, within bounded memory.

    Rows are placed in ``groups`` groups by their (dataset, anchor, positive) texts, so every
    duplicate of a pair is in its group and each group is deduplicated alone, exactly. Groups
    stay in memory until ``buffer_rows`` rows are held, then go to run files under ``spill``.
    The grouping uses Python's per-process string hash: it decides only which rows are
    compared with which, never which row is kept, so the output does not depend on it.

    Iterating gives the deduplicated (and, with ``pairs_per_dataset``, sampled) rows as dicts,
    group by group, after :meth:`finish`.
    """

    def __init__(self, groups: int, spill: str, buffer_rows: int) -> None:
        self._n = groups
        self._spill = spill
        self._buffer_rows = buffer_rows
        self._groups: list[list[PairValues]] = [[] for _ in range(groups)]
        self._runs: list[list[str]] = [[] for _ in range(groups)]
        self._held = 0
        self._values = operator.itemgetter(*PAIR_FIELDS)
        self._keep: dict[str, tuple[int, int, int]] | None = None
        self._seed = 0

    def add(self, row: dict[str, Any]) -> None:
        values: PairValues = self._values(row)
        self._groups[hash((values[5], values[0], values[1])) % self._n].append(values)
        self._held += 1
        if self._held >= self._buffer_rows:
            for g in range(self._n):
                self._write_run(g, self._groups[g])
                self._groups[g] = []
            self._held = 0

    def finish(self, seed: int, pairs_per_dataset: int | None, counts: Counter[str]) -> None:
        """Deduplicate every group (counting the drops) and fix the sample, if any.

        Each deduplicated group replaces its runs (or stays in memory if it had none).
        """
        self._seed = seed
        smallest: dict[str, Smallest[tuple[int, int, int]]] = {}
        for g in range(self._n):
            deduped = _deduplicate(self._group(g), seed, counts)
            if self._runs[g]:
                self._write_run(g, deduped)
                self._groups[g] = []
            else:
                self._groups[g] = deduped
            for values in deduped:
                dataset = values[5]
                if pairs_per_dataset is None:
                    counts[f"pairs.{dataset}.rows"] += 1
                    continue
                counts[f"pairs.{dataset}.deduped"] += 1
                smallest.setdefault(dataset, Smallest(pairs_per_dataset, lambda k: k)).add(
                    sample_key(seed, _pair_dict(values))
                )
        if pairs_per_dataset is not None:
            self._keep = {}
            for dataset, keys in smallest.items():
                kept = keys.result()
                counts[f"pairs.{dataset}.rows"] += len(kept)
                self._keep[dataset] = kept[-1]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for g in range(self._n):
            for values in self._group(g, keep=True):
                row = _pair_dict(values)
                if self._keep is None or sample_key(self._seed, row) <= self._keep[values[5]]:
                    yield row

    def _group(self, g: int, *, keep: bool = False) -> list[PairValues]:
        rows = list(self._groups[g])
        for path in self._runs[g]:
            with open(path, "rb") as f:
                rows += pickle.load(f)
            if not keep:
                os.remove(path)
        if not keep:
            self._runs[g] = []
        return rows

    def _write_run(self, g: int, rows: list[PairValues]) -> None:
        if not rows:
            return
        path = os.path.join(self._spill, f"pairs-{g}-{len(self._runs[g])}.pickle")
        with open(path, "wb") as f:
            pickle.dump(rows, f, protocol=pickle.HIGHEST_PROTOCOL)
        self._runs[g].append(path)


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


class BenchmarkChoice:
    """Choose the queries and negatives, partition by partition, exactly as over the whole
    input.

    A partition keeps its ``queries`` best candidates per benchmark (the global best are
    among them) and every negative under those candidates' roots (one of them may become a
    chosen query's root, or not). A negative elsewhere can never be excluded as a chosen
    query's own, so of those only the ``pool_size`` best over all partitions so far are
    kept: memory is bounded by the benchmark size, not by the input or the partitions.
    """

    def __init__(self, seed: int, config: BenchmarkConfig, counts: Counter[str]) -> None:
        self._seed = seed
        self._config = config
        self._counts = counts
        self._queries: dict[str, Smallest[QueryCandidate]] = {}
        self._pool: dict[str, list[PoolItem]] = defaultdict(list)
        self._elsewhere: defaultdict[str, Smallest[PoolItem]] = defaultdict(
            lambda: Smallest(config.pool_size, rank_key)
        )

    def add(self, part: list[Conversation]) -> None:
        seed, config, counts = self._seed, self._config, self._counts
        local: dict[str, Smallest[QueryCandidate]] = {}
        for conversation in part:
            for bench, candidate in query_candidates(*conversation, seed=seed, config=config):
                counts[f"benchmarks.{bench}.eligible_queries"] += 1
                local.setdefault(bench, Smallest(config.queries, rank_key)).add(candidate)
        best = {bench: s.result() for bench, s in local.items()}
        roots = {bench: {c.root_id for c in chosen} for bench, chosen in best.items()}
        for root_id, _, quotes, replies in part:
            for bench, item in pool_items(root_id, quotes, replies, seed=seed):
                if item.root_id in roots.get(bench, ()):
                    self._pool[bench].append(item)
                else:
                    self._elsewhere[bench].add(item)
        for bench, chosen in best.items():
            self._queries.setdefault(bench, Smallest(config.queries, rank_key)).extend(chosen)

    def result(self) -> tuple[dict[str, list[dict[str, Any]]], HeldOut]:
        """The ``benchmark.v1`` rows per benchmark and the tweets they hold out."""
        config, counts = self._config, self._counts
        selected = {bench: s.result() for bench, s in self._queries.items()}
        elsewhere = {bench: s.result() for bench, s in self._elsewhere.items()}
        rows: dict[str, list[dict[str, Any]]] = {}
        for bench in sorted(set(selected) | set(self._pool) | set(elsewhere)):
            taken = {q.root_id for q in selected.get(bench, [])}
            pool = chain(self._pool.get(bench, []), elsewhere.get(bench, []))
            negatives = heapq.nsmallest(
                config.pool_size, (p for p in pool if p.root_id not in taken), key=rank_key
            )
            assembled = assemble(
                bench, selected.get(bench, []), negatives, seed=self._seed, config=config
            )
            counts[f"benchmarks.{bench}.selected_queries"] += assembled.eligible_queries
            counts[f"benchmarks.{bench}.queries_without_negatives"] += (
                assembled.queries_without_negatives
            )
            counts[f"benchmarks.{bench}.rows"] += len(assembled.rows)
            if assembled.rows:
                rows[bench] = assembled.rows
        held = held_out_sets(
            item for bench_rows in rows.values() for r in bench_rows for item in held_out_items(r)
        )
        return rows, held


def _deduplicate(group: list[PairValues], seed: int, counts: Counter[str]) -> list[PairValues]:
    """Of pairs with identical texts in one dataset, the one :func:`keep_first_duplicate` keeps."""
    by_text: dict[tuple[str, str, str], list[PairValues]] = defaultdict(list)
    for values in group:
        by_text[values[5], values[0], values[1]].append(values)
    group.clear()
    out = []
    for (dataset, _, _), rows in by_text.items():
        if len(rows) == 1:
            out.append(rows[0])
            continue
        kept, dropped = keep_first_duplicate(seed, [_pair_dict(v) for v in rows])
        counts[f"pairs.{dataset}.dropped.{DropReason.PAIR_DUPLICATE_TEXT}"] += (
            dropped * CHILDREN_PER_PAIR[dataset]
        )
        out.append(tuple(kept[name] for name in PAIR_FIELDS))
    return out

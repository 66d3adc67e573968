"""The local pair stage's benchmark choice: exact over any partitioning, bounded in memory."""

from __future__ import annotations

import heapq
import random
from collections import Counter, defaultdict
from typing import Any

import pytest

from corpusforge.local.chosen import BenchmarkChoice, summarise_part
from corpusforge.pairing.benchmarks import (
    BenchmarkConfig,
    PoolItem,
    QueryCandidate,
    assemble,
    pool_items,
    query_candidates,
    rank_key,
)
from corpusforge.pairing.conversations import Conversation, Node

SMALL = BenchmarkConfig(queries=10, positives=2, negatives=3)
SEED = 7


def _conversations(roots: int) -> list[Conversation]:
    """Roots with 0 to 8 quotes and replies each; some texts repeat, some roots are gone."""
    rnd = random.Random(5)

    def node(i: int) -> Node:
        return Node(i, f"text {rnd.randrange(400)}", "en", None, None, None)

    out: list[Conversation] = []
    for r in range(roots):
        root_id = 10_000 * (r + 1)
        root = node(root_id) if rnd.random() < 0.8 else None
        quotes = [node(root_id + k) for k in range(1, rnd.randrange(9))]
        replies = [node(root_id + 100 + k) for k in range(rnd.randrange(9))]
        out.append((root_id, root, quotes, replies))
    return out


def _choose(parts: list[list[Conversation]]) -> tuple[BenchmarkChoice, Counter[str]]:
    counts: Counter[str] = Counter()
    choice = BenchmarkChoice(SEED, SMALL, counts)
    for part in parts:
        choice.merge(summarise_part(part, SEED, SMALL))
    return choice, counts


def _whole_input(conversations: list[Conversation]) -> dict[str, list[dict[str, Any]]]:
    """The benchmarks chosen from every candidate and negative at once."""
    candidates: defaultdict[str, list[QueryCandidate]] = defaultdict(list)
    negatives: defaultdict[str, list[PoolItem]] = defaultdict(list)
    for root_id, root, quotes, replies in conversations:
        for bench, candidate in query_candidates(
            root_id, root, quotes, replies, seed=SEED, config=SMALL
        ):
            candidates[bench].append(candidate)
        for bench, item in pool_items(root_id, quotes, replies, seed=SEED):
            negatives[bench].append(item)
    rows = {}
    for bench in sorted(candidates.keys() | negatives.keys()):
        chosen = heapq.nsmallest(SMALL.queries, candidates[bench], key=rank_key)
        taken = {q.root_id for q in chosen}
        free = [item for item in negatives[bench] if item.root_id not in taken]
        pool = heapq.nsmallest(SMALL.pool_size, free, key=rank_key)
        assembled = assemble(bench, chosen, pool, seed=SEED, config=SMALL)
        if assembled.rows:
            rows[bench] = assembled.rows
    return rows


@pytest.mark.parametrize("partitions", [1, 2, 7, 40])
def test_choice_over_partitions_is_the_choice_over_the_whole_input(partitions: int) -> None:
    conversations = _conversations(400)
    expected = _whole_input(conversations)
    assert sum(len(rows) for rows in expected.values()) > 20  # more than one partition's best
    split, counts = _choose([conversations[p::partitions] for p in range(partitions)])
    rows, _ = split.result()
    assert rows == expected
    whole, whole_counts = _choose([conversations])
    whole.result()
    assert counts == whole_counts


def test_negatives_held_as_possible_query_roots_stay_within_the_best_queries() -> None:
    conversations = _conversations(400)
    choice, _ = _choose([conversations[p::40] for p in range(40)])
    roots = choice.pool_roots()
    assert roots  # some negatives are held under candidate roots
    chosen, _ = choice.result()
    for bench, held in roots.items():
        assert len(held) <= SMALL.queries
        assert {row["root_id"] for row in chosen.get(bench, [])} <= held


def _summarise_in_child(conversations: list[Conversation], out: Any) -> None:
    out.put(len(summarise_part(conversations, SEED, SMALL).best))


def test_a_partition_is_summarised_in_a_forked_worker_after_polars_ran_here() -> None:
    """Pair workers are forked from a process whose polars thread pool is running (the
    extract's merge): a polars call in the worker would then wait forever."""
    import multiprocessing

    import polars as pl

    pl.DataFrame({"a": range(200_000)}).sort("a", descending=True)  # starts polars' threads
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_summarise_in_child, args=(_conversations(400), out))
    child.start()
    child.join(60)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung, "summarise_part hangs in a forked worker"
    assert child.exitcode == 0 and out.get(timeout=5) == 4

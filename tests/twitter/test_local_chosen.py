"""The local pair stage's benchmark choice: exact over any partitioning, bounded in memory."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from corpusforge.local.chosen import BenchmarkChoice, summarise_part
from corpusforge.pairing.benchmarks import BenchmarkConfig
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


@pytest.mark.parametrize("partitions", [2, 7, 40])
def test_choice_over_partitions_is_the_choice_over_the_whole_input(partitions: int) -> None:
    conversations = _conversations(400)
    whole, whole_counts = _choose([conversations])
    parts = [conversations[p::partitions] for p in range(partitions)]
    split, split_counts = _choose(parts)
    expected, result = whole.result(), split.result()
    assert result == expected
    assert split_counts == whole_counts
    assert sum(len(rows) for rows in expected[0].values()) > 0  # the test chooses something


def test_negatives_held_as_possible_query_roots_stay_within_the_best_queries() -> None:
    conversations = _conversations(400)
    choice, _ = _choose([conversations[p::40] for p in range(40)])
    roots = choice.pool_roots()
    assert roots  # some negatives are held under candidate roots
    chosen, _ = choice.result()
    for bench, held in roots.items():
        assert len(held) <= SMALL.queries
        assert {row["root_id"] for row in chosen.get(bench, [])} <= held

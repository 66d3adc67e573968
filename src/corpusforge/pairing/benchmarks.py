"""Conversation groups -> the four held-out ranking benchmarks of the Twitter4SSE paper.

- DQ / DR (direct): a query is a root tweet with at least ``positives`` distinct quotes
  (replies); its positives are quotes (replies) of it; its negatives are quotes (replies) of
  other roots.
- CQ / CR (co-): a query is one quote (reply) of a root with at least ``positives + 1``;
  its positives are other quotes (replies) of the same root; negatives come from other roots.

Each query has ``positives`` positives and ``negatives`` negatives (5 and 25 by default).
Texts are the cleaned, length-filtered texts of the training pairs. Every choice is the order
of a seeded hash of tweet ids. Every tweet of a benchmark, and the root of every query, is
held out of all training pairs (:func:`held_out_ids`). The published code of the paper held
out nothing, produced empty co-benchmarks and used the parent text as direct-reply
positives; this module does none of that, and its tests say so.

Queries with too few distinct children are not eligible, and when a benchmark has fewer
eligible queries (or negatives) than asked, :func:`assemble` returns what exists and says how
many are missing: it never pads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from corpusforge.config.flags import FlagError
from corpusforge.config.settings import flag_name, setting
from corpusforge.keys import cached_hasher, seeded_hash, seeded_hasher
from corpusforge.pairing.conversations import HeldOut, Node, text_hash

BENCHMARKS: dict[str, tuple[str, str]] = {
    "dq": ("direct", "quote"),
    "dr": ("direct", "reply"),
    "cq": ("co", "quote"),
    "cr": ("co", "reply"),
}


@dataclass(frozen=True)
class BenchmarkConfig:
    """Size of each benchmark (the paper's defaults).

    Attributes:
        queries: queries per benchmark.
        positives: positives per query.
        negatives: negatives per query.
    """

    queries: int = setting(
        5000,
        help="queries per held-out benchmark (dq, dr, cq, cr); 0: none",
        flag="benchmark_queries",
    )
    positives: int = setting(5, help="positives per query", flag="benchmark_positives")
    negatives: int = setting(25, help="negatives per query", flag="benchmark_negatives")

    def __post_init__(self) -> None:
        for name in ("queries", "positives", "negatives"):
            value = getattr(self, name)
            if name == "queries" and value < 0:
                raise FlagError(flag_name(BenchmarkConfig, name), f"must be >= 0, got {value}")
            if name != "queries" and value < 1:
                raise FlagError(flag_name(BenchmarkConfig, name), f"must be >= 1, got {value}")

    @property
    def pool_size(self) -> int:
        """Negative candidates kept per benchmark: enough for every query, with slack."""
        return self.queries * self.negatives * 5 // 4 + 100


class QueryCandidate(NamedTuple):
    """A possible query: its rank (seeded hash), root, query node and positives."""

    rank: int
    root_id: int
    query: Node
    positives: tuple[Node, ...]


class PoolItem(NamedTuple):
    """A possible negative: its rank (seeded hash), its root and its node."""

    rank: int
    root_id: int
    node: Node


def rank_key(candidate: QueryCandidate | PoolItem) -> tuple[int, int]:
    """Order of query candidates and negatives: the smallest keys are chosen."""
    node = candidate.query if isinstance(candidate, QueryCandidate) else candidate.node
    return candidate.rank, node.id


def _distinct_by_hash(
    nodes: Iterable[Node], seed: int, bench: str, root_id: int, exclude: Iterable[str] = ()
) -> list[Node]:
    """Eligible nodes in seeded-hash order, one per distinct text, skipping ``exclude``."""
    seen = set(exclude)
    out = []
    rank = seeded_hasher(seed, "bench", bench, root_id)  # seeded_hash(..., root_id, n.id)
    ranked = sorted((n for n in nodes if n.reason is None), key=lambda n: (rank(n.id), n.id))
    for n in ranked:
        if n.text is not None and n.text not in seen:
            seen.add(n.text)
            out.append(n)
    return out


def query_candidates(
    root_id: int,
    root: Node | None,
    quotes: Sequence[Node],
    replies: Sequence[Node],
    *,
    seed: int,
    config: BenchmarkConfig,
) -> list[tuple[str, QueryCandidate]]:
    """The queries one root could give, at most one per benchmark."""
    out: list[tuple[str, QueryCandidate]] = []
    children = {"quote": quotes, "reply": replies}
    for bench, (shape, kind) in BENCHMARKS.items():
        kids = children[kind]
        if len(kids) < config.positives + (shape == "co"):
            continue
        rank = seeded_hash(seed, "query", bench, root_id)
        if shape == "direct":
            if root is None or root.reason is not None:
                continue
            distinct = _distinct_by_hash(kids, seed, bench, root_id, exclude=[root.text or ""])
            if len(distinct) >= config.positives:
                out.append(
                    (
                        bench,
                        QueryCandidate(rank, root_id, root, tuple(distinct[: config.positives])),
                    )
                )
        else:
            distinct = _distinct_by_hash(kids, seed, bench, root_id)
            if len(distinct) >= config.positives + 1:
                query, *rest = distinct[: config.positives + 1]
                out.append((bench, QueryCandidate(rank, root_id, query, tuple(rest))))
    return out


def pool_items(
    root_id: int, quotes: Sequence[Node], replies: Sequence[Node], *, seed: int
) -> list[tuple[str, PoolItem]]:
    """Every eligible child of a root as a possible negative of the benchmarks of its kind."""
    out = []
    for bench, (_, kind) in BENCHMARKS.items():
        rank = cached_hasher(seed, "negative", bench)  # seeded_hash(seed, "negative", bench, id)
        for n in quotes if kind == "quote" else replies:
            if n.reason is None:
                out.append((bench, PoolItem(rank(n.id), root_id, n)))
    return out


@dataclass
class Assembled:
    """One benchmark's rows and what could not be filled."""

    rows: list[dict[str, Any]]
    eligible_queries: int
    queries_without_negatives: int


def assemble(
    bench: str,
    queries: Iterable[QueryCandidate],
    pool: Iterable[PoolItem],
    *,
    seed: int,
    config: BenchmarkConfig,
    pool_in_order: bool = False,
) -> Assembled:
    """Give each selected query its negatives and build ``schemas/benchmark.v1`` rows.

    Args:
        bench: benchmark name.
        queries: the selected query candidates (at most ``config.queries``).
        pool: negative candidates, none of them under a selected query's root.
        seed: seed of the candidate order.
        config: sizes.
        pool_in_order: ``pool`` is already in :func:`rank_key` order; it is then read only
            as far as the queries need, never held whole.
    """
    ordered = sorted(queries, key=lambda q: (q.rank, q.root_id))
    roots = {q.root_id for q in ordered}
    used = {n.id for q in ordered for n in (q.query, *q.positives)}
    free = (p for p in pool if p.root_id not in roots and p.node.id not in used)
    negatives = iter(free if pool_in_order else sorted(free, key=rank_key))
    rows: list[dict[str, Any]] = []
    starved = 0
    for q in ordered:
        taken: list[Node] = []
        clash = {q.query.text, *(p.text for p in q.positives)}
        for item in negatives:
            if item.node.text in clash or item.node.id in used:
                continue
            taken.append(item.node)
            used.add(item.node.id)
            clash.add(item.node.text)
            if len(taken) == config.negatives:
                break
        if len(taken) < config.negatives:
            starved += 1
            continue
        rows.append(_row(q, taken, seed))
    return Assembled(rows, len(ordered), starved)


def _row(q: QueryCandidate, negatives: list[Node], seed: int) -> dict[str, Any]:
    labelled = [(n, 1) for n in q.positives] + [(n, 0) for n in negatives]
    order = seeded_hasher(seed, "order", q.query.id)  # seeded_hash(..., q.query.id, n.id)
    labelled.sort(key=lambda nl: (order(nl[0].id), nl[0].id))
    return {
        "query": q.query.text,
        "query_id": q.query.id,
        "candidates": [n.text for n, _ in labelled],
        "candidate_ids": [n.id for n, _ in labelled],
        "labels": [label for _, label in labelled],
        "root_id": q.root_id,
    }


def held_out_ids(row: dict[str, Any]) -> list[int]:
    """Every tweet a benchmark row uses, and its query's root."""
    return [row["query_id"], row["root_id"], *row["candidate_ids"]]


def held_out_texts(row: dict[str, Any]) -> list[str]:
    """Every cleaned text a benchmark row uses."""
    return [row["query"], *row["candidates"]]


def held_out_items(row: dict[str, Any]) -> Iterator[tuple[str, int]]:
    """``("id", tweet id)`` and ``("text", text hash)`` for everything a row uses."""
    for tweet_id in held_out_ids(row):
        yield "id", tweet_id
    for text in held_out_texts(row):
        yield "text", text_hash(text)


def held_out_sets(items: Iterable[tuple[str, int]]) -> HeldOut:
    """:func:`held_out_items` of every benchmark row -> (ids, text hashes)."""
    ids: set[int] = set()
    texts: set[int] = set()
    for kind, value in items:  # one pass, nothing held but the two sets
        (ids if kind == "id" else texts).add(value)
    return frozenset(ids), frozenset(texts)

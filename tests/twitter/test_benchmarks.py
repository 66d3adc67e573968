"""Held-out ranking benchmarks: shapes, exclusions and shortfalls, on hand-built conversations."""

from __future__ import annotations

import pytest

from corpusforge.pairing.benchmarks import (
    BenchmarkConfig,
    assemble,
    held_out_ids,
    pool_items,
    query_candidates,
)
from corpusforge.pairing.conversations import DropReason, Node

SMALL = BenchmarkConfig(queries=10, positives=2, negatives=3)


def n(i: int, text: str | None = None, reason: DropReason | None = None) -> Node:
    return Node(i, None if reason else (text or f"tweet text {i}"), "en", reason, None, None)


def test_config_validation_names_the_bad_value() -> None:
    with pytest.raises(ValueError, match="negatives"):
        BenchmarkConfig(negatives=0)


def test_direct_query_is_the_root_and_positives_are_its_children_not_the_parent() -> None:
    root = n(100)
    quotes = [n(1), n(2), n(3)]
    cands = dict(query_candidates(100, root, quotes, [], seed=0, config=SMALL))
    assert set(cands) == {"dq", "cq"}
    dq = cands["dq"]
    assert dq.query == root
    assert len(dq.positives) == 2 and {p.id for p in dq.positives} <= {1, 2, 3}
    cq = cands["cq"]
    assert cq.query.id in {1, 2, 3} and cq.query not in cq.positives
    assert {cq.query.id, *(p.id for p in cq.positives)} == {1, 2, 3}


def test_too_few_distinct_children_give_no_query() -> None:
    root = n(100)
    same = [n(1, "the same text"), n(2, "the same text"), n(3, reason=DropReason.TWEET_DELETED)]
    assert query_candidates(100, root, same, [], seed=0, config=SMALL) == []
    # a deleted root gives no direct query, but its children still give a co-query
    kids = [n(1), n(2), n(3)]
    gone = query_candidates(
        100, n(100, reason=DropReason.TWEET_DELETED), kids, [], seed=0, config=SMALL
    )
    assert [b for b, _ in gone] == ["cq"]


def _conversations(count: int, kids: int = 3) -> list[tuple[int, Node, list[Node], list[Node]]]:
    convs = []
    for r in range(count):
        root_id = 1000 * (r + 1)
        convs.append((root_id, n(root_id), [n(root_id + k) for k in range(1, kids + 1)], []))
    return convs


def test_assemble_gives_each_query_negatives_from_other_roots_only() -> None:
    convs = _conversations(8)
    cands = [
        c for conv in convs for b, c in query_candidates(*conv, seed=0, config=SMALL) if b == "dq"
    ]
    chosen = sorted(cands, key=lambda c: c.rank)[:2]
    chosen_roots = {c.root_id for c in chosen}
    pool = [
        p
        for conv in convs
        for b, p in pool_items(conv[0], conv[2], conv[3], seed=0)
        if b == "dq" and p.root_id not in chosen_roots
    ]
    out = assemble("dq", chosen, pool, seed=0, config=SMALL)
    assert (out.eligible_queries, out.queries_without_negatives, len(out.rows)) == (2, 0, 2)
    for row in out.rows:
        assert sorted(row["labels"]) == [0, 0, 0, 1, 1]
        positives = {i for i, lab in zip(row["candidate_ids"], row["labels"], strict=True) if lab}
        negatives = {
            i for i, lab in zip(row["candidate_ids"], row["labels"], strict=True) if not lab
        }
        assert all(i // 1000 * 1000 == row["root_id"] for i in positives)
        assert all(i // 1000 * 1000 not in chosen_roots for i in negatives)
        assert row["query_id"] == row["root_id"]
        assert len(set(row["candidates"])) == 5
    # no tweet serves as a negative twice
    negs = [
        i
        for row in out.rows
        for i, lab in zip(row["candidate_ids"], row["labels"], strict=True)
        if not lab
    ]
    assert len(negs) == len(set(negs))
    assert set(held_out_ids(out.rows[0])) >= {out.rows[0]["query_id"], out.rows[0]["root_id"]}


def test_assemble_never_pads_when_negatives_run_out() -> None:
    convs = _conversations(2)
    cands = [
        c for conv in convs for b, c in query_candidates(*conv, seed=0, config=SMALL) if b == "dq"
    ]
    out = assemble("dq", cands, [], seed=0, config=SMALL)
    assert out.rows == [] and out.queries_without_negatives == 2


def test_candidate_order_is_seeded_not_positives_first() -> None:
    convs = _conversations(30)
    cands = [
        c for conv in convs for b, c in query_candidates(*conv, seed=0, config=SMALL) if b == "dq"
    ]
    chosen = sorted(cands, key=lambda c: c.rank)[:5]
    roots = {c.root_id for c in chosen}
    pool = [
        p
        for conv in convs
        for b, p in pool_items(conv[0], conv[2], conv[3], seed=0)
        if b == "dq" and p.root_id not in roots
    ]
    rows = assemble("dq", chosen, pool, seed=0, config=SMALL).rows
    first_labels = {row["labels"][0] for row in rows}
    assert first_labels == {0, 1}

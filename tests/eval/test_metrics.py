"""Ranking metrics against hand-computed values, and the tie rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.eval.metrics import average_precision, mrr, ndcg, rank_by_scores

# Below, l(r) = 1 / log2(r + 1) is the discount at rank r:
# l(1) = 1, l(2) = 0.630930, l(3) = 0.5, l(4) = 0.430677, l(5) = 0.386853,
# l(6) = 0.356207, l(8) = 0.315465, l(10) = 0.289065,
# l(26..30) = 0.210310, 0.208015, 0.205847, 0.203795, 0.201849.
IDCG_5 = 2.948459  # l(1) + l(2) + l(3) + l(4) + l(5): five positives ranked first


def paper_query(positive_ranks: list[int], n: int = 30) -> np.ndarray:
    """Labels in rank order: 1 at the given 1-based ranks, 0 elsewhere."""
    y = np.zeros(n, dtype=np.int8)
    y[[r - 1 for r in positive_ranks]] = 1
    return y


def test_ndcg_small_list():
    # [0, 1, 1]: DCG = l(2) + l(3) = 0.630930 + 0.5 = 1.130930
    # ideal [1, 1, 0]: IDCG = l(1) + l(2) = 1.630930 -> 1.130930 / 1.630930 = 0.693426
    assert ndcg([0, 1, 1]) == pytest.approx(0.693426, abs=1e-6)


def test_ndcg_cutoff_uses_the_ideal_list_cut_at_k_too():
    # k = 2: DCG@2 = l(2) = 0.630930; IDCG@2 = l(1) + l(2) = 1.630930 -> 0.386853
    assert ndcg([0, 1, 1], k=2) == pytest.approx(0.386853, abs=1e-6)
    # k larger than the list: same as the whole list
    assert ndcg([0, 1, 1], k=50) == pytest.approx(ndcg([0, 1, 1]))


def test_ndcg_paper_sized_query():
    # 5 positives at ranks 2, 4, 6, 8, 10 of 30:
    # DCG = 0.630930 + 0.430677 + 0.356207 + 0.315465 + 0.289065 = 2.022343
    # nDCG = 2.022343 / 2.948459 = 0.685898
    assert ndcg(paper_query([2, 4, 6, 8, 10])) == pytest.approx(0.685898, abs=1e-6)
    assert ndcg(paper_query([1, 2, 3, 4, 5])) == pytest.approx(1.0)


def test_average_precision():
    # [0, 1, 1]: P@2 = 1/2, P@3 = 2/3 -> (0.5 + 0.666667) / 2 = 0.583333
    assert average_precision([0, 1, 1]) == pytest.approx(0.583333, abs=1e-6)
    # [1, 0, 1, 0, 0, 1]: P@1 = 1, P@3 = 2/3, P@6 = 3/6 -> (1 + 0.666667 + 0.5) / 3 = 0.722222
    assert average_precision([1, 0, 1, 0, 0, 1]) == pytest.approx(0.722222, abs=1e-6)


def test_reciprocal_rank_and_cutoff():
    # first positive at rank 3 -> 1/3; outside the top 2 -> 0
    assert mrr([0, 0, 1]) == pytest.approx(1 / 3)
    assert mrr([0, 0, 1], k=2) == 0.0
    # first positive at rank 11: outside MRR@10, 1/11 without a cut-off
    assert mrr(paper_query([11, 12, 13, 14, 15])) == 0.0
    assert mrr(paper_query([11, 12, 13, 14, 15]), k=None) == pytest.approx(1 / 11)
    assert mrr([0, 0, 0]) == 0.0


def test_undefined_without_a_relevant_candidate_is_nan():
    assert np.isnan(ndcg([0, 0, 0]))
    assert np.isnan(average_precision([0, 0, 0]))


def test_a_batch_gives_the_row_by_row_values():
    rows = np.array(
        [paper_query([2, 4, 6, 8, 10]), paper_query([1, 2, 3, 4, 5]), paper_query([30])]
    )
    for metric in (ndcg, average_precision, mrr):
        batch = metric(rows)
        assert isinstance(batch, np.ndarray) and batch.shape == (3,)
        row_by_row = np.array([metric(r) for r in rows], dtype=np.float64)
        np.testing.assert_allclose(np.asarray(batch, dtype=np.float64), row_by_row)


def test_rank_by_scores_orders_by_decreasing_score():
    assert rank_by_scores([0.9, 0.2, 0.5], [0, 1, 1]).tolist() == [0, 1, 1]
    assert rank_by_scores([0.1, 0.2, 0.3], [True, False, False]).tolist() == [0, 0, 1]


def test_ties_are_pessimistic_so_a_constant_model_scores_the_minimum():
    # Benchmarks list positives first; a model scoring every candidate alike must not
    # inherit that order. Pessimistic ties put the 5 positives at ranks 26..30:
    # DCG = 0.210310 + 0.208015 + 0.205847 + 0.203795 + 0.201849 = 1.029815
    # nDCG = 1.029815 / 2.948459 = 0.349272
    # AP = (1/26 + 2/27 + 3/28 + 4/29 + 5/30) / 5 = 0.104855
    labels = [1] * 5 + [0] * 25
    ranked = rank_by_scores(np.full(30, 0.5), labels)
    assert ranked.tolist() == [0] * 25 + [1] * 5
    assert ndcg(ranked) == pytest.approx(0.349272, abs=1e-6)
    assert average_precision(ranked) == pytest.approx(0.104855, abs=1e-6)
    assert mrr(ranked) == 0.0
    # the optimistic bound, for comparison only: the same model would look perfect
    assert ndcg(rank_by_scores(np.full(30, 0.5), labels, ties="optimistic")) == 1.0


def test_ties_only_break_within_equal_scores():
    # scores 0.9 | 0.5 0.5 0.5 | 0.1: the tie group is ordered negatives first
    ranked = rank_by_scores([0.5, 0.9, 0.5, 0.1, 0.5], [1, 0, 0, 1, 1])
    assert ranked.tolist() == [0, 0, 1, 1, 1]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rank_by_scores([0.1, np.nan], [0, 1]), "NaN"),
        (lambda: rank_by_scores([0.1, 0.2], [0, 1, 1]), "shape"),
        (lambda: rank_by_scores([0.1, 0.2], [0, 1], ties="random"), "ties"),  # type: ignore[arg-type]
        (lambda: ndcg([0, 2, 1]), "1 or 0"),
        (lambda: ndcg([1, 0], k=0), "k must be"),
        (lambda: mrr([]), "at least one candidate"),
        (lambda: average_precision(np.zeros((2, 2, 2))), "3-D"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# Scores drawn from few values, so that ties are frequent.
queries = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.randoms(use_true_random=False),
    )
)


@given(queries)
def test_ranking_does_not_depend_on_the_order_candidates_are_listed_in(query):
    scores, labels, rnd = query
    order = list(range(len(scores)))
    rnd.shuffle(order)
    shuffled = rank_by_scores([scores[i] for i in order], [labels[i] for i in order])
    assert shuffled.tolist() == rank_by_scores(scores, labels).tolist()


@given(queries)
def test_metrics_are_bounded_and_pessimistic_is_a_lower_bound(query):
    scores, labels, _ = query
    low = rank_by_scores(scores, labels)
    high = rank_by_scores(scores, labels, ties="optimistic")
    if not any(labels):
        return  # nDCG and AP are undefined without a positive (tested above)
    for metric in (ndcg, average_precision, mrr):
        lo, hi = metric(low), metric(high)
        assert 0.0 <= lo <= hi + 1e-12 <= 1.0 + 1e-12
        assert metric(sorted(labels, reverse=True)) == pytest.approx(1.0)  # the ideal order

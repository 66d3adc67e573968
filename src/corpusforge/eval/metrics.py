"""Ranking metrics for one query: candidate scores and 1/0 labels -> nDCG, AP, reciprocal rank.

Every function takes ``labels_in_rank_order``: the binary relevance labels (1 relevant,
0 not) of the candidates, best-scored first, as produced by :func:`rank_by_scores`. A 1-D
array is one query and gives a ``float``; a 2-D array is a batch of queries with the same
number of candidates, one per row, and gives one value per row. Relevance is binary and the
discount is ``log2(rank + 1)``, as in the ranking benchmarks of Twitter4SSE (Di Giovanni &
Brambilla, 2021), which score a model by nDCG over the 30 candidates of each query.

    >>> ranked = rank_by_scores([0.9, 0.2, 0.5], [0, 1, 1])
    >>> ranked.tolist()
    [0, 1, 1]
    >>> round(ndcg(ranked), 4)
    0.6934
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]


def rank_by_scores(
    scores: ArrayLike,
    labels: ArrayLike,
    *,
    ties: Literal["pessimistic", "optimistic"] = "pessimistic",
) -> npt.NDArray[np.int8]:
    """Order the labels of the candidates of a query by decreasing score, ties pessimistic.

    Tie rule: candidates with equal scores are ordered non-relevant first, then by their
    position in the input (a stable sort). A rule by position alone would let the order in
    which a benchmark lists its candidates decide ties: a constant model would score
    whatever that order happens to give, and a perfect nDCG on a file that lists positives
    first. Pessimistic ties give such a model the minimum possible score, make the result
    independent of the candidate order, and make every metric a lower bound of the
    tie-averaged value of McSherry & Najork (ECIR 2008), which ``sklearn.metrics.ndcg_score``
    computes by default. The two agree whenever no relevant candidate ties with a
    non-relevant one, the rule for continuous neural scores; lexical baselines tie often
    (every candidate sharing no word with the query scores 0), and are not credited for it.

    Args:
        scores: similarity of each candidate to the query, shape ``(n,)``, or ``(q, n)`` for
            a batch of ``q`` queries; higher is better. NaN is rejected.
        labels: relevance of each candidate, 1 or 0 (or bool), same shape as ``scores``.
        ties: ``"pessimistic"`` (the default, the rule above) or ``"optimistic"`` (relevant
            first within a tie): the two bound every metric, so comparing them measures how
            much ties matter; report the pessimistic one.

    Returns:
        The labels as ``int8`` in rank order, same shape as the input.

    Raises:
        ValueError: shapes differ, a score is NaN, a label is not 0/1, or ``ties`` is unknown.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = _binary(labels)
    if s.shape != y.shape:
        raise ValueError(f"scores shape {s.shape} differs from labels shape {y.shape}")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    if ties not in ("pessimistic", "optimistic"):
        raise ValueError(f"ties must be 'pessimistic' or 'optimistic', got {ties!r}")
    # np.lexsort sorts by its last key first: score descending, then label ascending (0
    # before 1: pessimistic) or descending (optimistic), then input position (it is stable).
    order = np.lexsort((y if ties == "pessimistic" else -y, -s), axis=-1)
    return np.take_along_axis(y, order, axis=-1)


def ndcg(labels_in_rank_order: ArrayLike, k: int | None = None) -> float | FloatArray:
    """Normalised discounted cumulative gain at ``k`` with binary relevance.

    ``DCG@k = sum_{i=1..k} rel_i / log2(i + 1)`` and ``nDCG@k = DCG@k / IDCG@k``, where
    ``IDCG@k`` is the DCG@k of the ideal order (all relevant candidates first); Järvelin &
    Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4), 2002.
    With binary relevance the exponential gain ``2^rel - 1`` of Burges et al. (2005) is the
    same as ``rel``, so both common definitions give this value.

    Args:
        labels_in_rank_order: 1/0 labels, best-ranked first; shape ``(n,)`` or ``(q, n)``.
        k: cut-off rank; ``None`` (the default) scores the whole list, as the Twitter4SSE
            benchmarks do over their 30 candidates.

    Returns:
        nDCG in ``[0, 1]``; NaN for a query without any relevant candidate (undefined).
    """
    y = _binary(labels_in_rank_order).astype(np.float64)
    n = y.shape[-1]
    cut = n if k is None else _cutoff(k, n)
    discount = 1.0 / np.log2(np.arange(2, cut + 2))  # (cut,): 1/log2(i + 1) for i = 1..cut
    dcg = (y[..., :cut] * discount).sum(axis=-1)
    relevant = y.sum(axis=-1).astype(np.int64)
    ideal_cumsum = np.concatenate(([0.0], np.cumsum(discount)))  # IDCG for 0..cut relevant
    idcg = ideal_cumsum[np.minimum(relevant, cut)]
    return _finish(_safe_divide(dcg, idcg))


def average_precision(labels_in_rank_order: ArrayLike) -> float | FloatArray:
    """Average precision over the whole ranked list, binary relevance.

    ``AP = (1 / R) * sum_{i : rel_i = 1} P@i`` with ``P@i`` the precision of the top ``i``
    and ``R`` the number of relevant candidates (all of which are in the list); Manning,
    Raghavan & Schütze, *Introduction to Information Retrieval*, 2008, section 8.4. The mean
    over queries is MAP.

    Args:
        labels_in_rank_order: 1/0 labels, best-ranked first; shape ``(n,)`` or ``(q, n)``.

    Returns:
        AP in ``[0, 1]``; NaN for a query without any relevant candidate (undefined).
    """
    y = _binary(labels_in_rank_order).astype(np.float64)
    ranks = np.arange(1, y.shape[-1] + 1)
    precision_at_i = np.cumsum(y, axis=-1) / ranks
    return _finish(_safe_divide((precision_at_i * y).sum(axis=-1), y.sum(axis=-1)))


def mrr(labels_in_rank_order: ArrayLike, k: int | None = 10) -> float | FloatArray:
    """Reciprocal rank of the first relevant candidate within the top ``k``, else 0.

    The mean of this value over queries is the mean reciprocal rank (MRR@k) of Voorhees,
    "The TREC-8 Question Answering Track Report", TREC 1999.

    Args:
        labels_in_rank_order: 1/0 labels, best-ranked first; shape ``(n,)`` or ``(q, n)``.
        k: cut-off rank (10 by default); ``None`` scores the whole list.

    Returns:
        ``1 / rank`` of the first relevant candidate when it is ranked ``<= k``, else 0.0
        (also for a query without any relevant candidate).
    """
    y = _binary(labels_in_rank_order)
    n = y.shape[-1]
    top = y[..., : n if k is None else _cutoff(k, n)]
    found = top.any(axis=-1)
    first = np.argmax(top, axis=-1) + 1  # 1-based rank of the first 1 (1 when there is none)
    return _finish(np.where(found, 1.0 / first, 0.0))


def _binary(labels: ArrayLike) -> npt.NDArray[np.int8]:
    """Labels as an ``int8`` array of 0/1; rejects other values, 0-d or >2-d input, no candidate."""
    y = np.asarray(labels)
    if y.ndim not in (1, 2):
        raise ValueError(
            f"labels must be 1-D (a query) or 2-D (queries x candidates), not {y.ndim}-D"
        )
    if y.shape[-1] == 0:
        raise ValueError("a query needs at least one candidate")
    if y.dtype != np.bool_ and not np.isin(y, (0, 1)).all():
        bad = sorted(set(np.unique(y).tolist()) - {0, 1})[:5]
        raise ValueError(f"labels must be 1 or 0, got {bad}")
    return y.astype(np.int8)


def _cutoff(k: int, n: int) -> int:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return min(k, n)


def _safe_divide(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den`` with NaN where ``den`` is 0 (a metric undefined without relevant items)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _finish(values: FloatArray) -> float | FloatArray:
    """A Python ``float`` for one query (0-d result), the array for a batch."""
    values = np.asarray(values, dtype=np.float64)
    return float(values) if values.ndim == 0 else values

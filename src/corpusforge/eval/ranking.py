"""Ranking benchmarks (``dq/dr/cq/cr.parquet``) and an encoder -> nDCG, MAP and MRR@10.

Each benchmark row is a query with its candidates and 1/0 labels (``schemas/benchmark.v1``;
5 positives and 25 negatives in the Twitter4SSE benchmarks). Candidates are ranked by the
cosine of their embedding with the query's, ties pessimistic (see
:func:`corpusforge.eval.metrics.rank_by_scores`), and each benchmark reports the mean over
its queries of nDCG over all candidates, average precision and reciprocal rank at 10, as
Di Giovanni & Brambilla, "Exploiting Twitter as source of large corpora of weakly similar
pairs for semantic sentence embeddings" (EMNLP 2021), score models by nDCG.

    corpusforge eval ranking --benchmarks RELEASE/benchmarks --model lexical --json scores.json
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from corpusforge.eval.lexical import CorpusFitted, Encoder, cosine_scores
from corpusforge.eval.metrics import average_precision, mrr, ndcg, rank_by_scores
from corpusforge.schemas import BENCHMARK, arrow_schema

BENCHMARKS = ("dq", "dr", "cq", "cr")
METRICS = ("ndcg", "map", "mrr@10")
_COLUMNS = ("query", "candidates", "labels")


class _InvalidBenchmark(ValueError):
    """A benchmark file that exists but cannot be scored; reported, not raised."""


def evaluate_ranking(
    benchmark_dir: str | Path,
    encoder: Encoder,
    *,
    names: Sequence[str] = BENCHMARKS,
    batch_queries: int = 2048,
) -> dict[str, Any]:
    """Score an encoder on every ranking benchmark in a folder.

    A missing, empty or unreadable benchmark file is reported with its status and left out
    of the average; it never stops the others. An encoder that is
    :class:`~corpusforge.eval.lexical.CorpusFitted` and not fitted (the TF-IDF baseline) is
    fitted on each benchmark's own distinct queries and candidates.

    Args:
        benchmark_dir: folder holding ``<name>.parquet`` files.
        encoder: the model to score.
        names: benchmark names to look for, in report order.
        batch_queries: queries encoded together, which bounds memory on large benchmarks.

    Returns:
        ``{"benchmarks": {name: report}, "average": {...}}``. Each report has ``status``
        (``"ok"``, ``"missing"``, ``"empty"`` or ``"invalid"``), ``path``, ``rows``,
        ``queries`` (rows with at least one positive, the ones scored),
        ``skipped_no_positive``, ``tied_queries`` (queries where a positive and a negative
        tie, so the pessimistic tie rule lowered the score), the mean ``ndcg``, ``map`` and
        ``mrr@10`` (``None`` unless ``ok`` with queries), and ``error`` when ``invalid``.
        ``average`` holds the unweighted mean of each metric over the benchmarks scored
        (``None`` when none was) and their names under ``benchmarks``.
    """
    if batch_queries < 1:
        raise ValueError(f"batch_queries must be >= 1, got {batch_queries}")
    folder = Path(benchmark_dir)
    reports = {
        name: evaluate_benchmark(folder / f"{name}.parquet", encoder, batch_queries)
        for name in names
    }
    scored = [name for name, r in reports.items() if r["status"] == "ok" and r["queries"] > 0]
    average: dict[str, Any] = {
        metric: float(np.mean([reports[n][metric] for n in scored])) if scored else None
        for metric in METRICS
    }
    average["benchmarks"] = scored
    return {"benchmarks": reports, "average": average}


def evaluate_benchmark(
    path: str | Path, encoder: Encoder, batch_queries: int = 2048
) -> dict[str, Any]:
    """Score an encoder on one benchmark file; see :func:`evaluate_ranking` for the report."""
    path = Path(path)
    report: dict[str, Any] = {
        "status": "ok",
        "path": str(path),
        "rows": 0,
        "queries": 0,
        "skipped_no_positive": 0,
        "tied_queries": 0,
        **dict.fromkeys(METRICS),
    }
    if not path.is_file():
        return {**report, "status": "missing"}
    if path.stat().st_size == 0:
        return {**report, "status": "empty"}
    try:
        queries, candidates, labels = _read(path)
    except _InvalidBenchmark as exc:
        return {**report, "status": "invalid", "error": str(exc)}
    report["rows"] = len(queries)
    if not queries:
        return {**report, "status": "empty"}
    if isinstance(encoder, CorpusFitted) and not encoder.fitted:
        encoder = encoder.fit(
            list(dict.fromkeys([*queries, *(c for cs in candidates for c in cs)]))
        )
    per_query: dict[str, list[npt.NDArray[np.float64]]] = {m: [] for m in METRICS}
    # Queries with the same number of candidates are scored as one matrix (q, n).
    sizes = np.array([len(c) for c in candidates])
    has_positive = np.array([any(y) for y in labels], dtype=bool)
    report["skipped_no_positive"] = int((~has_positive).sum())
    for n in np.unique(sizes[has_positive]):
        rows = np.flatnonzero((sizes == n) & has_positive)
        for start in range(0, rows.size, batch_queries):
            chunk = rows[start : start + batch_queries]
            scores = _scores(encoder, [queries[i] for i in chunk], [candidates[i] for i in chunk])
            y = np.array([labels[i] for i in chunk], dtype=np.int8)  # (q, n)
            ranked = rank_by_scores(scores, y)  # (q, n)
            optimistic = rank_by_scores(scores, y, ties="optimistic")
            report["tied_queries"] += int((ranked != optimistic).any(axis=1).sum())
            per_query["ndcg"].append(np.atleast_1d(ndcg(ranked)))
            per_query["map"].append(np.atleast_1d(average_precision(ranked)))
            per_query["mrr@10"].append(np.atleast_1d(mrr(ranked, k=10)))
    report["queries"] = int(has_positive.sum())
    if report["queries"]:
        for metric, values in per_query.items():
            report[metric] = float(np.concatenate(values).mean())
    return report


def _scores(
    encoder: Encoder, queries: list[str], candidates: list[list[str]]
) -> npt.NDArray[np.float64]:
    """Cosine of each candidate with its query, float64 ``(q, n)``; rows equally long."""
    position: dict[str, int] = {}
    left = [position.setdefault(q, len(position)) for q in queries]
    right = [[position.setdefault(c, len(position)) for c in cs] for cs in candidates]
    n = len(right[0])
    pairs_left = np.repeat(np.asarray(left, dtype=np.int64), n)  # (q * n,)
    pairs_right = np.asarray(right, dtype=np.int64).reshape(-1)  # (q * n,)
    scores = cosine_scores(encoder, list(position), pairs_left, pairs_right)  # (q * n,)
    return scores.astype(np.float64).reshape(len(queries), n)


def _read(path: Path) -> tuple[list[str], list[list[str]], list[list[int]]]:
    """Queries, candidate lists and label lists of a benchmark file, checked.

    Raises:
        _InvalidBenchmark: not Parquet, a column missing or of the wrong type, a null, a
            candidate list and label list of different lengths, or a label other than 0/1.
    """
    try:
        table = pq.read_table(path, columns=list(_COLUMNS))
    except (pa.ArrowException, OSError) as exc:
        raise _InvalidBenchmark(f"cannot read {path} as a benchmark: {exc}") from exc
    expected = arrow_schema(BENCHMARK)
    for name in _COLUMNS:
        want, got = expected.field(name).type, table.schema.field(name).type
        if _signature(got) != _signature(want):
            raise _InvalidBenchmark(f"{path}: column {name!r} is {got}, expected {want}")
        column = table.column(name)
        is_list = pa.types.is_list(column.type) or pa.types.is_large_list(column.type)
        inner = pc.list_flatten(column) if is_list else column
        if column.null_count or inner.null_count:
            raise _InvalidBenchmark(f"{path}: column {name!r} has nulls")
    candidates = table.column("candidates")
    labels = table.column("labels")
    lengths_differ = pc.not_equal(pc.list_value_length(candidates), pc.list_value_length(labels))
    if pc.any(lengths_differ).as_py():
        row = int(pc.index(lengths_differ, True).as_py())
        raise _InvalidBenchmark(f"{path}: row {row} has candidates and labels of different lengths")
    flat_labels = pc.list_flatten(labels)
    if len(flat_labels) and not pc.all(pc.is_in(flat_labels, pa.array([0, 1], pa.int8()))).as_py():
        raise _InvalidBenchmark(f"{path}: labels must be 1 or 0")
    return table.column("query").to_pylist(), candidates.to_pylist(), labels.to_pylist()


def _signature(dtype: pa.DataType) -> str:
    """``dtype`` up to list item names and nullability, large variants as plain ones."""
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return f"list<{_signature(dtype.value_type)}>"
    if pa.types.is_large_string(dtype):
        return "string"
    return str(dtype)

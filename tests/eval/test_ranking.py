"""Ranking evaluation over benchmark Parquet files written with the real schema."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from corpusforge.eval import TfidfEncoder, evaluate_ranking, load_encoder
from tests.eval import write_benchmark

# Query "q" = (1, 0) and "r" = (0, 1); candidate cosines with q: p1 1.0, n1 0.8, p2 0.6,
# n2 0.0; with r: p1 0.0, n1 0.6, p2 0.8, n2 1.0.
VECTORS = {
    "q": [1.0, 0.0],
    "r": [0.0, 1.0],
    "p1": [1.0, 0.0],
    "n1": [0.8, 0.6],
    "p2": [0.6, 0.8],
    "n2": [0.0, 1.0],
}
ROWS = [
    ("q", ["p1", "p2", "n1", "n2"], [1, 1, 0, 0]),
    ("r", ["p1", "p2", "n1", "n2"], [1, 1, 0, 0]),
]
# q ranks p1 n1 p2 n2 -> [1, 0, 1, 0]: nDCG = (1 + 0.5) / (1 + 0.630930) = 0.919721,
#   AP = (1/1 + 2/3) / 2 = 0.833333, RR = 1
# r ranks n2 p2 n1 p1 -> [0, 1, 0, 1]: nDCG = (0.630930 + 0.430677) / 1.630930 = 0.650921,
#   AP = (1/2 + 2/4) / 2 = 0.5, RR = 1/2
# means: nDCG 0.785321, MAP 0.666667, MRR@10 0.75
EXPECTED = {"ndcg": 0.785321, "map": 0.666667, "mrr@10": 0.75}


class Lookup:
    """A toy dense encoder: a fixed unit vector per known text."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([VECTORS[t] for t in texts], dtype=np.float32)


class Constant:
    """Embeds every text alike, so every candidate ties."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)


def test_scores_by_hand(tmp_path):
    write_benchmark(tmp_path / "dq.parquet", ROWS)
    report = evaluate_ranking(tmp_path, Lookup())
    dq = report["benchmarks"]["dq"]
    assert (dq["status"], dq["rows"], dq["queries"], dq["tied_queries"]) == ("ok", 2, 2, 0)
    for metric, value in EXPECTED.items():
        assert dq[metric] == pytest.approx(value, abs=1e-6)
        assert report["average"][metric] == pytest.approx(value, abs=1e-6)
    assert report["average"]["benchmarks"] == ["dq"]


def test_other_benchmarks_are_reported_missing_not_fatal(tmp_path):
    write_benchmark(tmp_path / "cr.parquet", ROWS)
    report = evaluate_ranking(tmp_path, Lookup())
    statuses = {name: r["status"] for name, r in report["benchmarks"].items()}
    assert statuses == {"dq": "missing", "dr": "missing", "cq": "missing", "cr": "ok"}
    assert report["benchmarks"]["dq"]["ndcg"] is None


def test_empty_and_unreadable_files_are_reported(tmp_path):
    write_benchmark(tmp_path / "dq.parquet", [])  # valid Parquet, no rows
    (tmp_path / "dr.parquet").write_bytes(b"")  # zero bytes
    (tmp_path / "cq.parquet").write_bytes(b"not parquet at all")
    write_benchmark(tmp_path / "cr.parquet", ROWS)
    report = evaluate_ranking(tmp_path, Lookup())
    b = report["benchmarks"]
    assert (b["dq"]["status"], b["dr"]["status"], b["cq"]["status"]) == (
        "empty",
        "empty",
        "invalid",
    )
    assert "cannot read" in b["cq"]["error"]
    assert report["average"]["benchmarks"] == ["cr"]


def test_nothing_to_score_gives_no_average(tmp_path):
    report = evaluate_ranking(tmp_path / "absent", Lookup())
    assert report["average"] == {"ndcg": None, "map": None, "mrr@10": None, "benchmarks": []}


def test_invalid_rows_are_reported(tmp_path):
    write_benchmark(tmp_path / "dq.parquet", [("q", ["p1", "p2"], [1])])
    write_benchmark(tmp_path / "dr.parquet", [("q", ["p1", "p2"], [1, 2])])
    b = evaluate_ranking(tmp_path, Lookup())["benchmarks"]
    assert b["dq"]["status"] == "invalid" and "row 0" in b["dq"]["error"]
    assert b["dr"]["status"] == "invalid" and "1 or 0" in b["dr"]["error"]


def test_wrong_column_type_is_reported(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"query": ["q"], "candidates": [["p1"]], "labels": [["1"]]})
    pq.write_table(table, tmp_path / "dq.parquet")
    dq = evaluate_ranking(tmp_path, Lookup())["benchmarks"]["dq"]
    assert dq["status"] == "invalid" and "'labels'" in dq["error"]


def test_queries_without_a_positive_are_skipped_and_counted(tmp_path):
    write_benchmark(tmp_path / "dq.parquet", [*ROWS, ("q", ["n1", "n2"], [0, 0])])
    dq = evaluate_ranking(tmp_path, Lookup())["benchmarks"]["dq"]
    assert (dq["rows"], dq["queries"], dq["skipped_no_positive"]) == (3, 2, 1)
    assert dq["ndcg"] == pytest.approx(EXPECTED["ndcg"], abs=1e-6)


def test_queries_with_different_candidate_counts(tmp_path):
    # the extra query ranks p1 first: nDCG = AP = RR = 1
    write_benchmark(tmp_path / "dq.parquet", [*ROWS, ("q", ["n2", "p1", "n1"], [0, 1, 0])])
    dq = evaluate_ranking(tmp_path, Lookup())["benchmarks"]["dq"]
    assert dq["queries"] == 3
    assert dq["ndcg"] == pytest.approx((0.919721 + 0.650921 + 1) / 3, abs=1e-6)
    assert dq["mrr@10"] == pytest.approx((1 + 0.5 + 1) / 3)


def test_batching_does_not_change_the_scores(tmp_path):
    write_benchmark(tmp_path / "dq.parquet", ROWS * 3)
    whole = evaluate_ranking(tmp_path, Lookup())
    one_by_one = evaluate_ranking(tmp_path, Lookup(), batch_queries=1)
    assert whole == one_by_one
    with pytest.raises(ValueError, match="batch_queries"):
        evaluate_ranking(tmp_path, Lookup(), batch_queries=0)


def test_a_constant_model_gets_the_pessimistic_minimum(tmp_path):
    # 5 positives listed first, 25 negatives: all tie, positives rank 26..30 -> 0.349272
    rows = [
        (f"query {i}", [f"cand {i} {j}" for j in range(30)], [1] * 5 + [0] * 25) for i in range(4)
    ]
    write_benchmark(tmp_path / "dq.parquet", rows)
    dq = evaluate_ranking(tmp_path, Constant())["benchmarks"]["dq"]
    assert dq["ndcg"] == pytest.approx(0.349272, abs=1e-6)
    assert dq["mrr@10"] == 0.0
    assert dq["tied_queries"] == 4


def test_lexical_baseline_is_fitted_per_benchmark(tmp_path):
    rows = [
        (
            "the striker scored a late goal",
            ["late goal by the striker", "rain expected tomorrow", "new phone launched"],
            [1, 0, 0],
        ),
        (
            "heavy rain expected this weekend",
            ["stocks fell", "weekend rain warning", "goal of the month"],
            [0, 1, 0],
        ),
    ]
    write_benchmark(tmp_path / "dq.parquet", rows)
    report = evaluate_ranking(tmp_path, load_encoder("lexical"))
    assert report["benchmarks"]["dq"]["ndcg"] == pytest.approx(1.0)
    # an encoder fitted elsewhere is used as it is: no known word, every score ties at 0
    elsewhere = evaluate_ranking(tmp_path, TfidfEncoder(["unrelated words only"]))
    assert elsewhere["benchmarks"]["dq"]["tied_queries"] == 2
    assert elsewhere["benchmarks"]["dq"]["mrr@10"] == pytest.approx((1 / 3 + 1 / 3) / 2)

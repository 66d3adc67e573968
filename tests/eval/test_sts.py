"""STS reading, correlations by hand, and the TF-IDF baseline on the real STS benchmark."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.eval import TfidfEncoder, evaluate_sts, load_encoder, read_sts
from corpusforge.eval.sts import average_ranks, pearson, spearman

STSB_LINES = (
    "main-captions\tMSRvid\t2012test\t0001\t5.000\t"
    "A man is playing a guitar.\tA man plays a guitar.\n"
    'main-news\theadlines\t2013\t0002\t0.250\tThe cat "sat" on the mat.\tStocks fell sharply.\n'
    "main-forums\tanswer-answer\t2016\t0003\t3\t"
    "In the US, it depends.\tIt really depends.\tSource A\tSource B\n"
)


def test_average_ranks_share_ties():
    # sorted: 5 (rank 1), 10 (rank 2), 20 20 (ranks 3 and 4 -> 3.5 each)
    assert average_ranks([10, 20, 20, 5]).tolist() == [2.0, 3.5, 3.5, 1.0]


def test_pearson_by_hand():
    # x = [1, 2, 3], y = [1, 2, 4]: dx = [-1, 0, 1], dy = [-4/3, -1/3, 5/3]
    # cov = 4/3 + 5/3 = 3; sum dx^2 = 2; sum dy^2 = 42/9 -> r = 3 / sqrt(2 * 42/9) = 0.981981
    assert pearson([1, 2, 3], [1, 2, 4]) == pytest.approx(0.981981, abs=1e-6)


def test_spearman_by_hand():
    # no ties: rho = 1 - 6 * sum d^2 / (n (n^2 - 1)); d = [0, 1, 1, 0] -> 1 - 12/60 = 0.8
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    # ties: ranks x = [1, 2.5, 2.5, 4], y = [1, 2, 3, 4]; dx = [-1.5, 0, 0, 1.5],
    # dy = [-1.5, -0.5, 0.5, 1.5]: cov = 4.5, sum dx^2 = 4.5, sum dy^2 = 5
    # -> 4.5 / sqrt(4.5 * 5) = 0.948683
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.948683, abs=1e-6)


def test_correlation_is_nan_when_undefined():
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1], [2]))
    with pytest.raises(ValueError, match="differ in length"):
        pearson([1, 2], [1, 2, 3])


@given(
    st.lists(st.integers(-50, 50), min_size=3, max_size=30).flatmap(
        lambda x: st.tuples(
            st.just(x), st.lists(st.integers(-50, 50), min_size=len(x), max_size=len(x))
        )
    )
)
def test_spearman_ignores_monotone_transforms(pair):
    x, y = (np.asarray(v, dtype=np.float64) for v in pair)
    expected = spearman(x, y)
    transformed = spearman(x**3 + 2 * x, np.exp(y / 10))  # strictly increasing maps
    assert (math.isnan(expected) and math.isnan(transformed)) or transformed == pytest.approx(
        expected
    )


def test_read_stsb_layout_with_quotes_and_extra_columns(tmp_path):
    path = tmp_path / "sts.csv"
    path.write_text(STSB_LINES, encoding="utf-8")
    pairs = read_sts(path)
    assert pairs.left[1] == 'The cat "sat" on the mat.'  # quoting off: quotes are text
    assert pairs.right == ["A man plays a guitar.", "Stocks fell sharply.", "It really depends."]
    assert pairs.scores.tolist() == [5.0, 0.25, 3.0]


def test_read_simple_layout_and_reject_other_formats(tmp_path):
    simple = tmp_path / "simple.tsv"
    simple.write_text("4.5\tA dog runs.\tA dog is running.\n\n0\tHi\tBye\n", encoding="utf-8")
    pairs = read_sts(simple)
    assert (pairs.left, pairs.scores.tolist()) == (["A dog runs.", "Hi"], [4.5, 0.0])
    plain = tmp_path / "plain.txt"
    plain.write_text("just a sentence\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"plain.txt:1: not an STS line"):
        read_sts(plain)
    with pytest.raises(ValueError, match="format must be one of"):
        read_sts(simple, format="pit")


def test_evaluate_sts_with_the_lexical_baseline(tmp_path):
    path = tmp_path / "sts.tsv"
    path.write_text(
        "5\tthe cat sat on the mat\tthe cat sat on the mat\n"
        "3\tthe cat sat on the mat\tthe cat sat on a rug\n"
        "0\tthe cat sat on the mat\tstocks fell sharply today\n",
        encoding="utf-8",
    )
    report = evaluate_sts(path, load_encoder("lexical"))
    # cosines 1 > partial overlap > 0 follow the gold order exactly
    assert report["pairs"] == 3
    assert report["spearman"] == pytest.approx(1.0)
    assert 0.9 < report["pearson"] <= 1.0


def test_a_fitted_encoder_is_used_as_it_is(tmp_path):
    path = tmp_path / "sts.tsv"
    path.write_text(
        "5\tcat sat\tcat sat\n1\tcat sat\tdog ran\n0\tcat sat\tbird flew\n", encoding="utf-8"
    )
    # fitted on texts without "dog" or "bird": both unrelated pairs score 0, a tie
    report = evaluate_sts(path, TfidfEncoder(["cat sat", "cat ran"]))
    # cosine ranks [3, 1.5, 1.5], gold ranks [3, 2, 1]: dx = [1, -0.5, -0.5], dy = [1, 0, -1]
    # cov = 1 + 0.5 = 1.5; sum dx^2 = 1.5; sum dy^2 = 2 -> 1.5 / sqrt(3) = 0.866025
    assert report["spearman"] == pytest.approx(0.866025, abs=1e-6)


def test_lexical_baseline_on_the_real_stsb_dev_set(realdata):
    # measured: Pearson 0.7533, Spearman 0.7558 (same as sklearn's TfidfVectorizer cosine)
    report = evaluate_sts(realdata / "stsbenchmark" / "sts-dev.csv", load_encoder("lexical"))
    assert report["pairs"] == 1500
    assert 0.70 < report["pearson"] < 0.80
    assert 0.70 < report["spearman"] < 0.80

"""The Encoder protocols, generic cosine scoring and the TF-IDF baseline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from corpusforge.eval.lexical import (
    CorpusFitted,
    Encoder,
    PairScorer,
    TfidfEncoder,
    analyse,
    cosine_scores,
)

CORPUS = ["cat sat", "cat ran"]
# N = 2 texts; df(cat) = 2, df(sat) = df(ran) = 1; smooth idf = ln((1 + N) / (1 + df)) + 1:
# idf(cat) = ln(3/3) + 1 = 1, idf(sat) = idf(ran) = ln(3/2) + 1 = 1.405465.
# "cat sat": norm = sqrt(1 + 1.405465^2) = 1.724915 -> cat 0.579739, sat 0.814802.
# cos("cat sat", "cat ran") = 0.579739^2 = 0.336097.
# "cat cat sat": tf(cat) = 2 -> norm sqrt(4 + 1.975332) = 2.444449 -> cat 0.818180;
# cos("cat cat sat", "cat ran") = 0.818180 * 0.579739 = 0.474331.


class DenseOnly:
    """Hides ``score_pairs`` so that cosine_scores takes the generic ``encode`` path."""

    def __init__(self, inner: Encoder, scale: float = 1.0) -> None:
        self.inner, self.scale = inner, scale

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.encode(texts) * self.scale


def test_analyse_matches_the_sklearn_token_rule():
    # lowercase, 2+ word characters; "I" and the "m" of "I'm" are too short
    assert analyse("Hello, World! I'm a cat_2 in café") == ["hello", "world", "cat_2", "in", "café"]


def test_tfidf_weights_by_hand():
    enc = TfidfEncoder(CORPUS)
    assert enc.fitted and enc.vocabulary_size == 3
    rows = enc.encode(["cat sat"])  # vocabulary sorted: cat, ran, sat
    assert rows.dtype == np.float32 and rows.shape == (1, 3)
    np.testing.assert_allclose(rows[0], [0.579739, 0.0, 0.814802], atol=1e-6)
    scores = enc.score_pairs(
        ["cat sat", "cat ran", "cat cat sat"], np.array([0, 2]), np.array([1, 1])
    )
    np.testing.assert_allclose(scores, [0.336097, 0.474331], atol=1e-6)


def test_unknown_words_carry_no_weight_and_wordless_text_gets_a_zero_row():
    enc = TfidfEncoder(CORPUS)
    rows = enc.encode(["cat dog", "!!", ""])
    np.testing.assert_allclose(rows[0], [1.0, 0.0, 0.0])
    assert not rows[1:].any()
    assert enc.score_pairs(["cat", "dog"], np.array([0]), np.array([1])).tolist() == [0.0]


def test_fit_returns_a_new_encoder_and_does_not_depend_on_text_order():
    blank = TfidfEncoder()
    assert not blank.fitted
    with pytest.raises(ValueError, match="not fitted"):
        blank.encode(["cat"])
    a, b = blank.fit([*CORPUS, "dog sat"]), blank.fit(["dog sat", *CORPUS[::-1]])
    assert not blank.fitted
    np.testing.assert_array_equal(a.encode(["cat sat dog"]), b.encode(["cat sat dog"]))


def test_texts_fitted_on_score_as_texts_tokenised_afresh():
    # the encoder keeps the tokens of the texts it was fitted on (repeats counted in df) and
    # scores those texts from them; the same words in a new string are tokenised again
    texts = ["cat sat", "cat ran", "cat sat", "The CAT, the mat", "dog"]
    enc = TfidfEncoder(texts)
    afresh = [f"{t} !" for t in texts]  # "!" is no token: the same words, not a fitted text
    left, right = np.array([0, 0, 1, 3, 2, 4]), np.array([1, 2, 3, 3, 3, 0])
    np.testing.assert_array_equal(
        enc.score_pairs(texts, left, right), enc.score_pairs(afresh, left, right)
    )
    np.testing.assert_array_equal(enc.encode(texts), enc.encode(afresh))
    assert enc.score_pairs(texts, left, right)[0] > 0  # not all zero: the words are known
    # N = 3, df(cat) = 3, df(sat) = 2: idf 1 and ln(4/3) + 1 = 1.287682, norm 1.630376
    repeated = TfidfEncoder(["cat sat", "cat sat", "cat ran"]).encode(["cat sat"])
    np.testing.assert_allclose(repeated[0], [0.613356, 0.0, 0.789807], atol=1e-6)


def test_tfidf_implements_every_protocol():
    enc = TfidfEncoder()
    assert isinstance(enc, Encoder)
    assert isinstance(enc, PairScorer)
    assert isinstance(enc, CorpusFitted)
    assert not isinstance(DenseOnly(enc), PairScorer)


def test_sparse_pair_scores_equal_the_dense_cosines():
    texts = [
        "a man is playing a guitar",
        "a man plays the guitar on stage",
        "the cat sat on the mat",
        "cats and dogs",
        "guitar guitar guitar",
        "???",
    ]
    enc = TfidfEncoder(texts[:4])
    rng = np.random.default_rng(0)
    left, right = rng.integers(0, len(texts), 40), rng.integers(0, len(texts), 40)
    sparse = cosine_scores(enc, texts, left, right)
    dense = cosine_scores(DenseOnly(enc), texts, left, right, batch_size=4)
    np.testing.assert_allclose(sparse, dense, atol=1e-6)
    # a text with itself: 1 when it has a known word, 0 otherwise
    same = cosine_scores(enc, texts, np.arange(6), np.arange(6))
    np.testing.assert_allclose(same, [1, 1, 1, 1, 1, 0], atol=1e-6)


def test_cosine_scores_renormalises_rows():
    enc = TfidfEncoder(CORPUS)
    texts = ["cat sat", "cat ran"]
    scaled = cosine_scores(DenseOnly(enc, scale=7.0), texts, [0], [1])
    np.testing.assert_allclose(scaled, [0.336097], atol=1e-6)


def test_cosine_scores_checks_indices_and_shapes():
    enc = TfidfEncoder(CORPUS)
    with pytest.raises(ValueError, match="left has 2 indices but right has 1"):
        cosine_scores(enc, ["cat"], [0, 0], [0])
    with pytest.raises(ValueError, match=r"right indices must lie in \[0, 1\)"):
        cosine_scores(enc, ["cat"], [0], [1])

    class Broken:
        def encode(self, texts: Sequence[str]) -> np.ndarray:
            return np.zeros((len(texts) + 1, 4), dtype=np.float32)

    with pytest.raises(ValueError, match="encoder returned shape"):
        cosine_scores(Broken(), ["a", "b"], [0], [1])
    assert cosine_scores(DenseOnly(enc), [], [], []).shape == (0,)

"""The ``Encoder`` interface that every evaluated model implements, and a TF-IDF baseline.

An encoder turns texts into L2-normalised float32 rows; evaluation scores a pair of texts by
the cosine of their rows (:func:`cosine_scores`). :class:`TfidfEncoder` is the lexical
baseline with no neural dependency: TF-IDF weights fitted on one collection of texts (by
default, each benchmark's own queries and candidates), cosine on sparse rows. It also
implements :class:`PairScorer`, which lets evaluation score millions of pairs without
materialising dense vocabulary-wide vectors.

    corpusforge eval ranking --benchmarks RELEASE/benchmarks --model lexical
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

FloatRows = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

# Token rule of scikit-learn's ``TfidfVectorizer()`` defaults: lowercase, words of 2+ word
# characters. Together with the smoothed idf below, rows equal that vectorizer's output.
_TOKEN = re.compile(r"\w\w+")  # same matches as sklearn's r"(?u)\b\w\w+\b", faster


@runtime_checkable
class Encoder(Protocol):
    """Anything that embeds texts: the TF-IDF baseline here, trained models elsewhere.

    ``encode`` must be deterministic and return a float32 array of shape ``(len(texts), d)``
    whose rows have unit L2 norm (a text the model cannot represent may get a zero row).
    Evaluation compares two texts by the dot product of their rows, i.e. their cosine.
    """

    def encode(self, texts: Sequence[str]) -> FloatRows:
        """Embed ``texts``: float32 ``(len(texts), d)``, unit-norm rows."""
        ...


@runtime_checkable
class PairScorer(Protocol):
    """An encoder that scores pairs of texts directly, e.g. on sparse rows.

    Optional: :func:`cosine_scores` prefers it over ``encode`` where an encoder has both.
    """

    def score_pairs(self, texts: Sequence[str], left: IntArray, right: IntArray) -> FloatRows:
        """Cosine of ``texts[left[i]]`` and ``texts[right[i]]`` for each i: float32 ``(n,)``."""
        ...


@runtime_checkable
class CorpusFitted(Protocol):
    """An encoder whose parameters come from the collection it is evaluated on.

    Evaluation calls ``fit`` with the texts of each benchmark or STS file when ``fitted`` is
    false, and uses the encoder as it is when ``fitted`` is true.
    """

    @property
    def fitted(self) -> bool:
        """Whether the encoder has its parameters (a vocabulary, say)."""
        ...

    def fit(self, texts: Sequence[str]) -> Encoder:
        """A new encoder fitted on ``texts``; ``self`` is left unchanged."""
        ...


def cosine_scores(
    encoder: Encoder,
    texts: Sequence[str],
    left: npt.ArrayLike,
    right: npt.ArrayLike,
    *,
    batch_size: int = 8192,
) -> FloatRows:
    """Cosine similarity of pairs of texts given by index, under ``encoder``.

    Each entry of ``texts`` is encoded once (pass them deduplicated); rows are normalised
    again here, so an encoder whose rows are not quite unit-norm still gives cosines (a
    zero row scores 0).

    Args:
        encoder: the model; a :class:`PairScorer` scores the pairs itself.
        texts: the distinct texts the pairs refer to.
        left: index into ``texts`` of the first text of each pair, shape ``(n,)``.
        right: index into ``texts`` of the second text of each pair, shape ``(n,)``.
        batch_size: texts per ``encode`` call, which bounds the encoder's working memory.

    Returns:
        float32 ``(n,)``: the cosine of each pair.
    """
    left_idx, right_idx = _pair_indices(left, right, len(texts))
    if isinstance(encoder, PairScorer):
        return np.asarray(encoder.score_pairs(texts, left_idx, right_idx), dtype=np.float32)
    chunks = [
        np.asarray(encoder.encode(texts[i : i + batch_size]), dtype=np.float32)
        for i in range(0, len(texts), batch_size)
    ]
    if not chunks:
        return np.zeros(0, dtype=np.float32)
    rows = np.concatenate(chunks)  # (len(texts), d)
    if rows.ndim != 2 or rows.shape[0] != len(texts):
        raise ValueError(f"encoder returned shape {rows.shape} for {len(texts)} texts")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)  # (len(texts), 1)
    rows = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    out = np.empty(len(left_idx), dtype=np.float32)
    for i in range(0, len(left_idx), batch_size):  # (batch, d) x (batch, d) -> (batch,)
        a, b = rows[left_idx[i : i + batch_size]], rows[right_idx[i : i + batch_size]]
        out[i : i + batch_size] = np.einsum("ij,ij->i", a, b)
    return out


def analyse(text: str) -> list[str]:
    """The TF-IDF tokens of ``text``: lowercase runs of two or more word characters."""
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class _SparseRows:
    """L2-normalised TF-IDF rows in CSR layout, plus each entry's global ``row * V + col`` key.

    Keys are strictly increasing (rows in order, columns sorted within a row), which lets
    :meth:`TfidfEncoder.score_pairs` find a column of a row by binary search.
    """

    indptr: IntArray  # (n_rows + 1,)
    cols: IntArray  # (nnz,)
    weights: npt.NDArray[np.float64]  # (nnz,)
    keys: IntArray  # (nnz,)


class TfidfEncoder:
    """TF-IDF vectors with cosine similarity: the lexical baseline of the evaluation.

    Weights follow scikit-learn's ``TfidfVectorizer()`` defaults: raw term counts times the
    smoothed inverse document frequency ``ln((1 + N) / (1 + df)) + 1`` over the ``N`` fitted
    texts, rows L2-normalised; tokens are :func:`analyse`'s, and a word not seen when fitting
    is ignored. Salton & Buckley, "Term-weighting approaches in automatic text retrieval",
    Information Processing & Management 24(5), 1988.

    ``TfidfEncoder()`` is unfitted: the evaluators fit it on each benchmark's own texts.
    ``TfidfEncoder(texts)`` is fitted on ``texts`` and used as it is everywhere.

    Args:
        texts: the collection to fit the vocabulary and document frequencies on; ``None``
            leaves the encoder unfitted.
    """

    def __init__(self, texts: Iterable[str] | None = None) -> None:
        self._vocab: dict[str, int] | None = None
        self._idf: npt.NDArray[np.float64] = np.zeros(0)
        self._fitted_tokens: dict[str, list[str]] = {}
        if texts is not None:
            self._fit(list(texts))

    @property
    def fitted(self) -> bool:
        """Whether a vocabulary was fitted."""
        return self._vocab is not None

    @property
    def vocabulary_size(self) -> int:
        """Number of distinct tokens in the fitted texts (0 when unfitted)."""
        return len(self._vocab or ())

    def fit(self, texts: Sequence[str]) -> TfidfEncoder:
        """A new encoder fitted on ``texts``; ``self`` is left unchanged."""
        return TfidfEncoder(texts)

    def encode(self, texts: Sequence[str]) -> FloatRows:
        """Dense TF-IDF rows, float32 ``(len(texts), vocabulary_size)``, unit norm or zero.

        Memory grows with ``len(texts) * vocabulary_size``: meant for a few texts. The
        evaluators use :meth:`score_pairs`, which stays sparse.
        """
        rows = self._rows(texts)
        dense = np.zeros((len(texts), self.vocabulary_size), dtype=np.float32)
        row_of_entry = np.repeat(np.arange(len(texts)), np.diff(rows.indptr))  # (nnz,)
        dense[row_of_entry, rows.cols] = rows.weights
        return dense

    def score_pairs(self, texts: Sequence[str], left: IntArray, right: IntArray) -> FloatRows:
        """Cosine of ``texts[left[i]]`` and ``texts[right[i]]``, computed on sparse rows.

        For each pair, each term of the left row is looked up in the right row by binary
        search over the global ``row * V + col`` keys; the products are summed per pair.

        Args:
            texts: the distinct texts the pairs refer to.
            left: index into ``texts`` of the first text of each pair, shape ``(n,)``.
            right: index into ``texts`` of the second text of each pair, shape ``(n,)``.

        Returns:
            float32 ``(n,)`` cosines in ``[0, 1]``.
        """
        left_idx, right_idx = _pair_indices(left, right, len(texts))
        rows = self._rows(texts)
        n_pairs = len(left_idx)
        if rows.keys.size == 0 or n_pairs == 0:
            return np.zeros(n_pairs, dtype=np.float32)
        starts = rows.indptr[left_idx]  # (n,)
        lengths = rows.indptr[left_idx + 1] - starts  # (n,): terms in each left row
        pair = np.repeat(np.arange(n_pairs), lengths)  # (m,): pair of each expanded entry
        first = np.cumsum(lengths) - lengths  # (n,): where each pair's entries begin
        entry = np.repeat(starts - first, lengths) + np.arange(pair.size)  # (m,) into cols
        wanted = right_idx[pair] * self.vocabulary_size + rows.cols[entry]  # (m,) keys
        found = np.minimum(np.searchsorted(rows.keys, wanted), rows.keys.size - 1)  # (m,)
        hit = rows.keys[found] == wanted
        products = np.where(hit, rows.weights[entry] * rows.weights[found], 0.0)  # (m,)
        return np.bincount(pair, weights=products, minlength=n_pairs).astype(np.float32)

    def _fit(self, texts: list[str]) -> None:
        # The evaluators score the texts they fit on: each is tokenised once, here.
        tokens = [analyse(x) for x in texts]
        self._fitted_tokens = dict(zip(texts, tokens, strict=True))
        df = Counter(chain.from_iterable(map(set, tokens)))  # texts per term, repeats counted
        terms = sorted(df)  # canonical ids: independent of the order of the texts
        self._vocab = {t: i for i, t in enumerate(terms)}
        counts = np.fromiter((df[t] for t in terms), dtype=np.float64, count=len(terms))  # (V,)
        self._idf = np.log((1.0 + len(texts)) / (1.0 + counts)) + 1.0  # (V,), smooth idf

    def _rows(self, texts: Sequence[str]) -> _SparseRows:
        if self._vocab is None:
            raise ValueError("TfidfEncoder is not fitted: build it with texts, or call fit()")
        vocab_size = self.vocabulary_size
        get, fitted = self._vocab.get, self._fitted_tokens
        token_ids = [
            list(map(get, fitted[x] if x in fitted else analyse(x), repeat(-1))) for x in texts
        ]
        flat, row = _flatten(token_ids)
        known = flat >= 0  # words not seen when fitting carry no weight
        keys, counts = np.unique(row[known] * vocab_size + flat[known], return_counts=True)
        row_of, cols = np.divmod(keys, max(vocab_size, 1))  # (nnz,) each
        weights = counts * self._idf[cols]  # (nnz,): tf * idf
        norms = np.sqrt(np.bincount(row_of, weights=weights**2, minlength=len(texts)))
        weights = weights / norms[row_of]
        indptr = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_of, minlength=len(texts)), out=indptr[1:])
        return _SparseRows(indptr=indptr, cols=cols, weights=weights, keys=keys)


def _flatten(token_ids: list[list[int]]) -> tuple[IntArray, IntArray]:
    """Concatenated token ids and the index of the text each came from, both ``(total,)``."""
    lengths = np.fromiter((len(ids) for ids in token_ids), dtype=np.int64, count=len(token_ids))
    total = int(lengths.sum())
    flat = np.fromiter(chain.from_iterable(token_ids), dtype=np.int64, count=total)
    return flat, np.repeat(np.arange(len(token_ids), dtype=np.int64), lengths)


def _pair_indices(
    left: npt.ArrayLike, right: npt.ArrayLike, n_texts: int
) -> tuple[IntArray, IntArray]:
    """``left`` and ``right`` as int64 arrays, checked to be aligned and to index ``texts``."""
    a = np.asarray(left, dtype=np.int64).reshape(-1)
    b = np.asarray(right, dtype=np.int64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"left has {a.size} indices but right has {b.size}")
    for side, idx in (("left", a), ("right", b)):
        if idx.size and (idx.min() < 0 or idx.max() >= n_texts):
            raise ValueError(
                f"{side} indices must lie in [0, {n_texts}), got {idx.min()}..{idx.max()}"
            )
    return a, b

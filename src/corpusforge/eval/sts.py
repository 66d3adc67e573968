"""STS files and an encoder -> Pearson and Spearman correlation of cosine with gold scores.

Reads the STS benchmark layout (``genre\\tfile\\tyear\\tid\\tscore\\ts1\\ts2[\\t...]``) and the
simple ``score\\ts1\\ts2`` layout, tab-separated with quoting off (see
:mod:`corpusforge.text.decontam`), and scores each pair by the cosine of its two
embeddings, as in Sentence-BERT's STS evaluation (Reimers & Gurevych, EMNLP 2019).

    corpusforge eval sts --data ../shared/realdata/stsbenchmark/sts-dev.csv --model lexical
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from corpusforge.eval.lexical import CorpusFitted, Encoder, cosine_scores
from corpusforge.text.decontam import EvalFormat, read_records

FloatArray = npt.NDArray[np.float64]

STS_FORMATS = (EvalFormat.STS.value, EvalFormat.STSB.value)


@dataclass(frozen=True)
class StsPairs:
    """Sentence pairs with gold similarity scores, aligned by position.

    Attributes:
        left: first sentence of each pair.
        right: second sentence of each pair.
        scores: gold score of each pair, float64 ``(n,)``.
    """

    left: list[str]
    right: list[str]
    scores: FloatArray


def read_sts(path: str | Path, format: str | None = None) -> StsPairs:
    """Read an STS file: every non-blank line is one scored pair.

    Args:
        path: the file, UTF-8, tab-separated.
        format: ``"stsb"`` or ``"sts"``; ``None`` detects it from the first line.

    Raises:
        ValueError: the file is in another format, or a line is malformed (the message
            names the line).
    """
    fmt = EvalFormat(format) if format is not None else None
    if fmt is not None and fmt.value not in STS_FORMATS:
        raise ValueError(f"format must be one of {STS_FORMATS}, got {format!r}")
    left: list[str] = []
    right: list[str] = []
    scores: list[float] = []
    for record in read_records(path, fmt):
        if record.score is None:
            raise ValueError(f"{path}:{record.line}: not an STS line (no score); pass format=")
        a, b = record.texts
        left.append(a)
        right.append(b)
        scores.append(record.score)
    return StsPairs(left, right, np.asarray(scores, dtype=np.float64))


def evaluate_sts(
    path: str | Path, encoder: Encoder, *, format: str | None = None
) -> dict[str, float | int]:
    """Correlate the encoder's cosine similarity of each pair with its gold score.

    An encoder that is :class:`~corpusforge.eval.lexical.CorpusFitted` and not yet fitted
    (the TF-IDF baseline from ``load_encoder("lexical")``) is fitted on the file's own
    distinct sentences first.

    Args:
        path: an STS file (see :func:`read_sts`).
        encoder: the model to score.
        format: ``"stsb"``, ``"sts"`` or ``None`` to detect it.

    Returns:
        ``{"pearson": r, "spearman": rho, "pairs": n}``; a correlation is NaN when either
        side is constant or there are fewer than two pairs.
    """
    pairs = read_sts(path, format)
    texts = list(dict.fromkeys(pairs.left + pairs.right))  # distinct, in first-seen order
    if isinstance(encoder, CorpusFitted) and not encoder.fitted:
        encoder = encoder.fit(texts)
    position = {text: i for i, text in enumerate(texts)}
    left = np.fromiter((position[t] for t in pairs.left), dtype=np.int64, count=len(pairs.left))
    right = np.fromiter((position[t] for t in pairs.right), dtype=np.int64, count=len(left))
    cosine = cosine_scores(encoder, texts, left, right).astype(np.float64)  # (n,)
    return {
        "pearson": pearson(cosine, pairs.scores),
        "spearman": spearman(cosine, pairs.scores),
        "pairs": len(left),
    }


def pearson(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Pearson's product-moment correlation of two aligned samples; NaN when undefined."""
    a, b = _aligned(x, y)
    if a.size < 2:
        return float("nan")
    a, b = a - a.mean(), b - b.mean()
    denominator = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denominator) if denominator > 0 else float("nan")


def spearman(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Spearman's rank correlation: Pearson's on ranks, ties given their average rank.

    The tie handling of ``scipy.stats.spearmanr`` (which this project does not depend on).
    """
    a, b = _aligned(x, y)
    return pearson(average_ranks(a), average_ranks(b))


def average_ranks(values: npt.ArrayLike) -> FloatArray:
    """1-based ranks of ``values`` in increasing order, tied values sharing their mean rank.

    ``[10, 20, 20, 5]`` -> ``[2.0, 3.5, 3.5, 1.0]`` (``scipy.stats.rankdata``'s "average").
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    order = np.argsort(v, kind="stable")
    sorted_v = v[order]
    starts = np.flatnonzero(np.r_[True, sorted_v[1:] != sorted_v[:-1]])  # first of each run
    ends = np.r_[starts[1:], v.size]  # one past the last of each run
    mean_rank = (starts + ends + 1) / 2.0  # mean of the 1-based ranks starts+1 .. ends
    ranks = np.empty(v.size, dtype=np.float64)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def _aligned(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    b = np.asarray(y, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"samples differ in length: {a.size} and {b.size}")
    return a, b

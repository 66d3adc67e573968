"""Training objectives on embedded pairs: (anchor, positive) embeddings -> a scalar loss.

Inputs are the embeddings of the ``anchor`` and ``positive`` columns of a batch of pairs
(``pair.v1``), row ``i`` of both being one pair; negatives are always positives of other pairs.

- ``mnrl_loss``: Multiple Negatives Ranking loss, Henderson et al. 2017, "Efficient Natural
  Language Response Suggestion for Smart Reply" (arXiv:1705.00652), as in sentence-transformers'
  ``MultipleNegativesRankingLoss`` (cosine similarity times ``scale`` = 20);
- ``triplet_loss``: hinge on distances, Schroff et al. 2015, "FaceNet" (arXiv:1503.03832); with
  cosine distance and margin 0.4 it is the objective of Wieting et al. 2019, "Simple and
  Effective Paraphrastic Similarity from Parallel Translations" (P-SP, arXiv:1909.13872),
  ``max(0, margin - cos(a, p) + cos(a, n))``; with euclidean distance, sentence-transformers'
  ``TripletLoss`` (whose default margin is 5);
- ``mse_loss``: multilingual distillation, Reimers & Gurevych 2020, "Making Monolingual
  Sentence Embeddings Multilingual using Knowledge Distillation" (arXiv:2004.09813): the
  student's embeddings of ``anchor`` and of ``positive`` both regress on the teacher's
  embedding of ``anchor`` (``distill`` computes those);
- ``hardest_negatives``: P-SP's mega-batch negative mining: for each anchor, the most similar
  positive of another pair.
"""

from __future__ import annotations

from enum import StrEnum

import torch
import torch.nn.functional as F

MNRL_SCALE = 20.0
"""sentence-transformers' default scale for MNRL (cosine similarity times 20)."""


class Distance(StrEnum):
    """The distance of ``triplet_loss``."""

    COSINE = "cosine"
    EUCLIDEAN = "euclidean"


DEFAULT_MARGIN = {Distance.COSINE: 0.4, Distance.EUCLIDEAN: 5.0}
"""P-SP's margin for cosine distance; sentence-transformers' ``TripletLoss`` one for euclidean."""


def mnrl_loss(
    anchors: torch.Tensor, positives: torch.Tensor, scale: float = MNRL_SCALE
) -> torch.Tensor:
    """Multiple Negatives Ranking loss: each anchor must pick its positive among the batch's.

    Args:
        anchors: ``(B, d)`` anchor embeddings.
        positives: ``(B, d)`` positive embeddings; row ``i`` is anchor ``i``'s positive and
            every other row is one of its negatives.
        scale: the inverse temperature applied to cosine similarities.

    Returns:
        The mean cross-entropy over the ``B`` anchors (a scalar).
    """
    if anchors.shape != positives.shape or anchors.dim() != 2:
        raise ValueError(
            f"need two (B, d) tensors, got {tuple(anchors.shape)} and {tuple(positives.shape)}"
        )
    a = F.normalize(anchors, dim=-1)  # (B, d)
    p = F.normalize(positives, dim=-1)  # (B, d)
    scores = scale * (a @ p.T)  # (B, B): scores[i, j] = scale * cos(anchor i, positive j)
    labels = torch.arange(scores.shape[0], device=scores.device)  # (B,): the right column is i
    return F.cross_entropy(scores, labels)  # scalar


def mse_loss(anchors: torch.Tensor, positives: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Distillation loss: mean squared error of both sides of a pair to the teacher's anchor.

    The student's rows are L2-normalised first, as the teacher's are (all-MiniLM-L6-v2 ends in
    a ``Normalize`` module, and so does a sentence-transformers student made from it), so the
    loss is ``mean((s/|s| - t)^2)`` over the ``2B`` rows and ``d`` dimensions, sentence-
    transformers' ``MSELoss`` on the concatenation ``[anchors; positives]``.

    Args:
        anchors: ``(B, d)`` student embeddings of the English anchors.
        positives: ``(B, d)`` student embeddings of their translations.
        targets: ``(B, d)`` teacher embeddings of the anchors, L2-normalised, no gradient.

    Returns:
        The mean squared error (a scalar).
    """
    if not anchors.shape == positives.shape == targets.shape or anchors.dim() != 2:
        raise ValueError(
            "need three (B, d) tensors of one shape, got "
            f"{tuple(anchors.shape)}, {tuple(positives.shape)}, {tuple(targets.shape)}"
        )
    student = F.normalize(torch.cat([anchors, positives]), dim=-1)  # (2B, d)
    teacher = torch.cat([targets, targets]).to(student.dtype)  # (2B, d)
    return F.mse_loss(student, teacher)  # scalar


def pair_distance(x: torch.Tensor, y: torch.Tensor, distance: Distance) -> torch.Tensor:
    """Row-wise distance of two ``(N, d)`` tensors: ``1 - cos`` or euclidean; shape ``(N,)``."""
    if distance is Distance.COSINE:
        return 1.0 - F.cosine_similarity(x, y, dim=-1)  # (N,)
    return torch.linalg.vector_norm(x - y, dim=-1)  # (N,)


def triplet_loss(
    anchors: torch.Tensor,
    positives: torch.Tensor,
    negatives: torch.Tensor,
    margin: float,
    distance: Distance = Distance.COSINE,
) -> torch.Tensor:
    """Hinge loss ``max(0, d(a, p) - d(a, n) + margin)``, averaged over rows.

    With ``Distance.COSINE`` this is P-SP's ``max(0, margin - cos(a, p) + cos(a, n))``.

    Args:
        anchors: ``(N, d)`` anchor embeddings.
        positives: ``(N, d)`` embeddings of each anchor's positive.
        negatives: ``(N, d)`` embeddings of each anchor's negative (another pair's positive).
        margin: how much closer the positive must be than the negative.
        distance: cosine distance (``1 - cos``) or euclidean distance.

    Returns:
        The mean hinge over the ``N`` rows (a scalar); ``0`` when ``N == 0``.
    """
    if not anchors.shape == positives.shape == negatives.shape:
        raise ValueError(
            "need three (N, d) tensors of one shape, got "
            f"{tuple(anchors.shape)}, {tuple(positives.shape)}, {tuple(negatives.shape)}"
        )
    if anchors.shape[0] == 0:
        return anchors.sum() * 0.0  # keeps the graph: a no-op step
    d_pos = pair_distance(anchors, positives, distance)  # (N,)
    d_neg = pair_distance(anchors, negatives, distance)  # (N,)
    return F.relu(d_pos - d_neg + margin).mean()  # scalar


@torch.no_grad()
def hardest_negatives(
    anchors: torch.Tensor, candidates: torch.Tensor, exclude: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """For each anchor, the most cosine-similar candidate that is not its own pair (P-SP).

    Args:
        anchors: ``(N, d)`` anchor embeddings of a mega-batch.
        candidates: ``(N, d)`` embeddings of the other side of the same ``N`` pairs; row ``i``
            is anchor ``i``'s own positive and is never chosen.
        exclude: optional ``(N, N)`` bool mask of further candidates that must not be chosen
            for an anchor (e.g. another copy of the same text: a false negative).

    Returns:
        ``(index, valid)``: ``(N,)`` int64 index of each anchor's hardest negative in
        ``candidates``, and ``(N,)`` bool, false for an anchor with no candidate left.
    """
    n = anchors.shape[0]
    scores = F.normalize(anchors, dim=-1) @ F.normalize(candidates, dim=-1).T  # (N, N) cosines
    blocked = torch.eye(n, dtype=torch.bool, device=scores.device)  # (N, N): own pair
    if exclude is not None:
        blocked = blocked | exclude.to(scores.device)
    scores = scores.masked_fill(blocked, float("-inf"))  # (N, N)
    index = scores.argmax(dim=1)  # (N,)
    valid = ~blocked.all(dim=1)  # (N,)
    return index, valid

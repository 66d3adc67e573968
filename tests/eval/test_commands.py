"""``corpusforge eval`` commands and the ``--model`` loader hook."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Sequence

import numpy as np
import pytest
from typer.testing import CliRunner

from corpusforge.commands.eval import app
from corpusforge.eval import (
    EncoderLoadError,
    TfidfEncoder,
    evaluate_ranking,
    load_encoder,
)
from tests.eval import write_benchmark

TRAINER = "corpusforge.train.models"
ROWS = [
    (
        "the striker scored a late goal",
        ["late goal by the striker", "rain expected tomorrow", "new phone"],
        [1, 0, 0],
    ),
    (
        "heavy rain expected this weekend",
        ["stocks fell", "weekend rain warning", "goal of the month"],
        [0, 1, 0],
    ),
]

runner = CliRunner()


class Hashing:
    """A stand-in for a trained model: bag of hashed characters, unit rows."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(texts), 16), dtype=np.float32)
        for i, text in enumerate(texts):
            for ch in text:
                rows[i, ord(ch) % 16] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def fake_trainer(loader) -> types.ModuleType:
    module = types.ModuleType(TRAINER)
    module.load_encoder = loader  # type: ignore[attr-defined]
    return module


def test_ranking_prints_a_table_and_writes_json(tmp_path):
    bench = tmp_path / "benchmarks"
    write_benchmark(bench / "dq.parquet", ROWS)
    write_benchmark(bench / "cr.parquet", ROWS)
    out = tmp_path / "reports" / "lexical.json"
    result = runner.invoke(
        app, ["ranking", "--benchmarks", str(bench), "--model", "lexical", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    for word in ("dq", "cr", "missing", "average", "1.0000"):
        assert word in result.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["model"] == "lexical"
    assert report["average"]["benchmarks"] == ["dq", "cr"]
    expected = evaluate_ranking(bench, TfidfEncoder())
    assert report["benchmarks"] == json.loads(json.dumps(expected["benchmarks"]))


def test_ranking_fails_when_nothing_could_be_scored(tmp_path):
    (tmp_path / "dq.parquet").write_bytes(b"garbage")
    result = runner.invoke(app, ["ranking", "--benchmarks", str(tmp_path), "--model", "lexical"])
    assert result.exit_code == 1
    assert "invalid" in result.stdout and "no benchmark could be scored" in result.stdout


def test_ranking_needs_an_existing_folder(tmp_path):
    result = runner.invoke(
        app, ["ranking", "--benchmarks", str(tmp_path / "nope"), "--model", "lexical"]
    )
    assert result.exit_code == 2


def test_sts_command(tmp_path):
    data = tmp_path / "sts.tsv"
    data.write_text(
        "5\tcat sat on the mat\tcat sat on the mat\n0\tcat sat on the mat\tstocks fell\n",
        encoding="utf-8",
    )
    out = tmp_path / "sts.json"
    result = runner.invoke(
        app, ["sts", "--data", str(data), "--model", "lexical", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "Spearman" in result.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["pairs"] == 2 and report["pearson"] == pytest.approx(1.0)


def test_sts_command_reports_a_bad_file(tmp_path):
    data = tmp_path / "sts.tsv"
    data.write_text("5\tcat\tcat\nfive\tdog\tdog\n", encoding="utf-8")
    result = runner.invoke(app, ["sts", "--data", str(data), "--model", "lexical"])
    assert result.exit_code == 2
    assert "sts.tsv:2: score 'five' is not a number" in result.stderr


def test_model_path_without_the_trainer_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, TRAINER, None)  # as if corpusforge.train did not exist
    write_benchmark(tmp_path / "dq.parquet", ROWS)
    result = runner.invoke(
        app, ["ranking", "--benchmarks", str(tmp_path), "--model", str(tmp_path / "m")]
    )
    assert result.exit_code == 2
    assert "use --model lexical" in result.stderr
    with pytest.raises(EncoderLoadError, match="does not have"):
        load_encoder("models/fast")


def test_model_path_goes_to_the_trainer_loader(tmp_path, monkeypatch):
    seen: list[str] = []

    def loader(spec: str) -> Hashing:
        seen.append(spec)
        return Hashing()

    monkeypatch.setitem(sys.modules, TRAINER, fake_trainer(loader))
    write_benchmark(tmp_path / "dq.parquet", ROWS)
    result = runner.invoke(
        app, ["ranking", "--benchmarks", str(tmp_path), "--model", "models/fast"]
    )
    assert result.exit_code == 0, result.output
    assert seen == ["models/fast"]


def test_loader_failures_become_load_errors(monkeypatch):
    def missing(spec: str) -> None:
        raise FileNotFoundError(f"{spec} holds no encoder.json")

    monkeypatch.setitem(sys.modules, TRAINER, fake_trainer(missing))
    with pytest.raises(EncoderLoadError, match=r"holds no encoder\.json"):
        load_encoder("models/none")
    monkeypatch.setitem(sys.modules, TRAINER, fake_trainer(lambda spec: object()))
    with pytest.raises(EncoderLoadError, match="no encode"):
        load_encoder("models/odd")
    monkeypatch.setitem(sys.modules, TRAINER, types.ModuleType(TRAINER))
    with pytest.raises(EncoderLoadError, match="has no load_encoder"):
        load_encoder("models/odd")


class NoTorch:
    """An import hook: importing the trainer module fails as it would without torch."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == TRAINER:
            raise ModuleNotFoundError("No module named 'torch'", name="torch")


def test_a_missing_trainer_dependency_is_named(monkeypatch):
    monkeypatch.delitem(sys.modules, TRAINER, raising=False)
    monkeypatch.setattr(sys, "meta_path", [NoTorch(), *sys.meta_path])
    with pytest.raises(EncoderLoadError, match="needs the module 'torch'"):
        load_encoder("models/fast")


def test_lexical_is_the_unfitted_tfidf_baseline():
    encoder = load_encoder("lexical")
    assert isinstance(encoder, TfidfEncoder) and not encoder.fitted

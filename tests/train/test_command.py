"""``corpusforge train`` as the CLI registers it: a plain function that typer wraps."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from corpusforge.commands.train import INSTALL_HINT, missing_modules, train
from tests.train import write_topical_release


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command("train")(train)

    @app.command("other")
    def other() -> None:  # a second command keeps "train" a sub-command, as in the CLI
        pass

    return app


def test_missing_torch_gets_an_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # find_spec("torch") is None now
    assert missing_modules("fast") == ["torch"]
    result = CliRunner().invoke(cli(), ["train", "--data", str(tmp_path), "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert INSTALL_HINT in " ".join(result.output.split())


def test_train_command_writes_a_model(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("sentencepiece")
    release = write_topical_release(tmp_path / "release", pairs=60, queries=1)
    args = ["train", "--data", str(release / "pairs" / "all"), "--out", str(tmp_path / "m")]
    args += ["--max-steps", "2", "--dim", "16", "--vocab-size", "200", "--loss", "mnrl"]
    result = CliRunner().invoke(cli(), args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m" / "encoder.json").is_file()
    assert "2 steps on 60 pairs" in " ".join(result.output.split())


def test_bad_values_are_usage_errors(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    args = ["train", "--data", str(tmp_path), "--out", str(tmp_path / "m"), "--loss", "cosent"]
    result = CliRunner().invoke(cli(), args)
    assert result.exit_code == 2
    assert "cosent" in result.output


def test_distillation_from_the_command_line(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("sentencepiece")
    pytest.importorskip("transformers")
    from tests.train import write_teacher

    release = write_topical_release(tmp_path / "release", pairs=60, queries=1)
    anchors = pq.read_table(release / "pairs" / "all", columns=["anchor"]).column("anchor")
    words = sorted({word for text in anchors.to_pylist() for word in text.split()})
    teacher = write_teacher(tmp_path / "teacher", words, seed=0)
    args = ["train", "--data", str(release / "pairs" / "all"), "--vocab-size", "200"]
    args += ["--max-steps", "2", "--loss", "mse", "--teacher", str(teacher)]
    first = CliRunner().invoke(cli(), [*args, "--out", str(tmp_path / "models" / "a")])
    assert first.exit_code == 0, first.output
    assert "60 distinct anchors, 60 embedded now, 0 from the cache" in " ".join(
        first.output.split()
    )
    second = CliRunner().invoke(cli(), [*args, "--out", str(tmp_path / "models" / "b")])
    assert "0 embedded now, 60 from the cache" in " ".join(second.output.split())
    from corpusforge.train.trainer import DEFAULT_LR, Loss

    log = json.loads((tmp_path / "models" / "a" / "train.json").read_text(encoding="utf-8"))
    assert log["config"]["lr"] == DEFAULT_LR[("fast", Loss.MSE)]  # no --lr: the loss's own
    assert len(list((tmp_path / "models" / "teacher-embeddings").glob("*.parquet"))) == 1


def test_mse_without_a_teacher_is_a_usage_error(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    release = write_topical_release(tmp_path / "release", pairs=10, queries=1)
    args = ["train", "--data", str(release / "pairs" / "all"), "--out", str(tmp_path / "m")]
    result = CliRunner().invoke(cli(), [*args, "--loss", "mse"])
    assert result.exit_code == 2
    assert "give teacher" in " ".join(result.output.split())

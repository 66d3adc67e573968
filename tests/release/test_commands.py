"""``corpusforge validate|stats|card`` through typer's CliRunner, on a small app of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from corpusforge.commands import release as commands
from corpusforge.inspect.stats import read_manifest
from tests.release import copy_release, synthetic_release

app = typer.Typer()
app.command("validate")(commands.validate)
app.command("stats")(commands.stats)
app.command("card")(commands.card)
runner = CliRunner()
WIDE = {"COLUMNS": "200"}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_release(tmp_path_factory)


def test_validate_passes_with_exit_0(synthetic: Path) -> None:
    result = runner.invoke(app, ["validate", str(synthetic)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "valid" in result.output


def test_validate_fails_with_exit_1_and_names_the_checks(synthetic: Path, tmp_path: Path) -> None:
    broken = copy_release(synthetic, tmp_path)
    next((broken / "pairs" / "qt").glob("*.parquet")).unlink()
    (broken / "pairs" / "rp" / "stray.parquet").write_bytes(b"not parquet")
    result = runner.invoke(app, ["validate", str(broken)], env=WIDE)
    assert result.exit_code == 1
    assert "INVALID" in result.output
    assert "file_missing" in result.output and "unlisted_file" in result.output

    result = runner.invoke(app, ["validate", str(broken), "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["ok"] is False
    assert doc["failed"] == {"file_missing": 1, "unlisted_file": 1}


def test_validate_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nowhere")])
    assert result.exit_code == 2


def test_stats_json_is_one_document(synthetic: Path) -> None:
    result = runner.invoke(app, ["stats", str(synthetic), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    manifest = read_manifest(synthetic)
    assert {k: v["rows"] for k, v in doc["datasets"].items()} == {
        k: v["rows"] for k, v in manifest["datasets"].items()
    }
    assert doc["funnel"]["stages"][0]["count"] == manifest["counts"]["lines_read"]


def test_stats_tables(synthetic: Path) -> None:
    result = runner.invoke(app, ["stats", str(synthetic)], env=WIDE)
    assert result.exit_code == 0, result.output
    for needle in ("dataset", "qt", "anchor", "positive", "funnel", "stream lines read", "dq"):
        assert needle in result.output, needle


def test_card_writes_the_readme(synthetic: Path, tmp_path: Path) -> None:
    release = copy_release(synthetic, tmp_path)
    result = runner.invoke(app, ["card", str(release)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(release / "README.md")
    assert (release / "card" / "funnel.svg").is_file()

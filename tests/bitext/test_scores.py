"""Scores for tuning: the kept pairs carry the values their filters computed, after the
training columns; ``corpusforge stats`` gives their distributions and the card plots them."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import typer
from typer.testing import CliRunner

from corpusforge.builds import bitext, paranmt
from corpusforge.commands import release as commands
from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.inspect.card import write_card
from corpusforge.inspect.stats import release_stats
from corpusforge.pairing.filters import token_count
from corpusforge.schemas import BITEXT, PARAPHRASE, arrow_schema
from tests.bitext.test_build_bitext import write_fixtures
from tests.bitext.test_build_paranmt import write_paranmt

BITEXT_SCORES = [
    "length_ratio",
    "anchor_lid",
    "anchor_lid_prob",
    "positive_lid",
    "positive_lid_prob",
]


def test_bitext_pairs_carry_their_scores_after_the_training_columns(tmp_path: Path) -> None:
    out = tmp_path / "release"
    bitext.build(BitextConfig(inputs=tuple(write_fixtures(tmp_path / "in")), out=str(out)))
    names = arrow_schema(BITEXT).names
    assert names[:2] == ["anchor", "positive"] and names[-5:] == BITEXT_SCORES
    rows = [r for p in (out / "pairs").rglob("*.parquet") for r in pq.read_table(p).to_pylist()]
    assert rows
    for row in rows:
        words = sorted((token_count(row["anchor"]), token_count(row["positive"])))
        assert row["length_ratio"] == words[1] / words[0]
        assert (row["anchor_lid"], row["positive_lid"]) == (
            row["anchor_lang"],
            row["positive_lang"],
        )
        assert 0 < row["anchor_lid_prob"] <= 1 and 0 < row["positive_lid_prob"] <= 1

    stats = release_stats(out)
    for ds in stats["datasets"].values():
        assert list(ds["scores"]) == ["length_ratio", "anchor_lid_prob", "positive_lid_prob"]
        ratio = ds["scores"]["length_ratio"]
        assert 1 <= ratio["min"] <= ratio["p5"] <= ratio["p50"] <= ratio["p95"] <= ratio["max"] < 3

    card = write_card(str(out))
    assert "## Filter scores" in card.read_text()
    assert sorted(p.name for p in (out / "card").glob("scores-*.svg"))

    app = typer.Typer()
    app.command("stats")(commands.stats)
    app.command("validate")(commands.validate)
    result = CliRunner().invoke(app, ["stats", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "filter scores" in result.output and "length_ratio" in result.output


def test_paraphrases_carry_both_sides_language_probabilities(tmp_path: Path) -> None:
    out = tmp_path / "release"
    uri = write_paranmt(tmp_path / "in" / "para.txt.gz")
    paranmt.build(ParaphraseConfig(inputs=(uri,), out=str(out)))
    names = arrow_schema(PARAPHRASE).names
    assert names == [
        "anchor",
        "positive",
        "score",
        "trigram_overlap",
        "anchor_lid_prob",
        "positive_lid_prob",
    ]
    scores = release_stats(out)["datasets"]["paranmt"]["scores"]
    assert list(scores) == ["anchor_lid_prob", "positive_lid_prob", "score", "trigram_overlap"]
    assert 0.4 <= scores["score"]["min"] <= scores["score"]["max"] <= 1.0

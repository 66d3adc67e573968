"""``corpusforge eval bitext`` on inline aligned files and on the real Tatoeba sample."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from corpusforge.commands.eval import app

EN = [
    "the cat sleeps on the sofa",
    "we went to the market",
    "my sister reads books",
    "the train is late again",
]


def _run(tmp_path: Path, en: list[str], x: list[str]) -> dict:
    (tmp_path / "a.en").write_text("\n".join(en) + "\n", encoding="utf-8")
    (tmp_path / "a.x").write_text("\n".join(x) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app,
        [
            "bitext",
            "--en",
            str(tmp_path / "a.en"),
            "--x",
            str(tmp_path / "a.x"),
            "--model",
            "lexical",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_identical_sides_match_perfectly(tmp_path: Path) -> None:
    report = _run(tmp_path, EN, EN)
    assert (report["pairs"], report["en_to_x"], report["x_to_en"]) == (4, 1.0, 1.0)


def test_misaligned_sides_match_badly(tmp_path: Path) -> None:
    report = _run(tmp_path, EN, EN[1:] + EN[:1])  # every line paired with the wrong one
    assert (report["en_to_x"], report["x_to_en"]) == (0.0, 0.0)


def test_real_tatoeba_pairs(realdata: Path, tmp_path: Path) -> None:
    folder = realdata / "tatoeba-laser-v1"
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app,
        [
            "bitext",
            "--en",
            str(folder / "tatoeba.deu-eng.eng"),
            "--x",
            str(folder / "tatoeba.deu-eng.deu"),
            "--model",
            "lexical",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["pairs"] == 1000
    # word overlap across languages (names, numbers, cognates) beats chance (1/1000) but not by much
    assert 0.01 < report["en_to_x"] < 0.5

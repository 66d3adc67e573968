"""``corpusforge eval bitext`` on inline aligned files and on the real Tatoeba sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


def _invoke(args: list[str], out: Path) -> dict:
    result = CliRunner().invoke(app, ["bitext", *args, "--json", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_a_tsv_is_scored_per_language(tmp_path: Path) -> None:
    lines = [f"de\t{en}\t{en}" for en in EN] + [
        f"fr\t{en}\t{x}" for en, x in zip(EN, EN[1:] + EN[:1], strict=True)
    ]
    (tmp_path / "h.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = _invoke(["--tsv", str(tmp_path / "h.tsv"), "--model", "lexical"], tmp_path / "r.json")
    assert report["sets"]["de"] == {"pairs": 4, "en_to_x": 1.0, "x_to_en": 1.0, "mean": 1.0}
    assert report["sets"]["fr"]["mean"] == 0.0
    assert report["mean"] == 0.5


def test_a_release_heldout_folder_is_scored_per_language_pair(tmp_path: Path) -> None:
    from tests.train import pair_row, write_pairs

    for lang, shift in (("en-de", 0), ("en-fr", 1)):
        rows = [
            pair_row(en, EN[(i + shift) % len(EN)], 2 * i, 2 * i + 1) for i, en in enumerate(EN)
        ]
        write_pairs(tmp_path / "heldout" / "tatoeba" / lang / "part-00000.parquet", rows)
    report = _invoke(
        ["--heldout", str(tmp_path / "heldout"), "--model", "lexical"], tmp_path / "r.json"
    )
    assert sorted(report["sets"]) == ["tatoeba/en-de", "tatoeba/en-fr"]
    assert report["sets"]["tatoeba/en-de"]["mean"] == 1.0
    assert report["sets"]["tatoeba/en-fr"]["mean"] == 0.0


def test_teacher_fidelity_of_a_model_against_itself_and_another(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.train import write_teacher

    words = sorted({w for en in EN for w in en.split()})
    first = write_teacher(tmp_path / "t0", words, seed=0)
    second = write_teacher(tmp_path / "t1", words, seed=1)
    (tmp_path / "h.tsv").write_text("".join(f"{en}\t{en}\n" for en in EN), encoding="utf-8")
    tsv = ["--tsv", str(tmp_path / "h.tsv")]
    same = _invoke([*tsv, "--model", str(first), "--teacher", str(first)], tmp_path / "a.json")
    assert same["teacher_fidelity"]["sentences"] == 4
    assert same["teacher_fidelity"]["cosine"] > 0.9999
    other = _invoke([*tsv, "--model", str(second), "--teacher", str(first)], tmp_path / "b.json")
    assert other["teacher_fidelity"]["cosine"] < 0.999
    assert other["teacher_fidelity"]["mse"] > same["teacher_fidelity"]["mse"]


def test_one_source_of_pairs(tmp_path: Path) -> None:
    (tmp_path / "h.tsv").write_text("a\tb\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("a\n", encoding="utf-8")
    both = ["--tsv", str(tmp_path / "h.tsv"), "--en", str(tmp_path / "a.en")]
    result = CliRunner().invoke(app, ["bitext", *both, "--model", "lexical"])
    assert result.exit_code == 2
    assert "give --en and --x, or --heldout, or --tsv" in result.output

"""ParaNMT releases end to end, on a file the test writes (ParaNMT-50M itself is 50M lines)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from corpusforge.builds.paranmt import build
from corpusforge.commands.paranmt import app
from corpusforge.config.beam import ParanmtPairsOptions
from corpusforge.config.bitext import ParaphraseConfig
from corpusforge.schemas import MANIFEST, PARAPHRASE, arrow_schema, validate_json
from corpusforge.text.overlap import trigram_overlap
from pipelines.paranmt_pairs import run

GOOD = [
    (
        "i do n't think we should go to the party tonight .",
        "i believe we 'd better stay home this evening .",
    ),
    (
        "she has been working at the hospital for years .",
        "for many years , she 's had a job in the hospital .",
    ),
    ("we need to leave before it starts raining .", "we have to go out before the rain comes ."),
]
LINES = [
    "\t".join((*GOOD[0], "0.81")),
    "\t".join((*GOOD[1], "0.62")),
    "only\ttwo columns",  # parse_column_count
    "\t".join((*GOOD[2], "not-a-number")),  # parse_bad_score
    "\t".join((*GOOD[2], "0.55")),
    "\t".join(("yes .", "sure .", "0.9")),  # paraphrase_too_short
    "\t".join((*GOOD[0], "0.3")),  # paraphrase_score_too_low (and a duplicate, but filtered first)
    "\t".join((GOOD[0][0], GOOD[0][0].replace("tonight", "today"), "0.9")),  # overlap too high
    "\t".join((GOOD[1][1], GOOD[1][0], "0.7")),  # line 2 the other way round: a duplicate
    "\t".join(("je ne pense pas que nous devrions y aller ce soir .", GOOD[0][1], "0.5")),
]


def write_paranmt(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(("\n".join(LINES) + "\n").encode(), mtime=0))
    return str(path)


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict]:
    root = tmp_path_factory.mktemp("paranmt")
    uri = write_paranmt(root / "in" / "para-nmt-sample.txt.gz")
    out = root / "release"
    return out, uri, build(ParaphraseConfig(inputs=(uri,), out=str(out)))


def test_counts_close_and_every_drop_has_its_reason(release: tuple[Path, str, dict]) -> None:
    _, _, m = release
    validate_json(MANIFEST, m)
    assert m["kind"] == "paranmt-pairs"
    c = m["counts"]
    assert (c["lines_read"], c["pairs_read"], c["dead_letter"], c["rows"]) == (10, 8, 2, 3)
    assert c["dead_letter_reasons"] == {"parse_bad_score": 1, "parse_column_count": 1}
    assert c["dropped"] == {
        "dedup_duplicate": 1,
        "lang_mismatch": 1,
        "paraphrase_overlap_too_high": 1,
        "paraphrase_score_too_low": 1,
        "paraphrase_too_short": 1,
    }
    assert m["datasets"]["paranmt"]["rows"] == 3
    assert "lang_pairs" not in m["datasets"]["paranmt"]
    assert m["accounting"]["balanced"], m["accounting"]["identities"]
    assert m["config"]["filters"] == {
        "max_mean_tokens": 40.0,
        "max_score": 1.0,
        "max_trigram_overlap": 0.7,
        "min_mean_tokens": 5.0,
        "min_score": 0.4,
    }


def test_rows_follow_the_schema_and_carry_the_overlap(release: tuple[Path, str, dict]) -> None:
    out, _, m = release
    files = sorted((out / "pairs" / "paranmt").glob("*.parquet"))
    assert [f"pairs/paranmt/{f.name}" for f in files] == m["datasets"]["paranmt"]["files"]
    for f in files:
        assert pq.read_schema(f).equals(arrow_schema(PARAPHRASE), check_metadata=False)
    rows = pl.read_parquet(files).sort("score").rows(named=True)
    assert [(r["anchor"], r["positive"], r["score"]) for r in rows] == [
        (*GOOD[2], 0.55),
        (*GOOD[1], 0.62),
        (*GOOD[0], 0.81),
    ]
    for r in rows:
        assert r["trigram_overlap"] == trigram_overlap(r["anchor"], r["positive"]) <= 0.7


def test_bad_lines_are_dead_letters_and_the_file_goes_on(release: tuple[Path, str, dict]) -> None:
    out, _, _ = release
    dead = pl.read_parquet(out / "dead_letter" / "*.parquet").sort("origin_line")
    assert dead.select("reason", "origin_archive", "origin_line").rows() == [
        ("parse_column_count", "para-nmt-sample.txt.gz", 3),
        ("parse_bad_score", "para-nmt-sample.txt.gz", 4),
    ]
    assert dead["excerpt"][1].endswith("not-a-number")


def test_rerun_through_the_beam_entry_point_is_byte_identical(
    release: tuple[Path, str, dict], tmp_path: Path
) -> None:
    out, uri, _ = release
    again = tmp_path / "again"
    argv = [f"--input={uri}", f"--out={again}", "--direct_num_workers=2"]
    argv.append("--direct_running_mode=multi_threading")
    assert run(argv) == 0

    def digests(root: Path) -> dict[str, str]:
        return {
            str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.parquet"))
        }

    assert digests(again) == digests(out)


def test_command_line_and_options(tmp_path: Path) -> None:
    uri = write_paranmt(tmp_path / "in" / "p.txt.gz")
    out = tmp_path / "strict"
    result = CliRunner().invoke(
        app, [uri, "--out", str(out), "--min-score", "0.6", "--dataset", "psp", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    m = json.loads((out / "manifest.json").read_text())
    assert m["datasets"]["psp"]["rows"] == 2  # 0.55 is now too low
    assert m["datasets"]["psp"]["dropped"]["paraphrase_score_too_low"] == 3
    assert (out / "pairs" / "psp").is_dir()
    config = ParanmtPairsOptions(["--input=a", "--out=o", "--max_overlap=0.5"]).to_config()
    assert (config.dataset, config.clean, config.filters.max_trigram_overlap) == (
        "paranmt",
        "none",
        0.5,
    )
    with pytest.raises(ValueError, match="max_score"):
        ParanmtPairsOptions(["--input=a", "--out=o", "--max_score=0.1"]).to_config()

"""Flags a user types are taken as meant or refused by their own name; v2 response pages keep
their tweets; the manifest's dead-letter count is the number of rows in the dead-letter
files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest
from typer.testing import CliRunner

from corpusforge.cli import app
from corpusforge.config.flags import FlagError
from corpusforge.config.twitter import TwitterConfig
from corpusforge.sources.twitter.parse import LineKind, parse_line

from .conftest import GOOD, assert_balanced, dead_letters, member, run, tweet_ids, write_tar

REPO = Path(__file__).resolve().parents[2]
M0 = "2022/03/01/00/00.json.bz2"


def _v2(i: int, text: str, **refs: int) -> dict[str, object]:
    body: dict[str, object] = {"id": str(i), "text": text, "lang": "en"}
    if refs:
        body["referenced_tweets"] = [{"type": k, "id": str(v)} for k, v in refs.items()]
    return body


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_lang_is_case_insensitive(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "a.tar", [(M0, member(GOOD))])
    code, output = _cli(
        "twitter", "build", archive, "--out", str(tmp_path / "release"), "--lang", "EN",
        "--benchmark-queries", "0", "--quiet",
    )  # fmt: skip
    assert code == 0, output
    manifest = orjson.loads((tmp_path / "release" / "manifest.json").read_bytes())
    assert manifest["config"]["langs"] == ["en"]
    assert manifest["datasets"]["rp"]["rows"] == 1  # not 0 pairs without a word
    assert TwitterConfig(inputs=("x",), out="o", langs=("EN", "en", "deu")).langs == ("en", "de")


@pytest.mark.parametrize("code", ["xx", "english", "e"])
def test_unknown_lang_is_refused_by_its_flag(tmp_path: Path, code: str) -> None:
    archive = write_tar(tmp_path / "a.tar", [(M0, member(GOOD))])
    exit_code, output = _cli(
        "twitter", "build", archive, "--out", str(tmp_path / "release"), "--lang", code
    )
    assert exit_code == 2
    assert "--lang" in output and code in output
    assert not (tmp_path / "release").exists()


def test_errors_name_the_flags_the_user_typed(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "a.tar", [(M0, member(GOOD))])
    out = str(tmp_path / "release")
    for flag, value, expected in [
        ("--min-chars", "-3", "--min-chars must be >= 0, got -3"),
        ("--rows-per-shard", "0", "--rows-per-shard must be >= 1, got 0"),
        ("--benchmark-negatives", "0", "--benchmark-negatives must be >= 1, got 0"),
        ("--pair-engine", "fast", "--pair-engine must be one of auto, local, beam"),
    ]:
        code, output = _cli("twitter", "build", archive, "--out", out, flag, value)
        assert code == 2, output
        assert expected in " ".join(output.split()), output
        assert "min_chars" not in output and "rows_per_shard" not in output
    beam = subprocess.run(
        [sys.executable, "-m", "pipelines.twitter_pairs", "--input", archive, "--out", out,
         "--min_chars", "-3"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert beam.returncode == 2
    assert "--min_chars must be >= 0, got -3" in beam.stderr
    assert str(FlagError("min_chars", "x")) == "--min-chars x"


def test_v2_page_keeps_its_tweets_and_counts_its_errors(tmp_path: Path) -> None:
    page = {
        "data": [
            _v2(10, "the root of a v2 page about gardens in the spring"),
            _v2(11, "a reply on the same v2 page about gardens", replied_to=10),
            _v2(12, "RT a retweet of a tweet the api could not return", retweeted=99),
        ],
        "includes": {"tweets": [_v2(13, "an included tweet quoted by someone on the page")]},
        "errors": [
            {"value": "99", "detail": "Could not find tweet with ids: [99].", "title": "x"},
            {"value": "98", "detail": "Could not find tweet with ids: [98].", "title": "x"},
        ],
        "meta": {"result_count": 3},
    }
    line = orjson.dumps(page)
    parsed = parse_line(line, "a.tar", M0, 1)
    assert parsed.kind is LineKind.TWEET and parsed.api_errors == 2
    assert [r["id"] for r in parsed.records] == [10, 11, 13]
    archive = write_tar(tmp_path / "a.tar", [(M0, member([line]))])
    m = run(tmp_path, archive)
    assert tweet_ids(tmp_path) == {10, 11, 13}
    assert m["counts"]["api_errors"] == 2
    assert m["counts"]["other_messages"] == 0 and m["counts"]["tweets"] == 1
    assert m["datasets"]["rp"]["rows"] == 1
    assert_balanced(m)


def test_dead_letter_count_is_the_rows_in_the_dead_letter_files(tmp_path: Path) -> None:
    orphan_retweets = [
        orjson.dumps({"data": _v2(20 + i, "RT something", retweeted=900 + i)}) for i in range(3)
    ]
    lines = [*GOOD, b"{not json", *orphan_retweets, b"[1, 2]"]
    archive = write_tar(tmp_path / "a.tar", [(M0, member(lines))])
    m = run(tmp_path, archive)
    dead = dead_letters(tmp_path)
    assert m["counts"]["dead_letter"] == len(dead) == 5
    assert m["counts"]["dead_letter_reasons"]["parse_bad_embedded"] == 3
    assert sum(m["counts"]["dead_letter_reasons"].values()) == len(dead)
    by_reason = dead.group_by("reason").len().sort("reason")
    assert dict(zip(by_reason["reason"], by_reason["len"], strict=True)) == {
        "parse_bad_embedded": 3,
        "parse_invalid_json": 1,
        "parse_not_an_object": 1,
    }
    assert_balanced(m)
    names = {i["name"] for i in m["accounting"]["identities"]}
    assert "dead_letter == rows in dead_letter/" in names
    assert pl.Series(dead["origin_member"]).unique().to_list() == [M0]

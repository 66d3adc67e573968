"""End to end on the real Archive Team sample in ../shared/realdata (never copied here)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from corpusforge.builds.twitter import build
from corpusforge.config.twitter import TwitterConfig
from corpusforge.schemas import PAIR, arrow_schema


@pytest.fixture(scope="module")
def release(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("real") / "release"
    archive = realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip"
    manifest = build(TwitterConfig(inputs=(str(archive),), out=str(out)))
    return out, manifest


def test_known_counts_of_the_real_sample(release: tuple[Path, dict]) -> None:
    _, m = release
    c = m["counts"]
    assert (c["tweets"], c["delete_notices"], c["lines_read"]) == (5378, 832, 6210)
    assert (c["other_messages"], c["dead_letter"], c["members_read"]) == (0, 0, 2)
    assert c["retweets"] == 2515
    assert c["members_skipped"] == {"member_directory": 5}
    # the pair stage reads every extracted tweet row, and only conversation tweets are grouped
    extracted = sum(f["rows"] for f in m["files"] if f["schema"] == "tweet.v1")
    assert c["records_in"] == extracted
    assert 0 < c["records_in_conversations"] < c["records_in"] - c["records_lang_not_selected"]
    assert m["accounting"]["balanced"], [i for i in m["accounting"]["identities"] if not i["holds"]]


def test_embedded_statuses_find_most_reply_parents(release: tuple[Path, dict]) -> None:
    out, _ = release
    tweets = pl.read_parquet(out / "tweets" / "*" / "tweets" / "*.parquet")
    reply_parents = set(tweets["reply_to_id"].drop_nulls())
    everywhere = reply_parents & set(tweets["id"])
    top_level = reply_parents & set(tweets.filter(~pl.col("embedded_only"))["id"])
    assert len(everywhere) >= 5 * max(1, len(top_level))


def test_pairs_follow_the_schema_and_the_rules(release: tuple[Path, dict]) -> None:
    out, m = release
    for dataset in ("qt", "rp", "coqt", "corp"):
        files = sorted((out / "pairs" / dataset).glob("*.parquet"))
        assert files, dataset
        for f in files:
            assert pq.read_schema(f).equals(arrow_schema(PAIR), check_metadata=False)
    qt = pl.read_parquet(out / "pairs" / "qt")
    assert qt.height == m["datasets"]["qt"]["rows"] > 50
    assert qt["root_id"].n_unique() == qt.height  # one pair per root
    assert (qt["anchor_id"] == qt["root_id"]).all()
    assert (qt["anchor"].str.len_chars() >= 20).all() and (
        qt["positive"].str.len_chars() >= 20
    ).all()
    assert not qt["anchor"].str.contains(r"https?://|@\w").any()
    assert set(qt["lang"]) == {"en"}


def test_deleted_tweets_never_appear(release: tuple[Path, dict]) -> None:
    out, _ = release
    deleted = set(pl.read_parquet(out / "tweets" / "*" / "deletes" / "*.parquet")["id"])
    pairs = pl.read_parquet(out / "pairs" / "all")
    used = set(pairs["anchor_id"]) | set(pairs["positive_id"])
    assert deleted and not (deleted & used)


def test_rebuild_reuses_extract_and_gives_identical_files(
    release: tuple[Path, dict], realdata: Path
) -> None:
    out, first = release
    archive = str(realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip")
    marker = next((out / "tweets").glob("*/_SUCCESS"))
    stamp = marker.stat().st_mtime_ns
    second = build(TwitterConfig(inputs=(archive,), out=str(out)))
    assert marker.stat().st_mtime_ns == stamp  # not extracted again
    assert second["files"] == first["files"]
    assert json.loads((out / "manifest.json").read_text())["files"] == first["files"]


@pytest.mark.slow  # a second build of the real sample
def test_fasttext_language_id_instead_of_the_lang_field(realdata: Path, tmp_path: Path) -> None:
    from corpusforge.pairing.benchmarks import BenchmarkConfig
    from corpusforge.text.langid import LanguageIdentifier

    archive = realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip"
    m = build(
        TwitterConfig(
            inputs=(str(archive),),
            out=str(tmp_path / "r"),
            lid="fasttext",
            benchmarks=BenchmarkConfig(queries=0),
        )
    )
    assert m["config"]["lid"] == "fasttext" and m["accounting"]["balanced"]
    pairs = pl.read_parquet(tmp_path / "r" / "pairs" / "all")
    lid = LanguageIdentifier.load()
    assert pairs.height > 50
    # the selection was made on the cleaned texts, so fastText agrees on every kept side
    assert all(
        lid.predict(t)[0] == "en" for t in pairs["anchor"].to_list() + pairs["positive"].to_list()
    )

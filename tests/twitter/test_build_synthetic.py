"""End to end on synthetic archives of every layout and API version, against their truth."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from corpusforge.builds.twitter import build
from corpusforge.config.twitter import TwitterConfig
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.synth.twitter import SynthTruth, write_synthetic_archive

NO_BENCHMARKS = BenchmarkConfig(queries=0)
SLOW = pytest.mark.slow
CASES = [  # one layout in the default run (zip-2020 v1 is in the release hashes), others slow
    pytest.param("zip-2020", "v1", "twitter-stream-2021-01-01.zip", marks=SLOW),
    pytest.param("tar-2019", "v1", "twitter_stream_2019_06_01.tar", marks=SLOW),
    pytest.param("tar-2013", "v1", "archiveteam-twitter-stream-2013-02.tar", marks=SLOW),
    pytest.param("tar-gz", "v1", "twitter_stream_2019_06_01.tar.gz", marks=SLOW),
    ("tar-2022", "v2", "twitter-stream-20220301.tar"),
    pytest.param("zip-2020", "v2", "twitter-stream-2021-01-02.zip", marks=SLOW),
]


@pytest.mark.parametrize(("layout", "api", "name"), CASES)
def test_counts_match_the_generator_truth(tmp_path: Path, layout: str, api: str, name: str) -> None:
    archive = tmp_path / name
    truth: SynthTruth = write_synthetic_archive(
        archive, tweets=1500, layout=layout, api=api, seed=3
    )
    m = build(
        TwitterConfig(
            inputs=(str(archive),), out=str(tmp_path / "release"), benchmarks=NO_BENCHMARKS
        )
    )
    c = m["counts"]
    assert c["lines_read"] == truth.lines
    assert c["tweets"] == truth.tweet_lines
    assert c["retweets"] == truth.retweet_lines
    assert c["delete_notices"] == truth.delete_notices
    assert c["other_messages"] == truth.other_messages
    assert c["dead_letter"] == 0
    assert c["members_read"] == len(truth.members)
    assert m["accounting"]["balanced"]

    # the truth lists the edges of top-level lines; embedded statuses (v2 includes, quoted
    # statuses) may carry more, which the pipeline rightly uses as well
    for dataset, kind in (("qt", "quote"), ("rp", "reply")):
        parent_of = {child: parent for child, parent, k in truth.edges if k == kind}
        pairs = pl.read_parquet(tmp_path / "release" / "pairs" / dataset)
        assert pairs.height == m["datasets"][dataset]["rows"] > 0
        known = 0
        for child, parent in zip(pairs["positive_id"], pairs["anchor_id"], strict=True):
            if child in parent_of:
                known += 1
                assert parent_of[child] == parent
        assert known >= pairs.height // 2
    deleted = set(truth.deleted_ids)
    used = pl.read_parquet(tmp_path / "release" / "pairs" / "all")
    assert not deleted & (set(used["anchor_id"]) | set(used["positive_id"]))

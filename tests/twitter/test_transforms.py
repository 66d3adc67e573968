"""The Beam composites on small inline inputs: main outputs, reject outputs and counters."""

from __future__ import annotations

import bz2
import io
import tarfile
from pathlib import Path
from typing import Any

import apache_beam as beam
import orjson
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from corpusforge.sources.twitter.archive import ReadLimits
from corpusforge.text.clean import get_profile
from corpusforge.transforms.twitter import ExtractedTweets, TwitterPairs

USER = {"id_str": "1", "screen_name": "someone"}


def _tweet(i: int, text: str, **kw: Any) -> bytes:
    return orjson.dumps(
        {
            "id_str": str(i),
            "user": USER,
            "text": text,
            "lang": "en",
            "timestamp_ms": "1609459200000",
            **kw,
        }
    )


def _archive(tmp_path: Path) -> str:
    lines = [
        _tweet(1, "a root tweet about gardening in the spring"),
        _tweet(
            2,
            "RT @x: a quote",
            retweeted_status=orjson.loads(
                _tweet(3, "a quote about gardening tools", quoted_status_id_str="1")
            ),
        ),
        b'{"delete": {"status": {"id": 4, "id_str": "4", "user_id": 1}}}',
        b"",
        b'{"id_str": "5", "user": {}, "text": "cut off',
    ]
    data = bz2.compress(b"\n".join(lines) + b"\n")
    path = tmp_path / "twitter_stream_2019_06_01.tar"
    with tarfile.open(path, "w") as tf:
        info = tarfile.TarInfo("2019/06/01/00/00.json.bz2")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return str(path)


def test_extracted_tweets_outputs_and_counters(tmp_path: Path) -> None:
    uri = _archive(tmp_path)
    p = TestPipeline(runner="FnApiRunner")
    out = p | beam.Create([uri]) | ExtractedTweets({uri: "X"}, ReadLimits())
    assert_that(
        out["tweets"] | "Ids" >> beam.Map(lambda kv: (kv[0], kv[1]["id"], kv[1]["embedded_only"])),
        equal_to([("X", 1, False), ("X", 3, True)]),
        label="tweets",
    )
    assert_that(
        out["deletes"] | "DelIds" >> beam.Map(lambda kv: kv[1]["id"]),
        equal_to([4]),
        label="deletes",
    )
    assert_that(
        out["dead"] | "Reasons" >> beam.Map(lambda kv: (kv[1]["reason"], kv[1]["origin_line"])),
        equal_to([("parse_invalid_json", 5)]),
        label="dead",
    )
    assert_that(
        out["counts"] | "Plain" >> beam.Map(lambda kv: (kv[0][1], kv[1])),
        equal_to(
            [
                ("archives", 1),
                ("members_listed", 1),
                ("members_read", 1),
                ("lines_read", 5),
                ("tweets", 2),
                ("retweets", 1),
                ("records", 2),
                ("delete_notices", 1),
                ("other_messages", 1),
                ("other.blank", 1),
                ("dead_letter_lines", 1),
                ("dead_letter.parse_invalid_json", 1),
            ]
        ),
        label="counts",
    )
    result = p.run()
    result.wait_until_finish()
    counters = result.metrics().query(MetricsFilter().with_name("parse_invalid_json"))["counters"]
    assert sum(c.committed for c in counters) == 1


def _row(
    i: int, text: str, reply_to: int | None = None, quote_of: int | None = None, lang: str = "en"
) -> dict[str, Any]:
    return {
        "id": i,
        "created_at": None,
        "lang": lang,
        "text": text,
        "reply_to_id": reply_to,
        "quote_of_id": quote_of,
        "embedded_only": False,
        "origin_archive": "a",
        "origin_member": "m",
        "origin_line": i,
    }


def test_twitter_pairs_removes_deleted_and_counts_every_candidate() -> None:
    tweets = [
        _row(1, "the root tweet about spring gardening"),
        _row(2, "a reply about spring gardening tools", reply_to=1),
        _row(3, "a reply that its author later deleted", reply_to=1),
        _row(4, "too short", reply_to=1),
        _row(1, "the root tweet about spring gardening"),  # seen twice, e.g. in two archives
        _row(5, "una respuesta en español, no seleccionada", reply_to=1, lang="es"),
    ]
    p = TestPipeline(runner="FnApiRunner")
    out = {
        "tweets": p | "T" >> beam.Create(tweets),
        "deletes": p | "D" >> beam.Create([{"id": 3}, {"id": 99}]),
    } | TwitterPairs(get_profile("paper"), 20, ("en",), 0)
    assert_that(
        out["pairs"] | beam.Map(lambda r: (r["dataset"], r["anchor_id"], r["positive_id"])),
        equal_to([("rp", 1, 2)]),
        label="pairs",
    )
    assert_that(
        out["counts"],
        equal_to(
            [
                ("records_in", 6),
                ("records_lang_not_selected", 1),
                ("records_in_conversations", 5),
                ("tweets_distinct", 4),
                ("tweets_eligible", 2),
                ("tweets_dropped.tweet_deleted", 1),
                ("tweets_dropped.clean_too_short", 1),
                ("pairs.rp.candidates", 3),
                ("pairs.rp.dropped.pair_child_ineligible", 2),
                ("pairs.rp.rows", 1),
                ("pairs.corp.candidates", 3),
                ("pairs.corp.dropped.pair_child_ineligible", 2),
                ("pairs.corp.dropped.pair_single_child", 1),
            ]
        ),
        label="counts",
    )
    p.run().wait_until_finish()

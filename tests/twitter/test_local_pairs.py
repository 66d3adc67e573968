"""The local pair engine gives the Beam pipeline's files and counts, whatever its partitions."""

from __future__ import annotations

import gc
import heapq
import os
import shutil
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpusforge.builds import twitter_pairs
from corpusforge.builds.twitter import build
from corpusforge.builds.twitter_pairs import pair_engine
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig
from corpusforge.jobs import WorkerDied
from corpusforge.local import chosen, tweet_rows
from corpusforge.local import pairs as local_pairs
from corpusforge.local import workers as local_workers
from corpusforge.local.chosen import pair_table
from corpusforge.local.pairs import PairRows, PairSettings, pair_tweets
from corpusforge.local.spill import partition_of
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.pairing.conversations import (
    CHILDREN_PER_PAIR,
    DropReason,
    Node,
    keep_first_duplicate,
    sample_key,
)
from corpusforge.schemas import TWEET, arrow_schema
from corpusforge.synth.twitter import write_synthetic_archive
from corpusforge.text.clean import get_profile
from tests.twitter.test_runners import _differences, _fingerprint

BENCH = BenchmarkConfig(queries=3)


def _engines_agree(config: TwitterConfig, partitions: tuple[int, ...] = (1, 3)) -> dict[str, Any]:
    """Build with Beam, then locally with each partition count, into one folder; compare."""
    reference = build(TwitterConfig(**{**config.__dict__, "pair_engine": "beam"}))
    assert reference["accounting"]["balanced"]
    for n in partitions:
        local = build(
            TwitterConfig(**{**config.__dict__, "pair_engine": "local", "pair_partitions": n})
        )
        assert _differences(_fingerprint(local), _fingerprint(reference)) == [], n
    return reference


def _extracts(tmp_path: Path, seed: int) -> tuple[list[str], list[str]]:
    """A 2,000-tweet synthetic archive, built: its tweet and delete extract files."""
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=2000, layout="zip-2020", seed=seed)
    release = tmp_path / "release"
    build(TwitterConfig(inputs=(str(archive),), out=str(release), benchmarks=BENCH))
    return (
        sorted(str(p) for p in release.glob("tweets/*/tweets/*.parquet")),
        sorted(str(p) for p in release.glob("tweets/*/deletes/*.parquet")),
    )


def _settings(langs: tuple[str, ...] = ("en",), lid_model: str | None = None) -> PairSettings:
    """The pair settings of the stage-level tests: paper cleaning, 20 characters, BENCH."""
    return PairSettings(
        profile=get_profile("paper"),
        min_chars=20,
        langs=langs,
        seed=0,
        benchmarks=BENCH,
        lid_model=lid_model,
    )


@pytest.mark.parametrize(
    ("layout", "api", "options"),
    [  # one case in the default run, the others marked slow
        pytest.param("zip-2020", "v1", {}, id="zip-2020"),
        pytest.param("tar-2022", "v2", {}, id="tar-2022", marks=pytest.mark.slow),
        pytest.param(
            "tar-2013",
            "v1",
            {"pairs_per_dataset": 10, "clean": "ct"},  # samples qt and rp, not coqt or corp
            id="tar-2013-sampled-ct",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "zip-2020",
            "v1",
            {"benchmarks": BenchmarkConfig(queries=0), "langs": ("en", "es")},
            id="no-benchmarks-en-es",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "zip-2020",
            "v1",
            {"lid": "fasttext", "langs": ("en", "es")},
            id="fasttext-en-es",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_same_release_as_the_beam_pipeline(
    tmp_path: Path, layout: str, api: str, options: dict[str, Any]
) -> None:
    archive = tmp_path / f"twitter-stream-{layout}.{'zip' if 'zip' in layout else 'tar'}"
    write_synthetic_archive(archive, tweets=3000, layout=layout, api=api, seed=5)
    config = TwitterConfig(
        inputs=(str(archive),), out=str(tmp_path / "release"), benchmarks=BENCH, rows_per_shard=300
    )
    manifest = _engines_agree(TwitterConfig(**{**config.__dict__, **options}))
    assert sum(d["rows"] for d in manifest["datasets"].values()) > 0
    if "pairs_per_dataset" in options:  # the sample bites some datasets and keeps others whole
        datasets = [d for name, d in manifest["datasets"].items() if name != "all"]
        assert {"pair_sampled_out" in d["dropped"] for d in datasets} == {True, False}


@pytest.mark.parametrize(
    "options", [{}, {"benchmarks": BenchmarkConfig(queries=0)}], ids=["two-passes", "one-pass"]
)
def test_same_release_with_partitions_on_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    """Partitions built and looked at in two forked workers, results taken in order here."""
    pools: list[int] = []

    class CountedPool(local_workers.ProcessPoolExecutor):
        def __init__(self, workers: int, **kwargs: Any) -> None:
            pools.append(workers)
            super().__init__(workers, **kwargs)

    monkeypatch.setattr(local_pairs, "ROWS_PER_WORKER", 1)
    monkeypatch.setattr(local_workers, "ProcessPoolExecutor", CountedPool)
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=3000, layout="zip-2020", seed=6)
    config = TwitterConfig(
        inputs=(str(archive),),
        out=str(tmp_path / "release"),
        workers=2,
        memory_limit=8192,  # room for the reference worker whatever this machine's memory
        **{"benchmarks": BENCH, **options},
    )
    manifest = _engines_agree(config, partitions=(0, 5))
    # a pool per pass and partition count, but the second pass of one round of partitions
    # (partitions=0: one a worker) runs here; with benchmarks, the reference scores' worker
    # starts between the passes
    assert pools == ([2] * 2 if options else [2, 1, 2, 1, 2])  # partitions 0, then 5
    assert sum(d["rows"] for d in manifest["datasets"].values()) > 0


def test_a_pair_worker_that_dies_fails_the_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tweet_files, _ = _extracts(tmp_path, seed=3)
    settings = PairSettings(profile=get_profile("paper"), min_chars=20, langs=("en",), seed=0)
    here = os.getpid()
    real = local_pairs._Nodes.conversations

    def killed(self: Any, *args: Any) -> Any:
        if os.getpid() != here:
            os._exit(9)  # as the kernel's OOM killer would
        return real(self, *args)

    monkeypatch.setattr(local_pairs._Nodes, "conversations", killed)
    monkeypatch.setattr(local_pairs, "ROWS_PER_WORKER", 1)
    with pytest.raises(WorkerDied) as died:
        pair_tweets(tweet_files, [], settings, partitions=2, workers=2)
    assert str(died.value).startswith("a Twitter pair worker (pid ")
    assert str(died.value).endswith(") exited with code 9; nothing published")


@pytest.mark.slow
def test_same_release_with_every_tweet_in_two_archives(tmp_path: Path) -> None:
    """Each tweet merged across archives, and every pair text seen twice."""
    first = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(first, tweets=3000, layout="zip-2020", seed=9)
    second = tmp_path / "twitter-stream-2021-01-02.zip"
    shutil.copy(first, second)
    config = TwitterConfig(
        inputs=(str(first), str(second)), out=str(tmp_path / "release"), benchmarks=BENCH
    )
    manifest = _engines_agree(config, partitions=(1, 2, 7))
    counts = manifest["counts"]
    assert counts["records_in_conversations"] == 2 * counts["tweets_distinct"] > 0


@pytest.mark.slow  # spills every few rows; PairRows spills in the default run
@pytest.mark.parametrize("options", [{}, {"pairs_per_dataset": 25}])
def test_same_release_when_pairs_and_shards_go_through_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    """Chosen pairs written to their group files every few rows: duplicates met across
    batches (every text is in two archives), sampling over groups, shards written from frames
    of a few rows."""
    first = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(first, tweets=3000, layout="zip-2020", seed=4)
    second = tmp_path / "twitter-stream-2021-01-02.zip"
    shutil.copy(first, second)
    monkeypatch.setattr(twitter_pairs, "PAIR_SPILL_ROWS", 7)
    batches: list[int] = []
    real_write = chosen.PairRows._write
    monkeypatch.setattr(
        chosen.PairRows,
        "_write",
        lambda self, g, table: (batches.append(table.num_rows), real_write(self, g, table)),
    )
    config = TwitterConfig(
        inputs=(str(first), str(second)),
        out=str(tmp_path / "release"),
        benchmarks=BENCH,
        rows_per_shard=50,
        **options,
    )
    manifest = _engines_agree(config, partitions=(1, 3))
    assert len(batches) > 10 and max(batches) <= 7  # chosen pairs went to disk 7 at most at once
    assert not list((tmp_path / "release").glob("_staging*"))
    assert sum(d["rows"] for d in manifest["datasets"].values()) > 0


@pytest.mark.slow
def test_same_benchmarks_when_every_candidate_list_is_trimmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queries and negatives are trimmed to the best few as partitions go by; with no slack
    every trim happens as early as it can, and the choice must still be the global one."""
    monkeypatch.setattr(chosen, "SMALLEST_SLACK", 0)
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=3000, layout="zip-2020", seed=4)
    config = TwitterConfig(
        inputs=(str(archive),),
        out=str(tmp_path / "release"),
        benchmarks=BenchmarkConfig(queries=2, positives=2, negatives=3),
    )
    manifest = _engines_agree(config, partitions=(1, 4))
    assert all(b["rows"] == 2 for b in manifest["benchmarks"].values()), manifest["benchmarks"]


def _pair(dataset: str, anchor: str, positive: str, root: int, child: int) -> dict[str, Any]:
    return {
        "anchor": anchor,
        "positive": positive,
        "anchor_id": root,
        "positive_id": child,
        "root_id": root,
        "dataset": dataset,
        "lang": "en",
    }


@pytest.mark.parametrize("buffer_rows", [1, 3, 10_000])
@pytest.mark.parametrize("sample", [None, 4])
@pytest.mark.parametrize("added", ["row by row", "as tables"])
def test_pair_rows_deduplicate_and_sample_across_run_files(
    tmp_path: Path, buffer_rows: int, sample: int | None, added: str
) -> None:
    """Five copies of one text pair, added apart so they land in different run files, and
    twenty unique pairs per dataset: the kept copy and the sample do not depend on spilling."""
    copies = [_pair("qt", "same anchor", "same positive", 100 + i, 200 + i) for i in range(5)]
    unique = [
        _pair(ds, f"anchor {ds} {i}", f"positive {i}", 1000 + i, 2000 + i)
        for ds in ("qt", "rp")
        for i in range(20)
    ]
    rows = [*unique[:10], copies[0], *unique[10:25], *copies[1:3], *unique[25:], *copies[3:]]
    spill = tmp_path / "spill"
    spill.mkdir()
    pairs = PairRows(3, str(spill), buffer_rows)
    if added == "row by row":
        for row in rows:
            pairs.add(pair_table([row], seed=7))
    else:  # as pair workers hand them back, a row alone before tables of four
        pairs.add(pair_table(rows[:1], seed=7))
        for start in range(1, len(rows), 4):
            pairs.add(pair_table(rows[start : start + 4], seed=7))
    counts: Counter[str] = Counter()
    pairs.finish(sample, counts)
    got = sorted(pairs, key=lambda r: (r["dataset"], r["positive_id"]))

    kept, dropped = keep_first_duplicate(7, copies)
    deduped = [*unique, kept]
    assert counts["pairs.qt.dropped.pair_duplicate_text"] == dropped * CHILDREN_PER_PAIR["qt"] == 4
    if sample is None:
        expected = deduped
    else:
        expected = [
            r
            for ds in ("qt", "rp")
            for r in heapq.nsmallest(
                sample, (r for r in deduped if r["dataset"] == ds), key=lambda r: sample_key(7, r)
            )
        ]
        assert counts["pairs.qt.deduped"] == 21 and counts["pairs.rp.deduped"] == 20
    assert got == sorted(expected, key=lambda r: (r["dataset"], r["positive_id"]))
    assert counts["pairs.qt.rows"] + counts["pairs.rp.rows"] == len(got)
    assert list(pairs) == list(pairs)  # readable again until the stage is closed


@pytest.mark.slow
def test_same_release_on_the_real_sample(realdata: Path, tmp_path: Path) -> None:
    archive = realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip"
    config = TwitterConfig(
        inputs=(str(archive),),
        out=str(tmp_path / "release"),
        benchmarks=BenchmarkConfig(queries=1, positives=1, negatives=2),
        langs=("en", "es", "ja"),
    )
    _engines_agree(config, partitions=(1, 4))


def test_records_that_disagree_about_links_are_merged_in_every_partition(
    tmp_path: Path,
) -> None:
    """One tweet's records differ: only the embedded copy knows the reply; the stream copy
    (a quote, with the longer text) does not. Every partition count must see the merged
    tweet: the stream copy's text, with the reply filled in from the embedded copy."""
    fields = arrow_schema(TWEET).names
    base = dict.fromkeys(fields)
    rows = [
        {
            **base,
            "id": 10,
            "text": "the root tweet, long enough to keep",
            "lang": "en",
            "embedded_only": False,
        },
        {
            **base,
            "id": 11,
            "text": "short copy of the reply that is embedded",
            "lang": "en",
            "reply_to_id": 10,
            "embedded_only": True,
        },
        {
            **base,
            "id": 11,
            "text": "the full text of the reply, which is the longer one by far",
            "lang": "en",
            "quote_of_id": 12,
            "embedded_only": False,
        },
    ]
    for i, row in enumerate(rows):
        row.update(origin_archive="a", origin_member="m", origin_line=i)
    path = tmp_path / "tweets.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema(TWEET)), path)
    settings = PairSettings(profile=get_profile("paper"), min_chars=5, langs=("en",), seed=0)
    # partitions where the reply's own id and its root's id fall apart
    import numpy as np

    for n in range(2, 17):
        root, reply, quoted = partition_of(np.array([10, 11, 12]), n).tolist()
        if root not in (reply, quoted):
            break
    counts = []
    for k in (1, n):
        with pair_tweets([str(path)], [], settings, partitions=k) as stage:
            (rp,) = [r for r in stage.pairs if r["dataset"] == "rp"]
            assert rp["positive"] == "the full text of the reply, which is the longer one by far"
            assert stage.counts["tweets_distinct"] == 2
            counts.append(stage.counts)
    assert counts[0] == counts[1]


def test_the_extracts_are_read_twice_whatever_the_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counting pass (links, languages, parents), then the rows: one read spreads them to
    a file per partition, so more partitions never mean more reads of the extracts."""
    tweet_files, delete_files = _extracts(tmp_path, seed=3)
    settings = _settings()
    reads = Counter[int]()
    read_batches = tweet_rows.TweetRows._batches

    def counted(self: Any, columns: list[str] | None = None) -> Any:
        reads[partitions] += 1
        return read_batches(self, columns)

    monkeypatch.setattr(tweet_rows.TweetRows, "_batches", counted)
    results = []
    for partitions in (1, 2, 7):
        with pair_tweets(tweet_files, delete_files, settings, partitions=partitions) as stage:
            results.append((sorted(map(str, stage.pairs)), stage.benchmarks, stage.counts))
            assert not list(Path(stage.spill).glob("rows-*.arrow"))  # each read once, removed
    assert reads == {1: 2, 2: 2, 7: 2}
    assert results[0][0] and results[0] == results[1] == results[2]


@pytest.mark.parametrize(
    "lid_model",
    [None, pytest.param("", id="fasttext", marks=pytest.mark.slow)],
)
def test_same_stage_whatever_the_id_buckets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lid_model: str | None
) -> None:
    """The counting pass decides its rows bucket by bucket of the id space (parents, deletes
    and links each in their id's bucket); the rows, benchmarks and counts are those of one
    bucket, with one partition and with several."""
    tweet_files, delete_files = _extracts(tmp_path, seed=5)
    settings = _settings(("en", "es"), lid_model)
    buckets: list[int] = []
    keep = tweet_rows.TweetRows._keep

    def spy(self: Any, bucket: int) -> int:
        kept = keep(self, bucket)
        buckets.append(kept)
        return kept

    monkeypatch.setattr(tweet_rows.TweetRows, "_keep", spy)
    results = []
    for bucket_rows, partitions in ((None, 1), (100, 1), (100, 3)):
        buckets.clear()
        with pair_tweets(
            tweet_files, delete_files, settings, partitions=partitions, bucket_rows=bucket_rows
        ) as stage:
            results.append((sorted(map(str, stage.pairs)), stage.benchmarks, stage.counts))
            assert not list(Path(stage.spill).glob("*-b*.arrow"))  # each bucket read once
        if bucket_rows is not None:
            assert len(buckets) > 10 and sum(n > 0 for n in buckets) > 10
    assert results[0][2]["tweets_dropped.tweet_deleted"] > 0
    assert results[0][0] and results[0] == results[1] == results[2]


def test_extracts_that_change_during_the_stage_fail_it(tmp_path: Path) -> None:
    """The second read takes rows by their number in the first: a file that changed between
    the two is an error, never rows taken from the wrong places."""
    tweet_files, _ = _extracts(tmp_path, seed=3)
    tweets = tweet_rows.TweetRows(
        tweet_files, ["en"], None, get_profile("paper"), str(tmp_path), bucket_rows=500
    )
    tweets.count([], Counter())
    table = pq.read_table(tweet_files[-1])
    pq.write_table(table.slice(0, table.num_rows - 1), tweet_files[-1])
    with pytest.raises(RuntimeError, match="the extracts changed during the pair stage"):
        tweets.plan(3)


def test_a_partition_builds_only_the_nodes_its_conversations_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply whose root falls in another partition is cleaned there, not once more where
    its own id falls: every node a partition builds is a root or a child of one of its
    conversations, and each tweet is counted once (the counts equal one partition's)."""
    tweet_files, delete_files = _extracts(tmp_path, seed=4)
    settings = _settings()
    built: list[set[int]] = []
    used: list[set[int]] = []
    make_node = local_pairs._Nodes._node
    conversations = local_pairs._Nodes.conversations

    def node(self: Any, records: list[dict[str, Any]], *args: Any) -> Any:
        built[-1].add(records[0]["id"])
        return make_node(self, records, *args)

    def watched(self: Any, *args: Any) -> Any:
        built.append(set())
        part = conversations(self, *args)
        nodes = [n for _, root, quotes, replies in part for n in (root, *quotes, *replies)]
        used.append({n.id for n in nodes if n is not None})
        return part

    monkeypatch.setattr(local_pairs._Nodes, "_node", node)
    monkeypatch.setattr(local_pairs._Nodes, "conversations", watched)
    results = []
    for partitions in (1, 5):
        built.clear()
        used.clear()
        with pair_tweets(tweet_files, delete_files, settings, partitions=partitions) as stage:
            results.append((sorted(map(str, stage.pairs)), stage.counts))
        assert len(built) == partitions and built == used
    assert sum(map(len, built)) < 1.2 * len(set().union(*built))  # a few roots are also children
    assert results[0][0] and results[0] == results[1]


class _Tracked(list):  # type: ignore[type-arg]
    """A list that can be watched with a weak reference."""


@pytest.mark.slow  # a build per partition count
def test_one_partition_of_conversations_in_memory_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory is bounded by a partition only if the previous partition's conversations are
    freed before the next ones are built (first pass) or read back (second pass)."""
    refs: list[weakref.ref[_Tracked]] = []
    others_alive: list[int] = []

    def track(part: list[Any]) -> _Tracked:
        gc.collect()
        others_alive.append(sum(ref() is not None for ref in refs))
        tracked = _Tracked(part)
        refs.append(weakref.ref(tracked))
        return tracked

    build_part = local_pairs._Nodes.conversations
    monkeypatch.setattr(
        local_pairs._Nodes, "conversations", lambda self, *args: track(build_part(self, *args))
    )
    read_part = local_pairs._read_conversations
    monkeypatch.setattr(local_pairs, "_read_conversations", lambda path: track(read_part(path)))
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=3000, layout="zip-2020", seed=2)
    config = TwitterConfig(
        inputs=(str(archive),),
        out=str(tmp_path / "release"),
        benchmarks=BENCH,
        pair_engine="local",
        pair_partitions=4,
    )
    manifest = build(config)
    assert manifest["benchmarks"]["dr"]["rows"] > 0  # so the two-pass path ran
    assert len(others_alive) >= 8  # four partitions built, four read back
    assert others_alive == [0] * len(others_alive)


def test_fasttext_predicts_each_record_once_whatever_the_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counting pass decides each record's language; the partition passes reuse it."""
    from corpusforge.text.langid import LanguageIdentifier

    tweet_files, delete_files = _extracts(tmp_path, seed=4)
    settings = _settings(("en", "es"), "")
    predicted = Counter[str]()
    predict = LanguageIdentifier.predict

    def counting(self: LanguageIdentifier, text: str) -> tuple[str, float]:
        predicted["calls"] += 1
        return predict(self, text)

    monkeypatch.setattr(LanguageIdentifier, "predict", counting)
    rows = {}
    for k in (1, 3):
        predicted.clear()
        with pair_tweets(tweet_files, delete_files, settings, partitions=k) as stage:
            rows[k] = sorted(tuple(r.values()) for r in stage.pairs)
            assert stage.counts["records_in_conversations"] > 0
            assert (
                predicted["calls"]
                == stage.counts["records_in"]
                == sum(pq.read_metadata(f).num_rows for f in tweet_files)
            )
    assert rows[1] == rows[3] and rows[1]


def test_auto_engine_is_local_only_without_a_runner_or_workers() -> None:
    config = TwitterConfig(inputs=("x",), out="y")
    assert pair_engine(config, Runner()) == "local"
    assert pair_engine(config, Runner(name="DataflowRunner")) == "beam"
    assert pair_engine(config, Runner(options=("--direct_num_workers=2",))) == "beam"
    forced = TwitterConfig(inputs=("x",), out="y", pair_engine="beam")
    assert pair_engine(forced, Runner()) == "beam"


def test_partitions_are_stable_numbers() -> None:
    """The partition of an id must never change between machines or versions."""
    import numpy as np

    ids = np.array([0, 1, 1346513254338924544, 2**62, 12345])
    assert partition_of(ids, 16).tolist() == [0, 12, 6, 0, 9]
    assert partition_of(ids, 1).tolist() == [0, 0, 0, 0, 0]


def test_memory_limit_sizes_the_pair_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--memory-limit`` decides the conversation records per partition; the rows stay."""
    assert local_pairs.rows_per_partition(2**40) > local_pairs.rows_per_partition(2**30)
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=3000, layout="zip-2020", seed=2)
    partitions_built: list[int] = []
    build_part = local_pairs._Nodes.conversations

    def spy(self: Any, rows: Any, partition: int, partitions: int, counts: Any) -> Any:
        partitions_built.append(partitions)
        return build_part(self, rows, partition, partitions, counts)

    monkeypatch.setattr(local_pairs._Nodes, "conversations", spy)
    monkeypatch.setattr(
        twitter_pairs,
        "rows_per_partition",
        lambda budget, workers, queries: 100 if budget == 300 * 2**20 else 10**9,
    )
    releases = []
    for limit in (None, 300):
        out = tmp_path / f"release-{limit}"
        config = TwitterConfig(
            inputs=(str(archive),), out=str(out), benchmarks=BENCH, memory_limit=limit
        )
        releases.append(_fingerprint(build(config)))
        partitions_built.append(0)
    first, second = partitions_built.index(0), len(partitions_built) - 1
    assert set(partitions_built[:first]) == {1}
    assert min(partitions_built[first + 1 : second]) > 1  # the small budget split them
    assert releases[0] == releases[1]


@pytest.mark.parametrize("workers", [1, 2, 8])
@pytest.mark.parametrize("budget_mib", [1024, 8192, 65536])
def test_partitions_built_at_once_fit_the_budget_with_their_workers(
    workers: int, budget_mib: int
) -> None:
    """A round of partitions (one a worker), the workers' own memory and this process's with
    its benchmark choice fit in the budget, within three quarters of it; more workers or
    more benchmark queries, smaller partitions; workers that do not fit are not started."""
    budget = budget_mib * 2**20
    for queries in (0, 5000):
        started = local_pairs.pair_workers(budget, workers, queries)
        rows = local_pairs.rows_per_partition(budget, started, queries)
        own = started * local_pairs.WORKER_BYTES if started > 1 else 0
        held = rows * local_pairs.BYTES_PER_PARTITION_RECORD + own
        assert held <= budget * 0.75
        assert held + local_pairs.main_bytes(queries) <= budget
        assert rows < local_pairs.rows_per_partition(budget, 1, queries) or started == 1
    assert local_pairs.rows_per_partition(budget, 1, 5000) < local_pairs.rows_per_partition(
        budget, 1, 0
    ) or budget * 0.25 >= local_pairs.main_bytes(5000)


def test_pair_workers_that_do_not_fit_the_budget_are_not_started() -> None:
    """At 1 GiB the default benchmark choice leaves room for no second worker's memory, so
    the partitions are built in this process; more memory, every worker asked for."""
    assert local_pairs.pair_workers(2**30, 2, 5000) == 1
    assert local_pairs.pair_workers(2**30, 2, 0) == 2
    assert local_pairs.pair_workers(8 * 2**30, 2, 5000) == 2
    assert local_pairs.pair_workers(8 * 2**30, 1, 5000) == 1


def test_id_buckets_are_sized_by_the_budget_not_by_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counting pass runs before any worker starts: its id buckets take three quarters of
    the budget whatever ``--workers`` says, while the partitions shrink with the workers."""
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=300, layout="zip-2020", seed=2)
    sizes: list[tuple[int, int]] = []
    real = twitter_pairs.pair_tweets

    def spy(*args: Any, **kwargs: Any) -> Any:
        sizes.append((kwargs["partition_rows"], kwargs["bucket_rows"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(twitter_pairs, "pair_tweets", spy)
    for workers in (1, 2):
        config = TwitterConfig(
            inputs=(str(archive),),
            out=str(tmp_path / f"release-{workers}"),
            benchmarks=BENCH,
            memory_limit=1024,
            workers=workers,
        )
        build(config)
    (one_partition, one_bucket), (two_partition, two_bucket) = sizes
    assert two_partition < one_partition
    assert one_bucket == two_bucket
    assert 0.7 * 2**30 <= one_bucket * tweet_rows.BYTES_PER_LINK_ROW <= 0.75 * 2**30


def test_conversations_come_back_from_their_file_as_they_were(tmp_path: Path) -> None:
    """The second pass reads each partition's conversations back from an Arrow file: roots
    with and without a node, a node in both lists, drop reasons and None fields intact."""
    reply_and_quote = Node(5, "both a reply and a quote 猫", "en", None, 1, 1)
    dropped = Node(6, None, "fr", DropReason.TWEET_HELD_OUT, 1, None)
    part = [
        (
            1,
            Node(1, "the root", "en", None, None, None),
            [reply_and_quote],
            [dropped, reply_and_quote],
        ),
        (2, None, [], [Node(7, "a reply to a tweet never seen", None, None, 2, None)]),
        (3, Node(3, None, "en", DropReason.TWEET_DELETED, None, None), [], []),
    ]
    path = str(tmp_path / "part.arrow")
    local_pairs._write_conversations(path, part)
    back = local_pairs._read_conversations(path)
    assert back == part
    assert isinstance(back[0][3][0].reason, DropReason)
    local_pairs._write_conversations(path, [])  # a partition without conversations
    assert local_pairs._read_conversations(path) == []

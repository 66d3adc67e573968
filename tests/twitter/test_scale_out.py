"""The Twitter pair pipeline scales out: nothing whose size grows with the input reaches a
worker whole. Its job graph is built offline (as in ``test_job_graph.py``) and every side
input and global combine in it must be one that ``transforms/twitter/pairs.py`` lists as
bounded by the configuration; the extract job's only side inputs are its sinks' row counts
per folder. The keyed join that replaced the id arrays is checked on inline rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import apache_beam as beam
import pytest
from apache_beam.portability import common_urns
from apache_beam.portability.api import beam_runner_api_pb2
from apache_beam.runners.runner import PipelineResult, PipelineRunner, PipelineState
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.builds import twitter_pairs as tp
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.pairing.conversations import sample_key
from corpusforge.text.clean import get_profile
from corpusforge.transforms.twitter import ConversationRecords, pairs
from corpusforge.transforms.twitter.pairs import (
    BOUNDED_GLOBAL,
    BOUNDED_SIDE_INPUTS,
    SampledPairs,
    sample_priority,
)


class GraphOnlyRunner(PipelineRunner):
    """Records the pipeline's portable proto instead of running it."""

    graphs: ClassVar[list[beam_runner_api_pb2.Pipeline]] = []

    def run_pipeline(self, pipeline: beam.Pipeline, options: Any) -> PipelineResult:
        GraphOnlyRunner.graphs.append(pipeline.to_runner_api())
        return PipelineResult(PipelineState.DONE)


SAMPLING = "Pairs/SamplePerDataset"


def _pair_graph(tmp_path: Path, **settings: Any) -> beam_runner_api_pb2.Pipeline:
    config = TwitterConfig(inputs=("unused",), out=str(tmp_path / "release"), **settings)
    GraphOnlyRunner.graphs.clear()
    runner = Runner(name=f"{__name__}.GraphOnlyRunner")
    tp.run_pairs(["t.parquet"], ["d.parquet"], config, runner, str(tmp_path / "staging"))
    (graph,) = GraphOnlyRunner.graphs
    return graph


def _side_input_readers(graph: beam_runner_api_pb2.Pipeline) -> set[str]:
    """The labels of the steps that read a side input."""
    readers = set()
    for transform in graph.components.transforms.values():
        if transform.spec.urn == common_urns.primitives.PAR_DO.urn:
            payload = beam_runner_api_pb2.ParDoPayload.FromString(transform.spec.payload)
            if payload.side_inputs:
                readers.add(transform.unique_name)
    return readers


def _global_combines(graph: beam_runner_api_pb2.Pipeline) -> set[str]:
    """The labels of the steps under which a ``CombineGlobally`` keys everything alike."""
    names = (t.unique_name for t in graph.components.transforms.values())
    return {n.removesuffix("/KeyWithVoid") for n in names if n.endswith("/KeyWithVoid")}


def _under(name: str, labels: dict[str, str]) -> bool:
    """Whether step ``name`` is one of ``labels`` or inside one."""
    return any(name == label or name.startswith(label + "/") for label in labels)


def _found(label: str, names: set[str]) -> bool:
    return any(_under(name, {label: ""}) for name in names)


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({}, id="defaults"),
        pytest.param({"pairs_per_dataset": 1000, "lid": "fasttext"}, id="sampled-fasttext"),
    ],
)
def test_only_bounded_side_inputs_and_global_combines(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    graph = _pair_graph(tmp_path, **settings)
    bounded = {**BOUNDED_SIDE_INPUTS, **BOUNDED_GLOBAL}  # a global combine reads its own result
    readers = _side_input_readers(graph)
    assert [name for name in readers if not _under(name, bounded)] == []
    combines = _global_combines(graph)
    assert [name for name in combines if not _under(name, BOUNDED_GLOBAL)] == []
    # and the lists name no step that is gone (sampling is there only when asked for)
    sampled = "pairs_per_dataset" in settings
    expected = {label for label in BOUNDED_SIDE_INPUTS if sampled or SAMPLING not in label}
    assert {label for label in BOUNDED_SIDE_INPUTS if _found(label, readers)} == expected
    assert {label for label in BOUNDED_GLOBAL if _found(label, combines)} == set(BOUNDED_GLOBAL)


def test_without_benchmarks_only_the_empty_hold_out_and_the_shard_counts_remain(
    tmp_path: Path,
) -> None:
    graph = _pair_graph(tmp_path, benchmarks=BenchmarkConfig(queries=0))
    readers = _side_input_readers(graph)
    assert [name for name in readers if not _under(name, BOUNDED_SIDE_INPUTS)] == []
    assert not _found("Pairs/Benchmarks", readers)
    assert _global_combines(graph) == set()


EXTRACT_SIDE_INPUTS = {
    "WriteTweets/AssignShard",
    "WriteDeletes/AssignShard",
    "WriteDead/AssignShard",
}
"""The extract job's only side inputs: each sink's row count per output folder, three folders
an archive (tweets, deletes, dead letters), whatever the archive's size."""


def test_the_extract_job_reads_only_the_sinks_counts_per_folder(tmp_path: Path) -> None:
    from corpusforge.builds.twitter_beam import extract_on_beam

    out = tmp_path / "release"
    tweet_dirs = {f"day{i}.zip": str(out / "tweets" / f"day{i}") for i in range(2)}
    dead_dirs = {d: str(out / "dead_letter" / Path(d).name) for d in tweet_dirs.values()}
    config = TwitterConfig(inputs=tuple(tweet_dirs), out=str(out))
    GraphOnlyRunner.graphs.clear()
    runner = Runner(name=f"{__name__}.GraphOnlyRunner")
    extract_on_beam(tweet_dirs, dead_dirs, config, runner, lambda row: row["id"])
    (graph,) = GraphOnlyRunner.graphs
    readers = _side_input_readers(graph)
    assert {label for label in EXTRACT_SIDE_INPUTS if _found(label, readers)} == EXTRACT_SIDE_INPUTS
    assert [name for name in readers if not _under(name, dict.fromkeys(EXTRACT_SIDE_INPUTS))] == []
    assert _global_combines(graph) == set()


def _row(i: int, reply_to: int | None = None, archive: str = "a") -> dict[str, Any]:
    return {
        "id": i,
        "created_at": None,
        "lang": "en",
        "text": f"tweet number {i}",
        "reply_to_id": reply_to,
        "quote_of_id": None,
        "embedded_only": False,
        "origin_archive": archive,
        "origin_member": "m",
        "origin_line": i,
    }


def test_conversation_records_are_decided_per_record_by_one_grouping_on_the_id() -> None:
    """A root is kept for being replied to; of two copies of tweet 7 only the one that replies
    is kept (its other copy is counted outside); a lone tweet and a delete notice of no kept
    tweet go no further; a deleted reply carries its flag."""
    rows = [
        _row(1),
        _row(2, reply_to=1),
        _row(3, reply_to=1),
        _row(7, reply_to=1, archive="a"),
        _row(7, archive="b"),
        _row(9),
    ]
    p = TestPipeline(runner="FnApiRunner")
    out = {
        "rows": p | "Rows" >> beam.Create(rows),
        "deletes": p | "Deletes" >> beam.Create([{"id": 3}, {"id": 9}, {"id": 42}]),
    } | ConversationRecords(("en",), None, get_profile("paper"))
    assert_that(
        out["records"]
        | beam.MapTuple(lambda i, kd: (i, sorted(r["origin_archive"] for r in kd[0]), kd[1])),
        equal_to([(1, ["a"], False), (2, ["a"], False), (3, ["a"], True), (7, ["a"], False)]),
        label="records",
    )
    assert_that(
        out["counts"] | beam.CombinePerKey(sum),
        equal_to(
            [
                ("records_in", 6),
                ("records_in_conversations", 4),
                ("records_outside_conversations", 2),
            ]
        ),
        label="counts",
    )
    p.run().wait_until_finish()


def test_sampling_combines_keys_and_filters_rows_against_one_threshold_per_dataset(
    tmp_path: Path,
) -> None:
    """``--pairs-per-dataset``: the per-dataset ``Top`` reads the rows' priorities, not the
    rows; the rows meet only the thresholds, a side input."""
    graph = _pair_graph(tmp_path, pairs_per_dataset=1000)
    transforms = graph.components.transforms.values()
    producer = {pc: t.unique_name for t in transforms for pc in t.outputs.values()}
    combines = [
        t
        for t in transforms
        if t.spec.urn == common_urns.composites.COMBINE_PER_KEY.urn
        and t.unique_name.startswith(SAMPLING + "/")
    ]
    assert [producer[pc] for t in combines for pc in t.inputs.values()] == [
        f"{SAMPLING}/Priorities"
    ]
    assert {n for n in _side_input_readers(graph) if n.startswith(SAMPLING)} == {
        f"{SAMPLING}/KeepSampled"
    }


def _pair(dataset: str, anchor: int, positive: int) -> dict[str, Any]:
    return {"dataset": dataset, "anchor_id": anchor, "positive_id": positive}


def test_sampled_pairs_are_each_datasets_smallest_sample_keys() -> None:
    """Each dataset keeps its ``n`` rows of smallest :func:`sample_key`, as the local engine
    does; a dataset with fewer is kept whole; the keys' ids break no tie (they are distinct)."""
    seed, n = 3, 5
    rows = [_pair("qt", i, 1000 + i) for i in range(40)]
    rows += [_pair("rp", i, 2000 + i) for i in range(60)]
    rows += [_pair("coqt", i, 3000 + i) for i in range(n - 1)]
    expected = [
        row
        for dataset in ("qt", "rp", "coqt")
        for row in sorted(
            (r for r in rows if r["dataset"] == dataset), key=lambda r: sample_key(seed, r)
        )[:n]
    ]
    p = TestPipeline(runner="FnApiRunner")
    sampled = p | beam.Create(rows) | SampledPairs(n, seed)
    assert_that(sampled, equal_to(expected))
    p.run().wait_until_finish()


HASHES = st.sampled_from([0, 1, 2**64 - 1]) | st.integers(0, 2**64 - 1)  # ties, then the rest
INT64 = st.integers(-(2**63), 2**63 - 1)


@given(st.lists(st.tuples(HASHES, INT64, INT64), unique=True, max_size=30))
def test_sample_priority_orders_pairs_as_their_sample_keys(
    keys: list[tuple[int, int, int]],
) -> None:
    """The larger the priority, the smaller the key, whatever the hash and ids (int64's edges
    included, hashes tied so that the ids decide)."""
    rows = [{"key": key} for key in keys]
    with mock.patch.object(pairs, "sample_key", lambda seed, row: row["key"]):
        ranked = sorted(rows, key=lambda row: sample_priority(0, row), reverse=True)
    assert [row["key"] for row in ranked] == sorted(keys)

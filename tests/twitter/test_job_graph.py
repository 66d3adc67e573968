"""The Twitter stages build their job graphs offline, as the portable pipeline proto that a
Flink job server or Dataflow Runner v2 receives; nothing runs and nothing is submitted."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import apache_beam as beam
from apache_beam.portability.api import beam_runner_api_pb2
from apache_beam.runners.runner import PipelineResult, PipelineRunner, PipelineState

from corpusforge.builds import twitter_extract as tb
from corpusforge.builds import twitter_pairs as tp
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig


class GraphOnlyRunner(PipelineRunner):
    """Records each pipeline's portable proto instead of running it."""

    graphs: ClassVar[list[beam_runner_api_pb2.Pipeline]] = []

    def run_pipeline(self, pipeline: beam.Pipeline, options: Any) -> PipelineResult:
        GraphOnlyRunner.graphs.append(pipeline.to_runner_api())
        return PipelineResult(PipelineState.DONE)


def _labels(proto: beam_runner_api_pb2.Pipeline) -> set[str]:
    return {t.unique_name for t in proto.components.transforms.values()}


def test_extract_and_pair_graphs_build_offline(tmp_path: Path) -> None:
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip: only its name matters
    config = TwitterConfig(inputs=(str(archive),), out=str(tmp_path / "release"))
    runner = Runner(name=f"{__name__}.GraphOnlyRunner")
    GraphOnlyRunner.graphs.clear()
    tb.run_extract([tb.describe_input(str(archive), config)], config, runner)
    tp.run_pairs(["t.parquet"], ["d.parquet"], config, runner, str(tmp_path / "staging"))
    extract, pairs = GraphOnlyRunner.graphs
    assert {
        "Extract/ListMembers",
        "Extract/FanOutMembers",
        "Extract/ReadMembers",
        "WriteTweets/WriteShard",
        "WriteDeletes/WriteShard",
        "WriteDead/WriteShard",
    } <= _labels(extract)
    assert {
        "Pairs/InConversations/KeepConversations",
        "Pairs/InConversations/GroupById",
        "Pairs/GroupByRoot",
        "Pairs/Benchmarks/ChooseQueries",
        "Pairs/PairRoots",
        "Pairs/DropDuplicateText",
        "WritePairs/WriteShard",
        "WriteBenchmark",
    } <= _labels(pairs)
    # every transform has a unique, readable label (no Beam auto-numbering like Map(<lambda>)_12)
    for proto in (extract, pairs):
        assert not [name for name in _labels(proto) if "<lambda>" in name]

"""A failed Beam job is one line naming the runner, and the build publishes nothing."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from corpusforge.jobs import JobFailed, job


def _explode(x: int) -> int:
    raise ValueError(f"element {x} is bad\nsecond line of the runner's report")


def test_a_failing_job_raises_one_line_naming_the_runner() -> None:
    with pytest.raises(JobFailed) as caught, job(PipelineOptions([])) as p:
        _ = p | beam.Create([1]) | beam.Map(_explode)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("the Beam job failed on the in-process runner: ")
    assert "element 1 is bad" in message
    assert message.endswith("; nothing was published")
    assert isinstance(caught.value.__cause__, Exception)  # the runner's report is kept


def test_an_error_while_building_the_graph_is_not_a_job_failure() -> None:
    with pytest.raises(KeyError), job(PipelineOptions([])) as p:
        _ = p | beam.Create([1])
        raise KeyError("a programming error")


def test_a_job_that_succeeds_runs_its_graph(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "n.txt"
    with job(PipelineOptions([])) as p:
        _ = p | beam.Create(["x"]) | beam.Map(lambda s: out.write_text(s))
    assert out.read_text() == "x"

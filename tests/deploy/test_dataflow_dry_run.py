"""The three pipelines translate for Dataflow, offline, for a year of inputs.

``--runner DataflowRunner --dry_run=True`` builds the Dataflow job (Runner v2: the portable
pipeline proto, which a real submission stages as ``pipeline.pb`` and sends with the job
request) and returns without staging or submitting anything. For 365 daily inputs, given as
one glob and as 365 ``--input``s, the test checks that the job graph stays far below
Dataflow's 10 MB request limit (the figures go to ``deploy/dataflow/RUNBOOK.md``) and that a
worker has nothing to install at start-up: the only staged file is Beam's informational
``submission_environment_dependencies.txt`` (the container's boot only logs it), with no
requirements file, extra package, setup package or SDK tarball.

Needs the ``gcp`` extra (``apache-beam[gcp]``), which ``scripts/test.sh`` installs.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytest.importorskip("apitools", reason="the gcp extra (apache-beam[gcp]) is not installed")

from apache_beam.runners.dataflow.dataflow_runner import DataflowRunner
from apache_beam.runners.runner import PipelineResult

from corpusforge.builds import bitext as bitext_build
from corpusforge.builds import paranmt as paranmt_build
from corpusforge.builds import twitter_extract as tb
from corpusforge.builds import twitter_pairs as tp
from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig
from corpusforge.release.io import expand_inputs

pytestmark = pytest.mark.slow  # a year of inputs, translated three times: run by .ci/run

DAYS = 365
SIDES = {"de": "Guten Morgen, wie geht es dir heute?", "en": "Good morning, how are you today?"}
LIMIT = 10 * 1024 * 1024  # Dataflow's job request limit
NOTHING_TO_INSTALL = {"submission_environment_dependencies.txt"}
DATAFLOW = [
    f"--runner={__name__}.RecordingDataflowRunner",
    "--dry_run=True",
    "--project=demo-project",
    "--region=europe-west4",
    "--temp_location=gs://demo-bucket/temp",
    "--staging_location=gs://demo-bucket/staging",
    "--sdk_container_image=europe-west4-docker.pkg.dev/demo-project/corpusforge/worker:2.77.0",
]
DATAFLOW_RUNNER = Runner.parse(DATAFLOW)


class RecordingDataflowRunner(DataflowRunner):
    """Dataflow's own runner; keeps each dry-run job instead of dropping it."""

    jobs: ClassVar[list[Any]] = []

    def run_pipeline(self, pipeline: Any, options: Any) -> PipelineResult:
        result = super().run_pipeline(pipeline, options)
        RecordingDataflowRunner.jobs.append(result.job)  # set by a dry run, never submitted
        return result


def _figures(job: Any) -> dict[str, Any]:
    staged = {
        d.role_payload.decode("utf-8", "replace").lstrip("\n'\x1a\x00 ")
        for env in job.proto_pipeline.components.environments.values()
        for d in env.dependencies
    }
    return {
        "graph_bytes": len(job.proto_pipeline.SerializeToString()),
        "transforms": len(job.proto_pipeline.components.transforms),
        "staged": {s for s in staged if s},
    }


def _jobs(run: Any) -> list[dict[str, Any]]:
    RecordingDataflowRunner.jobs.clear()
    run()
    return [_figures(job) for job in RecordingDataflowRunner.jobs]


def _check(figures: list[dict[str, Any]], expected_jobs: int) -> None:
    assert len(figures) == expected_jobs
    for f in figures:
        assert f["graph_bytes"] < LIMIT / 10, f
        assert {Path(s).name for s in f["staged"]} <= NOTHING_TO_INSTALL, f["staged"]
    print(json.dumps([{k: v for k, v in f.items() if k != "staged"} for f in figures]))


@pytest.fixture(scope="module")
def year(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """365 daily archives (empty zips: the job graph depends on their names, not bytes)."""
    root = tmp_path_factory.mktemp("year")
    for day in range(DAYS):
        path = root / f"twitter-stream-2021-{day // 31 + 1:02d}-{day % 31 + 1:02d}-{day:03d}.zip"
        with zipfile.ZipFile(path, "w"):
            pass
    return root


@pytest.mark.parametrize("given_as", ["one glob", "365 inputs"])
def test_twitter_jobs_for_a_year_translate_far_below_the_request_limit(
    year: Path, tmp_path: Path, given_as: str
) -> None:
    names = sorted(str(p) for p in year.glob("*.zip"))
    inputs = (str(year / "*.zip"),) if given_as == "one glob" else tuple(names)
    uris = expand_inputs(inputs)
    assert uris == names
    config = TwitterConfig(inputs=inputs, out=str(tmp_path / "release"))
    # the pair job reads the extract's shards: four tweet shards and one delete shard a day
    shards = "gs://demo-bucket/release/tweets/{:03d}/{}/{}.parquet"
    tweets = [shards.format(d, "tweets", s) for d in range(DAYS) for s in range(4)]
    deletes = [shards.format(d, "deletes", 0) for d in range(DAYS)]

    def run() -> None:
        tb.run_extract([tb.describe_input(u, config) for u in uris], config, DATAFLOW_RUNNER)
        tp.run_pairs(tweets, deletes, config, DATAFLOW_RUNNER, str(tmp_path / "staging"))

    _check(_jobs(run), expected_jobs=2)


@pytest.fixture(scope="module")
def bitext_year(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bitext-year")
    for day in range(DAYS):
        for lang, text in SIDES.items():
            (root / f"day{day:03d}.de-en.{lang}").write_text(text + "\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("given_as", ["one glob", "730 inputs"])
def test_bitext_job_for_a_year_translates_far_below_the_request_limit(
    bitext_year: Path, tmp_path: Path, given_as: str
) -> None:
    names = sorted(str(p) for p in bitext_year.iterdir())
    inputs = (str(bitext_year / "*"),) if given_as == "one glob" else tuple(names)
    config = BitextConfig(inputs=inputs, out=str(tmp_path / "release"), dataset="Daily")
    _check(_jobs(lambda: bitext_build.start(config, DATAFLOW_RUNNER)), expected_jobs=1)


def test_paranmt_job_for_a_year_translates_far_below_the_request_limit(tmp_path: Path) -> None:
    root = tmp_path / "in"
    root.mkdir()
    for day in range(DAYS):
        (root / f"para-nmt-{day:03d}.txt").write_text(
            "the cat sat on the mat today\ta cat was sitting on the mat today\t0.8\n"
        )
    config = ParaphraseConfig(inputs=(str(root / "*.txt"),), out=str(tmp_path / "release"))
    _check(_jobs(lambda: paranmt_build.start(config, DATAFLOW_RUNNER)), expected_jobs=1)

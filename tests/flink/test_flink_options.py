"""``--runner flink`` without a cluster: the options a build gets, and a missing job server.

The cluster runs are in ``test_flink_cluster.py`` (marked ``flink``); these need neither Java
nor the job server jar and run in the default test command.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpusforge.config.runner import Runner
from corpusforge.flink import (
    FLINK_JAR_ENV,
    JAVA_17_FLAGS,
    FlinkNotFoundError,
    needs_job_server,
    uses_flink,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "job-server.jar"
    path.write_bytes(b"")
    monkeypatch.setenv(FLINK_JAR_ENV, str(path))
    return path


def test_flink_runner_names() -> None:
    assert uses_flink("flink") and uses_flink("FlinkRunner")
    assert uses_flink("apache_beam.runners.portability.flink_runner.FlinkRunner")
    assert not uses_flink("PortableRunner") and not uses_flink(None)


def test_runner_flink_gets_the_job_server_embedded_flink_and_loopback(jar: Path) -> None:
    from corpusforge.config.beam import pipeline_options

    options = pipeline_options(Runner(name="flink")).get_all_options()
    assert options["runner"] == "FlinkRunner"
    assert options["flink_job_server_jar"] == str(jar)
    assert options["flink_version"] == "1.19"
    assert options["flink_master"] == "[local]"
    assert options["environment_type"] == "LOOPBACK"
    assert set(JAVA_17_FLAGS) <= set(options["job_server_jvm_properties"])


def test_the_users_master_environment_and_job_server_are_kept(jar: Path) -> None:
    from corpusforge.config.beam import pipeline_options

    options = pipeline_options(
        Runner.parse([
            "--runner=FlinkRunner", "--flink_master=localhost:8081",
            "--environment_type=EXTERNAL", "--environment_config=localhost:50000",
            "--job_endpoint=localhost:8099",
        ])
    ).get_all_options()  # fmt: skip
    assert options["flink_master"] == "localhost:8081"
    assert options["environment_type"] == "EXTERNAL"
    assert options["job_endpoint"] == "localhost:8099"
    assert options["flink_job_server_jar"] is None  # a running job server: no jar needed


def test_the_manifest_names_the_flink_runner(jar: Path) -> None:
    assert Runner(name="flink", master="localhost:8081").class_name == "FlinkRunner"


@pytest.mark.parametrize(
    ("flags", "needed"),
    [
        (["--runner=flink"], True),
        (["--runner=flink", "--flink_master=localhost:8081"], True),
        (["--runner=flink", "--job_endpoint", "localhost:8099"], False),
        (["--runner=flink", "--flink_job_server_jar=/opt/job-server.jar"], False),
        (["--runner=flink", "--flink_job_server_jar", "/opt/job-server.jar"], False),
    ],
)
def test_the_built_job_server_is_needed_unless_one_is_named(flags: list[str], needed: bool) -> None:
    assert needs_job_server(Runner.parse(flags)) is needed


def test_a_missing_job_server_raises_naming_the_build_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corpusforge.config.beam import pipeline_options

    monkeypatch.setenv(FLINK_JAR_ENV, str(tmp_path / "missing.jar"))
    with pytest.raises(FlinkNotFoundError, match=r"bash scripts/flink\.sh"):
        pipeline_options(Runner(name="flink"))


@pytest.mark.parametrize(
    "command",
    [
        ["-c", "from corpusforge.cli import main; main()", "paranmt", "build"],
        ["-m", "pipelines.paranmt_pairs", "--input"],
    ],
)
def test_a_missing_job_server_is_one_line_and_creates_nothing(
    command: list[str], tmp_path: Path
) -> None:
    """No job server jar: one line naming ``bash scripts/flink.sh``, exit 2, no draft."""
    source = tmp_path / "in" / "para-nmt.txt"
    source.parent.mkdir()
    source.write_text("a reference sentence here\ta paraphrase sentence here\t0.8\n")
    out = tmp_path / "out" / "release"
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": f"{REPO / 'src'}:{REPO}",
        "HOME": str(tmp_path),
        FLINK_JAR_ENV: str(tmp_path / "missing.jar"),
    }
    proc = subprocess.run(
        [sys.executable, *command, str(source), "--out", str(out), "--runner", "flink"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "bash scripts/flink.sh" in last, proc.stderr
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_a_running_job_server_keeps_its_own_flink_master(jar: Path) -> None:
    from corpusforge.config.beam import pipeline_options

    options = pipeline_options(Runner(name="flink", endpoint="localhost:8099"))
    assert options.get_all_options()["flink_master"] == "[auto]"


class _JavaOptions:
    """A job service that describes one Java runner option, as the Flink job server does."""

    def DescribePipelineOptions(self, request: object, timeout: object = None) -> object:
        from apache_beam.portability.api import beam_job_api_pb2

        option = beam_job_api_pb2.PipelineOptionDescriptor(
            name="execution_mode_for_batch",
            type=beam_job_api_pb2.PipelineOptionType.STRING,
            description="Flink's ExecutionMode for batch jobs",
        )
        return beam_job_api_pb2.DescribePipelineOptionsResponse(options=[option])


def _sent_to_job_server(options: object) -> dict[str, object]:
    """The pipeline options Beam's portable runner sends the job server (as the Flink runner
    submits: unknown options dropped), by name."""
    from apache_beam.runners.portability.portable_runner import JobServiceHandle

    struct = JobServiceHandle(_JavaOptions(), options).get_pipeline_options()
    return {key.split(":")[2]: value for key, value in struct.items()}


@pytest.mark.parametrize(
    ("flags", "sent"),
    [
        ([], None),  # the Java runner's default (PIPELINED) applies
        (["--execution_mode_for_batch=BATCH_FORCED"], "BATCH_FORCED"),
        (["--execution_mode_for_batch", "BATCH"], "BATCH"),
    ],
)
def test_a_flink_build_takes_the_java_runners_batch_mode(
    jar: Path, flags: list[str], sent: str | None
) -> None:
    """``--execution_mode_for_batch`` is the Java runner's option, which Beam's Python SDK
    learns only from the job server: a build command takes it (its flag check refused it
    once), and it reaches the job server as given, or not at all."""
    from corpusforge import beamflags
    from corpusforge.config.beam import pipeline_options

    beamflags.check_flags(flags)  # a build command takes the Java runner's flag
    options = pipeline_options(Runner.parse(["--runner=flink", *flags]))
    assert _sent_to_job_server(options).get("execution_mode_for_batch") == sent

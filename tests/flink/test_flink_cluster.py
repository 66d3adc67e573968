"""The three Beam pipelines on a real Flink cluster, with the release the local engine builds.

A standalone Flink 1.19 session cluster (one JobManager, one TaskManager with 2 slots) is
started once for the session by ``scripts/flink-cluster.sh`` (or the one whose REST address
``$CORPUSFORGE_FLINK_MASTER`` names is used); each pipeline is submitted with ``--runner flink
--flink_master localhost:PORT --parallelism=2`` through Beam's Flink job server
(``scripts/flink.sh`` builds it), with ``LOOPBACK`` workers and with ``EXTERNAL`` workers from
a Beam worker pool (and once on the job server's embedded Flink), and its release must equal
the local engine's file for file, byte for byte, except the runner named in the manifest.
Marked ``flink``: ``.ci/run`` builds the job server and the cluster's classpath and requires
these tests (``CORPUSFORGE_REQUIRE_FLINK=1``); elsewhere they skip when ``build/flink`` is not
built.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from corpusforge.flink import (
    JAVA_17_FLAGS,
    FlinkNotFoundError,
    built_job_server,
    locate_job_server,
)
from tests.bitext.test_build_paranmt import write_paranmt
from tests.portable.test_prism_service import (
    ENV,
    REPO,
    _command,
    _differences,
    _free_port,
    _release_files,
    _service,
    _worker_pool,
    pipeline_inputs,
)

pytestmark = pytest.mark.flink
MASTER_ENV = "CORPUSFORGE_FLINK_MASTER"
CLUSTER_SCRIPT = REPO / "scripts" / "flink-cluster.sh"


def _require(reason: str) -> None:
    if os.environ.get("CORPUSFORGE_REQUIRE_FLINK") == "1":
        pytest.fail(f"{reason} (CORPUSFORGE_REQUIRE_FLINK=1)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def flink_master() -> Iterator[str]:
    """The REST address of a Flink 1.19 session cluster: ``$CORPUSFORGE_FLINK_MASTER``, or
    one ``scripts/flink-cluster.sh`` starts in a folder of its own and stops at the end."""
    try:
        locate_job_server("tests/flink")
    except FlinkNotFoundError as exc:
        _require(str(exc))
    given = os.environ.get(MASTER_ENV)
    if given:
        yield given
        return
    if not (built_job_server().parent / "lib").is_dir():
        _require("no Flink cluster classpath in build/flink/lib: run `bash scripts/flink.sh`")
    with tempfile.TemporaryDirectory(prefix="flink-cluster-") as run:
        env = {**os.environ, "CORPUSFORGE_FLINK_RUN": run}
        started = subprocess.run(
            ["bash", str(CLUSTER_SCRIPT), "start"],
            env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        try:
            assert started.returncode == 0, started.stderr[-3000:]
            yield started.stdout.strip().splitlines()[-1]
        finally:
            subprocess.run(["bash", str(CLUSTER_SCRIPT), "stop"], env=env, timeout=60)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, realdata: Path) -> dict[str, list[str]]:
    """Each pipeline's entry point and flags: the inputs of ``tests/portable``."""
    return pipeline_inputs(tmp_path_factory.mktemp("inputs"), realdata)


@pytest.fixture(scope="module")
def worker_pool() -> Iterator[str]:
    """Beam's worker pool, started with this venv's ``python`` first on ``PATH`` (``ENV``):
    it starts each SDK worker as ``python -c ...``, and another Python hangs the job."""
    with _worker_pool() as (address, _):
        yield address


def _finished_jobs(master: str) -> int:
    with urllib.request.urlopen(f"http://{master}/jobs/overview", timeout=10) as response:
        jobs = json.load(response)["jobs"]
    return sum(job["state"] == "FINISHED" for job in jobs)


def _build(module_and_flags: list[str], out: Path, *more: str) -> None:
    proc = subprocess.run(
        _command(module_and_flags, out, *more),
        cwd=REPO, env=ENV, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]


def _same_release_as_local(
    name: str, inputs: dict[str, list[str]], tmp_path: Path, master: str, *environment: str
) -> None:
    local = tmp_path / "local"
    _build(inputs[name], local)
    out = tmp_path / "flink"
    before = _finished_jobs(master)
    _build(
        inputs[name], out,
        "--runner=flink", f"--flink_master={master}", "--parallelism=2", *environment,
    )  # fmt: skip
    assert _finished_jobs(master) > before, "no job finished on the cluster"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runner"] == "FlinkRunner"
    assert _differences(_release_files(local), _release_files(out)) == []


@pytest.mark.parametrize("name", ["twitter-synthetic", "bitext-real", "paranmt"])
def test_flink_cluster_builds_the_local_release_with_loopback_workers(
    name: str, inputs: dict[str, list[str]], flink_master: str, tmp_path: Path
) -> None:
    _same_release_as_local(name, inputs, tmp_path, flink_master)


@pytest.mark.parametrize("name", ["twitter-synthetic", "bitext-real", "paranmt"])
def test_flink_cluster_builds_the_local_release_with_external_workers(
    name: str, inputs: dict[str, list[str]], flink_master: str, worker_pool: str, tmp_path: Path
) -> None:
    _same_release_as_local(
        name, inputs, tmp_path, flink_master,
        "--environment_type=EXTERNAL", f"--environment_config={worker_pool}",
    )  # fmt: skip


def test_the_embedded_flink_builds_the_local_release(
    inputs: dict[str, list[str]], flink_master: str, tmp_path: Path
) -> None:
    """``--runner=flink`` with no ``--flink_master``: the job runs on the Flink embedded in
    the job server the build starts (the session cluster only proves the job server is
    built), and the release is the local engine's."""
    local, out = tmp_path / "local", tmp_path / "embedded"
    _build(inputs["paranmt"], local)
    before = _finished_jobs(flink_master)
    _build(inputs["paranmt"], out, "--runner=flink", "--parallelism=2")
    assert _finished_jobs(flink_master) == before, "the job went to the session cluster"
    assert json.loads((out / "manifest.json").read_text())["runner"] == "FlinkRunner"
    assert _differences(_release_files(local), _release_files(out)) == []


def test_flink_cluster_builds_the_local_release_of_the_real_twitter_sample(
    inputs: dict[str, list[str]], flink_master: str, tmp_path: Path
) -> None:
    _same_release_as_local("twitter-real", inputs, tmp_path, flink_master)


@pytest.fixture(scope="module")
def job_server(flink_master: str) -> Iterator[str]:
    """Beam's Flink job server, started once as a deployment runs one, submitting to the
    cluster."""
    port = _free_port()
    command = [
        "java", *JAVA_17_FLAGS, "-jar", str(locate_job_server()),
        f"--flink-master={flink_master}", f"--job-port={port}",
        "--artifact-port=0", "--expansion-port=0",
    ]  # fmt: skip
    with _service(command, port, "the Flink job server"):
        yield f"localhost:{port}"


def _cli(*args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "from corpusforge.cli import main; main()", *args],
        cwd=REPO, env=ENV, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_command_builds_on_the_cluster_through_a_running_job_server(
    flink_master: str, job_server: str, tmp_path: Path
) -> None:
    """``corpusforge paranmt build --runner flink --job_endpoint HOST:PORT``: the job goes
    through the job server named, and the release is the local engine's."""
    source = write_paranmt(tmp_path / "in" / "para-nmt-sample.txt.gz")
    local, out = tmp_path / "local", tmp_path / "flink"
    _cli("paranmt", "build", source, "--out", str(local))
    before = _finished_jobs(flink_master)
    _cli(
        "paranmt", "build", source, "--out", str(out),
        "--runner", "flink", f"--job_endpoint={job_server}", "--parallelism=2",
    )  # fmt: skip
    assert _finished_jobs(flink_master) > before, "no job finished on the cluster"
    assert json.loads((out / "manifest.json").read_text())["runner"] == "FlinkRunner"
    assert _differences(_release_files(local), _release_files(out)) == []

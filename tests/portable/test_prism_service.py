"""The three Beam pipelines run out of process on Prism, as a cluster would run them.

Prism (``scripts/prism.sh`` builds it) is started as a separate job service on a free port;
each pipeline is submitted with ``--runner PortableRunner --job_endpoint localhost:PORT``,
once with ``LOOPBACK`` workers and once with ``EXTERNAL`` workers from a Beam worker pool
that the test starts, and its release must equal the local engine's file for file, byte for
byte, except the manifest's runner field. Marked ``portable``: ``.ci/run`` builds Prism and
requires these tests; elsewhere they skip when no Prism binary is found.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from corpusforge.heap import worker_environment
from corpusforge.inspect.validate import validate_release
from corpusforge.prism import PrismNotFoundError, locate_prism
from corpusforge.synth.twitter import write_synthetic_archive
from tests.bitext.test_build_paranmt import write_paranmt

pytestmark = pytest.mark.portable
REPO = Path(__file__).resolve().parents[2]
# The worker pool starts each SDK worker as ``python -c ...``: this interpreter's, as a
# worker container's image would hold Beam and corpusforge.
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
    "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
}
RUNNER_FIELDS = ("runner",)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def _wait_for(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before serving")
        with socket.socket() as s:
            if s.connect_ex(("localhost", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{what} did not listen on port {port} within 60 s")


@contextmanager
def _service(
    command: list[str], port: int, what: str, env: dict[str, str] = ENV
) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(port, proc, what)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextmanager
def _job_service(prism: Path) -> Iterator[str]:
    """Prism as a job service on a free port, as a cluster's job server would be run."""
    port = _free_port()
    with _service([str(prism), "--job_port", str(port), "--serve_http=false"], port, "prism"):
        yield f"localhost:{port}"


@contextmanager
def _worker_pool() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Beam's worker pool: it starts one SDK worker process per worker the runner asks for."""
    port = _free_port()
    command = [
        sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
        f"--service_port={port}",
    ]  # fmt: skip
    with _service(command, port, "the Beam worker pool", worker_environment(ENV)) as proc:
        yield f"localhost:{port}", proc


@pytest.fixture(scope="module")
def prism_binary() -> Path:
    try:
        return locate_prism("the portable tests")
    except PrismNotFoundError as exc:
        if os.environ.get("CORPUSFORGE_REQUIRE_PRISM") == "1":
            raise
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def job_endpoint(prism_binary: Path) -> Iterator[str]:
    with _job_service(prism_binary) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def worker_pool() -> Iterator[str]:
    with _worker_pool() as (address, _):
        yield address


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, realdata: Path) -> dict[str, list[str]]:
    return pipeline_inputs(tmp_path_factory.mktemp("inputs"), realdata)


def pipeline_inputs(root: Path, realdata: Path) -> dict[str, list[str]]:
    """Each pipeline's entry point and flags, on the real samples and a synthetic archive
    written under ``root`` (the runner tests here and in ``tests/flink`` share them)."""
    synthetic = root / "twitter-stream-2021-01-02.zip"
    write_synthetic_archive(synthetic, tweets=3_000, layout="zip-2020", seed=11)
    tatoeba = realdata / "tatoeba-laser-v1"
    return {
        "twitter-real": [
            "pipelines.twitter_pairs",
            "--input",
            str(realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip"),
            "--benchmark_queries=5",
        ],
        "twitter-synthetic": [
            "pipelines.twitter_pairs", "--input", str(synthetic), "--benchmark_queries=5",
        ],
        "twitter-sampled": [  # qt and rp sampled, coqt and corp kept whole
            "pipelines.twitter_pairs", "--input", str(synthetic), "--benchmark_queries=5",
            "--pairs_per_dataset=10",
        ],
        "bitext-real": [
            "pipelines.bitext_pairs",
            "--input", str(tatoeba / "tatoeba.deu-eng.deu"),
            "--input", str(tatoeba / "tatoeba.deu-eng.eng"),
            "--dataset", "Tatoeba",
        ],
        "paranmt": [
            "pipelines.paranmt_pairs", "--input", write_paranmt(root / "para-nmt-sample.txt.gz"),
        ],
    }  # fmt: skip


def _command(module_and_flags: list[str], out: Path, *more: str) -> list[str]:
    module, *flags = module_and_flags
    return [sys.executable, "-m", module, *flags, "--out", str(out), *more]


def _build(module_and_flags: list[str], out: Path, *more: str) -> None:
    proc = subprocess.run(
        _command(module_and_flags, out, *more),
        cwd=REPO, env=ENV, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]


def _release_files(out: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "manifest.json" and path.parent == out:
            manifest = json.loads(data)
            for field in RUNNER_FIELDS:
                manifest.pop(field, None)
            data = json.dumps(manifest, sort_keys=True).encode()
        files[str(path.relative_to(out))] = data
    return files


def _differences(a: dict[str, bytes], b: dict[str, bytes]) -> list[str]:
    only = sorted(set(a) ^ set(b))
    changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    return [f"only in one: {k}" for k in only] + [f"differs: {k}" for k in changed]


@pytest.mark.parametrize(
    "name", ["twitter-real", "twitter-synthetic", "twitter-sampled", "bitext-real", "paranmt"]
)
def test_prism_job_service_builds_the_local_release(
    name: str,
    inputs: dict[str, list[str]],
    job_endpoint: str,
    worker_pool: str,
    tmp_path: Path,
) -> None:
    local = tmp_path / "local"
    _build(inputs[name], local)
    if name == "twitter-sampled":  # the sample bites some datasets and keeps others whole
        datasets = json.loads((local / "manifest.json").read_text())["datasets"]
        sampled = {"pair_sampled_out" in d["dropped"] for k, d in datasets.items() if k != "all"}
        assert sampled == {True, False}
    portable = ["--runner=PortableRunner", f"--job_endpoint={job_endpoint}"]
    for environment in (
        ["--environment_type=LOOPBACK"],
        ["--environment_type=EXTERNAL", f"--environment_config={worker_pool}"],
    ):
        out = tmp_path / environment[0].split("=")[1].lower()
        _build(inputs[name], out, *portable, *environment)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["runner"] == "PortableRunner"
        assert _differences(_release_files(local), _release_files(out)) == []


def _children(pid: int) -> list[int]:
    """Child processes of ``pid``: each thread's children, as the pool's gRPC threads fork."""
    children = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            continue
    return children


def _kill_a_busy_worker(pool: subprocess.Popen[bytes], build: subprocess.Popen[str]) -> bool:
    """SIGKILL the first SDK worker of ``pool`` that has run for a second, while ``build`` runs."""
    seen: dict[int, float] = {}
    while build.poll() is None:
        now = time.monotonic()
        for child in _children(pool.pid):
            if now - seen.setdefault(child, now) >= 1.0:
                os.kill(child, signal.SIGKILL)
                return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds workers through /proc")
def test_a_killed_sdk_worker_fails_the_build_in_one_line_and_keeps_the_release(
    inputs: dict[str, list[str]], prism_binary: Path, tmp_path: Path
) -> None:
    """Prism does not retry a bundle whose SDK worker died: the job fails, and the build says
    so in one line, exits 1 and publishes nothing; the previous release stays whole."""
    out = tmp_path / "release"
    with _job_service(prism_binary) as endpoint, _worker_pool() as (pool_address, pool):
        external = [
            "--runner=PortableRunner", f"--job_endpoint={endpoint}",
            "--environment_type=EXTERNAL", f"--environment_config={pool_address}",
        ]  # fmt: skip
        _build(inputs["twitter-synthetic"], out, *external)
        before = _release_files(out)
        rebuild = subprocess.Popen(
            _command(inputs["twitter-synthetic"], out, *external, "--min_chars=30"),
            cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        killed = _kill_a_busy_worker(pool, rebuild)
        _, stderr = rebuild.communicate(timeout=600)
    assert killed, "the rebuild ended before any SDK worker had run for a second"
    assert rebuild.returncode == 1, stderr[-3000:]
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: the Beam job failed on PortableRunner: "), last
    assert last.endswith("; nothing was published")
    assert _release_files(out) == before
    assert validate_release(out).ok

"""Faults as a Flink cluster meets them: a TaskManager or an SDK worker killed mid-job.

A cluster of its own (a TaskManager is killed) is started by ``scripts/flink-cluster.sh``:
one JobManager, one TaskManager with 2 slots and a second standing by
(``add-taskmanager``); its ``flink-conf.yaml`` restarts a failed job (fixed-delay, 5
attempts, 5 s apart) and gives up a TaskManager after 20 s of missed heartbeats. The Twitter
pipeline runs on a synthetic archive at parallelism 2 while the test kills, with SIGKILL:

- the TaskManager whose slots the job holds: Flink restarts the job on the standby, the build
  ends 0 and its release is byte for byte the local engine's (the runner named in the
  manifest aside); the job's exception history names the lost TaskManager;
- an SDK worker process of an ``EXTERNAL`` worker pool, at work on a bundle (connected and
  spending CPU): the task fails, Flink restarts the job, the pool starts a new worker, and
  the release is again the local engine's (a kill that lands as the worker's last bundle
  ends fails nothing: the build is tried again, up to three times);
- the worker pool itself (a sidecar gone): the restarts find no pool and are spent; the
  build ends with one line, exit 1, nothing published, and the previous release stays whole;
- every SDK worker, before it connects (a pool whose ``python`` exits at once): Beam's runner
  waits for such a worker for ever, so the build's watchdog cancels the job once it has not
  moved for ``--flink_stall_timeout`` seconds: one line, exit 1, nothing published.

``LOOPBACK`` workers are threads of the submitting process: killing one kills the build
itself, so there is nothing to recover there.
Marked ``flink`` (``.ci/run`` requires them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from corpusforge.flink import FlinkNotFoundError, built_job_server, locate_job_server
from corpusforge.inspect.validate import validate_release
from corpusforge.synth.twitter import write_synthetic_archive
from tests.flink.test_flink_cluster import CLUSTER_SCRIPT, _require
from tests.portable.test_prism_service import (
    ENV,
    REPO,
    _children,
    _command,
    _differences,
    _free_port,
    _release_files,
    _wait_for,
    _worker_pool,
)

pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds processes in /proc"),
]
TWEETS = 10_000
"""Enough for the job to hold its slots some seconds on two cores."""


@dataclass(frozen=True)
class Cluster:
    """A standalone cluster started for this module: its REST address and run folder."""

    master: str
    run: Path
    env: dict[str, str]

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://{self.master}{path}", timeout=10) as response:
            return json.load(response)

    def script(self, *args: str) -> str:
        done = subprocess.run(
            ["bash", str(CLUSTER_SCRIPT), *args],
            env=self.env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""

    def taskmanager_pids(self) -> dict[int, int]:
        """Each running TaskManager's pid by its data port."""
        conf = (self.run / "conf" / "flink-conf.yaml").read_text()
        default = int(conf.split("taskmanager.data.port:")[1].split()[0])
        pids = {}
        for pid_file in self.run.glob("taskmanager*.pid"):
            pid = int(pid_file.read_text())
            try:
                args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue  # killed
            given = [a for a in args if a.startswith(b"-Dtaskmanager.data.port=")]
            pids[int(given[0].split(b"=")[1]) if given else default] = pid
        return pids


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """One JobManager, a TaskManager and a standby, in a folder of their own."""
    try:
        locate_job_server("tests/flink")
    except FlinkNotFoundError as exc:
        _require(str(exc))
    if not (built_job_server().parent / "lib").is_dir():
        _require("no Flink cluster classpath in build/flink/lib: run `bash scripts/flink.sh`")
    with tempfile.TemporaryDirectory(prefix="flink-faults-") as run:
        env = {**os.environ, "CORPUSFORGE_FLINK_RUN": run}
        found = Cluster("", Path(run), env)
        try:
            found = Cluster(found.script("start"), Path(run), env)
            found.script("add-taskmanager")
            yield found
        finally:
            subprocess.run(["bash", str(CLUSTER_SCRIPT), "stop"], env=env, timeout=120)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The Twitter pipeline's flags on a synthetic archive."""
    path = tmp_path_factory.mktemp("inputs") / "twitter-stream-2021-01-03.zip"
    write_synthetic_archive(path, tweets=TWEETS, layout="zip-2020", seed=13, truth=False)
    return ["pipelines.twitter_pairs", "--input", str(path), "--benchmark_queries=5"]


@pytest.fixture(scope="module")
def local_release(archive: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "release"
    _finish(_start(archive, out))
    return out


def _start(pipeline: list[str], out: Path, *more: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _command(pipeline, out, *more),
        cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _finish(build: subprocess.Popen[str], code: int = 0) -> str:
    _, stderr = build.communicate(timeout=900)
    assert build.returncode == code, stderr[-3000:]
    return stderr


def _on_cluster(cluster: Cluster, *environment: str) -> list[str]:
    return ["--runner=flink", f"--flink_master={cluster.master}", "--parallelism=2", *environment]


def _kill_the_busy_taskmanager(cluster: Cluster, build: subprocess.Popen[str]) -> int | None:
    """SIGKILL the TaskManager whose slots a running job has held for 2 s; its pid."""
    busy_since: dict[int, float] = {}
    while build.poll() is None:
        running = [j for j in cluster.get("/jobs/overview")["jobs"] if j["state"] == "RUNNING"]
        busy = [
            tm["dataPort"]
            for tm in cluster.get("/taskmanagers")["taskmanagers"]
            if tm["freeSlots"] < tm["slotsNumber"]
        ]
        now = time.monotonic()
        for port in busy if running else []:
            if now - busy_since.setdefault(port, now) >= 2.0:
                pid = cluster.taskmanager_pids()[port]
                os.kill(pid, signal.SIGKILL)
                return pid
        time.sleep(0.2)
    return None


AT_WORK = 3
"""TCP connections an SDK worker holds once it works on a bundle: the runner's logging and
control services, then the data channel its first bundle opens."""


def _connections(pid: int) -> int:
    """How many established TCP connections process ``pid`` holds (``/proc``)."""
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        inodes = {link[len("socket:[") : -1] for link in links if link.startswith("socket:[")}
        rows = []
        for table in ("tcp", "tcp6"):
            rows += Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
    except OSError:  # it ended meanwhile
        return 0
    return sum(1 for row in rows if row.split()[3] == "01" and row.split()[9] in inodes)


def _cpu_ticks(pid: int) -> int:
    """Process ``pid``'s user and system CPU time, in clock ticks (``/proc``); 0 once it ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


BUSY_TICKS = 2
"""CPU ticks (10 ms each) a worker must have spent since the last look (50 ms before, more
on a loaded machine) to count as at work on a bundle: one that is only connected, between
bundles or done with its stage, spends none."""
KILL_TRIES = 3
"""Builds in which a busy worker is killed, at most, until one fails over."""


def _kill_a_worker_at_work(pool: subprocess.Popen[bytes], build: subprocess.Popen[str]) -> bool:
    """SIGKILL the first SDK worker of ``pool`` that is at work on a bundle, while ``build``
    runs; whether one was. At work means connected (:data:`AT_WORK` connections) and busy
    (:data:`BUSY_TICKS` of CPU in the last look): a worker killed between bundles or after its
    stage's last bundle may fail nothing, and one killed while it starts would never connect
    (see ``test_a_worker_that_never_connects_fails_the_build_in_one_line``). Workers come and
    go with the job's stages, each for a few seconds: the pool is looked at every 50 ms."""
    ticks: dict[int, int] = {}
    while build.poll() is None:
        for child in _children(pool.pid):
            now, before = _cpu_ticks(child), ticks.get(child)
            ticks[child] = now
            busy = before is not None and now - before >= BUSY_TICKS
            if busy and _connections(child) >= AT_WORK:
                os.kill(child, signal.SIGKILL)
                return True
        time.sleep(0.05)
    return False


@contextmanager
def _pool_of_dead_workers(folder: Path) -> Iterator[str]:
    """Beam's worker pool whose ``python`` (it starts each worker as ``python -c ...``)
    exits at once: every worker dies before it connects; the pool's address."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "python").chmod(0o755)
    port = _free_port()
    command = [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main"]
    env = {**ENV, "PATH": os.pathsep.join([str(bin_dir), ENV["PATH"]])}
    pool = subprocess.Popen(
        [*command, f"--service_port={port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for(port, pool, "the Beam worker pool")
        yield f"localhost:{port}"
    finally:
        pool.terminate()
        pool.wait(timeout=30)


def _restarted_jobs(cluster: Cluster) -> list[str]:
    """The root exceptions of the cluster's finished jobs that failed over at least once."""
    causes = []
    for job in cluster.get("/jobs/overview")["jobs"]:
        history = cluster.get(f"/jobs/{job['jid']}/exceptions")["exceptionHistory"]["entries"]
        causes += [entry["exceptionName"] + ": " + entry["stacktrace"][:300] for entry in history]
    return causes


def test_a_killed_taskmanager_fails_over_to_the_standby_and_the_release_is_the_local_one(
    cluster: Cluster, archive: list[str], local_release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "release"
    build = _start(archive, out, *_on_cluster(cluster))
    killed = _kill_the_busy_taskmanager(cluster, build)
    _finish(build)
    assert killed is not None, "the build ended before a job held a TaskManager's slots for 2 s"
    cluster.script("add-taskmanager")  # a standby again, for the next test
    causes = _restarted_jobs(cluster)
    assert causes, "no job on the cluster failed over"
    assert json.loads((out / "manifest.json").read_text())["runner"] == "FlinkRunner"
    assert _differences(_release_files(local_release), _release_files(out)) == []


def test_a_killed_sdk_worker_is_restarted_and_the_release_is_the_local_one(
    cluster: Cluster, archive: list[str], local_release: Path, tmp_path: Path
) -> None:
    """A worker busy on a bundle is killed; a kill that lands as the worker's last bundle
    ends fails nothing, so the build is tried up to :data:`KILL_TRIES` times until a job
    failed over. Every build's release is the local engine's, failed over or not."""
    failed_over = False
    for attempt in range(KILL_TRIES):
        before = len(_restarted_jobs(cluster))
        out = tmp_path / f"release-{attempt}"
        with _worker_pool() as (pool_address, pool):
            external = ["--environment_type=EXTERNAL", f"--environment_config={pool_address}"]
            build = _start(archive, out, *_on_cluster(cluster, *external))
            killed = _kill_a_worker_at_work(pool, build)
            _finish(build)
        assert killed, "the build ended before any SDK worker was at work on a bundle"
        assert _differences(_release_files(local_release), _release_files(out)) == []
        failed_over = len(_restarted_jobs(cluster)) > before
        if failed_over:
            break
    assert failed_over, f"no job on the cluster failed over in {KILL_TRIES} builds"


def test_a_killed_worker_pool_fails_the_build_in_one_line(
    cluster: Cluster, archive: list[str], tmp_path: Path
) -> None:
    """The worker pool killed (a sidecar gone): each attempt asks the pool for a worker in
    vain, the restarts are spent and the job fails; exit 1, one line, nothing published, the
    previous release whole."""
    out = tmp_path / "release"
    _finish(_start(archive, out))  # the previous release, by the local engine
    before = _release_files(out)
    with _worker_pool() as (pool_address, pool):
        flags = _on_cluster(
            cluster,
            "--environment_type=EXTERNAL", f"--environment_config={pool_address}",
            "--min_chars=30",
        )  # fmt: skip
        # Killed as the build starts, before the job asks it for a worker: a worker killed
        # before it connects would hang the job, and one killed near the job's end may have
        # done its share (run in this module after the other tests, the job then finished).
        os.kill(pool.pid, signal.SIGKILL)
        pool.wait(timeout=30)
        stderr = _finish(_start(archive, out, *flags), code=1)
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: the Beam job failed on FlinkRunner: "), last
    assert last.endswith("; nothing was published")
    assert _release_files(out) == before
    assert validate_release(out).ok


def test_a_worker_that_never_connects_fails_the_build_in_one_line(
    cluster: Cluster, archive: list[str], tmp_path: Path
) -> None:
    """Every SDK worker dies before it connects: Beam's runner would wait for ever; the
    build's watchdog cancels the job on the cluster once it has not moved for
    ``--flink_stall_timeout`` seconds. Exit 1, one line, nothing published, the previous
    release whole."""
    out = tmp_path / "release"
    _finish(_start(archive, out))  # the previous release, by the local engine
    before = _release_files(out)
    cancelled = {
        j["jid"] for j in cluster.get("/jobs/overview")["jobs"] if j["state"] == "CANCELED"
    }
    with _pool_of_dead_workers(tmp_path) as pool_address:
        flags = _on_cluster(
            cluster,
            "--environment_type=EXTERNAL", f"--environment_config={pool_address}",
            "--flink_stall_timeout=30", "--min_chars=30",
        )  # fmt: skip
        stderr = _finish(_start(archive, out, *flags), code=1)
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: the Beam job failed on FlinkRunner: the Flink job "), last
    assert "made no progress for" in last and "--flink_stall_timeout 30" in last, last
    assert last.endswith("; nothing was published")
    jobs = cluster.get("/jobs/overview")["jobs"]
    now_cancelled = [j for j in jobs if j["state"] == "CANCELED" and j["jid"] not in cancelled]
    assert [j["name"].startswith("corpusforge-") for j in now_cancelled] == [True]
    assert _release_files(out) == before
    assert validate_release(out).ok

"""A build killed with SIGKILL while its job runs on a Flink cluster: the job server it started
sees its parent gone, cancels the job on the cluster and exits; a job server started by hand
(``--job_endpoint``) sees the build's state and message streams go and cancels the job, which
asked for it (``--cancel_job_with_client``, set by every build), and runs on.

The build's own watchdog dies with the build, and Beam's Flink runner waits for the cluster's
job in an attached client that cancels nothing; before the job server watched its parent
(``tools/flink/job-service``'s ``ParentWatch``, turned on by ``flink.EXIT_WITH_PARENT``) such a
job stayed RUNNING. The job here waits for SDK workers that never connect (a pool whose
``python`` exits at once), so it is surely still running when the build is killed, and the
build's watchdog is off (``--flink_stall_timeout=0``): only the job server can end it.

Marked ``flink`` (``.ci/run`` requires them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from corpusforge.inspect.validate import validate_release
from corpusforge.synth.twitter import write_synthetic_archive
from tests.flink.test_flink_cluster import flink_master, job_server  # noqa: F401 (fixtures)
from tests.flink.test_flink_faults import _finish, _pool_of_dead_workers, _start
from tests.portable.test_prism_service import _children, _release_files

pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds processes in /proc"),
]
BOUND_SECONDS = 60.0
"""How long the job server may take to end the job once the build is dead: it looks at its
parent every 0.5 s, and Flink cancels a job's tasks in a few seconds."""


def _get(master: str, path: str) -> Any:
    with urllib.request.urlopen(f"http://{master}{path}", timeout=10) as response:
        return json.load(response)


def _jobs(master: str) -> dict[str, dict[str, Any]]:
    return {j["jid"]: j for j in _get(master, "/jobs/overview")["jobs"]}


def _wait(what: str, seconds: float, check: Any) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what} within {seconds:.0f} s")


def _end_state(master: str, job: str) -> str | None:
    """The state a job ended in, or ``None`` while it runs."""
    state = str(_jobs(master)[job]["state"])
    return state if state in ("CANCELED", "FAILED", "FINISHED") else None


def _job_server(build: subprocess.Popen[str]) -> int | None:
    """The pid of the job server jar the build started, once it runs."""
    for child in _children(build.pid):
        try:
            if b"beam-flink-job-server" in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
        except OSError:
            continue
    return None


def _ended(pid: int) -> bool:
    """Whether ``pid`` has exited (gone, or a zombie no one has reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("by_hand", [False, True], ids=["job server of the build", "by hand"])
def test_a_killed_build_leaves_no_job_running_on_the_cluster(
    by_hand: bool,
    flink_master: str,  # noqa: F811
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    archive = tmp_path / "twitter-stream-2021-01-03.zip"
    write_synthetic_archive(archive, tweets=500, layout="zip-2020", seed=13, truth=False)
    pipeline = ["pipelines.twitter_pairs", "--input", str(archive), "--benchmark_queries=5"]
    out = tmp_path / "release"
    _finish(_start(pipeline, out))  # the previous release, by the local engine
    before = _release_files(out)
    # the job server started by hand submits to its own --flink-master (``[auto]``)
    where = f"--job_endpoint={request.getfixturevalue('job_server')}" if by_hand else None
    known = set(_jobs(flink_master))
    ours = None
    with _pool_of_dead_workers(tmp_path) as pool_address:
        build = _start(
            pipeline, out,
            "--runner=flink", where or f"--flink_master={flink_master}", "--parallelism=2",
            "--environment_type=EXTERNAL", f"--environment_config={pool_address}",
            "--flink_stall_timeout=0", "--min_chars=30",
        )  # fmt: skip
        try:
            job = _wait(
                "no job of the build ran on the cluster",
                180,
                lambda: next(
                    (
                        jid
                        for jid, j in _jobs(flink_master).items()
                        if jid not in known and j["state"] == "RUNNING"
                    ),
                    None,
                ),
            )
            ours = _job_server(build)
            assert (ours is None) == by_hand, f"the build's own job server: {ours}"
            os.kill(build.pid, signal.SIGKILL)
            build.communicate(timeout=30)
            state = _wait(
                f"the job {job} did not end", BOUND_SECONDS, lambda: _end_state(flink_master, job)
            )
            assert state == "CANCELED"
            assert _jobs(flink_master)[job]["name"].startswith("corpusforge-")
            if ours is not None:
                _wait("the job server did not exit", BOUND_SECONDS, lambda: _ended(ours))
        finally:
            if build.poll() is None:
                build.kill()
                build.communicate(timeout=30)
            if ours is not None and not _ended(ours):
                os.kill(ours, signal.SIGKILL)
    assert _release_files(out) == before
    assert validate_release(out).ok

"""The watchdog of a Flink job, against a stand-in for a cluster's REST API: a job that stops
moving is cancelled and the build fails in one line; a job that moves is left alone.

The real hang (an SDK worker that dies before it connects) is
``test_flink_faults.py::test_a_worker_that_never_connects_fails_the_build_in_one_line``
(marked ``flink``); these need neither Java nor a cluster and run in the default test command.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from corpusforge import flink
from corpusforge.jobs import JobFailed

JOB = "0123456789abcdef0123456789abcdef"


class FakeCluster:
    """The three REST calls the watchdog makes, for one job called ``name`` (as our job server
    names it: the build's name and a suffix), beside a later job whose name merely starts like
    it: its records read grow by one per read while ``moving``; ``cancelled`` is set by
    ``PATCH /jobs/ID``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.moving = False
        self.records = 0
        self.cancelled = threading.Event()

    def answer(self, method: str, path: str) -> Any:
        if method == "PATCH" and path == f"/jobs/{JOB}?mode=cancel":
            self.cancelled.set()
            return {}
        if path == "/jobs/overview":
            state = "CANCELED" if self.cancelled.is_set() else "RUNNING"
            other = {"jid": "f" * 32, "name": "someone-else", "state": "RUNNING", "start-time": 2}
            alike = {"jid": "e" * 32, "name": "corpusforge-tester", "state": "RUNNING"}
            ours = {"jid": JOB, "name": self.name, "state": state, "start-time": 1}
            return {"jobs": [other, {**alike, "start-time": 3}, ours]}
        if path == f"/jobs/{JOB}":
            self.records += self.moving
            vertex = {"id": "v1", "status": "RUNNING", "metrics": {"read-records": self.records}}
            return {"state": "RUNNING", "vertices": [vertex]}
        return None


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, FakeCluster]]:
    fake = FakeCluster("corpusforge-test-0123456789ab")

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            body = fake.answer(self.command, self.path)
            self.send_response(404 if body is None else 200)
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

        do_GET = do_PATCH = _reply

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("localhost", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(flink, "POLL_SECONDS", 0.05)
    try:
        yield f"localhost:{server.server_address[1]}", fake
    finally:
        server.shutdown()
        server.server_close()


def _options(master: str, *more: str) -> Any:
    from apache_beam.options.pipeline_options import PipelineOptions

    flink.stall_options()
    flags = ["--runner=FlinkRunner", f"--flink_master={master}", "--job_name=corpusforge-test"]
    return PipelineOptions([*flags, *more])


def _wait_like_beam(fake: FakeCluster, seconds: float = 10.0) -> None:
    """What Beam's wait does when the cluster cancels the job: it raises."""
    if fake.cancelled.wait(seconds):
        raise RuntimeError("Pipeline failed in state FAILED: JobCancellationException\n at ...")


def test_a_job_that_stops_moving_is_cancelled_and_fails_in_one_line(
    cluster: tuple[str, FakeCluster],
) -> None:
    master, fake = cluster
    options = _options(master, "--flink_stall_timeout=0.3")
    with pytest.raises(JobFailed) as failed, flink.watchdog(options):
        _wait_like_beam(fake)
    assert fake.cancelled.is_set()
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith(f"the Beam job failed on FlinkRunner: the Flink job {JOB} made ")
    assert "--flink_stall_timeout 0.3" in message and message.endswith("nothing was published")


def test_a_job_that_moves_is_left_alone(cluster: tuple[str, FakeCluster]) -> None:
    master, fake = cluster
    fake.moving = True
    with flink.watchdog(_options(master, "--flink_stall_timeout=0.3")):
        time.sleep(1.0)
    assert not fake.cancelled.is_set()


@pytest.mark.parametrize(
    "flags",
    [
        ["--flink_stall_timeout=0"],  # the user turned it off
        ["--flink_master=[local]"],  # embedded Flink: no REST API to read
        ["--runner=PrismRunner"],
    ],
)
def test_no_watchdog_where_it_is_off_or_has_no_cluster(
    cluster: tuple[str, FakeCluster], flags: list[str]
) -> None:
    master, fake = cluster
    with flink.watchdog(_options(master, "--flink_stall_timeout=0.3", *flags)):
        time.sleep(0.6)
    assert not fake.cancelled.is_set()


def test_an_error_of_its_own_passes_through(cluster: tuple[str, FakeCluster]) -> None:
    master, fake = cluster
    fake.moving = True
    with pytest.raises(ValueError, match="the body's"), flink.watchdog(_options(master)):
        raise ValueError("the body's")


def test_a_flink_build_gets_a_job_name_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions

    jar = tmp_path / "job-server.jar"
    jar.write_bytes(b"")
    monkeypatch.setenv(flink.FLINK_JAR_ENV, str(jar))
    names = set()
    for _ in range(2):
        options = PipelineOptions(["--flink_master=localhost:1"])
        flink.configure(options)
        names.add(options.view_as(GoogleCloudOptions).job_name)
    assert len(names) == 2 and all(re.fullmatch("corpusforge-[0-9a-f]{16}", n) for n in names)
    given = PipelineOptions(["--job_name=mine", "--flink_stall_timeout=7"])
    flink.configure(given)
    again = PipelineOptions(["--job_name=mine"])
    flink.configure(again)
    mine = {o.view_as(GoogleCloudOptions).job_name for o in (given, again)}
    assert len(mine) == 2 and all(re.fullmatch("mine-[0-9a-f]{16}", n) for n in mine), mine
    assert given.view_as(flink.stall_options()).flink_stall_timeout == 7.0
    unset = PipelineOptions([])
    assert unset.view_as(flink.stall_options()).flink_stall_timeout == flink.STALL_SECONDS


def test_a_flink_build_asks_the_job_server_to_cancel_its_job_if_it_dies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job server (``InMemoryJobService``) reads ``beam:option:cancel_job_with_client:v1``
    from the options Beam's portable runner sends; a submission that does not ask sends none."""
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.portability.portable_runner import JobServiceHandle

    monkeypatch.setenv(flink.FLINK_JAR_ENV, str(tmp_path / "job-server.jar"))
    (tmp_path / "job-server.jar").write_bytes(b"")
    key = "beam:option:cancel_job_with_client:v1"
    build = PipelineOptions(["--flink_master=localhost:1"])
    flink.configure(build)
    sent = JobServiceHandle.encode_pipeline_options(build.get_all_options())
    assert sent.fields[key].bool_value is True
    flink.stall_options()
    detached = PipelineOptions(["--runner=PortableRunner", "--job_endpoint=localhost:1"])
    assert key not in JobServiceHandle.encode_pipeline_options(detached.get_all_options()).fields
    asked = PipelineOptions(["--runner=PortableRunner", "--cancel_job_with_client"])
    sent = JobServiceHandle.encode_pipeline_options(asked.get_all_options())
    assert sent.fields[key].bool_value is True


def test_a_build_command_takes_the_watchdog_flag_as_a_beam_option() -> None:
    """``--flink_stall_timeout`` is declared by corpusforge, not Beam: the build commands'
    flag check must know it (it refused it as an unknown option once), with or without a
    value of its own."""
    from corpusforge import beamflags

    inputs, flags = beamflags.split_inputs(
        ["in.zip", "--flink_stall_timeout=30", "--flink_stall_timeout", "5", "--runner=flink"]
    )
    assert inputs == ["in.zip"]
    assert flags == ["--flink_stall_timeout=30", "--flink_stall_timeout", "5", "--runner=flink"]
    beamflags.check_flags(flags)
    with pytest.raises(beamflags.UnknownFlag, match="did you mean --flink_stall_timeout"):
        beamflags.check_flags(["--flink_stall_timeot=3"])

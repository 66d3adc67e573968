"""Every SDK worker we have a worker pool start carries glibc's heap settings from its start
(``heap.WORKER_ENV``): a worker that runs none of corpusforge's DoFns never calls
``heap.bound_worker_heap``, and glibc's mmap threshold would then climb with each freed
buffer. Needs neither Java nor a cluster: a worker is asked of Beam's worker pool, as a Flink
TaskManager asks, and its environment read from ``/proc``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from corpusforge.heap import WORKER_ENV
from tests.deploy.test_manifests import _flinkdeployment, _sidecar
from tests.portable.test_prism_service import _children, _free_port, _worker_pool

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/task").exists(), reason="reads a worker's environment in /proc"
)


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.decode().partition("=")[::2] for item in raw.split(b"\0") if item)


def test_a_worker_of_our_pool_starts_with_the_heap_settings() -> None:
    import grpc
    from apache_beam.portability.api import (
        beam_fn_api_pb2,
        beam_fn_api_pb2_grpc,
        endpoints_pb2,
    )

    nowhere = endpoints_pb2.ApiServiceDescriptor(url=f"localhost:{_free_port()}")
    with _worker_pool() as (address, pool), grpc.insecure_channel(address) as channel:
        stub = beam_fn_api_pb2_grpc.BeamFnExternalWorkerPoolStub(channel)
        started = stub.StartWorker(
            beam_fn_api_pb2.StartWorkerRequest(worker_id="heap", control_endpoint=nowhere),
            timeout=30,
        )
        assert not started.error, started.error
        try:
            deadline = time.monotonic() + 30
            while not (workers := _children(pool.pid)) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert workers, "the pool started no worker process"
            environ = _environ(workers[0])
        finally:
            stub.StopWorker(beam_fn_api_pb2.StopWorkerRequest(worker_id="heap"), timeout=30)
    assert {k: environ.get(k) for k in WORKER_ENV} == WORKER_ENV
    assert WORKER_ENV == {
        "MALLOC_MMAP_THRESHOLD_": "131072",
        "MALLOC_TRIM_THRESHOLD_": "131072",
    }


def test_the_flink_deployments_worker_pool_sidecar_has_the_heap_settings() -> None:
    env = {e["name"]: e.get("value") for e in _sidecar(_flinkdeployment()).get("env", [])}
    assert {k: env.get(k) for k in WORKER_ENV} == WORKER_ENV

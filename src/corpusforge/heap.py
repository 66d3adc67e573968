"""Long-lived worker processes give freed large buffers back to the system (glibc's heap).

glibc serves an allocation of at least its mmap threshold (128 KiB at start) by a mapping
of its own, unmapped when freed. But each time such a block is freed, glibc raises the
threshold to that block's size (up to 32 MiB): from then on buffers of that size come from
the heap arenas, and freed memory there stays with the process unless it lies at an arena's
top. A Beam SDK worker decodes, encodes and writes megabyte-sized elements (data-channel
messages, grouped shards, Parquet buffers) for as long as the job runs, so the memory it
keeps grows with the input it serves: on Prism with EXTERNAL workers, a Twitter build's
extract worker peaked at 696-796 MiB RSS on 4 day archives, 330 MiB of it free in glibc's
arenas; with the thresholds fixed at 128 KiB, 483 MiB (benchmarks/RESULTS.md, issue 37).

:func:`bound_worker_heap` fixes both thresholds, as ``MALLOC_MMAP_THRESHOLD_=131072
MALLOC_TRIM_THRESHOLD_=131072`` in the environment would, which also turns glibc's raising
of them off. The DoFns that run in Beam workers call it from ``setup``, so it holds on every
runner and environment (LOOPBACK, EXTERNAL pools, containers) whatever started the process.
It never changes what a pipeline computes. Elsewhere than glibc it does nothing.

A worker that runs none of our DoFns (Beam's own reads, shuffles and writes in a stage of its
own) never calls it, so every process we start to start SDK workers (a Beam worker pool:
``EXTERNAL`` workers in the tests and benchmarks, the worker-pool sidecar of
``deploy/flink``) carries :data:`WORKER_ENV` from the start, and the workers it starts inherit
it. ``LOOPBACK`` workers are threads of the build itself.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Mapping

THRESHOLD_BYTES = 128 * 1024
"""Blocks of this size or more are mapped apart and unmapped when freed; free memory above
this much at an arena's top is given back."""

WORKER_ENV = {
    "MALLOC_MMAP_THRESHOLD_": str(THRESHOLD_BYTES),
    "MALLOC_TRIM_THRESHOLD_": str(THRESHOLD_BYTES),
}
"""glibc's own spelling of :func:`bound_worker_heap`, read when a process starts."""

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_lock = threading.Lock()
_applied: bool | None = None


def bound_worker_heap() -> bool:
    """Fix glibc's mmap and trim thresholds in this process at :data:`THRESHOLD_BYTES`,
    and give back what its arenas hold free now; the first call does it, later calls return
    its result.

    Returns:
        Whether glibc took both settings (``False`` off glibc, e.g. macOS or musl).
    """
    global _applied
    with _lock:
        if _applied is None:
            _applied = _apply()
        return _applied


def _apply() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    malloc_trim.argtypes = [ctypes.c_size_t]
    taken = [mallopt(option, THRESHOLD_BYTES) for option in (_M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD)]
    malloc_trim(0)
    return taken == [1, 1]


def worker_environment(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with :data:`WORKER_ENV`: the environment to start a Beam worker pool with.

    Args:
        base: the environment the pool would get otherwise.

    Returns:
        A new mapping; ``base`` is not changed.
    """
    return {**base, **WORKER_ENV}

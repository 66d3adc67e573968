"""What a Beam SDK worker holds, once a second: the probe of ``bench_flink_scale.py --probe``.

A diagnosis, never imported by corpusforge. ``bench_flink_scale.py --probe DIR`` puts this
folder first on the worker pool's ``PYTHONPATH`` with ``CORPUSFORGE_PROBE_DIR=DIR``, so every
SDK worker the pool starts (``python -c "...SdkHarness(...).run()"``) imports it at start;
any other process that finds it returns at once. In a worker it starts a thread that, once
Beam's worker module is loaded, starts ``tracemalloc`` (one frame) and appends a row a
second to ``DIR/<pid>.tsv``:

``seconds  rss_mib  traced_mib  arena_mib  arena_used_mib  arena_free_mib  mmapped_mib
send_queue_mib  python_blocks  threads  active_bundles``

- ``traced``: Python's allocations (``tracemalloc``); ``arena*``, ``mmapped``: glibc's
  ``mallinfo2`` (its heap arenas, in use and free, and its blocks mapped apart, the
  allocations of 128 KiB or more with ``heap.WORKER_ENV``);
- ``send_queue``: the bytes waiting in the data channels' two outgoing queues (Beam's
  ``_GrpcDataChannel._pending_send`` and ``_to_send``, 100 MB each at most);
- ``active_bundles``: ``descriptor:labels`` of every bundle the worker is processing, the
  labels of its DoFns and precombines.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
import threading
import time
from typing import Any

DIR_ENV = "CORPUSFORGE_PROBE_DIR"
"""The folder the rows go to; without it the probe does nothing."""

_MIB = 1 << 20


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _labels(processor: Any) -> str:
    names = (t.unique_name for t in processor.process_bundle_descriptor.transforms.values())
    steps = sorted({n.split("/")[-2] for n in names if "ParDo(" in n or n.endswith("/Precombine")})
    return "|".join(steps)


def _find(kind: type) -> list[Any]:
    return [o for o in gc.get_objects() if isinstance(o, kind)]


def _watch(folder: str) -> None:
    import tracemalloc

    while "apache_beam.runners.worker.sdk_worker" not in sys.modules:
        time.sleep(0.1)
    from apache_beam.runners.worker import data_plane, sdk_worker

    tracemalloc.start(1)
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = _MallInfo2
    start = time.monotonic()
    caches: list[Any] = []
    channels: list[Any] = []
    with open(os.path.join(folder, f"{os.getpid()}.tsv"), "w", buffering=1) as out:
        while True:
            time.sleep(1.0)
            if not caches or not channels:  # made once the harness runs
                caches = _find(sdk_worker.BundleProcessorCache)
                channels = _find(data_plane._GrpcDataChannel)
            queued = sum(c._to_send.byte_size() + c._pending_send.byte_size() for c in channels)
            bundles = [
                f"{descriptor}:{_labels(processor)}"
                for cache in caches
                for descriptor, processor in list(cache.active_bundle_processors.values())
            ]
            heap = libc.mallinfo2()
            row = [
                f"{time.monotonic() - start:.0f}",
                f"{_rss_mib():.0f}",
                f"{tracemalloc.get_traced_memory()[0] / _MIB:.0f}",
                f"{heap.arena / _MIB:.0f}",
                f"{heap.uordblks / _MIB:.0f}",
                f"{heap.fordblks / _MIB:.0f}",
                f"{heap.hblkhd / _MIB:.0f}",
                f"{queued / _MIB:.0f}",
                str(sys.getallocatedblocks()),
                str(len(os.listdir("/proc/self/task"))),
                ";".join(bundles),
            ]
            out.write("\t".join(row) + "\n")


def _in_sdk_worker() -> bool:
    try:
        with open("/proc/self/cmdline", "rb") as cmdline:
            return b"SdkHarness" in cmdline.read()
    except OSError:
        return False


if os.environ.get(DIR_ENV) and sys.platform.startswith("linux") and _in_sdk_worker():
    threading.Thread(target=_watch, args=(os.environ[DIR_ENV],), daemon=True).start()

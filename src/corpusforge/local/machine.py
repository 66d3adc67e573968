"""What this machine offers the local engines: its cores and a memory budget."""

from __future__ import annotations

import multiprocessing
import os
import sys
from typing import Any

import pyarrow as pa

MIB = 2**20


def default_workers() -> int:
    """This machine's cores (those this process may run on)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


def physical_memory() -> int:
    """This machine's memory in bytes (8 GiB where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 8 * 2**30


def memory_budget(memory_limit_mib: int | None) -> int:
    """Bytes the local engine plans for: ``--memory-limit``, or half of this machine's."""
    if memory_limit_mib:
        return memory_limit_mib * MIB
    return physical_memory() // 2


def process_context() -> Any:
    """The ``multiprocessing`` context of the local engines' workers: ``fork`` on Linux (the
    workers inherit what the parent loaded), ``spawn`` elsewhere."""
    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


def release_unused_memory() -> None:
    """Give the memory a finished step freed back to the system: Arrow's allocator keeps
    what it frees for reuse (about 130 MB after the merge of a 400k-tweet extract), which
    would otherwise stay in every later step's peak."""
    pa.default_memory_pool().release_unused()

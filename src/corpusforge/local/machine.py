"""What this machine offers the local engines: its cores and a memory budget, and how many
workers of a stage fit that budget.

``--memory-limit`` bounds the whole process tree: a stage starts only the workers whose own
memory fits beside this process's (:func:`fitting_workers`), and a build refuses a budget
below the least it can keep (:func:`check_floor`). The figures each stage gives are the
proportional set sizes (PSS, ``/proc/<pid>/smaps_rollup``: a page shared by n processes
counts 1/n in each) measured by ``benchmarks/bench_tree_memory.py``.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import sys
from typing import Any

import pyarrow as pa

from corpusforge.config.flags import FlagError
from corpusforge.release.io import InputError

log = logging.getLogger(__name__)

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


class MemoryBudgetError(FlagError, InputError):
    """``--memory-limit`` is below the least a build of these inputs can keep: a user error
    (exit 2, as an :class:`~corpusforge.release.io.InputError`), its message naming the flag
    and that floor."""


def fitting_workers(budget: int, requested: int, *, main: int, worker: int, stage: str) -> int:
    """How many of ``requested`` worker processes start: as many as fit ``budget`` bytes
    beside this process's own ``main`` bytes, each taking ``worker`` bytes; 1 (the work done
    in this process) where two do not. One log line says so when fewer than ``requested``
    start.

    Args:
        budget: bytes the build plans for (:func:`memory_budget`).
        requested: ``--workers`` (or this machine's cores).
        main: this process's own memory while the workers run.
        worker: each worker's own memory (its PSS beside the others).
        stage: the workers' name in the log line (``bitext``, ``Twitter extract``).
    """
    fits = max(1, min(requested, (budget - main) // worker))
    if fits < requested:
        log.info(
            "--memory-limit %d MiB fits %d of %d %s workers", budget // MIB, fits, requested, stage
        )
    return fits


def check_floor(memory_limit_mib: int | None, floor: int, build: str) -> None:
    """Refuse ``--memory-limit`` below ``floor`` bytes, the least ``build`` can keep.

    Args:
        memory_limit_mib: ``--memory-limit`` (``None``: not given, nothing to refuse).
        floor: bytes of this process with one worker's work and its least batch.
        build: what needs them, for the message (``this bitext build``).

    Raises:
        MemoryBudgetError: the limit is below ``floor``.
    """
    if memory_limit_mib is not None and memory_limit_mib * MIB < floor:
        floor_mib = -(-floor // MIB)
        raise MemoryBudgetError(
            "memory_limit", f"{memory_limit_mib} MiB is below the {floor_mib} MiB {build} needs"
        )


def process_context() -> Any:
    """The ``multiprocessing`` context of the local engines' workers: ``fork`` on Linux (the
    workers inherit what the parent loaded), ``spawn`` elsewhere."""
    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


def release_unused_memory() -> None:
    """Give the memory a finished step freed back to the system: Arrow's allocator keeps
    what it frees for reuse (about 130 MB after the merge of a 400k-tweet extract), which
    would otherwise stay in every later step's peak."""
    pa.default_memory_pool().release_unused()


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def keep_freed_blocks(largest: int, held: int) -> bool:
    """Have glibc's ``malloc`` reuse the large blocks this process frees instead of giving
    them back to the system at once; True where it could (glibc), else nothing changes.

    A Twitter read worker decodes a member into blocks of about a megabyte, frees them all
    when the member is done, and allocates the same again for the next: by default glibc
    unmaps such blocks or trims its heap each time, and every page of the next member
    faults in afresh (1.1 of a 200k-tweet day's 20 read CPU-seconds were the kernel's).

    Args:
        largest: blocks up to this many bytes come from the heap (``M_MMAP_THRESHOLD``);
            larger ones are mapped and unmapped on their own.
        held: freed bytes at the heap's top kept before it is trimmed
            (``M_TRIM_THRESHOLD``); what a process holds above its live memory is at most
            this.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, largest)) and bool(mallopt(_M_TRIM_THRESHOLD, held))

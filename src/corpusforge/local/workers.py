"""The local engine's worker processes: how they start, and how a dead one ends the build.

Every pool of the local engine (the bitext and ParaNMT filter workers, the Twitter extract
readers, the Twitter pair partitions) runs its workers as this module says:

- a worker leaves Ctrl-C and ``SIGTERM`` to the process that started it: it is forked with
  both blocked (:func:`worker_context`), so the handlers it inherits never run, and its first
  step (:func:`start_worker`) ignores ``SIGINT``, which a terminal sends to every process of
  the build, and lets ``SIGTERM``, which its pool sends it on the way out, kill it at once:
  neither prints a worker's traceback;
- a worker that dies without a word (killed, out of memory) ends the build, promptly and in
  one line naming the worker and the signal (:class:`~corpusforge.jobs.WorkerDied`), never
  hangs it: :func:`worker_pool` for a :class:`~concurrent.futures.ProcessPoolExecutor`,
  whose results fail with ``BrokenProcessPool`` once a worker is gone, and
  :func:`dead_worker` for a pool of plain processes;
- leaving the pool for any reason stops its workers at once, without waiting for the tasks
  in flight.

    with worker_pool("a bitext filter worker", 4, initializer=load, initargs=(job,)) as pool:
        for future in [pool.submit(filter_batch, b) for b in batches]:
            yield future.result()
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.context import ForkContext, ForkProcess
from multiprocessing.process import BaseProcess
from typing import Any

from corpusforge.jobs import WorkerDied
from corpusforge.local.machine import process_context

JOIN_SECONDS = 10.0
"""How long a stopped worker is waited for after ``SIGTERM`` before it is sent ``SIGKILL``."""


INTERRUPTS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def _interrupts_blocked() -> Iterator[None]:
    """``SIGINT`` and ``SIGTERM`` held back from this thread (and the processes it forks)."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


class _WorkerProcess(ForkProcess):
    """A forked worker, born with ``SIGINT`` and ``SIGTERM`` blocked until
    :func:`start_worker` has replaced the handlers it inherits."""

    def start(self) -> None:
        with _interrupts_blocked():
            super().start()


class _WorkerContext(ForkContext):
    Process = _WorkerProcess


def worker_context() -> Any:
    """The :mod:`multiprocessing` context of the local engine's workers: ``fork`` on Linux,
    with the interrupts blocked in a new worker (:func:`start_worker` lets them in), else
    ``spawn`` (:func:`~corpusforge.local.machine.process_context`)."""
    context = process_context()
    return _WorkerContext() if context.get_start_method() == "fork" else context


def start_worker(initializer: Callable[..., object] | None = None, *initargs: Any) -> None:
    """A worker's first step: Ctrl-C ignored, ``SIGTERM`` fatal (neither runs a handler of
    its parent's), then ``initializer(*initargs)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)
    if initializer is not None:
        initializer(*initargs)


@contextmanager
def worker_pool(
    worker: str,
    workers: int,
    *,
    initializer: Callable[..., object] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose dead worker raises :class:`~corpusforge.jobs.WorkerDied`.

    Args:
        worker: what a worker does, with its article (``a bitext filter worker``): the
            error's first words.
        workers: processes.
        initializer: run in each worker as it starts (after :func:`start_worker`).
        initargs: its arguments (with ``fork``, passed without pickling).

    Raises:
        WorkerDied: a worker ended before its work was done; the others are stopped.
    """
    pool = ProcessPoolExecutor(
        workers,
        mp_context=worker_context(),
        initializer=start_worker,
        initargs=(initializer, *initargs),
    )
    try:
        yield pool
    except BrokenProcessPool:
        processes = _processes(pool)
        _stop(pool, processes)
        raise dead_worker(worker, processes) or WorkerDied(worker, None, None) from None
    except BaseException:
        _stop(pool, _processes(pool))
        raise
    pool.shutdown(wait=True)


def _processes(pool: ProcessPoolExecutor) -> list[BaseProcess]:
    # the executor names its processes only in a private field (3.14 adds terminate_workers)
    return list((getattr(pool, "_processes", None) or {}).values())


def _stop(pool: ProcessPoolExecutor, processes: Sequence[BaseProcess]) -> None:
    """Stop ``pool`` now: its queued tasks cancelled, its workers terminated and reaped."""
    for process in processes:
        if process.exitcode is None:
            process.terminate()
    for process in processes:
        process.join(JOIN_SECONDS)
        if process.exitcode is None:
            process.kill()
            process.join()
    pool.shutdown(wait=True, cancel_futures=True)


def dead_worker(worker: str, processes: Sequence[BaseProcess]) -> WorkerDied | None:
    """The error for the first of ``processes`` that died, or ``None`` if none did.

    A process that ended with code 0 finished its work. A pool that fails its workers stops
    the others with ``SIGTERM``, so a worker that ended otherwise is named first.

    Args:
        worker: what a worker does, with its article.
        processes: the pool's processes.
    """
    ended = [p for p in processes if p.exitcode not in (None, 0)]
    first = next((p for p in ended if p.exitcode != -signal.SIGTERM), ended[0] if ended else None)
    return None if first is None else WorkerDied(worker, first.pid, first.exitcode)

"""The local engine's worker processes: how they start, and how a dead one ends the build.

Every pool of the local engine (the bitext and ParaNMT filter workers, the Twitter extract
readers, the Twitter pair partitions) runs its workers as this module says:

- a worker leaves Ctrl-C and ``SIGTERM`` to the process that started it
  (:func:`start_worker`): it ignores ``SIGINT``, which a terminal sends to every process of
  the build, and dies at once of ``SIGTERM``, which its pool sends it on the way out, so
  neither prints a worker's traceback (the command line also blocks both while it forks:
  :func:`corpusforge.interrupts.install_interrupts`);
- a worker that dies without a word (killed, out of memory) ends the build within a second,
  in one line naming the worker and the signal (:class:`~corpusforge.jobs.WorkerDied`),
  never hangs it: :meth:`WorkerPool.result` watches the workers while it waits, where the
  executor alone would wait for ever on a worker killed while it sent a result (its reader
  waits for the rest of the message), and :func:`dead_worker` serves a pool of plain
  processes;
- leaving the pool for any reason stops its workers at once, without waiting for the tasks
  in flight: every worker, the pool knowing each before it starts (:class:`_Made`), so that
  Ctrl-C landing as the workers start leaves none behind.

    with worker_pool("a bitext filter worker", 4, initializer=load, initargs=(job,)) as pool:
        for future in [pool.submit(filter_batch, b) for b in batches]:
            yield pool.result(future)
"""

from __future__ import annotations

import gc
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar, cast

from corpusforge.jobs import WorkerDied
from corpusforge.local.machine import process_context

T = TypeVar("T")

POLL_SECONDS = 1.0
"""How often the workers are looked at while a result is awaited."""
JOIN_SECONDS = 10.0
"""How long a stopped worker is waited for after ``SIGTERM`` before it is sent ``SIGKILL``."""


def start_worker(initializer: Callable[..., object] | None = None, *initargs: Any) -> None:
    """A worker's first step: Ctrl-C ignored, ``SIGTERM`` fatal (neither runs a handler
    inherited from its parent), then ``initializer(*initargs)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if initializer is not None:
        initializer(*initargs)


class WorkerPool:
    """Tasks for a process pool, and their results, awaited while its workers are watched.

    Args:
        worker: what a worker does, with its article (``a bitext filter worker``).
        executor: the pool.
        made: the context that made its workers, which knows them all.
    """

    def __init__(self, worker: str, executor: ProcessPoolExecutor, made: _Made) -> None:
        self.worker = worker
        self._executor = executor
        self._made = made

    def submit(self, task: Callable[..., T], *args: Any) -> Future[T]:
        """Queue ``task(*args)`` on a worker (the first call starts the workers)."""
        return self._executor.submit(task, *args)

    def result(self, future: Future[T]) -> T:
        """``future``'s result (or the exception its task raised).

        Raises:
            WorkerDied: a worker ended before its work was done (seen within
                ``POLL_SECONDS``).
        """
        while True:
            try:
                return future.result(timeout=POLL_SECONDS)
            except TimeoutError:
                died = dead_worker(self.worker, self.processes())
                if died is not None:
                    raise died from None
            except BrokenProcessPool:
                raise self.stopped_as_broken() from None

    def processes(self) -> list[BaseProcess]:
        """The pool's worker processes that were started (at the first task)."""
        return [process for process in self._made.processes if process.pid is not None]

    def stopped_as_broken(self) -> WorkerDied:
        """Stop the pool the executor says is broken; the error naming the worker that died
        (looked at once the workers are reaped, so that the executor's own reaping cannot hide
        its exit code)."""
        processes = self.processes()
        self.stop()
        return dead_worker(self.worker, processes) or WorkerDied(self.worker, None, None)

    def stop(self) -> None:
        """Stop the pool now: its queued tasks cancelled, its workers terminated and reaped."""
        processes = self.processes()
        for process in processes:
            if process.exitcode is None:
                process.terminate()
        for process in processes:
            process.join(JOIN_SECONDS)
            if process.exitcode is None:
                process.kill()
                process.join()
        # A worker killed while it sent a result leaves the executor's reader waiting for the
        # rest; with every worker gone, closing this process's end of the pipe ends the wait.
        writer = results_writer(self._executor)
        if writer is not None:
            writer.close()
        self._executor.shutdown(wait=True, cancel_futures=True)


@contextmanager
def worker_pool(
    worker: str,
    workers: int,
    *,
    initializer: Callable[..., object] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[WorkerPool]:
    """A process pool whose dead worker raises :class:`~corpusforge.jobs.WorkerDied`; leaving
    it early, for any reason, stops its workers.

    Args:
        worker: what a worker does, with its article (``a bitext filter worker``): the
            error's first words.
        workers: processes.
        initializer: run in each worker as it starts (after :func:`start_worker`).
        initargs: its arguments (with ``fork``, passed without pickling).

    Raises:
        WorkerDied: a worker ended before its work was done; the others are stopped.
    """
    made = _Made(process_context())
    executor = ProcessPoolExecutor(
        workers,
        mp_context=cast(BaseContext, made),  # the context it wraps, but for Process
        initializer=start_worker,
        initargs=(initializer, *initargs),
    )
    pool = WorkerPool(worker, executor, made)
    try:
        yield pool
    except BrokenProcessPool:  # from submit(), once a worker is gone
        raise pool.stopped_as_broken() from None
    except BaseException:
        pool.stop()
        raise
    executor.shutdown(wait=True)


@contextmanager
def shared_at_fork() -> Iterator[None]:
    """Workers forked inside this block leave the pages they inherit shared with this process.

    Every object this process holds on entry is frozen out of the garbage collector's sight
    (:func:`gc.freeze`), so that a forked worker's collections never walk the objects it
    inherits (writing their headers would copy their pages into the worker); they come back
    under this process's collector on the way out. Wrap what forks: a :func:`worker_pool`'s
    first ``submit``.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Made:
    """A :mod:`multiprocessing` context that keeps every process it makes, before its start.

    The pool's record of its workers, rather than the executor's: the executor records a
    worker once it has started, and an interrupt raised between the two (both inside the
    first ``submit``) left a worker no one could stop, waiting for tasks for ever, and the
    interpreter's exit waiting for it (the rare hang of Ctrl-C sent to a build's process
    group). A process made here is known before it exists; one interrupted inside its fork,
    never started as far as this process knows, dies with it (its parent-death signal:
    :func:`corpusforge.interrupts.install_interrupts`).

    Args:
        context: the context that makes and starts the processes.

    Attributes:
        processes: every process made, in order, started or not.
    """

    def __init__(self, context: Any) -> None:
        self._context = context
        self.processes: list[BaseProcess] = []

    def Process(self, *args: Any, **kwargs: Any) -> BaseProcess:  # the context's name
        process: BaseProcess = self._context.Process(*args, **kwargs)
        self.processes.append(process)
        return process

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def results_writer(executor: ProcessPoolExecutor) -> Connection | None:
    """This process's write end of the pipe on which ``executor``'s workers send their
    results (``None`` once the executor has let it go, at its shutdown).

    Private to :mod:`concurrent.futures`: the executor's ``_result_queue``, a
    ``SimpleQueue``, and its ``_writer`` (both so named from Python 3.9 to 3.13). No public
    way leads there: the executor takes a context, not a queue; the queue's ``close()``
    closes the reader too, under the executor's own thread reading it; and Python 3.14's
    ``terminate_workers`` does not end that read. ``test_dying_workers.py`` fails if either
    name changes.

    Args:
        executor: the process pool.
    """
    queue = getattr(executor, "_result_queue", None)
    return None if queue is None else cast(Connection, queue._writer)


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

"""Running a Beam job and telling the user, in one line, when the runner says it failed.

A job can fail for reasons that are not the input's: a worker killed by the cluster, a
runner that gives up. Beam raises whatever its runner raises (a multi-line ``RuntimeError``
with a Go stack trace from Prism, a ``DataflowRuntimeException``); the builds turn that
into :class:`JobFailed`, whose message is one line naming the runner and the runner's own
first line, and which the commands print and exit 1 on. Nothing is published by a failed
job: builds publish only after their jobs end ``DONE``. The local engine's counterpart is
:class:`WorkerDied`: one of its worker processes died (``corpusforge.local.workers``).

    with job(pipeline_options(beam_args)) as p:
        p | beam.Create(...) | ...
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Beam is imported when a job runs, not when a command starts
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.runner import PipelineResult

log = logging.getLogger(__name__)
_MAX_REASON = 400


class JobFailed(RuntimeError):
    """A Beam job that did not end ``DONE``; ``str()`` is one line for the user."""

    def __init__(self, runner: str | None, reason: str) -> None:
        if runner in (None, "", "None"):  # no --runner: Beam's default
            runner = "the in-process runner"
        self.runner = runner
        self.reason = reason
        super().__init__(f"the Beam job failed on {runner}: {reason}; nothing was published")


class WorkerDied(JobFailed):
    """A worker process of the local engine that ended before its work was done (killed,
    out of memory); ``str()`` is one line naming the worker and how it ended.

    Args:
        worker: what the worker did, with its article: ``a bitext filter worker``.
        pid: its process id, if known.
        exitcode: its exit code as :mod:`multiprocessing` reports it (``-N``: killed by
            signal ``N``), if known.
    """

    def __init__(self, worker: str, pid: int | None, exitcode: int | None) -> None:
        self.worker = worker
        self.pid = pid
        self.exitcode = exitcode
        self.runner = "the local engine"
        self.reason = how_it_ended(exitcode)
        who = worker if pid is None else f"{worker} (pid {pid})"
        RuntimeError.__init__(self, f"{who} {self.reason}; nothing published")


def how_it_ended(exitcode: int | None) -> str:
    """How a process with ``exitcode`` ended, in words: ``was killed by SIGKILL``."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by {name}"
    if exitcode:
        return f"exited with code {exitcode}"
    return "stopped before its work was done"


def _runner_name(options: PipelineOptions) -> str | None:
    from apache_beam.options.pipeline_options import StandardOptions

    runner = options.view_as(StandardOptions).runner
    return runner if runner is None or isinstance(runner, str) else type(runner).__name__


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def run(p: beam.Pipeline) -> PipelineResult:
    """Start a built pipeline; raise :class:`JobFailed` if the runner fails it at once.

    The in-process runner runs the whole job inside ``run()``; others return a result to
    :func:`wait` for.
    """
    try:
        return p.run()
    except Exception as exc:
        log.debug("the runner's own report", exc_info=True)
        raise JobFailed(_runner_name(p.options), _first_line(exc)) from exc


def wait(result: PipelineResult, runner: str | None) -> PipelineResult:
    """Wait for a started job; raise :class:`JobFailed` unless it ends ``DONE``.

    A runner that only submits or describes the job (a template launch, a dry run) returns
    at once in a state other than a terminal failure; that is not a failure.
    """
    from apache_beam.runners.runner import PipelineState

    try:
        result.wait_until_finish()
    except Exception as exc:
        log.debug("the runner's own report", exc_info=True)
        raise JobFailed(runner, _first_line(exc)) from exc
    if result.state in (PipelineState.FAILED, PipelineState.CANCELLED, PipelineState.UPDATED):
        raise JobFailed(runner, f"it ended in state {result.state}")
    return result


@contextmanager
def job(options: PipelineOptions) -> Iterator[beam.Pipeline]:
    """A pipeline to build in the ``with`` body, run and waited for when the body ends.

    Like ``with beam.Pipeline(options=...)``, except that a failure of the run itself
    becomes :class:`JobFailed`. An exception raised while the body builds the graph is a
    programming error and propagates unchanged, and no job is started.
    """
    import apache_beam as beam

    from corpusforge.flink import watchdog

    p = beam.Pipeline(options=options)
    yield p
    with watchdog(options):  # a job on a Flink cluster that stops moving is cancelled
        wait(run(p), _runner_name(options))

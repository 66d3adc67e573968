"""One call in a fresh interpreter, stopped with the command that made it.

``corpusforge bench`` runs each measured stage here, so that the stage's peak memory is its
own (``spawn``: a new program, not a fork of the bench), and so that the process is not a
daemon, which may not start the workers of the stage it measures.

    seconds, lines, peak = in_fresh_process(_timed, fn, args)

Ctrl-C and ``SIGTERM`` are the command's: the process starts with both blocked, so that not
even its interpreter's start-up sees a terminal's Ctrl-C (which would print its traceback);
it then ignores ``SIGINT`` and turns ``SIGTERM`` into an exception that unwinds the stage
(its temporary folders removed, its own workers stopped:
:func:`corpusforge.interrupts.install_interrupts`).
The command, interrupted, stops the process with ``SIGTERM`` (``SIGKILL`` after
:data:`~corpusforge.local.workers.JOIN_SECONDS`) before it says so in its one line; a process
that dies without a word ends the command in one line too
(:class:`~corpusforge.jobs.WorkerDied`).

The process loads what the stage needs, and not the command line (:mod:`corpusforge.cli`,
typer, click, rich: about 1 MB of a stage's peak): ``spawn`` runs the parent's main script
again in the child, which for the ``corpusforge`` console script imports the command line, so
the child is started as if from no script (:func:`_no_main_script`).
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from corpusforge.jobs import WorkerDied

T = TypeVar("T")

INTERRUPTS = {signal.SIGINT, signal.SIGTERM}


class RunFailed(RuntimeError):
    """The call raised in the fresh process; its traceback there is the ``__cause__``."""


class _RemoteTraceback(Exception):
    """The traceback of the fresh process, shown by ``--debug`` (as
    :mod:`concurrent.futures` shows a worker's)."""

    def __str__(self) -> str:
        return str(self.args[0])


def in_fresh_process(fn: Callable[..., T], *args: Any, what: str = "a benchmark run") -> T:
    """``fn(*args)`` in a new interpreter (``spawn``); its result.

    Args:
        fn: a module-level function (pickled by name).
        *args: its arguments (pickled).
        what: the process, with its article, for the error if it dies.

    Raises:
        RunFailed: ``fn`` raised; the message is its last line.
        WorkerDied: the process ended without an answer (killed, out of memory).
    """
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_answer, args=(send, fn, args), name=what)
    try:
        with _interrupts_held(), _no_main_script():  # the child inherits the mask
            process.start()
        send.close()  # the child's copy is the only one left: its death ends recv()
        try:
            ok, answer = receive.recv()
        except EOFError:
            process.join()
            raise WorkerDied(what, process.pid, process.exitcode) from None
        process.join()  # it exits once it has answered
    finally:
        _stop(process)
        send.close()  # where start() failed
        receive.close()
    if not ok:
        last = next((line for line in reversed(answer.splitlines()) if line.strip()), "")
        raise RunFailed(f"{what} failed: {last.strip()}") from _RemoteTraceback(answer)
    return answer


def _answer(send: Connection, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """The fresh process: ``fn(*args)``, its result or its traceback sent back."""
    from corpusforge.interrupts import Interrupted, install_interrupts

    install_interrupts()  # SIGTERM unwinds; the workers it forks die with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's to act on
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)  # a pending SIGTERM raises
        try:
            reply: tuple[bool, Any] = (True, fn(*args))
        except Exception:
            reply = (False, traceback.format_exc())
        send.send(reply)
        signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)  # answered: exit undisturbed
    except Interrupted as stopped:
        sys.exit(128 + stopped.signum)  # stopped by the command, which speaks for it


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back from this thread for the block; one that came meanwhile
    is acted on as it ends (and processes started inside start with both blocked)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)


@contextmanager
def _no_main_script() -> Iterator[None]:
    """The main module hidden from ``spawn`` for the block: a process started inside does not
    run this program's main script again (``spawn`` re-runs it, as ``__mp_main__``, so that
    functions defined there can be unpickled; :func:`in_fresh_process` runs functions of
    modules only)."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")  # no file, no spec: nothing to run
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _stop(process: BaseProcess) -> None:
    """End ``process`` if it runs (``SIGTERM``, then ``SIGKILL``) and reap it."""
    from corpusforge.local.workers import JOIN_SECONDS

    if process.pid is None:  # never started
        return
    if process.exitcode is None:
        process.terminate()
        process.join(JOIN_SECONDS)
    if process.exitcode is None:
        process.kill()
    process.join()

"""SIGTERM and SIGINT as an exception, :class:`Interrupted`, that unwinds a command (every
``finally`` and ``with`` runs: a build removes its draft and its lock), and the fork hooks that
keep it out of the workers the command forks.

:func:`install_interrupts` is called by the command line (:func:`corpusforge.cli.main`) and by
each fresh process of ``corpusforge bench`` (:mod:`corpusforge.isolated`), which import this
module alone, not the command line's.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging  # noqa: F401  (its fork hooks must be registered before ours)
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any


class Interrupted(BaseException):
    """SIGTERM or SIGINT reached the command: unwinds it like ``KeyboardInterrupt`` (so every
    ``finally`` and ``with`` runs: a build removes its draft and lock), never caught by an
    ``except Exception``.

    Attributes:
        signum: the signal received.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted ({signal.Signals(signum).name})")


INTERRUPTS = (signal.SIGTERM, signal.SIGINT)


_FORKING = ctypes.c_int(0)
"""1 while this process runs ``os.fork()``'s hooks: set and cleared by hooks that are C
functions (:func:`_fork_hooks`), read by the signal handler."""


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """The signal handler: raise :class:`Interrupted`; a second signal of the same kind ends
    the process at once.

    Inside ``os.fork()``'s hooks (``logging`` releases its lock in one), Python prints and
    drops an exception, and the build would go on: there the signal is sent again, blocked
    until the fork is done (:func:`_fork_hooks`), and handled once ``os.fork()`` returns.
    """
    if _FORKING.value:
        os.kill(os.getpid(), signum)
        return
    signal.signal(signum, signal.SIG_DFL)
    raise Interrupted(signum)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_prctl: Any = None
"""libc's ``prctl`` on Linux (loaded before any fork), else ``None``."""


def _child_after_fork() -> None:
    """A forked worker leaves interrupts to this process: SIGTERM ends it (the default; this
    process's pools terminate their workers on the way out), SIGINT, which a terminal sends to
    the whole process group, is ignored; and on Linux the worker dies with the process that
    forked it (a worker forked in the instant an interrupt unwound that process, before its
    pool knew of it, is never left behind). Then the interrupts blocked for the fork return."""
    _FORKING.value = 0
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)  # pending ones stayed the parent's


_installed_in: int | None = None
_KEPT: list[Any] = []
"""The ctypes objects the fork hooks point to, alive as long as the hooks."""


def _fork_hooks() -> None:
    """Register the hooks that, around each fork of this process, block the interrupts and
    mark :data:`_FORKING`: libc's ``pthread_sigmask`` and ``memset`` through ctypes, C calls
    that, unlike ``signal.pthread_sigmask``, run no Python and no pending handler. Linux only
    (glibc's ``sigset_t``, ``SIG_BLOCK`` 0, ``SIG_UNBLOCK`` 1); the child's own hook runs
    everywhere. The blocking hooks are registered after ``logging``'s (imported with this
    module), so that theirs run inside them: before-hooks run last registered first."""
    global _prctl
    block = unblock = mark = unmark = None
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            _prctl = libc.prctl
            mask = (ctypes.c_ulong * 16)()  # sigset_t: a bit per signal, signal n at bit n - 1
            for signum in INTERRUPTS:
                mask[0] |= 1 << (signum - 1)
            _KEPT.append(mask)
            block = functools.partial(libc.pthread_sigmask, 0, ctypes.byref(mask), None)
            unblock = functools.partial(libc.pthread_sigmask, 1, ctypes.byref(mask), None)
            flag = ctypes.addressof(_FORKING)
            mark = functools.partial(ctypes.memset, flag, 1, 1)
            unmark = functools.partial(ctypes.memset, flag, 0, 1)
    if block is not None and unblock is not None and mark is not None and unmark is not None:
        # before: mark, then block; after, in the parent: unmark, then unblock
        os.register_at_fork(before=block, after_in_parent=unmark)
        os.register_at_fork(before=mark, after_in_parent=unblock)
    os.register_at_fork(after_in_child=_child_after_fork)


def install_interrupts() -> None:
    """Turn SIGTERM and SIGINT into :class:`Interrupted` in this process (not in its forked
    workers). Idempotent; only the main thread can install signal handlers.

    The interrupts are blocked while this process forks, and its workers neither raise
    :class:`Interrupted` nor outlive it (:func:`_fork_hooks`, :func:`_child_after_fork`).
    """
    global _installed_in
    if _installed_in == os.getpid() or threading.current_thread() is not threading.main_thread():
        return
    for signum in INTERRUPTS:
        signal.signal(signum, _interrupt)
    if _installed_in is None:
        _fork_hooks()
    _installed_in = os.getpid()

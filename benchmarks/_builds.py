"""One ``corpusforge twitter build`` for the benchmark scripts: run with a checkout's sources,
timed, its processes' memory sampled, its run summary read.

The scripts run as ``python benchmarks/NAME.py``, so this folder is on the path and they
``import _builds``.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

COMMAND = os.path.join(os.path.dirname(sys.executable), "corpusforge")


@dataclass(frozen=True)
class Build:
    """What one build measured."""

    wall: float
    """Seconds from the command's start to its exit."""
    cpu: float
    """User and system seconds of the command and its workers."""
    peak_mb: float
    """The largest proportional set size (PSS: a page shared by n processes counts 1/n in
    each) of the command and its descendants together, sampled every
    :data:`SAMPLE_SECONDS`."""
    summary: str
    """The command's stderr: its log and run summary."""

    def seconds(self, row: str) -> float:
        """The time column of the run summary's ``row``: an archive's file name, or
        ``stage: NAME``."""
        found = re.search(rf"{re.escape(row)}\s*│[^\n]*?([\d.,]+) s\s*│", self.summary)
        if found is None:
            raise SystemExit(f"no {row!r} row in the run summary:\n{self.summary}")
        return float(found.group(1).replace(",", ""))

    @property
    def lines(self) -> int:
        """Lines read, from the run summary."""
        found = re.search(r"read ([\d,]+) lines from", self.summary)
        if found is None:
            raise SystemExit(f"no lines read in the run summary:\n{self.summary}")
        return int(found.group(1).replace(",", ""))


SAMPLE_SECONDS = 0.2


def build(tree: str, archives: list[str], *flags: str) -> Build:
    """``corpusforge twitter build`` of ``archives`` into a fresh folder, ``tree``'s ``src``
    first on the path (this virtual environment's command and libraries).

    ``PYTHONDONTWRITEBYTECODE`` is dropped, so that Python writes compiled modules once and
    reads them after, as on a user's second run.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=os.path.join(tree, "src"), COLUMNS="200")
    with tempfile.TemporaryDirectory(prefix="bench-build-") as out:
        command = [COMMAND, "twitter", "build", *archives, "--out", out + "/r", *flags]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        peak = _Peak(process.pid)
        stdout, stderr = process.communicate()
        wall = time.perf_counter() - start
        peak.stop()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}:\n{stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Build(wall, cpu, peak.mb, stderr + stdout)


class Sampler:
    """Calls ``sample`` every ``seconds`` on a thread until :meth:`stop`: how the benchmarks
    follow the memory of processes while a build runs (a peak shorter than ``seconds`` may be
    missed).

    Args:
        sample: reads what it wants (:func:`tree_pss`, :func:`pss_mb`) and keeps its peaks.
        seconds: the interval.
    """

    def __init__(self, sample: Callable[[], None], seconds: float = SAMPLE_SECONDS) -> None:
        self._call = sample
        self._seconds = seconds
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops the thread after its current sample."""
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._done.wait(self._seconds):
            self._call()


class _Peak(Sampler):
    """The largest summed PSS of a process and its descendants together."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.mb = 0.0
        super().__init__(self._sample)

    def _sample(self) -> None:
        self.mb = max(self.mb, sum(tree_pss(self.pid).values()))


def tree_pss(root: int) -> dict[int, float]:
    """The PSS in MiB of ``root`` and of every process below it, by pid (``root`` first)."""
    return {pid: pss_mb(pid) for pid in _tree(root)}


def _tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def pss_mb(pid: int) -> float:
    """``pid``'s proportional set size (Linux's ``smaps_rollup``), 0 once it has gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0.0

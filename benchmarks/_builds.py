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


class _Peak:
    """The largest memory of a process and its descendants together, sampled on a thread: a
    peak shorter than a sample's interval may be missed."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.mb = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            self.mb = max(self.mb, sum(_pss_mb(pid) for pid in _tree(self.pid)))


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


def _pss_mb(pid: int) -> float:
    """``pid``'s proportional set size (Linux's ``smaps_rollup``), 0 once it has gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0.0

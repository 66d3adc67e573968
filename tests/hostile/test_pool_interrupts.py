"""Ctrl-C to ``corpusforge synth twitter`` and ``corpusforge bench`` while their processes
start or work: one line, exit 130, never a hang, no process left behind, no archive left
half-written under its name.

Each test runs the real command in a process group of its own and sends it SIGINT at a moment
chosen by the test, not by a sleep: as a worker process starts (to the command, as
``test_dying_workers.py`` does for the builds), or to the whole group, as a terminal does,
while a worker is half-way through sending a member (``multiprocessing.Pool`` waited there
for ever for the rest of it), as the bench's fresh process for a stage starts (its
interpreter printed a ``KeyboardInterrupt`` traceback) or once that process has workers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpusforge.isolated import RunFailed, in_fresh_process
from corpusforge.jobs import WorkerDied
from corpusforge.perf import make_archive

from .test_dying_workers import INTERRUPTED_AT_START
from .test_signals import alive

ENDS_WITHIN = 60
"""Seconds a command is given to end once signalled: generous; a hang fails."""

INTERRUPTED = ["error: interrupted (SIGINT)"]
TWEETS = 3_000
"""Tweets in the bench's archive."""

INTERRUPTED_WHILE_SENDING = """
import os, signal, struct, sys, time
from multiprocessing.connection import Connection

COMMAND = os.getpid()
send = Connection._send_bytes


def half_sent(self, buf):
    if os.getpid() != COMMAND and len(buf) > 4_000:  # a worker's rendered member
        self._send(struct.pack("!i", len(buf)))
        self._send(bytes(buf[:1000]))
        os.killpg(COMMAND, signal.SIGINT)  # Ctrl-C with the rest of the member unsent
        time.sleep(ENDS)
    send(self, buf)


ENDS = 2 * int(sys.argv[1])
Connection._send_bytes = half_sent
sys.argv = ["corpusforge", *sys.argv[2:]]
from corpusforge.cli import main

main()
"""
"""``corpusforge ARGS...`` whose first worker to send a member sends its first kilobyte,
sends the process group SIGINT and waits: the command must stop it, not wait for the rest."""


def _run(script: str, first: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, first, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN,
        start_new_session=True,  # a process group of its own, as in a terminal
    )


def _synth(out: Path) -> list[str]:
    return ["synth", "twitter", "--out", str(out), "--tweets", "6000", "--workers", "2"]


@pytest.mark.parametrize("nth", [1, 2])
def test_ctrl_c_as_a_synth_worker_starts_ends_synth(tmp_path: Path, nth: int) -> None:
    out = tmp_path / "twitter-stream-2021-01-01.zip"
    done = _run(INTERRUPTED_AT_START, str(nth), _synth(out), tmp_path)
    assert (done.returncode, done.stderr.splitlines()) == (130, INTERRUPTED), done.stderr
    assert list(tmp_path.iterdir()) == []  # no archive, no partial one, no truth


def test_ctrl_c_while_a_synth_worker_sends_a_member_ends_synth(tmp_path: Path) -> None:
    out = tmp_path / "twitter-stream-2021-01-01.zip"
    done = _run(INTERRUPTED_WHILE_SENDING, str(ENDS_WITHIN), _synth(out), tmp_path)
    assert (done.returncode, done.stderr.splitlines()) == (130, INTERRUPTED), done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_synth_keeps_the_archive_that_was_there(tmp_path: Path) -> None:
    out = tmp_path / "twitter-stream-2021-01-01.zip"
    out.write_bytes(b"the archive of an earlier run")
    done = _run(INTERRUPTED_AT_START, "2", _synth(out), tmp_path)
    assert done.returncode == 130, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]
    assert out.read_bytes() == b"the archive of an earlier run"


# -- corpusforge bench: each stage in a fresh process ------------------------------------


def _descendants(pid: int) -> list[int]:
    """The live processes below ``pid``, children first (from ``/proc``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended
            continue
    return found + [d for child in found for d in _descendants(child)]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bench folder holding the bench's archive already (made once for these tests)."""
    folder = tmp_path_factory.mktemp("bench")
    make_archive(folder, TWEETS, "zip-2020")
    return folder


def _bench_signalled(
    tmp_path: Path, workdir: Path, ready: str, signum: int = signal.SIGINT
) -> tuple[subprocess.Popen[str], str, list[int]]:
    """Run a small ``corpusforge bench``; signal it once ``ready`` holds: ``run`` (its first
    stage's fresh process exists) or ``workers`` (that process has started its workers).
    SIGINT goes to the whole group, SIGTERM to the bench alone. The bench, its stderr and the
    processes it had then."""
    args = ["bench", "--tweets", str(TWEETS), "--runs", "1", "--workers", "2"]
    args += ["--workdir", str(workdir)]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from corpusforge.cli import main; main()", *args],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        below: list[int] = []
        deadline = time.monotonic() + ENDS_WITHIN
        while proc.poll() is None and time.monotonic() < deadline:
            below = _descendants(proc.pid)
            runs = [p for p in below if "spawn_main" in _cmdline(p)]
            if runs and (ready == "run" or _descendants(runs[0])):
                break
            time.sleep(0.001)
        assert proc.poll() is None, "the bench ended before it was signalled"
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=ENDS_WITHIN)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc, stderr, below


def _assert_left_nothing(processes: list[int]) -> None:
    deadline = time.monotonic() + 10  # Python's resource tracker ends when its pipe closes
    while any(alive(p) for p in processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in processes if alive(p)] == []


@pytest.mark.parametrize("ready", ["run", "workers"])
def test_ctrl_c_to_bench_is_one_line_from_the_bench(
    tmp_path: Path, workdir: Path, ready: str
) -> None:
    proc, stderr, below = _bench_signalled(tmp_path, workdir, ready)
    assert (proc.returncode, stderr.splitlines()) == (130, INTERRUPTED), stderr
    _assert_left_nothing(below)


def test_sigterm_to_bench_alone_stops_its_run(tmp_path: Path, workdir: Path) -> None:
    proc, stderr, below = _bench_signalled(tmp_path, workdir, "workers", signal.SIGTERM)
    assert (proc.returncode, stderr.splitlines()) == (143, ["error: interrupted (SIGTERM)"])
    _assert_left_nothing(below)


def _raise(message: str) -> None:
    raise ValueError(message)


def _killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_fresh_process_gives_its_answer_or_its_error() -> None:
    assert in_fresh_process(divmod, 7, 2) == (3, 1)
    with pytest.raises(RunFailed, match=r"^a benchmark run failed: ValueError: no such stage$"):
        in_fresh_process(_raise, "no such stage")
    with pytest.raises(WorkerDied, match=r"^a test run \(pid \d+\) was killed by SIGKILL"):
        in_fresh_process(_killed, what="a test run")

"""A dying worker never hangs or loses a run (issue 36): one worker of each kind of the local
engine (a bitext or ParaNMT filter worker, a Twitter extract worker, a Twitter pair worker) is
killed with SIGKILL in a real build over a previous release. The build ends by itself, exit 1,
in one line naming the worker and the signal; no draft, no lock and no spill folder is left,
and the previous release is byte for byte what it was. The same holds for Ctrl-C sent to the
whole build (exit 130), and for a worker killed half-way through sending its result, which the
process pool alone would wait for for ever.

The kill does not depend on timing: the test waits until the build has a child process (the
builds fork nothing but their workers) and kills it at once, whatever the worker is doing.
"""

from __future__ import annotations

import bz2
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from corpusforge.local.workers import results_writer
from corpusforge.synth.twitter import write_synthetic_archive

REPO = Path(__file__).resolve().parents[2]
ENDS_WITHIN = 120
"""Seconds a build is given to end after its worker is killed: generous; a hang fails."""

CLI = """
import sys
import corpusforge.local.pairs

if sys.argv[1] != "default":
    corpusforge.local.pairs.ROWS_PER_WORKER = int(sys.argv[1])
sys.argv = ["corpusforge", *sys.argv[2:]]
from corpusforge.cli import main

main()
"""
"""``corpusforge ARGS...`` with the pair stage's ``ROWS_PER_WORKER`` set by the test (the
first argument, unless ``default``): 1 starts pair workers for a few thousand tweets."""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended
            continue
    return found


def _kill_a_worker(
    tmp_path: Path,
    args: list[str],
    rows_per_worker: str = "default",
    ctrl_c: bool = False,
    after: float = 0.0,
) -> tuple[int, str, int]:
    """Run ``corpusforge ARGS``, SIGKILL its first child process (or, with ``ctrl_c``, send
    SIGINT to the whole build as a terminal does), ``after`` seconds once it has one, wait for
    it to end; its exit code, its stderr and the worker's pid."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, rows_per_worker, *args],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "TMPDIR": str(temp)},
            start_new_session=True,  # a process group of its own, as in a terminal
        )
        try:
            victim = None
            deadline = time.monotonic() + ENDS_WITHIN
            while victim is None and proc.poll() is None and time.monotonic() < deadline:
                children = _children(proc.pid)
                if children:
                    victim = children[0]
                    time.sleep(after)
                    if ctrl_c:
                        os.killpg(proc.pid, signal.SIGINT)
                    else:
                        os.kill(victim, signal.SIGKILL)
                else:
                    time.sleep(0.002)
            assert victim is not None, "the build started no worker: " + err_path.read_text()
            code = proc.wait(timeout=ENDS_WITHIN)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert list(temp.iterdir()) == [], "a spill folder was left in the temporary folder"
    return code, err_path.read_text(), victim


def _build(args: list[str]) -> None:
    """``corpusforge ARGS``, which must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", CLI, "default", *args],
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN,
    )
    assert done.returncode == 0, done.stderr


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _assert_died_cleanly(code: int, stderr: str, victim: int, worker: str, out: Path) -> None:
    """Exit 1, one line naming the worker, its pid and SIGKILL; only the old release left."""
    _assert_ended(code, stderr, out, 1)
    last = stderr.strip().splitlines()[-1]
    assert last == f"error: {worker} (pid {victim}) was killed by SIGKILL; nothing published"


def _assert_ended(code: int, stderr: str, out: Path, expected: int) -> None:
    """Exit ``expected``, one ``error:`` line (the last), no traceback; no draft, no lock."""
    lines = stderr.strip().splitlines()
    assert code == expected, stderr
    assert "Traceback" not in stderr
    assert [line for line in lines if line.startswith("error:")] == [lines[-1]]
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]  # no draft, no lock


# -- the Twitter workers ---------------------------------------------------------------


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Two small archives of four members each."""
    folder = tmp_path_factory.mktemp("in")
    paths = []
    for day, seed in ((1, 3), (2, 4)):
        path = folder / f"twitter-stream-2021-01-0{day}.zip"
        write_synthetic_archive(path, tweets=3_000, layout="zip-2020", seed=seed)
        paths.append(str(path))
    return paths[0], paths[1]


@pytest.fixture(scope="module")
def twitter_release(archives: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release: the first archive, built as the tests build."""
    out = tmp_path_factory.mktemp("previous") / "release"
    _build(["twitter", "build", archives[0], "--out", str(out), "--benchmark-queries", "3"])
    return out


def _previous(release: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    out = tmp_path / "out" / "release"
    shutil.copytree(release, out)
    return out, _digests(out)


def test_a_killed_twitter_extract_worker_ends_the_build(
    archives: tuple[str, str], twitter_release: Path, tmp_path: Path
) -> None:
    out, before = _previous(twitter_release, tmp_path)
    args = ["twitter", "build", *archives, "--out", str(out), "--workers", "2"]
    args += ["--benchmark-queries", "3"]  # the second archive is extracted by two workers
    code, stderr, victim = _kill_a_worker(tmp_path, args)
    _assert_died_cleanly(code, stderr, victim, "a Twitter extract worker", out)
    assert _digests(out) == before


def test_a_killed_twitter_pair_worker_ends_the_build(
    archives: tuple[str, str], twitter_release: Path, tmp_path: Path
) -> None:
    out, before = _previous(twitter_release, tmp_path)
    args = ["twitter", "build", archives[0], "--out", str(out), "--workers", "2"]
    args += ["--benchmark-queries", "3", "--pair-partitions", "8"]  # extracts reused
    code, stderr, victim = _kill_a_worker(tmp_path, args, rows_per_worker="1")
    _assert_died_cleanly(code, stderr, victim, "a Twitter pair worker", out)
    assert _digests(out) == before


def test_ctrl_c_while_pair_workers_run_is_one_line_from_the_build(
    archives: tuple[str, str], twitter_release: Path, tmp_path: Path
) -> None:
    """The terminal's SIGINT reaches the workers too: they leave it to the build, which
    stops them and says so once."""
    out, before = _previous(twitter_release, tmp_path)
    args = ["twitter", "build", archives[0], "--out", str(out), "--workers", "2"]
    args += ["--benchmark-queries", "3", "--pair-partitions", "8"]
    code, stderr, _ = _kill_a_worker(tmp_path, args, rows_per_worker="1", ctrl_c=True)
    _assert_ended(code, stderr, out, 128 + signal.SIGINT)
    assert stderr.strip().splitlines()[-1].startswith("error: interrupted (SIGINT)")
    assert _digests(out) == before


def _day_archive(path: Path, like: str) -> str:
    """A zip of a day's 1,440 minute members, two of ``like``'s lines each (their names and
    references are more than the 64 KiB a pipe holds)."""
    with zipfile.ZipFile(like) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".json.bz2"))
        lines = bz2.decompress(archive.read(name)).splitlines(keepends=True)
    with zipfile.ZipFile(path, "w") as day:
        for minute in range(1_440):
            hour, rest = divmod(minute, 60)
            text = b"".join(lines[2 * minute : 2 * minute + 2])
            day.writestr(f"2021/01/03/{hour:02d}/{rest:02d}.json.bz2", bz2.compress(text))
    return str(path)


def test_ctrl_c_while_extract_workers_read_a_day_ends_the_build(
    archives: tuple[str, str], twitter_release: Path, tmp_path: Path
) -> None:
    """The members the readers had not taken yet are dropped with them: the interpreter's exit
    waited for them to be written to a pipe no one read, for ever."""
    out, before = _previous(twitter_release, tmp_path)
    day = _day_archive(tmp_path / "twitter-stream-2021-01-03.zip", archives[0])
    args = ["twitter", "build", day, "--out", str(out), "--workers", "2"]
    args += ["--benchmark-queries", "3"]
    code, stderr, _ = _kill_a_worker(tmp_path, args, ctrl_c=True, after=0.3)  # reading
    _assert_ended(code, stderr, out, 128 + signal.SIGINT)
    assert stderr.strip().splitlines()[-1] == "error: interrupted (SIGINT); nothing published"
    assert _digests(out) == before


INTERRUPTED_AT_START = """
import os, signal, sys
import multiprocessing.process

import corpusforge.local.pairs

corpusforge.local.pairs.ROWS_PER_WORKER = 1
NTH = int(sys.argv[1])
start = multiprocessing.process.BaseProcess.start
started = []


def start_then_interrupt(self):
    start(self)
    started.append(self)
    if len(started) == NTH:
        os.kill(os.getpid(), signal.SIGINT)  # raised before the executor records this worker


multiprocessing.process.BaseProcess.start = start_then_interrupt
sys.argv = ["corpusforge", *sys.argv[2:]]
from corpusforge.cli import main

main()
"""
"""``corpusforge ARGS...`` that sends itself SIGINT the instant its Nth worker process has
started (the first argument): inside the process pool's first ``submit``, between the
worker's start and the executor's record of it. The race behind the rare hang of Ctrl-C to
the group, made certain: a pool that stopped only the workers the executor had recorded left
that one waiting for tasks, and the interpreter's exit waiting for it, for ever."""


def _interrupted_at_start(tmp_path: Path, nth: int, args: list[str]) -> tuple[int, str]:
    """Run ``corpusforge ARGS`` interrupted as its ``nth`` worker starts; its exit code and
    stderr (a build that does not end within ``ENDS_WITHIN`` fails the test)."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_AT_START, str(nth), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN,
        start_new_session=True,
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize("nth", [1, 2])
def test_ctrl_c_as_a_pair_worker_starts_ends_the_build(
    archives: tuple[str, str], twitter_release: Path, tmp_path: Path, nth: int
) -> None:
    out, before = _previous(twitter_release, tmp_path)
    args = ["twitter", "build", archives[0], "--out", str(out), "--workers", "2"]
    args += ["--benchmark-queries", "3", "--pair-partitions", "8"]  # extracts reused: no reader
    code, stderr = _interrupted_at_start(tmp_path, nth, args)
    _assert_ended(code, stderr, out, 128 + signal.SIGINT)
    assert stderr.strip().splitlines()[-1] == "error: interrupted (SIGINT); nothing published"
    assert _digests(out) == before


# -- the bitext filter workers -----------------------------------------------------------

GERMAN = "der die das und ist nicht ein Haus Garten Blume heute morgen wir gehen sehen"
ENGLISH = "the a and is not house garden flower today tomorrow we go see nice big"


def _moses(folder: Path, lines: int) -> list[str]:
    """A German-English Moses pair of ``lines`` lines (words chosen by the line number)."""
    folder.mkdir(parents=True)
    paths = [folder / "words.de-en.de", folder / "words.de-en.en"]
    for path, language in zip(paths, (GERMAN, ENGLISH), strict=True):
        words = language.split()
        n = len(words)
        text = "".join(
            " ".join(words[(i * 7 + k * k) % n] for k in range(8)) + f" {i}\n" for i in range(lines)
        )
        path.write_text(text, encoding="utf-8")
    return [str(p) for p in paths]


def test_a_killed_bitext_filter_worker_ends_the_build(tmp_path: Path) -> None:
    out = tmp_path / "out" / "release"
    small = _moses(tmp_path / "small", 200)
    _build(["bitext", "build", *small, "--out", str(out)])
    before = _digests(out)
    big = _moses(tmp_path / "big", 40_000)  # batches for a while on two workers
    args = ["bitext", "build", *big, "--out", str(out), "--workers", "2"]
    code, stderr, victim = _kill_a_worker(tmp_path, args)
    _assert_died_cleanly(code, stderr, victim, "a bitext filter worker", out)
    assert _digests(out) == before


def test_ctrl_c_as_a_bitext_filter_worker_starts_ends_the_build(tmp_path: Path) -> None:
    out = tmp_path / "out" / "release"
    small = _moses(tmp_path / "small", 200)
    _build(["bitext", "build", *small, "--out", str(out)])
    before = _digests(out)
    big = _moses(tmp_path / "big", 2_000)
    args = ["bitext", "build", *big, "--out", str(out), "--workers", "2"]
    code, stderr = _interrupted_at_start(tmp_path, 2, args)
    _assert_ended(code, stderr, out, 128 + signal.SIGINT)
    assert stderr.strip().splitlines()[-1] == "error: interrupted (SIGINT); nothing published"
    assert _digests(out) == before


def _paranmt(path: Path, lines: int) -> str:
    """``lines`` English paraphrase pairs with a score, as ParaNMT-50M writes them."""
    words = ENGLISH.split()
    n = len(words)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            " ".join(words[(i * 7 + k * k) % n] for k in range(8)) + f" {i}\t"
            + " ".join(words[(i * 5 + k) % n] for k in range(8)) + f" {i}\t0.7\n"
            for i in range(lines)
        ),
        encoding="utf-8",
    )  # fmt: skip
    return str(path)


def test_a_killed_paranmt_filter_worker_ends_the_build(tmp_path: Path) -> None:
    out = tmp_path / "out" / "release"
    _build(["paranmt", "build", _paranmt(tmp_path / "small" / "para.txt", 200), "--out", str(out)])
    before = _digests(out)
    big = _paranmt(tmp_path / "big" / "para.txt", 40_000)
    code, stderr, victim = _kill_a_worker(
        tmp_path, ["paranmt", "build", big, "--out", str(out), "--workers", "2"]
    )
    _assert_died_cleanly(code, stderr, victim, "a ParaNMT filter worker", out)
    assert _digests(out) == before


# -- a worker killed half-way through sending its result ---------------------------------

CUT_SHORT = """
import os, signal, struct
from multiprocessing.connection import Connection

from corpusforge.jobs import WorkerDied
from corpusforge.local.workers import worker_pool

PARENT = os.getpid()
send = Connection._send_bytes


def cut_short(self, buf):
    if os.getpid() != PARENT and len(buf) > 100_000:  # a worker's large result
        self._send(struct.pack("!i", len(buf)))
        self._send(bytes(buf[:1000]))
        os.kill(os.getpid(), signal.SIGKILL)
    send(self, buf)


Connection._send_bytes = cut_short
try:
    with worker_pool("a test worker", 2) as pool:
        futures = [pool.submit(bytes, n) for n in (10, 10, 10, 1_000_000, 10)]
        for future in futures:
            pool.result(future)
except WorkerDied as exc:
    print(exc)
"""
"""A pool whose worker is killed after the first kilobyte of a 1 MB result: the executor's
reader waits for the rest of the message, so its sentinels never tell it the worker died."""


def test_a_worker_killed_while_it_sends_its_result_ends_the_pool() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CUT_SHORT],
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("a test worker (pid "), done.stdout
    assert done.stdout.endswith(") was killed by SIGKILL; nothing published\n")


def test_the_executor_still_sends_its_results_where_the_pool_closes_them() -> None:
    """The pool ends the executor's wait for a half-sent result by closing this process's end
    of the result pipe, which :mod:`concurrent.futures` keeps private (``results_writer``):
    on a Python whose executor names or holds it otherwise, this fails at once, where the
    test above would wait ``ENDS_WITHIN`` seconds."""
    executor = ProcessPoolExecutor(1)
    try:
        writer = results_writer(executor)
        assert isinstance(writer, Connection) and writer.writable and not writer.readable
        writer.send("a result")
        assert executor._result_queue.get() == "a result"  # the queue its reader reads
    finally:
        executor.shutdown()
    assert results_writer(executor) is None  # let go at shutdown: nothing left to close

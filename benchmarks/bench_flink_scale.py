"""Does the Twitter build scale out on Flink? Memory per process and time per line at 1x-16x.

    .venv/bin/python benchmarks/bench_flink_scale.py [--tweets 20000] [--scales 1 4 16] \\
        [--master localhost:PORT] [--workdir DIR] [--runs 1] [--flink-flag=--BEAM_FLAG=VALUE] \\
        [--probe DIR]

Inputs: ``max(scales)`` distinct day archives, ``corpusforge synth twitter --out
twitter-stream-DATE.zip --tweets N --layout zip-2020 --seed D --start DATE`` for the D-th day
from 2021-01-01,
written once into ``--workdir`` (reused); scale ``s`` builds the first ``s`` of them.

Each scale is built twice, each in a fresh output folder:

- **flink**: ``corpusforge twitter build ARCHIVES --runner flink --flink_master MASTER
  --parallelism=2`` with ``EXTERNAL`` SDK workers from a Beam worker pool this script starts
  (its venv first on ``PATH``), on the standalone cluster of ``--master`` or one that
  ``scripts/flink-cluster.sh start`` starts in a folder of its own (one TaskManager, 2 slots);
- **local**: the same command without a runner (the local engine, ``--workers 2``).

Both with ``--benchmark-queries 100`` and ``--rows-per-shard 10000`` (this script's flags of
those names): what a worker holds that is bounded by the configuration, not the input (the
held-out benchmarks' side inputs; a shard, grouped to be written), is then at its bound at
every scale. At the defaults (5,000 queries, 250,000 rows) it would still be filling up at
these sizes and read as growth (``corpusforge bench --scales`` cuts the benchmarks too).

Every 0.5 s the proportional set size (PSS, ``/proc/<pid>/smaps_rollup``) is read of every
Python SDK worker process below the worker pool, of each TaskManager JVM, of the driver
command (and for the local engine, of its process tree summed); a peak shorter than that may
be missed. Prints, per scale and engine: lines read, wall seconds, seconds and core-seconds
(x 2 cores) per million lines, the peak PSS of the largest SDK worker and the number of
workers seen, the TaskManager's and the driver's, and whether the release equals the local
engine's (every file but the runner named in the manifest and the card); then the ratios
16x/1x the issue's acceptance reads (memory flat within 25 %, time per million lines not
growing). With ``--probe DIR`` every SDK worker also writes what it holds, once a second,
to ``DIR/<pid>.tsv`` (``worker_probe/sitecustomize.py`` says what the columns are).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import _builds

from corpusforge.heap import worker_environment

REPO = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).resolve().parent / "worker_probe"
"""The folder of the SDK workers' probe (its ``sitecustomize``), put on the pool's path."""
PROBE_DIR_ENV = "CORPUSFORGE_PROBE_DIR"
CORES = 2
SAMPLE_SECONDS = 0.5
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
    "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    "COLUMNS": "200",
}


@dataclass
class Peaks:
    """Peak PSS in MiB by role, sampled on a thread (``_builds.Sampler``) while a build runs.

    A Twitter build on Flink is two jobs, the extract and then the pairs: each SDK worker's
    peak is also kept under the cluster's job that was running when it was first seen.
    """

    driver: int
    pool: int | None
    taskmanagers: list[int]
    master: str | None = None
    driver_mb: float = 0.0
    tree_mb: float = 0.0
    worker_mb: float = 0.0
    workers_seen: set[int] = field(default_factory=set)
    taskmanager_mb: float = 0.0
    worker_mb_by_job: dict[str, float] = field(default_factory=dict)
    """The largest SDK worker's peak by Flink job id, in the order the jobs were seen."""

    def __post_init__(self) -> None:
        self._job_of: dict[int, str] = {}
        self._sampler = _builds.Sampler(self._sample, SAMPLE_SECONDS)

    def stop(self) -> None:
        self._sampler.stop()

    def _sample(self) -> None:
        tree = _builds.tree_pss(self.driver)
        self.driver_mb = max(self.driver_mb, tree.get(self.driver, 0.0))
        self.tree_mb = max(self.tree_mb, sum(tree.values()))
        if self.pool is not None:
            workers = _builds.tree_pss(self.pool)
            workers.pop(self.pool)  # the pool itself: the SDK workers are below it
            running = _running_job(self.master) if workers else None
            for pid, mb in workers.items():
                self.workers_seen.add(pid)
                self.worker_mb = max(self.worker_mb, mb)
                if running is not None:
                    job = self._job_of.setdefault(pid, running)
                    self.worker_mb_by_job[job] = max(self.worker_mb_by_job.get(job, 0.0), mb)
        for pid in self.taskmanagers:
            self.taskmanager_mb = max(self.taskmanager_mb, _builds.pss_mb(pid))

    def by_job(self) -> str:
        """``extract / pairs`` MiB: the largest SDK worker of each job, in order."""
        return " / ".join(f"{mb:.0f}" for mb in self.worker_mb_by_job.values()) or "-"


def _running_job(master: str | None) -> str | None:
    """The id of the cluster's running job (the latest, if several), or ``None``."""
    if not master:
        return None
    try:
        with urllib.request.urlopen(f"http://{master}/jobs/overview", timeout=2) as response:
            jobs = json.load(response)["jobs"]
    except (OSError, ValueError, KeyError):
        return None
    running = sorted((j["start-time"], j["jid"]) for j in jobs if j["state"] == "RUNNING")
    return running[-1][1] if running else None


@dataclass(frozen=True)
class Row:
    scale: int
    engine: str
    lines: int
    wall: float
    peaks: Peaks
    same_as_local: str

    @property
    def s_per_mline(self) -> float:
        """Seconds per million lines (``lines`` is minus the exit status of a failed build)."""
        return self.wall / (self.lines / 1e6) if self.lines > 0 else float("nan")


def make_archives(folder: Path, tweets: int, days: int) -> list[str]:
    """``days`` distinct day archives of ``tweets`` tweets each (reused when there)."""
    archives = []
    for day in range(1, days + 1):
        date = (datetime.date(2021, 1, 1) + datetime.timedelta(days=day - 1)).isoformat()
        path = folder / f"twitter-stream-{date}.zip"
        if not path.exists():
            command = [_builds.COMMAND, "synth", "twitter", "--out", str(path) + ".tmp"]
            command += ["--tweets", str(tweets), "--layout", "zip-2020", "--seed", str(day)]
            command += ["--start", date, "--no-truth"]
            subprocess.run(command, check=True, capture_output=True, env=ENV)
            os.replace(str(path) + ".tmp", path)
        archives.append(str(path))
    return archives


@contextmanager
def cluster(master: str | None) -> Iterator[tuple[str, list[int]]]:
    """The REST address of the cluster and its TaskManager pids: ``master``'s (pids found by
    their command line), or a cluster started for this run and stopped after."""
    if master:
        pids = [
            int(p)
            for p in os.listdir("/proc")
            if p.isdigit() and b"TaskManagerRunner" in _cmdline(int(p))
        ]
        yield master, pids
        return
    with tempfile.TemporaryDirectory(prefix="bench-flink-cluster-") as run:
        env = {**ENV, "CORPUSFORGE_FLINK_RUN": run}
        script = str(REPO / "scripts" / "flink-cluster.sh")
        started = subprocess.run(
            ["bash", script, "start"], env=env, capture_output=True, text=True, check=True
        )
        try:
            pids = [int((Path(run) / "taskmanager.pid").read_text())]
            yield started.stdout.strip().splitlines()[-1], pids
        finally:
            subprocess.run(["bash", script, "stop"], env=env, check=False)
            kept = Path(tempfile.mkdtemp(prefix="bench-flink-cluster-logs-"))
            shutil.copytree(Path(run) / "log", kept, dirs_exist_ok=True)
            print(f"the cluster's logs: {kept}")


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@contextmanager
def worker_pool(probe: str | None = None) -> Iterator[tuple[str, int]]:
    """Beam's worker pool with this venv first on ``PATH`` and glibc's heap settings
    (``heap.WORKER_ENV``, inherited by its workers); (address, pid). ``probe``: a folder
    where each SDK worker writes what it holds, once a second (``worker_probe/``)."""
    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = int(s.getsockname()[1])
    env = worker_environment(ENV)
    if probe:
        env["PYTHONPATH"] = os.pathsep.join([str(PROBE), env["PYTHONPATH"]])
        env[PROBE_DIR_ENV] = probe
    command = [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main"]
    proc = subprocess.Popen(
        [*command, f"--service_port={port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while socket.socket().connect_ex(("localhost", port)) != 0:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the Beam worker pool did not start")
            time.sleep(0.2)
        yield f"localhost:{port}", proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def build(
    archives: list[str],
    out: Path,
    flags: list[str],
    pool: int | None,
    taskmanagers: list[int],
    master: str | None = None,
) -> tuple[float, int, Peaks]:
    """One ``corpusforge twitter build``; (wall seconds, lines read, peaks). ``master``:
    the cluster's REST address, to tell which job each SDK worker served."""
    command = [_builds.COMMAND, "twitter", "build", *archives, "--out", str(out), *flags]
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peaks = Peaks(proc.pid, pool, taskmanagers, master)
    _, stderr = proc.communicate()
    wall = time.perf_counter() - start
    peaks.stop()
    if proc.returncode:
        print(f"{' '.join(command)[:200]}... exited {proc.returncode}:\n{stderr[-3000:]}")
        return wall, -proc.returncode, peaks
    manifest = json.loads((out / "manifest.json").read_text())
    return wall, int(manifest["counts"]["lines_read"]), peaks


def release_files(out: Path) -> dict[str, bytes]:
    """Every file of a release; the manifest without its runner, the card without the line
    naming it."""
    files = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path == out / "manifest.json":
            manifest = json.loads(data)
            manifest.pop("runner", None)
            data = json.dumps(manifest, sort_keys=True).encode()
        elif path == out / "README.md":
            data = b"\n".join(x for x in data.split(b"\n") if b"Beam runner" not in x)
        files[str(path.relative_to(out))] = data
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tweets", type=int, default=20_000, help="tweets per day archive")
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--master", help="REST address of a running cluster")
    parser.add_argument("--workdir", help="folder for the archives (reused)")
    parser.add_argument("--runs", type=int, default=1, help="runs per scale and engine")
    parser.add_argument(
        "--benchmark-queries",
        type=int,
        default=100,
        help="queries per held-out benchmark (the build's flag; 0: the build's default, 5,000)",
    )
    parser.add_argument(
        "--rows-per-shard",
        type=int,
        default=10_000,
        help="rows per Parquet shard (the build's flag; 0: the build's default, 250,000)",
    )
    parser.add_argument(
        "--flink-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="one more Beam flag for the Flink builds, e.g. --flink-flag="
        "--execution_mode_for_batch=PIPELINED (repeat for more)",
    )
    parser.add_argument(
        "--probe",
        metavar="DIR",
        help="each SDK worker writes DIR/<pid>.tsv, once a second: its RSS, Python's and "
        "glibc's heaps, the data channels' send queues, its active bundles (a diagnosis; "
        "tracemalloc slows the workers)",
    )
    args = parser.parse_args()
    probe = str(Path(args.probe).resolve()) if args.probe else None
    if probe:
        Path(probe).mkdir(parents=True, exist_ok=True)
    folder = Path(args.workdir or tempfile.mkdtemp(prefix="bench-flink-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    archives = make_archives(folder, args.tweets, max(args.scales))
    print(f"{len(archives)} day archives of {args.tweets:,} tweets in {folder} "
          f"({time.perf_counter() - start:.0f} s)", flush=True)  # fmt: skip
    rows: list[Row] = []
    with cluster(args.master) as (master, taskmanagers), worker_pool(probe) as (pool, pool_pid):
        flink = ["--runner", "flink", f"--flink_master={master}", "--parallelism=2"]
        flink += ["--environment_type=EXTERNAL", f"--environment_config={pool}"]
        flink += args.flink_flag
        common = ["--benchmark-queries", str(args.benchmark_queries)] * bool(args.benchmark_queries)
        common += ["--rows-per-shard", str(args.rows_per_shard)] * bool(args.rows_per_shard)
        for scale in args.scales:
            inputs = archives[:scale]
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory(prefix="bench-flink-scale-out-") as outs:
                    local_out, flink_out = Path(outs) / "local" / "r", Path(outs) / "flink" / "r"
                    wall, lines, peaks = build(
                        inputs, local_out, [*common, "--workers", "2"], None, []
                    )
                    rows.append(Row(scale, "local", lines, wall, peaks, "-"))
                    print(_line(rows[-1]), flush=True)
                    wall, lines, peaks = build(
                        inputs, flink_out, [*common, *flink], pool_pid, taskmanagers, master
                    )
                    same = lines > 0 and release_files(local_out) == release_files(flink_out)
                    rows.append(Row(scale, "flink", lines, wall, peaks, "yes" if same else "NO"))
                    print(_line(rows[-1]), flush=True)
    print()
    print("| scale | engine | lines | wall s | s / M lines | core-s / M lines | largest SDK "
          "worker PSS MiB (workers) | of the extract / pair job | TaskManager PSS MiB | "
          "driver PSS MiB | tree PSS MiB | "
          "same bytes |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in _medians(rows):
        print(_table_row(row))
    _acceptance(_medians(rows), args.scales)


def _line(row: Row) -> str:
    p = row.peaks
    return (
        f"{row.scale}x {row.engine}: {row.lines:,} lines in {row.wall:.1f} s "
        f"({row.s_per_mline:.0f} s per million lines); SDK worker {p.worker_mb:.0f} MiB "
        f"({len(p.workers_seen)} workers; by job {p.by_job()}), TaskManager "
        f"{p.taskmanager_mb:.0f} MiB, driver {p.driver_mb:.0f} MiB, tree {p.tree_mb:.0f} MiB; "
        f"same bytes as local: {row.same_as_local}"
    )


def _medians(rows: list[Row]) -> list[Row]:
    """One row per (scale, engine): the run of median wall time."""
    grouped: dict[tuple[int, str], list[Row]] = {}
    for row in rows:
        grouped.setdefault((row.scale, row.engine), []).append(row)
    out = []
    for group in grouped.values():
        group.sort(key=lambda r: r.wall)
        out.append(group[len(group) // 2])
    return out


def _table_row(row: Row) -> str:
    p = row.peaks
    flink = row.engine == "flink"
    worker = f"{p.worker_mb:.0f} ({len(p.workers_seen)})" if flink else "-"
    taskmanager = f"{p.taskmanager_mb:.0f}" if flink else "-"
    cells = [
        f"{row.scale}x", row.engine, f"{row.lines:,}", f"{row.wall:.1f}",
        f"{row.s_per_mline:.0f}", f"{row.s_per_mline * CORES:.0f}", worker,
        p.by_job() if flink else "-", taskmanager,
        f"{p.driver_mb:.0f}", f"{p.tree_mb:.0f}", row.same_as_local,
    ]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def _acceptance(rows: list[Row], scales: list[int]) -> None:
    by = {(r.scale, r.engine): r for r in rows}
    low, high = min(scales), max(scales)
    for engine in ("flink", "local"):
        a, b = by.get((low, engine)), by.get((high, engine))
        if a is None or b is None:
            continue
        figures = [f"time per million lines {b.s_per_mline / a.s_per_mline:.2f}"]
        if engine == "flink":
            figures.append(f"largest SDK worker {b.peaks.worker_mb / a.peaks.worker_mb:.2f}")
            figures.append(f"TaskManager {b.peaks.taskmanager_mb / a.peaks.taskmanager_mb:.2f}")
        else:
            figures.append(f"tree PSS {b.peaks.tree_mb / a.peaks.tree_mb:.2f}")
        print(f"{engine} {high}x / {low}x: " + ", ".join(figures))


if __name__ == "__main__":
    main()

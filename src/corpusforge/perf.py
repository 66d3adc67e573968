"""Benchmarks that keep the Twitter pipeline honest: a synthetic archive in, figures out.

    corpusforge bench --tweets 100000 --layout zip-2020 --runs 3 --workers 4

Measures, each as the median of ``runs`` runs in a fresh process (so peak RSS is the
stage's own, less what its worker processes hold):

- **ceiling**: a plain loop that decodes every member with the stdlib (bz2 or gzip) and
  parses every line with orjson: the least work any reader must do; and the same loop on
  ``workers`` processes, each taking every ``workers``-th member, timed until the last
  one ends: the least time ``workers`` cores need;
- **extract**: our read and parse functions on the same members (the per-core work of the
  extract stage), the whole local extract engine on 1 and on ``workers`` processes, and the
  Beam extract pipeline on the in-process runner;
- **pairing**: the local pair engine's functions, the whole local pair stage, and the Beam
  pair pipeline, on the extracted, normalised tweets;
- **whole builds**: ``corpusforge twitter build`` from archive to published release, on the
  local engines (``--workers`` processes), on Beam's in-process runner and on Prism (Beam's
  portable runner, when ``scripts/prism.sh`` has built it; its Go process's memory is not in
  the peak RSS) and on Flink (``--runner flink``, when ``scripts/flink.sh`` has built the job
  server: on the standalone cluster whose REST address ``$CORPUSFORGE_FLINK_MASTER`` names,
  at parallelism 2, else on Flink embedded in the job server; LOOPBACK workers, so the
  Python work is in the peak RSS and the JVMs are not);

and prints lines/s, the ratio extract/ceiling, the local extract's speed-up on ``workers``
processes, the local whole build over each ceiling, tweets/s for pairing and peak RSS.
``--scales 1,2,4`` repeats the local stages on archives of 1×, 2× and 4× the tweets (the
pair stage with one partition and with ``scale`` partitions) and extrapolates peak RSS to a
month of archive (about 140M lines); see :func:`_scaling` for the model.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import json
import math
import os
import resource
import statistics
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from corpusforge.config.runner import Runner
from corpusforge.isolated import in_fresh_process
from corpusforge.local.machine import default_workers
from corpusforge.local.workers import worker_pool

MONTH_LINES = 140_000_000
FLINK_MASTER_ENV = "CORPUSFORGE_FLINK_MASTER"
SCALING_QUERIES = 100


@dataclass(frozen=True)
class Measurement:
    """One stage's figures: the median of its runs."""

    stage: str
    seconds: float
    items: int
    unit: str
    peak_rss_mb: float
    runs: int

    @property
    def rate(self) -> float:
        return self.items / self.seconds if self.seconds else 0.0


def _members(archive: str, share: int = 0, shares: int = 1) -> Iterator[tuple[str, bytes]]:
    """Raw (compressed) member bytes of a zip or tar archive, in order.

    Args:
        archive: the archive.
        share: yield the members whose position modulo ``shares`` is this.
        shares: how many shares the members are dealt into (1: all of them).
    """
    import tarfile

    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            infos = [
                info
                for info in zf.infolist()
                if not info.is_dir() and info.filename.endswith((".bz2", ".gz"))
            ]
            for info in infos[share::shares]:
                yield info.filename, zf.read(info)
        return
    with tarfile.open(archive) as tf:
        members = (m for m in tf if m.isfile() and m.name.endswith((".bz2", ".gz")))
        for i, member in enumerate(members):
            if i % shares == share:
                f = tf.extractfile(member)
                assert f is not None
                yield member.name, f.read()


def ceiling(archive: str, share: int = 0, shares: int = 1) -> int:
    """Decode members with the stdlib and parse every line with orjson; lines seen.

    Args:
        archive: the archive.
        share: read the members whose position modulo ``shares`` is this.
        shares: how many shares the members are dealt into (1: every member).
    """
    lines = 0
    for name, data in _members(archive, share, shares):
        text = bz2.decompress(data) if name.endswith(".bz2") else gzip.decompress(data)
        pieces = text.split(b"\n")
        if pieces and not pieces[-1]:
            pieces.pop()  # the final newline ends the last line; it starts no new one
        for line in pieces:
            if line.strip():
                orjson.loads(line)
            lines += 1
    return lines


def parallel_ceiling(archive: str, workers: int) -> int:
    """:func:`ceiling` on ``workers`` processes, member ``i`` to process ``i % workers``;
    lines seen, once the last process has ended."""
    with worker_pool("a ceiling process", workers) as pool:
        shares = [pool.submit(ceiling, archive, i, workers) for i in range(workers)]
        return sum(pool.result(share) for share in shares)


def extract_functions(archive: str, bz2_threads: int = 2) -> int:
    """Our reader and parser on every member, without Beam; lines seen.

    Args:
        archive: the archive.
        bz2_threads: 0 for the stdlib bz2 decoder, else indexed_bzip2 with that many threads.
    """
    from corpusforge.sources.twitter.archive import (
        MemberRef,
        ReadLimits,
        list_members,
        read_member_lines,
    )
    from corpusforge.sources.twitter.parse import parse_line

    limits = ReadLimits(bz2_threads=bz2_threads)
    lines = 0
    for ref in list_members(archive):
        if not isinstance(ref, MemberRef):
            continue
        for item in read_member_lines(ref, limits):
            if isinstance(item, tuple):
                parse_line(item[2], ref.archive, item[0], item[1])
                lines += 1
    return lines


def extract_stage(
    archive: str,
    out: str,
    engine: str = "local",
    workers: int | None = None,
    bz2_threads: int | None = None,
) -> int:
    """The extract stage into ``out``; lines read.

    Args:
        archive: the archive.
        out: the release folder.
        engine: ``local`` (the default engine) or ``beam`` (the Beam pipeline, in-process).
        workers: the local engine's processes (``None``: one per core).
        bz2_threads: ``--bz2-threads`` (``None``: its default, shared among the workers).
    """
    from corpusforge.builds import twitter_extract as tb
    from corpusforge.config.twitter import TwitterConfig
    from corpusforge.release.io import join, read_json

    config = TwitterConfig(inputs=(archive,), out=out, extract_engine=engine, workers=workers)
    if bz2_threads is not None:
        limits = dataclasses.replace(config.limits, bz2_threads=bz2_threads)
        config = dataclasses.replace(config, limits=limits)
    described = tb.describe_input(archive, config)
    tb.run_extract([described], config, Runner())
    counts = read_json(join(out, "tweets", described.extract, tb.COUNTS))
    return int(counts["lines_read"])


def pair_stage(
    archive: str,
    out: str,
    engine: str = "local",
    partitions: int = 0,
    queries: int | None = None,
) -> int:
    """The pair stage on an extract made by :func:`extract_stage`; tweets read.

    Args:
        archive: the archive the extract came from.
        out: the release folder holding the extract.
        engine: ``local`` (the default engine) or ``beam`` (the Beam pipeline, in-process).
        partitions: the local engine's key-space partitions (0: automatic).
        queries: queries per benchmark (``None``: the paper's 5,000).
    """
    import pyarrow.parquet as pq

    from corpusforge.builds import twitter_pairs as tp
    from corpusforge.config.twitter import TwitterConfig
    from corpusforge.pairing.benchmarks import BenchmarkConfig
    from corpusforge.release.io import join

    config = TwitterConfig(
        inputs=(archive,),
        out=out,
        pair_engine=engine,
        pair_partitions=partitions,
        benchmarks=BenchmarkConfig() if queries is None else BenchmarkConfig(queries=queries),
    )
    tweets = sorted(str(p) for p in Path(out).glob("tweets/*/tweets/*.parquet"))
    deletes = sorted(str(p) for p in Path(out).glob("tweets/*/deletes/*.parquet"))
    staging = join(out, "_bench_staging")
    tp.run_pairs(tweets, deletes, config, Runner(), staging)
    return sum(pq.read_metadata(f).num_rows for f in tweets)


def whole_build(archive: str, runner: str, workers: int | None = None) -> int:
    """A whole Twitter build of ``archive`` into a fresh folder, dataset card included (as
    ``corpusforge twitter build`` runs it); lines read.

    Args:
        archive: the archive.
        runner: ``local`` (the default engines), ``beam`` (both Beam pipelines on the
            in-process runner), ``prism`` (both on Prism, started by Beam from the binary
            ``scripts/prism.sh`` built, workers in this process) or ``flink`` (both on Flink
            through the job server ``scripts/flink.sh`` built: see :func:`flink_runner`).
        workers: the local engine's processes (``--workers``; ``None``: one per core).
    """
    from corpusforge.builds import twitter as tb
    from corpusforge.config.twitter import TwitterConfig
    from corpusforge.inspect.card import write_card

    engine = "local" if runner == "local" else "beam"
    on = {"prism": Runner(name="prism"), "flink": flink_runner()}.get(runner, Runner())
    with tempfile.TemporaryDirectory(prefix="corpusforge-bench-build-") as folder:
        config = TwitterConfig(
            inputs=(archive,),
            out=os.path.join(folder, "release"),
            extract_engine=engine,
            pair_engine=engine,
            workers=workers,
        )
        manifest = tb.build(config, on, finish_draft=write_card)
    return int(manifest["counts"]["lines_read"])


def peak_rss_mb() -> float:
    """This process's peak resident memory since it started its program, in MB.

    Linux's ``VmHWM`` belongs to the running program alone; ``ru_maxrss`` also counts what
    the parent held when it forked this process, which inflated small measurements.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pair_functions(out: str) -> tuple[int, float]:
    """The local pair engine alone (no start-up, no writing); (tweets read, seconds)."""
    from corpusforge.local.pairs import PairSettings, pair_tweets
    from corpusforge.pairing.benchmarks import BenchmarkConfig
    from corpusforge.text.clean import get_profile

    tweets = sorted(str(p) for p in Path(out).glob("tweets/*/tweets/*.parquet"))
    deletes = sorted(str(p) for p in Path(out).glob("tweets/*/deletes/*.parquet"))
    settings = PairSettings(get_profile("paper"), 20, ("en",), 0, BenchmarkConfig())
    start = time.perf_counter()
    with pair_tweets(tweets, deletes, settings, partitions=1) as stage:
        return stage.counts["records_in"], time.perf_counter() - start


def _timed(
    fn: Callable[..., int | tuple[int, float]], args: tuple[Any, ...]
) -> tuple[float, int, float]:
    start = time.perf_counter()
    result = fn(*args)
    seconds = time.perf_counter() - start
    items, seconds = result if isinstance(result, tuple) else (result, seconds)
    return seconds, items, peak_rss_mb()


def measure(
    stage: str,
    fn: Callable[..., int | tuple[int, float]],
    args: tuple[Any, ...],
    unit: str,
    runs: int,
) -> Measurement:
    """Run ``fn(*args)`` ``runs`` times, each in a fresh process (which Ctrl-C stops with
    the bench: :func:`corpusforge.isolated.in_fresh_process`); the median figures."""
    results = [in_fresh_process(_timed, fn, args) for _ in range(runs)]
    seconds = statistics.median(r[0] for r in results)
    peak = statistics.median(r[2] for r in results)
    return Measurement(stage, seconds, results[0][1], unit, peak, runs)


def make_archive(folder: Path, tweets: int, layout: str, seed: int = 0) -> str:
    """A synthetic archive of ``tweets`` tweets (reused when already there), written by one
    process per core, without the ground-truth file the bench never reads."""
    from corpusforge.synth.twitter import write_synthetic_archive

    suffix = {"zip-2020": ".zip", "tar-gz": ".tar.gz"}.get(layout, ".tar")
    path = folder / f"bench-{layout}-{tweets}-{seed}{suffix}"
    if not path.exists():
        write_synthetic_archive(path, tweets=tweets, layout=layout, seed=seed, truth=False)
    return str(path)


def run_bench(
    tweets: int,
    layout: str,
    runs: int,
    scales: tuple[int, ...],
    workdir: str | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """Measure every stage; returns a JSON-ready report.

    Args:
        tweets: tweets in the synthetic archive.
        layout: the archive's layout.
        runs: runs per stage; the median is reported.
        scales: size multiples for the memory extrapolation (one: none).
        workdir: folder for archives and releases (``None``: a fresh temporary one).
        workers: processes of the parallel ceiling, the local extract and the local whole
            build (``None``: one per core).
    """
    workers = workers or default_workers()
    folder = Path(workdir or tempfile.mkdtemp(prefix="corpusforge-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    archive = make_archive(folder, tweets, layout)
    report: dict[str, Any] = {
        "archive": archive,
        "archive_bytes": os.path.getsize(archive),
        "tweets": tweets,
        "layout": layout,
        "runs": runs,
        "cores": os.cpu_count(),
        "workers": workers,
    }
    a = measure("ceiling (stdlib decode + orjson)", ceiling, (archive,), "lines", runs)
    an = measure(
        f"  same, {workers} processes", parallel_ceiling, (archive, workers), "lines", runs
    )
    b = measure(
        "extract functions (ours, no Beam; 2 decoder threads)",
        extract_functions,
        (archive,),
        "lines",
        runs,
    )
    b0 = measure("  same, stdlib bz2 decoder", extract_functions, (archive, 0), "lines", runs)
    b2 = measure("  same, 1 decoder thread", extract_functions, (archive, 1), "lines", runs)
    out = str(folder / f"release-{layout}-{tweets}")
    el = measure(
        "extract stage (local engine, 1 worker)",
        extract_stage,
        (archive, out, "local", 1),
        "lines",
        runs,
    )
    el1 = measure(
        "  same, 1 worker, 1 decoder thread",
        extract_stage,
        (archive, out, "local", 1, 1),
        "lines",
        runs,
    )
    eln = measure(
        f"  same, {workers} workers", extract_stage, (archive, out, "local", workers), "lines", runs
    )
    e = measure(
        "extract stage (Beam, in-process)", extract_stage, (archive, out, "beam"), "lines", runs
    )
    pf = measure(
        "pair functions (local engine, no start-up)", pair_functions, (out,), "tweets", runs
    )
    p = measure("pair stage (local engine)", pair_stage, (archive, out, "local", 1), "tweets", runs)
    pb = measure(
        "pair stage (Beam, in-process)", pair_stage, (archive, out, "beam"), "tweets", runs
    )
    local = measure(
        f"whole build (local engines, {workers} workers)",
        whole_build,
        (archive, "local", workers),
        "lines",
        runs,
    )
    builds = [
        local,
        measure("whole build (Beam, in-process)", whole_build, (archive, "beam"), "lines", runs),
    ]
    if prism_available():
        builds.append(
            measure("whole build (Beam on Prism)", whole_build, (archive, "prism"), "lines", runs)
        )
    else:
        report["prism"] = "not built: bash scripts/prism.sh"
    if flink_available():
        master = os.environ.get(FLINK_MASTER_ENV)
        where = f"a Flink cluster at {master}, parallelism 2" if master else "embedded Flink"
        stage = f"whole build (Beam on {where})"
        builds.append(measure(stage, whole_build, (archive, "flink"), "lines", runs))
    else:
        report["flink"] = "not built: bash scripts/flink.sh"
    stages = (a, an, b, b0, b2, el, el1, eln, e, pf, p, pb, *builds)
    report["stages"] = [m.__dict__ | {"rate": m.rate} for m in stages]
    report["local_pairs_over_beam"] = p.rate / pb.rate
    report["local_extract_over_ceiling"] = el.rate / a.rate
    report["local_extract_speedup"] = eln.rate / el.rate
    # The default gives one worker every core's decoder thread, and each of N workers one:
    # workers alone scale as the N-worker stage over one worker on one thread.
    report["local_extract_speedup_one_thread_each"] = eln.rate / el1.rate
    report["local_extract_over_parallel_ceiling"] = eln.rate / an.rate
    report["extract_stdlib_over_ceiling"] = b0.rate / a.rate
    report["extract_1_thread_over_ceiling"] = b2.rate / a.rate
    report["extract_over_ceiling"] = b.rate / a.rate
    report["beam_extract_over_ceiling"] = e.rate / a.rate
    report["build_seconds"] = {m.stage: m.seconds for m in builds}
    report["local_build_over_ceiling"] = local.rate / a.rate
    report["local_build_over_parallel_ceiling"] = local.rate / an.rate
    if len(scales) > 1:
        report["scaling"] = _scaling(folder, tweets, layout, runs, scales)
    return report


def prism_available() -> bool:
    """Whether a Prism binary is there for the ``prism`` whole build."""
    from corpusforge.prism import PrismNotFoundError, locate_prism

    try:
        locate_prism()
    except PrismNotFoundError:
        return False
    return True


def flink_available() -> bool:
    """Whether the Flink job server jar is there for the ``flink`` whole build."""
    from corpusforge.flink import FlinkNotFoundError, locate_job_server

    try:
        locate_job_server()
    except FlinkNotFoundError:
        return False
    return True


def flink_runner() -> Runner:
    """The ``flink`` whole build's runner: ``--runner=flink``, with the cluster of
    ``$CORPUSFORGE_FLINK_MASTER`` at parallelism 2 where it is set (else embedded Flink)."""
    master = os.environ.get(FLINK_MASTER_ENV)
    if not master:
        return Runner(name="flink")
    return Runner(name="flink", master=master, options=("--parallelism=2",))


def _scaling(
    folder: Path, tweets: int, layout: str, runs: int, scales: tuple[int, ...]
) -> dict[str, Any]:
    """Peak RSS of the local engines at each scale, and the month they extrapolate to.

    The pair stage runs twice per scale: with one partition (everything in memory at once)
    and with ``scale`` partitions, so each partition holds as many conversation records as
    the smallest input. The second grows only by the stage's global state (``g`` per line);
    the difference of the two slopes is what a partition costs per line it holds (``q``).
    A month then needs ``base + g * month + q * (month lines per partition - smallest
    lines)``, with the partitions the engine would choose for a month.

    The benchmarks are cut to ``SCALING_QUERIES`` queries each: their candidate pool is
    bounded by the benchmark size, not the input, and at the paper's size it would not yet
    have reached its bound on a laptop's inputs, so a linear fit would count it as growing.
    """
    from corpusforge.local.pairs import ROWS_PER_PARTITION
    from corpusforge.local.tweet_rows import MAX_PARTITIONS

    points = []
    for scale in scales:
        archive = make_archive(folder, tweets * scale, layout)
        out = str(folder / f"release-{layout}-{tweets * scale}")
        e = measure("extract", extract_stage, (archive, out, "local"), "lines", runs)
        n = SCALING_QUERIES
        whole = measure("pairs", pair_stage, (archive, out, "local", 1, n), "tweets", runs)
        split = measure("pairs", pair_stage, (archive, out, "local", scale, n), "tweets", runs)
        counts = json.loads((Path(out) / "_bench_staging" / "_counts.json").read_text())
        points.append(
            {
                "scale": scale,
                "lines": e.items,
                "conversation_records": int(counts.get("records_in_conversations", 0)),
                "extract_rss_mb": e.peak_rss_mb,
                "pairs_rss_mb": whole.peak_rss_mb,
                "pairs_partitioned_rss_mb": split.peak_rss_mb,
                "extract_s": e.seconds,
                "pairs_s": whole.seconds,
                "pairs_partitioned_s": split.seconds,
            }
        )
    xs = [pt["lines"] for pt in points]
    extract_slope, extract_base = _fit(xs, [pt["extract_rss_mb"] for pt in points])
    whole_slope, _ = _fit(xs, [pt["pairs_rss_mb"] for pt in points])
    g, base = _fit(xs, [pt["pairs_partitioned_rss_mb"] for pt in points])
    q = max(0.0, whole_slope - g)
    per_line = points[-1]["conversation_records"] / points[-1]["lines"]
    month_k = min(MAX_PARTITIONS, max(1, math.ceil(per_line * MONTH_LINES / ROWS_PER_PARTITION)))
    smallest = min(xs) / (min(scales) or 1)
    pairs_month = base + g * MONTH_LINES + q * (MONTH_LINES / month_k - smallest)
    return {
        "points": points,
        "month_lines": MONTH_LINES,
        "benchmark_queries": SCALING_QUERIES,
        "month_extrapolation": {
            "extract_rss_gb": (extract_base + extract_slope * MONTH_LINES) / 1024,
            "extract_mb_per_million_lines": extract_slope * 1e6,
            "pairs_unpartitioned_rss_gb": (base + whole_slope * MONTH_LINES) / 1024,
            "pairs_global_mb_per_million_lines": g * 1e6,
            "pairs_partition_mb_per_million_lines": q * 1e6,
            "month_partitions": month_k,
            "pairs_rss_gb": pairs_month / 1024,
        },
    }


def _fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares line through (xs, ys): (slope, intercept)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0
    return slope, my - slope * mx

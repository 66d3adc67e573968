"""Reruns: identical bytes, and a build killed mid-way completes with the same result."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from corpusforge.options import TwitterConfig
from corpusforge.release.twitter_build import build
from corpusforge.sources.twitter.benchmarks import BenchmarkConfig
from corpusforge.sources.twitter.synth import write_synthetic_archive

BENCH = BenchmarkConfig(queries=5)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("in") / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(path, tweets=8_000, layout="zip-2020", seed=5)
    return str(path)


@pytest.fixture(scope="module")
def reference(archive: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("ref") / "release"
    return build(TwitterConfig(inputs=(archive,), out=str(out), benchmarks=BENCH))


def _parquet_bytes(release: Path) -> dict[str, bytes]:
    return {str(p.relative_to(release)): p.read_bytes() for p in sorted(release.rglob("*.parquet"))}


def test_same_build_twice_gives_identical_bytes(
    archive: str, reference: dict, tmp_path: Path
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    first = build(TwitterConfig(inputs=(archive,), out=str(a), benchmarks=BENCH))
    second = build(TwitterConfig(inputs=(archive,), out=str(b), benchmarks=BENCH))
    assert _parquet_bytes(a) == _parquet_bytes(b)
    assert first["files"] == second["files"] == reference["files"]


def _kill_when(
    out: Path, archive: str, ready: Callable[[Path], bool], engine: str = "auto"
) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pipelines.twitter_pairs",
            "--input",
            archive,
            "--out",
            str(out),
            "--benchmark_queries",
            str(BENCH.queries),
            "--pair_engine",
            engine,
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])},
    )
    deadline = time.monotonic() + 240
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if ready(out):
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the build ended before it could be killed"


def _during_extract(out: Path) -> bool:
    return any((out / "tweets").glob("*/tweets/*.parquet*")) and not any(
        (out / "tweets").glob("*/_SUCCESS")
    )


def _during_pairs(out: Path) -> bool:
    return (out / "_staging").exists()


@pytest.mark.parametrize(
    ("moment", "engine"),
    [(_during_extract, "auto"), (_during_pairs, "local"), (_during_pairs, "beam")],
    ids=["extract", "pairs-local", "pairs-beam"],
)
def test_killed_build_runs_again_to_the_same_result(
    archive: str, reference: dict, tmp_path: Path, moment: Callable[[Path], bool], engine: str
) -> None:
    out = tmp_path / "release"
    _kill_when(out, archive, moment, engine)
    assert not (out / "manifest.json").exists()
    again = build(TwitterConfig(inputs=(archive,), out=str(out), benchmarks=BENCH))
    assert again["files"] == reference["files"]
    leftovers = [p for p in out.rglob("*") if p.name.endswith(".tmp") or p.name == "_staging"]
    assert leftovers == []
    listed = {f["path"] for f in again["files"]}
    assert {str(p.relative_to(out)) for p in out.rglob("*.parquet")} == listed

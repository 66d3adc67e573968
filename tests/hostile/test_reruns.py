"""Reruns: identical bytes, and a build killed mid-way completes with the same result."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from corpusforge.builds.twitter import build
from corpusforge.config.twitter import TwitterConfig
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.synth.twitter import write_synthetic_archive

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


@pytest.mark.slow  # a second build; the release hashes check the bytes in the default run
def test_same_build_twice_gives_identical_bytes(
    archive: str, reference: dict, tmp_path: Path
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    first = build(TwitterConfig(inputs=(archive,), out=str(a), benchmarks=BENCH))
    second = build(TwitterConfig(inputs=(archive,), out=str(b), benchmarks=BENCH))
    assert _parquet_bytes(a) == _parquet_bytes(b)
    assert first["files"] == second["files"] == reference["files"]


def _kill_after_first_shard(out: Path, archive: str, folder_part: str, engine: str) -> None:
    """Run the build in a child that SIGKILLs itself once its first Parquet file under a
    path containing ``folder_part`` has landed (``killed_build.py``)."""
    proc = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("killed_build.py")),
            folder_part,
            "--",
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
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])},
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]


def _draft(out: Path) -> Path:
    return out.with_name(f".{out.name}.draft")


def _killed_in_extract(out: Path) -> bool:
    draft = _draft(out)
    return any((draft / "tweets").glob("*/tweets/*.parquet")) and not any(
        (draft / "tweets").glob("*/_SUCCESS")
    )


def _killed_in_pairs(out: Path) -> bool:
    draft = _draft(out)
    return any((draft / "_staging").rglob("*.parquet")) and any(
        (draft / "tweets").glob("*/_SUCCESS")
    )


@pytest.mark.parametrize(
    ("folder_part", "killed_as_planned", "engine"),
    [
        pytest.param("/tweets/", _killed_in_extract, "auto", id="extract", marks=pytest.mark.slow),
        pytest.param(
            "/_staging/", _killed_in_pairs, "local", id="pairs-local", marks=pytest.mark.slow
        ),
        pytest.param(
            "/_staging/", _killed_in_pairs, "beam", id="pairs-beam", marks=pytest.mark.slow
        ),
    ],
)
def test_killed_build_runs_again_to_the_same_result(
    archive: str,
    reference: dict,
    tmp_path: Path,
    folder_part: str,
    killed_as_planned: Callable[[Path], bool],
    engine: str,
) -> None:
    out = tmp_path / "release"
    _kill_after_first_shard(out, archive, folder_part, engine)
    assert killed_as_planned(out)
    assert not out.exists()  # nothing is published until the build ends
    again = build(TwitterConfig(inputs=(archive,), out=str(out), benchmarks=BENCH))
    assert again["files"] == reference["files"]
    leftovers = [p for p in out.rglob("*") if p.name.endswith(".tmp") or p.name == "_staging"]
    assert leftovers == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]  # no draft, lock or old
    listed = {f["path"] for f in again["files"]}
    assert {str(p.relative_to(out)) for p in out.rglob("*.parquet")} == listed

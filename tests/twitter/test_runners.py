"""The same rows whatever the runner, worker count or input order."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from corpusforge.builds.twitter import build
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.synth.twitter import write_synthetic_archive

# Builds on every runner; the local engine and Beam agree in the default run
# (tests/twitter/test_local_pairs.py, test_local_extract.py).
pytestmark = pytest.mark.slow

BENCH = BenchmarkConfig(queries=3)


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("archives")
    paths = []
    for seed, name in ((1, "twitter-stream-2021-01-01.zip"), (2, "twitter-stream-2021-01-02.zip")):
        write_synthetic_archive(folder / name, tweets=4000, layout="zip-2020", seed=seed)
        paths.append(str(folder / name))
    return paths


RELEASES: dict[int, Path] = {}
"""Release folder by id of its manifest (a manifest records no path)."""


@pytest.fixture(scope="module")
def reference(archives: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("reference") / "release"
    manifest = build(TwitterConfig(inputs=tuple(archives), out=str(out), benchmarks=BENCH))
    RELEASES[id(manifest)] = out
    return manifest


def _fingerprint(manifest: dict[str, Any]) -> dict[str, Any]:
    fingerprint = {f["path"]: f["sha256"] for f in manifest["files"]}
    for part in ("counts", "datasets", "benchmarks"):
        fingerprint.update({f"{part}.{k}": v for k, v in manifest[part].items()})
    return fingerprint


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def test_reference_release_has_every_output(reference: dict[str, Any]) -> None:
    assert reference["accounting"]["balanced"]
    assert all(reference["datasets"][d]["rows"] > 0 for d in ("qt", "rp", "coqt", "corp"))
    assert all(b["rows"] > 0 for b in reference["benchmarks"].values())


def test_input_order_does_not_matter(
    archives: list[str], reference: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "release"
    again = build(TwitterConfig(inputs=tuple(reversed(archives)), out=str(out), benchmarks=BENCH))
    assert _differences(_fingerprint(again), _fingerprint(reference)) == []


def test_two_worker_processes_give_the_same_rows(
    archives: list[str], reference: dict[str, Any], tmp_path: Path
) -> None:
    args = ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]
    two = build(
        TwitterConfig(inputs=tuple(archives), out=str(tmp_path / "r"), benchmarks=BENCH),
        Runner.parse(args),
    )
    assert _differences(_fingerprint(two), _fingerprint(reference)) == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def test_portable_job_api_path_gives_the_same_rows(
    archives: list[str], reference: dict[str, Any], tmp_path: Path
) -> None:
    """Through a local Job API service: the submission path a Flink job server uses."""
    port = _free_port()
    service = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "apache_beam.runners.portability.local_job_service_main",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("localhost", port)) == 0:
                    break
            time.sleep(0.2)
        args = [
            "--runner=PortableRunner",
            f"--job_endpoint=localhost:{port}",
            "--environment_type=LOOPBACK",
        ]
        portable = build(
            TwitterConfig(inputs=tuple(archives), out=str(tmp_path / "r"), benchmarks=BENCH),
            Runner.parse(args),
        )
    finally:
        service.terminate()
        service.wait(timeout=30)
    assert portable["runner"] == "PortableRunner"
    assert _differences(_fingerprint(portable), _fingerprint(reference)) == []


def _release_dir(manifest: dict[str, Any]) -> Path:
    return RELEASES[id(manifest)]


def test_benchmark_tweets_are_held_out_of_training_by_id_and_text(
    reference: dict[str, Any],
) -> None:
    import polars as pl

    out = _release_dir(reference)
    bench = pl.read_parquet(out / "benchmarks" / "*.parquet")
    held_ids = set(bench["query_id"]) | set(bench["root_id"])
    held_ids |= set(bench["candidate_ids"].explode())
    held_texts = set(bench["query"]) | set(bench["candidates"].explode())
    pairs = pl.read_parquet(out / "pairs" / "all")
    assert bench.height > 0 and pairs.height > 0
    # no benchmark tweet (query, candidate or query root) is a side of a training pair; a
    # co-pair of a query root's other children may still name that root in root_id
    assert not held_ids & (set(pairs["anchor_id"]) | set(pairs["positive_id"]))
    assert not held_texts & (set(pairs["anchor"]) | set(pairs["positive"]))


def test_decontaminate_drops_training_texts_found_in_an_evaluation_set(
    archives: list[str], reference: dict[str, Any], tmp_path: Path
) -> None:
    import polars as pl

    pairs = pl.read_parquet(_release_dir(reference) / "pairs" / "all").sort("anchor_id")
    leaked = pairs["positive"].head(5).to_list()
    evaluation = tmp_path / "my-eval-set.txt"
    evaluation.write_text("\n".join(text.upper() for text in leaked) + "\n", encoding="utf-8")
    m = build(
        TwitterConfig(
            inputs=tuple(archives),
            out=str(tmp_path / "r"),
            benchmarks=BENCH,
            decontaminate=(str(evaluation),),
        )
    )
    assert m["counts"]["decontaminated"]["my-eval-set.txt"] >= len(set(leaked))
    assert m["accounting"]["balanced"]
    clean = pl.read_parquet(tmp_path / "r" / "pairs" / "all")
    assert not set(leaked) & (set(clean["anchor"]) | set(clean["positive"]))

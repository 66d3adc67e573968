"""The reference scores of a local Twitter build, scored on a worker beside the pair choice."""

from __future__ import annotations

import dataclasses
import os
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from corpusforge.builds import twitter as twitter_build
from corpusforge.config.twitter import TwitterConfig
from corpusforge.jobs import WorkerDied
from corpusforge.local.pairs import main_bytes, spare_bytes
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.synth.twitter import write_synthetic_archive

SCORED_IN = "scored-in"
"""The file beside the release where :func:`_scored_here_or_there` writes its process id."""
REAL = twitter_build._tfidf_scores


def _scored_here_or_there(folder: str) -> dict[str, Any]:
    """:func:`~corpusforge.builds.twitter._tfidf_scores`, writing the process id that ran it
    (a module-level function: the worker gets it by name)."""
    with open(os.path.join(os.environ["SCORES_NOTE"], SCORED_IN), "a") as note:
        note.write(f"{os.getpid()}\n")
    return REAL(folder)


def _dies_there(folder: str) -> dict[str, Any]:
    """Dies as the kernel's OOM killer would, but in the process that started the build."""
    if os.getpid() != int(os.environ["SCORES_PARENT"]):
        os._exit(9)
    return REAL(folder)


def _config(tmp_path: Path) -> TwitterConfig:
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=3000, layout="zip-2020", seed=6)
    return TwitterConfig(  # 8 GiB: room for the reference worker whatever this machine's memory
        inputs=(str(archive),),
        out=str(tmp_path / "release"),
        benchmarks=BenchmarkConfig(3),
        memory_limit=8192,
    )


def test_scores_from_the_worker_are_those_of_the_published_benchmarks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORES_NOTE", str(tmp_path))
    monkeypatch.setattr(twitter_build, "_tfidf_scores", _scored_here_or_there)
    config = _config(tmp_path)
    manifest = twitter_build.build(config)
    scored_in = (tmp_path / SCORED_IN).read_text().split()
    assert len(scored_in) == 1 and int(scored_in[0]) != os.getpid()
    assert all(b["rows"] for b in manifest["benchmarks"].values())
    assert manifest["reference_scores"] == REAL(str(tmp_path / "release" / "benchmarks"))
    assert manifest["reference_scores"]["average"]["benchmarks"]  # something was scored


def test_a_benchmark_without_a_file_is_scored_once_published(tmp_path: Path) -> None:
    """A benchmark with no row has no file until the release gets its empty one, which
    scores ``empty``, not ``missing``: no worker then, the scores come after publishing."""
    config = _config(tmp_path)
    folder = tmp_path / "staged"
    folder.mkdir()
    for bench in ("dq", "dr", "cq"):  # no cr
        (folder / f"{bench}.parquet").write_bytes(b"")
    with ExitStack() as background:
        scores = twitter_build._ReferenceScores(config, background)
        scores.start(str(folder))
        assert scores.result() is None
        (folder / "cr.parquet").write_bytes(b"")
        scores.start(str(folder))
        assert scores.result() is not None


def test_a_reference_worker_that_dies_fails_the_build_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORES_PARENT", str(os.getpid()))
    monkeypatch.setattr(twitter_build, "_tfidf_scores", _dies_there)
    config = _config(tmp_path)
    with pytest.raises(WorkerDied) as died:
        twitter_build.build(config)
    assert str(died.value).startswith(twitter_build.REFERENCE_WORKER)
    assert not (tmp_path / "release" / "manifest.json").exists()


def test_no_reference_worker_where_the_memory_budget_has_no_room_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 1 GiB this process's memory with the benchmark choice leaves no margin for a copy of
    it: the scores are computed here, after publishing, and are the same."""
    monkeypatch.setenv("SCORES_NOTE", str(tmp_path))
    monkeypatch.setattr(twitter_build, "_tfidf_scores", _scored_here_or_there)
    config = dataclasses.replace(_config(tmp_path), memory_limit=1024)
    manifest = twitter_build.build(config)
    assert (tmp_path / SCORED_IN).read_text().split() == [str(os.getpid())]
    assert manifest["reference_scores"] == REAL(str(tmp_path / "release" / "benchmarks"))
    assert spare_bytes(2**30, 3) < main_bytes(3) <= spare_bytes(8 * 2**30, 5000)

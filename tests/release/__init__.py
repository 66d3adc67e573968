"""Tests of the release tools (validate, stats, card), progress, and their commands.

Releases are built once per test session and shared by the modules' fixtures (the cache is
keyed by the session's temporary folder); a test that changes a release copies it first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SYNTHETIC_TWEETS = 3000
SYNTHETIC_QUERIES = 20
REAL_ARCHIVE = Path("twitter-archive-2021-01-01") / "twitter-stream-2021-01-01.zip"

_built: dict[tuple[str, str], Path] = {}


def synthetic_release(factory: pytest.TempPathFactory) -> Path:
    """A release of a 3,000-tweet synthetic archive, with small non-empty benchmarks."""
    key = (str(factory.getbasetemp()), "synthetic")
    if key not in _built:
        from corpusforge.builds.twitter import build
        from corpusforge.config.twitter import TwitterConfig
        from corpusforge.pairing.benchmarks import BenchmarkConfig
        from corpusforge.synth.twitter import write_synthetic_archive

        root = factory.mktemp("synthetic")
        archive = root / "twitter-stream-2021-01-01.zip"
        write_synthetic_archive(archive, tweets=SYNTHETIC_TWEETS, layout="zip-2020", seed=0)
        config = TwitterConfig(
            inputs=(str(archive),),
            out=str(root / "release"),
            benchmarks=BenchmarkConfig(queries=SYNTHETIC_QUERIES),
        )
        build(config)
        _built[key] = root / "release"
    return _built[key]


def real_release(factory: pytest.TempPathFactory, realdata: Path) -> Path:
    """A release of the real Archive Team sample (its benchmarks are empty: too few roots)."""
    key = (str(factory.getbasetemp()), "real")
    if key not in _built:
        from corpusforge.builds.twitter import build
        from corpusforge.config.twitter import TwitterConfig

        root = factory.mktemp("real")
        build(TwitterConfig(inputs=(str(realdata / REAL_ARCHIVE),), out=str(root / "release")))
        _built[key] = root / "release"
    return _built[key]


def copy_release(release: Path, into: Path) -> Path:
    """A copy of ``release`` under ``into``, safe to break."""
    target = into / "release"
    shutil.copytree(release, target)
    return target

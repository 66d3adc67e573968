"""``release_stats``: counts, lengths and languages agree with the files; the funnel with the
manifest."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from corpusforge.inspect.stats import HISTOGRAM_BINS, funnel, read_manifest, release_stats
from tests.release import real_release, synthetic_release


@pytest.fixture(scope="module")
def real(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return real_release(tmp_path_factory, realdata)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_release(tmp_path_factory)


def test_dataset_rows_and_languages_match_the_manifest(real: Path) -> None:
    manifest = read_manifest(real)
    stats = release_stats(real)
    assert list(stats["datasets"]) == ["coqt", "corp", "qt", "rp", "all"]
    for name, ds in manifest["datasets"].items():
        assert stats["datasets"][name]["rows"] == ds["rows"]
        assert sum(stats["datasets"][name]["languages"].values()) == ds["rows"]
    assert stats["datasets"]["all"]["languages"] == {"en": manifest["datasets"]["all"]["rows"]}
    json.dumps(stats)  # one JSON document


def test_lengths_agree_with_a_direct_computation(real: Path) -> None:
    stats = release_stats(real)["datasets"]["qt"]["lengths"]
    qt = pl.read_parquet(real / "pairs" / "qt")
    chars = sorted(len(s) for s in qt["anchor"])
    tokens = sorted(len(s.split()) for s in qt["positive"])
    assert stats["anchor"]["chars"]["min"] == chars[0] >= 20  # the 20-character rule
    assert stats["anchor"]["chars"]["max"] == chars[-1]
    assert stats["anchor"]["chars"]["mean"] == round(sum(chars) / len(chars), 2)
    assert stats["positive"]["tokens"]["max"] == tokens[-1]
    assert stats["positive"]["tokens"]["p50"] == tokens[round(0.5 * (len(tokens) - 1))]
    for side in ("anchor", "positive"):
        for unit in ("chars", "tokens"):
            d = stats[side][unit]
            assert d["min"] <= d["p5"] <= d["p50"] <= d["p95"] <= d["max"]


def test_histograms_count_every_text(real: Path) -> None:
    qt = release_stats(real, histograms=True)["datasets"]["qt"]
    hist = qt["histograms"]
    assert len(hist["edges"]) == HISTOGRAM_BINS + 1
    assert sum(hist["anchor"]) == sum(hist["positive"]) == qt["rows"]
    assert hist["edges"][-1] > qt["lengths"]["anchor"]["chars"]["max"]


def test_the_funnel_runs_from_lines_read_to_pairs(real: Path) -> None:
    manifest = read_manifest(real)
    f = funnel(manifest)
    stages = {s["stage"]: s for s in f["stages"]}
    assert f["stages"][0]["stage"] == "lines_read"
    assert stages["lines_read"]["count"] == manifest["counts"]["lines_read"] == 6210
    assert stages["tweets"]["removed"]["delete_notices"] == 832
    eligible = stages["tweets_eligible"]
    assert (
        eligible["count"] + sum(eligible["removed"].values())
        == (stages["tweets_distinct"]["count"])
    )
    assert f["stages"][-1] == {
        "stage": "pairs",
        "label": "training pairs, all datasets",
        "count": manifest["datasets"]["all"]["rows"],
        "removed": {},
    }
    for name, d in f["datasets"].items():
        assert d["dropped"] == manifest["datasets"][name]["dropped"]
        assert list(d["dropped"].values()) == sorted(d["dropped"].values(), reverse=True)


def test_benchmark_stats(synthetic: Path) -> None:
    manifest = read_manifest(synthetic)
    stats = release_stats(synthetic)["benchmarks"]
    negatives = manifest["config"]["benchmarks"]["negatives"]
    positives = manifest["config"]["benchmarks"]["positives"]
    for name, b in manifest["benchmarks"].items():
        assert stats[name]["rows"] == b["rows"]
        if b["rows"]:
            assert stats[name]["candidates"]["max"] == positives + negatives


def test_a_generic_manifest_gets_a_generic_funnel() -> None:
    manifest = {
        "kind": "bitext-pairs",
        "counts": {
            "lines_read": 10,
            "pairs_read": 9,
            "dead_letter": 1,
            "rows": 7,
            "dropped": {"pair_too_short": 2},
        },
        "datasets": {"tatoeba": {"rows": 7, "candidates": 9, "dropped": {"pair_too_short": 2}}},
    }
    f = funnel(manifest)
    assert [(s["stage"], s["count"], s["removed"]) for s in f["stages"]] == [
        ("lines_read", 10, {}),
        ("pairs_read", 9, {"dead_letter": 1}),
        ("rows", 7, {"pair_too_short": 2}),
    ]
    assert f["datasets"]["tatoeba"]["rows"] == 7

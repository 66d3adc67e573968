"""A release directory -> what is in it: pairs per dataset, text lengths, languages, funnel.

    corpusforge stats release/            # tables
    corpusforge stats release/ --json     # one JSON document

Pair files are read with polars lazy scans, one pass per dataset, only the columns needed;
the funnel (from lines read to pairs kept, by drop reason) comes from ``manifest.json``.
Lengths are in characters and in whitespace-separated tokens, with min, p5, p50, p95, max
and mean (percentiles are the nearest actual value, so they are integers). The scores a
bitext or ParaNMT pair carries (:data:`SCORES`: length ratio, each side's language-id
probability, the paraphrase score and trigram overlap) get the same distribution, to four
decimals, under ``scores``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

QUANTILES = {"p5": 0.05, "p50": 0.5, "p95": 0.95}
SIDES = ("anchor", "positive")
SCORES = ("length_ratio", "anchor_lid_prob", "positive_lid_prob", "score", "trigram_overlap")
"""The filter values a bitext or ParaNMT release's pairs carry (``bitext.v2``,
``paraphrase.v2``), whose distributions help tune the thresholds."""
HISTOGRAM_BINS = 40


def read_manifest(release_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """``release_dir/manifest.json``, parsed.

    Raises:
        FileNotFoundError: the release has no manifest.
    """
    doc: dict[str, Any] = json.loads(
        (Path(release_dir) / "manifest.json").read_text(encoding="utf-8")
    )
    return doc


def release_stats(
    release_dir: str | os.PathLike[str], *, histograms: bool = False
) -> dict[str, Any]:
    """Counts, length distributions, language mix and funnel of a release.

    Args:
        release_dir: the release directory.
        histograms: also give, per dataset and side, the character-length histogram
            (``HISTOGRAM_BINS`` equal bins from 0 to the longest text).

    Returns:
        ``{"kind", "datasets": {name: {"rows", "lengths", "languages"[, "histograms"]}},
        "benchmarks": {name: {"rows", "candidates", "lengths"}}, "funnel"}``.
    """
    root = Path(release_dir)
    manifest = read_manifest(root)
    datasets = {
        name: dataset_stats([root / p for p in ds.get("files", [])], histograms=histograms)
        for name, ds in ordered(manifest["datasets"]).items()
    }
    benchmarks = {
        name: benchmark_stats(root / b.get("file", f"benchmarks/{name}.parquet"))
        for name, b in (manifest.get("benchmarks") or {}).items()
    }
    return {
        "kind": manifest["kind"],
        "datasets": datasets,
        "benchmarks": benchmarks,
        "funnel": funnel(manifest),
    }


def ordered(datasets: Mapping[str, Any]) -> dict[str, Any]:
    """Datasets by name, with the ``all`` mix last."""
    return dict(sorted(datasets.items(), key=lambda kv: (kv[0] == "all", kv[0])))


def _distribution(expr: pl.Expr, prefix: str) -> list[pl.Expr]:
    exprs = [expr.min().alias(f"{prefix}.min"), expr.max().alias(f"{prefix}.max")]
    exprs += [
        expr.quantile(q, interpolation="nearest").alias(f"{prefix}.{name}")
        for name, q in QUANTILES.items()
    ]
    exprs.append(expr.mean().alias(f"{prefix}.mean"))
    return exprs


def _lengths(row: Mapping[str, Any], prefix: str) -> dict[str, float | int | None]:
    """``{min, p5, p50, p95, max, mean}`` from the aggregated row (``None`` when empty)."""
    out: dict[str, float | int | None] = {}
    for key in ("min", *QUANTILES, "max"):
        value = row[f"{prefix}.{key}"]
        out[key] = None if value is None else int(value)
    mean = row[f"{prefix}.mean"]
    out["mean"] = None if mean is None else round(float(mean), 2)
    return out


def _values(row: Mapping[str, Any], prefix: str) -> dict[str, float | None]:
    """``{min, p5, p50, p95, max, mean}`` of a score, to four decimals (``None`` when empty)."""
    out: dict[str, float | None] = {}
    for key in ("min", *QUANTILES, "max", "mean"):
        value = row[f"{prefix}.{key}"]
        out[key] = None if value is None else round(float(value), 4)
    return out


def _chars(col: str) -> pl.Expr:
    return pl.col(col).str.len_chars()


def _tokens(col: str) -> pl.Expr:
    return pl.col(col).str.count_matches(r"\S+")


def dataset_stats(files: list[Path], *, histograms: bool = False) -> dict[str, Any]:
    """Rows, text lengths and languages of one dataset's pair files.

    Args:
        files: the dataset's Parquet files (schemas with ``anchor`` and ``positive``; a
            ``lang`` column, or ``anchor_lang`` and ``positive_lang``).
        histograms: also give the character-length histograms.
    """
    if not files:
        return {"rows": 0, "lengths": {}, "languages": {}}
    scan = pl.scan_parquet([str(f) for f in files])
    names = scan.collect_schema().names()
    lang = _lang_expr(names)
    scores = [name for name in SCORES if name in names]
    # lengths are computed once (token counting is a regex), then aggregated
    lengths = [_chars(side).alias(f"{side}.chars") for side in SIDES]
    lengths += [_tokens(side).alias(f"{side}.tokens") for side in SIDES]
    if lang is not None:
        lengths.append(lang.alias("lang"))
    lengths += [pl.col(name) for name in scores]
    frame = scan.select(lengths)
    aggs: list[pl.Expr] = [pl.len().alias("rows")]
    for side in SIDES:
        for unit in ("chars", "tokens"):
            aggs += _distribution(pl.col(f"{side}.{unit}"), f"{side}.{unit}")
    for name in scores:
        aggs += _distribution(pl.col(name), name)
    queries = [frame.select(aggs)]
    if lang is not None:
        queries.append(frame.group_by("lang").agg(pl.len().alias("n")))
    frames = pl.collect_all(queries)
    row = frames[0].row(0, named=True)
    stats: dict[str, Any] = {
        "rows": int(row["rows"]),
        "lengths": {
            side: {unit: _lengths(row, f"{side}.{unit}") for unit in ("chars", "tokens")}
            for side in SIDES
        },
        "languages": {},
    }
    if scores:
        stats["scores"] = {name: _values(row, name) for name in scores}
    if lang is not None:
        mix = frames[1].sort(["n", "lang"], descending=[True, False], nulls_last=True)
        stats["languages"] = {str(k): int(n) for k, n in mix.iter_rows()}
    if histograms:
        stats["histograms"] = _histograms(scan, row)
    return stats


def _lang_expr(names: list[str]) -> pl.Expr | None:
    if "lang" in names:
        return pl.col("lang")
    if "anchor_lang" in names and "positive_lang" in names:
        return pl.concat_str(["anchor_lang", pl.lit("-"), "positive_lang"])
    return None


def _histograms(scan: pl.LazyFrame, row: Mapping[str, Any]) -> dict[str, Any]:
    """Character-length histograms of both sides, on shared equal-width bins."""
    longest = max(int(row[f"{side}.chars.max"] or 0) for side in SIDES)
    width = max(1, math.ceil((longest + 1) / HISTOGRAM_BINS))
    edges = [i * width for i in range(HISTOGRAM_BINS + 1)]
    queries = [
        scan.select((_chars(side) // width).alias("bin")).group_by("bin").agg(pl.len().alias("n"))
        for side in SIDES
    ]
    out: dict[str, Any] = {"edges": edges}
    for side, frame in zip(SIDES, pl.collect_all(queries), strict=True):
        counts = [0] * HISTOGRAM_BINS
        for b, n in frame.iter_rows():
            if b is not None:
                counts[min(int(b), HISTOGRAM_BINS - 1)] += int(n)
        out[side] = counts
    return out


def benchmark_stats(path: Path) -> dict[str, Any]:
    """Queries, candidates per query and query lengths of one benchmark file."""
    if not path.exists():
        return {"rows": 0, "candidates": {}, "lengths": {}}
    scan = pl.scan_parquet(str(path))
    n_candidates = pl.col("candidates").list.len()
    aggs = [pl.len().alias("rows")]
    aggs += _distribution(n_candidates, "candidates")
    aggs += _distribution(_chars("query"), "query.chars")
    aggs += _distribution(_tokens("query"), "query.tokens")
    row = scan.select(aggs).collect().row(0, named=True)
    return {
        "rows": int(row["rows"]),
        "candidates": _lengths(row, "candidates"),
        "lengths": {"query": {u: _lengths(row, f"query.{u}") for u in ("chars", "tokens")}},
    }


# ---------------------------------------------------------------------------------------
# The funnel

# (count key, label, what the step removes: count keys or "dropped:tweet" for tweet drops)
_TWITTER_FUNNEL: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("lines_read", "stream lines read", ()),
    ("tweets", "tweet lines", ("delete_notices", "other_messages", "dead_letter_lines")),
    ("records", "tweet records, with embedded statuses", ()),
    ("records_in", "records in the archive extracts", ()),
    ("records_in_lang", "records in a selected language", ("records_lang_not_selected",)),
    ("records_in_conversations", "records in a conversation", ("records_outside_conversations",)),
    ("tweets_distinct", "distinct tweets, merged across archives", ()),
    ("tweets_eligible", "tweets eligible for a pair", ("dropped:tweet",)),
)
_GENERIC_FUNNEL: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("lines_read", "lines read", ()),
    ("pairs_read", "pairs read", ("dead_letter_lines", "skipped:all")),
    ("rows", "pairs kept", ("dropped:all",)),
)


def funnel(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """From lines read to pairs kept, from the manifest's counts.

    Args:
        manifest: a release manifest.

    Returns:
        ``{"stages": [{"stage", "label", "count", "removed": {reason: n}}],
        "datasets": {name: {"candidates", "rows", "dropped": {reason: n}}}}``. A stage's
        ``removed`` holds what the step into it took away, by reason; steps that add
        (embedded statuses) or merge (one record per tweet id) remove nothing. Stages whose
        count the manifest lacks are left out.
    """
    counts = dict(manifest["counts"])
    if "records_in" in counts and "records_lang_not_selected" in counts:
        counts["records_in_lang"] = counts["records_in"] - counts["records_lang_not_selected"]
    dropped: Mapping[str, int] = counts.get("dropped", {})
    plan = _TWITTER_FUNNEL if manifest["kind"] == "twitter-pairs" else _GENERIC_FUNNEL
    stages = []
    for key, label, removes in plan:
        if key not in counts:
            continue
        removed: dict[str, int] = {}
        for what in removes:
            if what == "dropped:tweet":
                removed.update({k: v for k, v in dropped.items() if "." not in k})
            elif what == "dropped:all":
                removed.update(dropped)
            elif what == "skipped:all":
                removed.update({f"skipped {k}": v for k, v in counts.get("skipped", {}).items()})
            elif what == "dead_letter_lines" and what not in counts:  # an older manifest
                removed["dead_letter"] = int(counts.get("dead_letter", 0))
            elif what in counts:
                removed[what] = int(counts[what])
        stages.append({"stage": key, "label": label, "count": int(counts[key]), "removed": removed})
    datasets = {
        name: {
            "candidates": int(ds["candidates"]),
            "rows": int(ds["rows"]),
            "dropped": dict(sorted(ds.get("dropped", {}).items(), key=lambda kv: -kv[1])),
        }
        for name, ds in ordered(manifest["datasets"]).items()
        if "candidates" in ds
    }
    if "all" in manifest["datasets"]:
        stages.append(
            {
                "stage": "pairs",
                "label": "training pairs, all datasets",
                "count": int(manifest["datasets"]["all"]["rows"]),
                "removed": {},
            }
        )
    return {"stages": stages, "datasets": datasets}

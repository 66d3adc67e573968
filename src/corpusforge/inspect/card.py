"""A release directory -> its dataset card: ``README.md`` and the plots in ``card/``.

    corpusforge card release/

The card says what the data is and how it was built (configuration, inputs with their
sha256, software versions), its counts and funnel (from ``manifest.json``), text lengths and
languages (from the pair files, see :mod:`corpusforge.inspect.stats`), a few sample pairs per
dataset, the licence and ethics notes, and how to load it with ``datasets``, polars and
sentence-transformers. The card starts with the Hugging Face dataset-card YAML header, so
the release folder can be pushed to the Hub as it is.

The card is a function of the release: two runs write the same bytes. Samples are the pairs
with the smallest hash of their tweet ids; plots are SVG charts with fixed ids
(:mod:`corpusforge.inspect.card_plots`).

Three modules: this one writes the card (``write_card``) and picks its sample pairs;
:mod:`corpusforge.inspect.card_plots` draws the plots and
:mod:`corpusforge.inspect.card_markdown` writes the Markdown (``render_card``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from corpusforge.inspect.card_markdown import render_card
from corpusforge.inspect.card_plots import children_svg, funnel_svg, lengths_svg, scores_svg
from corpusforge.inspect.stats import ordered, read_manifest, release_stats
from corpusforge.inspect.unreadable import unreadable_inputs

CARD = "README.md"
PLOTS = "card"
SAMPLES_PER_DATASET = 3


def write_card(release_dir: str, name: str | None = None) -> Path:
    """Write ``release_dir/README.md`` and ``release_dir/card/*.svg`` (the folder's other files
    go: they were an older card's).

    Args:
        release_dir: a local release directory with its ``manifest.json``.
        name: the release's name in the card (default: the folder's name).

    Returns:
        The path of the card.
    """
    root = Path(release_dir)
    manifest = read_manifest(root)
    stats = release_stats(root, histograms=True)
    samples = {
        name: sample_pairs([root / p for p in ds.get("files", [])], SAMPLES_PER_DATASET)
        for name, ds in ordered(manifest["datasets"]).items()
        if name != "all"
    }
    svgs = {"funnel.svg": funnel_svg(stats["funnel"])}
    if stats["funnel"]["datasets"]:
        svgs["children.svg"] = children_svg(stats["funnel"])
    for ds_name, ds in stats["datasets"].items():
        if ds.get("histograms"):
            svgs[f"lengths-{ds_name}.svg"] = lengths_svg(ds_name, ds)
        if ds.get("scores"):
            svgs[f"scores-{ds_name}.svg"] = scores_svg(ds_name, ds)
    plots = _save_plots(root / PLOTS, svgs)
    unreadable = unreadable_inputs(root, manifest)
    text = render_card(
        manifest, stats, samples, plots, name=name or root.resolve().name, unreadable=unreadable
    )
    path = root / CARD
    _write_atomically(path, text.encode("utf-8"))
    return path


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _save_plots(folder: Path, svgs: dict[str, bytes]) -> dict[str, str]:
    """Write the plots into ``folder`` and remove its other files (an older card's plots);
    the card-relative path of each plot, by name without ``.svg``."""
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        if old.name not in svgs and old.is_file():
            old.unlink()
    for name, data in svgs.items():
        _write_atomically(folder / name, data)
    return {name.removesuffix(".svg"): f"{PLOTS}/{name}" for name in svgs}


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on uint64: a stable, well-spread hash of integers."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _sample_keys(batch: pa.RecordBatch) -> np.ndarray:
    names = batch.schema.names
    if "anchor_id" in names and "positive_id" in names:
        a = batch.column("anchor_id").to_numpy(zero_copy_only=False).astype(np.uint64)
        p = batch.column("positive_id").to_numpy(zero_copy_only=False).astype(np.uint64)
        return _mix64(a ^ _mix64(p))
    frame = pl.DataFrame(pa.Table.from_batches([batch.select(["anchor", "positive"])]))
    return frame.hash_rows(seed=0).to_numpy()


def sample_pairs(files: Sequence[Path], k: int) -> list[dict[str, Any]]:
    """The ``k`` pairs of ``files`` with the smallest hash of their ids (or texts).

    Streams the files; the choice depends only on the rows, not on their order or sharding.

    Args:
        files: Parquet files with ``anchor`` and ``positive`` (and ``anchor_id``,
            ``positive_id`` when the schema has them).
        k: how many pairs.
    """
    best: list[tuple[int, str, str, dict[str, Any]]] = []
    for f in files:
        parquet = pq.ParquetFile(f)
        wanted = (
            "anchor",
            "positive",
            "anchor_id",
            "positive_id",
            "lang",
            "anchor_lang",
            "positive_lang",
        )
        columns = [c for c in wanted if c in parquet.schema_arrow.names]
        for batch in parquet.iter_batches(batch_size=65_536, columns=columns):
            if batch.num_rows == 0:
                continue
            keys = _sample_keys(batch)
            top = np.argsort(keys, kind="stable")[:k]
            for i, row in zip(top, batch.take(pa.array(top)).to_pylist(), strict=True):
                best.append((int(keys[i]), row["anchor"], row["positive"], row))
            best = sorted(best, key=lambda item: item[:3])[:k]
    return [row for *_, row in best]

"""Names inside a release -> paths: where pairs, dead letters, benchmarks and the manifest go.

Every build writes the same layout, and ``validate``, ``stats`` and ``card`` read it back:

- ``manifest.json``: what the release holds (:mod:`corpusforge.release.manifest`);
- ``pairs/<dataset>/[<group>/]part-*.parquet``: the training pairs (a group is a language
  pair of a bitext release);
- ``dead_letter/[<extract>/]part-*.parquet``: every record that could not be read;
- ``rejected/<dataset>/[<group>/]part-*.parquet``: with ``--keep-rejected``, every bitext or
  ParaNMT pair dropped, with its reason and the value that failed (never under ``pairs/``);
- ``heldout/<dataset>/[<group>/]part-*.parquet``: with ``--holdout N``, the N pairs of each
  dataset (and language pair) set aside for evaluation, in the pairs' schema (never in
  ``pairs/``);
- ``benchmarks/<name>.parquet``: held-out retrieval benchmarks (Twitter);
- ``tweets/<archive>-<key>/``: the per-archive extracts a Twitter build reuses;
- ``_staging/``: shards of the running build before they are moved into place.

Paths inside a release are relative to it (:func:`corpusforge.release.io.relative`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MANIFEST_NAME = "manifest.json"
PAIRS = "pairs"
DEAD_LETTERS = "dead_letter"
REJECTED = "rejected"
HELDOUT = "heldout"
BENCHMARKS = "benchmarks"
TWEETS = "tweets"
STAGING = "_staging"
CARD = "README.md"
CARD_PLOTS = "card"
NOTHING_READ = "_nothing_read.json"
"""The note a pipeline build leaves in its draft instead of a manifest when no input
yielded a pair (the driver reports it and publishes nothing)."""
UNBALANCED = "_unbalanced.json"
"""The note a pipeline build leaves in its draft instead of a manifest when its accounting
does not balance (the driver reports it and publishes nothing)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def folder_name(name: str, default: str = "unknown") -> str:
    """A name as a folder name: characters other than ``A-Za-z0-9._-`` become ``_``.

    Args:
        name: a dataset or archive name.
        default: the folder name when nothing is left.
    """
    return _UNSAFE.sub("_", name).lstrip(".") or default


def pair_folder(dataset: str, group: str = "") -> str:
    """``pairs/<dataset>[/<group>]``, relative to the release.

    Args:
        dataset: the dataset's name (made safe as a folder name).
        group: a language pair (``en-de``), or empty for a dataset without groups.
    """
    folder = f"{PAIRS}/{folder_name(dataset)}"
    return f"{folder}/{group}" if group else folder


def rejected_folder(dataset: str, group: str = "") -> str:
    """``rejected/<dataset>[/<group>]``, relative to the release: the pairs of
    :func:`pair_folder`'s dataset and group that were dropped.

    Args:
        dataset: the dataset's name (made safe as a folder name).
        group: a language pair (``en-de``), or empty for a dataset without groups.
    """
    folder = f"{REJECTED}/{folder_name(dataset)}"
    return f"{folder}/{group}" if group else folder


def heldout_folder(dataset: str, group: str = "") -> str:
    """``heldout/<dataset>[/<group>]``, relative to the release: the pairs of
    :func:`pair_folder`'s dataset and group set aside for evaluation.

    Args:
        dataset: the dataset's name (made safe as a folder name).
        group: a language pair (``en-de``), or empty for a dataset without groups.
    """
    folder = f"{HELDOUT}/{folder_name(dataset)}"
    return f"{folder}/{group}" if group else folder


def benchmark_file(name: str) -> str:
    """``benchmarks/<name>.parquet``, relative to the release."""
    return f"{BENCHMARKS}/{name}.parquet"


def rows_under(files: Iterable[Mapping[str, Any]], prefix: str) -> int:
    """Rows of the manifest ``files`` whose path starts with ``prefix``.

    Args:
        files: entries with ``path`` (relative to the release) and ``rows``.
        prefix: a folder with its trailing ``/``, or a file's path.
    """
    return sum(int(f["rows"]) for f in files if f["path"].startswith(prefix))


def files_glob(paths: Iterable[str]) -> str:
    """The narrowest glob that a Parquet reader (polars, DuckDB, ``datasets``) takes for
    ``paths``: their common folder, one ``*`` per folder below it, then ``*.parquet``
    (``pairs/tatoeba/*/*.parquet``); ``**/*.parquet`` where the files sit at different depths.

    Args:
        paths: Parquet files relative to the release (``pairs/all/part-00000-of-00001.parquet``),
            at least one.
    """
    folders = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for parts in zip(*folders, strict=False):
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    below = {len(f) - len(common) for f in folders}
    stars = ["*"] * below.pop() if len(below) == 1 else ["**"]
    return "/".join([*common, *stars, "*.parquet"])


def pair_globs(datasets: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each dataset's pair files as one glob (:func:`files_glob`), relative to the release.

    Args:
        datasets: the manifest's ``datasets``, each with its ``files`` (paths relative to the
            release).
    """
    return {
        name: files_glob(ds["files"]) if ds.get("files") else f"{pair_folder(name)}/*.parquet"
        for name, ds in datasets.items()
    }


def training_glob(datasets: Mapping[str, Mapping[str, Any]]) -> str:
    """The training pairs as one glob, relative to the release: the ``all`` dataset's where
    there is one (a Twitter release: the union of the others), else every dataset's files.

    Args:
        datasets: the manifest's ``datasets``, each with its ``files``.
    """
    if "all" in datasets:
        return pair_globs({"all": datasets["all"]})["all"]
    every = [f for ds in datasets.values() for f in ds.get("files", [])]
    return files_glob(every) if every else f"{PAIRS}/*/*.parquet"

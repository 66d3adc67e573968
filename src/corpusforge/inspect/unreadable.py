"""A release's dead-letter files -> the archives and members that could not be read at all.

Lines that fail to parse are counted in the manifest; whole archives and members that could
not be opened or decoded (Deflate64, encryption, damage, a decompression bomb cut by its
cap) are named, by the run summary and by the dataset card, so a user sees which inputs are
missing from a release without opening ``dead_letter/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from corpusforge.sources.uris import is_uri

COLUMNS = ("origin_archive", "origin_member", "reason", "detail")


def unreadable_inputs(release_dir: str | Path, manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The read-stage dead letters that stand for a whole archive or member.

    Args:
        release_dir: a local release folder.
        manifest: its manifest (the dead-letter files are those it lists).

    Returns:
        One ``{"origin_archive", "origin_member", "reason", "detail"}`` per unreadable archive
        (``origin_member`` ``None``) or member, sorted; empty when there is none or when the
        release is not on this machine.
    """
    root = Path(release_dir)
    files = [
        root / f["path"] for f in manifest.get("files", []) if f["path"].startswith("dead_letter/")
    ]
    if is_uri(str(release_dir)) or not files or not all(p.is_file() for p in files):
        return []
    rows = (
        pl.scan_parquet(files)
        .filter((pl.col("stage") == "read") & pl.col("origin_line").is_null())
        .select(COLUMNS)
        .sort(COLUMNS, nulls_last=False)
        .collect()
    )
    return rows.to_dicts()


def describe(item: Mapping[str, Any]) -> str:
    """``archive.zip: 2021/01/01/00/01.json.bz2 (read_member_encrypted)``."""
    where = item["origin_archive"] or "?"
    if item["origin_member"]:
        where += f": {item['origin_member']}"
    return f"{where} ({item['reason']})"

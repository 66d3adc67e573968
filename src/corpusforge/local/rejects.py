"""The local engine's dropped pairs -> staged ``schemas/rejected.v1`` shards (``--keep-rejected``).

The rows of the pairs the filters dropped come back from the filter workers ready-made
(:func:`corpusforge.pairing.rejects.rejected_row`); the duplicates and capped pairs that
deduplication sets aside are candidate frames, turned into the same rows here, with polars,
as :func:`corpusforge.pairing.rejects.copy_row` makes them on Beam. Every row goes to its
(dataset, group)'s folder through :class:`~corpusforge.local.shards.FrameShards`, sorted and
placed by its origin as the Beam sink does, so both engines write the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from corpusforge.local.shards import FrameShards
from corpusforge.pairing.rejects import SORT_COLUMNS
from corpusforge.schemas import REJECTED, arrow_schema

FRAME_SCHEMA: dict[str, Any] = {
    **{f.name: pl.String for f in arrow_schema(REJECTED)},
    "value": pl.Float64,
}
"""A rejected row as a polars frame: every column text but the value."""
ROWS = 10_000
"""Rejected rows of one (dataset, group) held before they go to the writer's Arrow file."""


class RejectedShards:
    """Rejected rows -> their folders' shards.

    Args:
        dest: (dataset, group) -> the staged folder of its rejected shards.
        rows_per_shard: target rows per shard.
        spill: a local folder of its own for the writer's Arrow files.
        with_part: the origin key ends with the pair's part (bitext; not ParaNMT).
    """

    def __init__(
        self, dest: Callable[[str, str], str], rows_per_shard: int, spill: str, *, with_part: bool
    ) -> None:
        self._dest = dest
        self._writer = FrameShards(REJECTED, SORT_COLUMNS, rows_per_shard, spill)
        self._with_part = with_part
        self._rows: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def add_rows(self, rows: list[tuple[str, dict[str, Any]]]) -> None:
        """Add ``(group, rejected row)`` items (their dataset is the row's)."""
        for group, row in rows:
            held = self._rows.setdefault((row["dataset"], group), [])
            held.append(row)
            if len(held) >= ROWS:
                self._flush(row["dataset"], group)

    def add_copies(self, frame: pl.DataFrame, reason: str) -> None:
        """Add candidates set aside for ``reason`` (their release rows and the engine's
        ``_dataset``, ``_group`` and origin columns)."""
        if not frame.height:
            return
        origin = [pl.col("_dataset"), pl.col("_file"), pl.col("_member"), pl.col("_line")]
        if self._with_part:
            origin.append(pl.col("_part"))
        langs = pl.col("_group").str.split_exact("-", 1)
        rows = frame.select(
            "anchor",
            "positive",
            (pl.col("anchor_lang") if "anchor_lang" in frame.columns else langs.struct[0]).alias(
                "anchor_lang"
            ),
            (
                pl.col("positive_lang") if "positive_lang" in frame.columns else langs.struct[1]
            ).alias("positive_lang"),
            pl.col("_dataset").alias("dataset"),
            pl.lit(reason, pl.String).alias("reason"),
            pl.lit(None, pl.Float64).alias("value"),
            pl.lit(None, pl.String).alias("detail"),
            pl.concat_str([c.cast(pl.String) for c in origin], separator="|").alias("origin"),
            "_group",
        )
        for (dataset, group), part in rows.partition_by(
            "dataset", "_group", as_dict=True, maintain_order=True
        ).items():
            self._writer.add(self._dest(str(dataset), str(group)), part.drop("_group"))

    def _flush(self, dataset: str, group: str) -> None:
        rows = self._rows.pop((dataset, group), [])
        if rows:
            frame = pl.DataFrame(rows, schema=FRAME_SCHEMA)
            self._writer.add(self._dest(dataset, group), frame)

    def close(self) -> list[dict[str, Any]]:
        """Write every folder's shards; a ShardInfo dict per file."""
        for dataset, group in sorted(self._rows):
            self._flush(dataset, group)
        return self._writer.close()

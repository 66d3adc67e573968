"""Candidate tables -> hash partitions of their dedup key -> deduplicated, capped, held-out rows.

Step 3 of the local bitext and ParaNMT engine (:mod:`corpusforge.local.bitext`), with
polars: candidates are spilled to Arrow files by a hash of their dedup key
(:class:`Partitions`, Arrow and NumPy only), so every copy of a pair lands in one partition;
each partition is read alone, and of the rows whose (group, dedup key) has copies, sorted by
(group, dedup key, origin), the first copy is kept. A first pass over the partitions' key
columns counts each (dataset, group)'s pairs once deduplicated, so the writer knows each
destination's rows before they come (and puts them straight into their shards); with a cap,
it also keeps each (dataset, group)'s smallest ``cap`` ranks (a 64-bit seeded hash and the
32-hex dedup key) to fix its threshold, and a second pass keeps the pairs at or under it;
with ``--holdout``, the smallest ranks before those are set aside (:func:`keep_and_write`).
Every pair dropped here is counted (``dedup_duplicate``, ``cap_over_limit``) and, with
``--keep-rejected``, kept aside.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator

import polars as pl
import pyarrow as pa

from corpusforge.local.bitext_filter import CountKey, PairJob
from corpusforge.local.rejects import RejectedShards
from corpusforge.local.shards import FrameShards
from corpusforge.local.spill import ArrowFiles, by_partition, read_arrow, text_partitions
from corpusforge.pairing.filters import FilterReason

SPILL_ROWS = 16_384
"""Candidate rows gathered before they are split among the partition files: a split costs
polars and Arrow about the same for a batch's rows as for eight."""
ORDER = ["_group", "_dedup", "_dataset", "_file", "_member", "_line", "_part"]


class Partitions:
    """Candidate tables -> one Arrow file per hash partition of their dedup key."""

    def __init__(self, folder: str, partitions: int) -> None:
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        self.partitions = partitions
        self._files: ArrowFiles[int] = ArrowFiles(self.path)
        self._held: list[pa.Table] = []
        self._held_rows = 0

    def path(self, p: int) -> str:
        return os.path.join(self.folder, f"part-{p:05d}.arrow")

    def add(self, table: pa.Table) -> None:
        """Hold ``table`` until ``SPILL_ROWS`` rows are held, then split them all (the rows
        of a partition keep their order)."""
        if not table.num_rows:
            return
        self._held.append(table)
        self._held_rows += table.num_rows
        if self._held_rows >= SPILL_ROWS:
            self._spill()

    def _spill(self) -> None:
        if not self._held:
            return
        table = pa.concat_tables(self._held)
        self._held, self._held_rows = [], 0
        if self.partitions == 1:
            self._files.write(0, table)
            return
        # Arrow and NumPy only: no copy into polars and back, no polars partition_by
        parts = text_partitions(table.column("_dedup"), self.partitions)
        for p, rows in by_partition(table, parts, self.partitions):
            self._files.write(p, rows)

    def close(self) -> None:
        self._spill()
        self._files.close()

    def frames(self, columns: list[str] | None = None) -> Iterator[pl.DataFrame]:
        """Each partition's candidates (only ``columns``, if given: mapped, so only theirs
        are read), one at a time."""
        for p in self._files.written():
            table = read_arrow(self.path(p), columns)
            frame = pl.from_arrow(table)
            assert isinstance(frame, pl.DataFrame)
            del table
            # polars copied it; Arrow's allocator would keep the freed pages otherwise
            pa.default_memory_pool().release_unused()
            yield frame


def _first_copies(
    frame: pl.DataFrame, counts: Counter[CountKey], rejected: RejectedShards | None = None
) -> pl.DataFrame:
    """The copy of each (group, dedup key) with the smallest origin; the others counted
    (and kept aside in ``rejected``, if given).

    Only the rows whose (group, dedup key) has copies are sorted (by group, dedup key and
    origin: all copies of a pair are among them); a pair without copies is its own first
    copy. Sorting a whole partition by seven columns cost the most of the local engine's
    tail; the kept rows' order does not matter after (shards and thresholds sort by unique
    keys).
    """
    key = pl.struct("_group", "_dedup")
    copies = frame.select(key.is_duplicated()).to_series()
    with_copies = frame.filter(copies).sort(ORDER)
    first = key.is_first_distinct()
    dups = with_copies.filter(~first)
    _count_drops(dups, FilterReason.DEDUP_DUPLICATE, counts)
    if rejected is not None:
        rejected.add_copies(dups, FilterReason.DEDUP_DUPLICATE)
    return pl.concat([frame.filter(~copies), with_copies.filter(first)])


def _count_drops(frame: pl.DataFrame, reason: FilterReason, counts: Counter[CountKey]) -> None:
    if not frame.height:
        return
    for dataset, group, n in frame.group_by("_dataset", "_group").len().iter_rows():
        counts[("drop", dataset, group, str(reason))] += n


def _first_pass(
    spill: Partitions, cap: int | None, holdout: int | None, counts: Counter[CountKey]
) -> tuple[pl.DataFrame | None, pl.DataFrame | None, Counter[tuple[str, str]]]:
    """The cap's thresholds (:func:`_thresholds`, of the ``cap + holdout`` smallest ranks),
    the holdout's boundaries (:func:`_boundaries`) and each (dataset, group)'s pairs once
    deduplicated, in one read of the key columns of the partitions; the duplicates are
    counted here."""
    best: pl.DataFrame | None = None
    held: pl.DataFrame | None = None
    firsts: Counter[tuple[str, str]] = Counter()
    limit = None if cap is None else cap + (holdout or 0)
    for frame in spill.frames(columns=[*ORDER, "_rank"]):
        kept = _first_copies(frame, counts).select("_dataset", "_group", "_rank", "_dedup")
        for dataset, group, n in kept.group_by("_dataset", "_group").len().iter_rows():
            firsts[(dataset, group)] += n
        if limit is not None:
            best = _smallest(kept.drop("_dedup"), best, limit, ["_rank"])
        if holdout is not None:
            held = _smallest(kept, held, holdout, ["_rank", "_dedup"])
    thresholds = None if limit is None else _thresholds(best)
    return thresholds, None if holdout is None else _boundaries(held), firsts


def _smallest(kept: pl.DataFrame, best: pl.DataFrame | None, n: int, by: list[str]) -> pl.DataFrame:
    """Of ``best`` and ``kept``, the ``n`` smallest ``by`` of each (dataset, group)."""
    merged = kept if best is None else pl.concat([best, kept])
    return (
        merged.sort("_dataset", "_group", *by)
        .group_by("_dataset", "_group", maintain_order=True)
        .head(n)
    )


def _thresholds(best: pl.DataFrame | None) -> pl.DataFrame:
    """Per (dataset, group), the largest of its smallest ranks ``best`` (``_t_rank``) and how
    many pairs at that rank it keeps (``_need``): the rest of them rank below it.

    Only ranks are held (8 bytes a pair, ``cap`` per group); pairs that tie at ``_t_rank``,
    a 64-bit hash, are told apart by their dedup key in :func:`keep_and_write`, as the Beam
    cap orders by (rank, dedup key).
    """
    if best is None:
        best = pl.DataFrame(schema={"_dataset": pl.String, "_group": pl.String, "_rank": pl.UInt64})
    top = pl.col("_rank").max()
    return best.group_by("_dataset", "_group").agg(
        top.alias("_t_rank"), (pl.len() - (pl.col("_rank") < top).sum()).alias("_need")
    )


def _boundaries(held: pl.DataFrame | None) -> pl.DataFrame:
    """Per (dataset, group), the largest (rank, dedup key) of its ``holdout`` smallest
    (``_h_rank``, ``_h_dedup``): a pair at or below it is held out (dedup keys are unique in
    a group, so there is no tie; the Beam holdout orders the same way)."""
    if held is None:
        schema = {"_dataset": pl.String, "_group": pl.String, "_rank": pl.UInt64}
        held = pl.DataFrame(schema={**schema, "_dedup": pl.String})
    return held.group_by("_dataset", "_group", maintain_order=True).agg(
        pl.col("_rank").last().alias("_h_rank"), pl.col("_dedup").last().alias("_h_dedup")
    )


def keep_and_write(
    job: PairJob,
    spill: Partitions,
    writer: FrameShards,
    dests: dict[str, Callable[[str, str], str]],
    counts: Counter[CountKey],
    rejected: RejectedShards | None = None,
) -> None:
    """Deduplicate and cap each partition, hold out, and write the rows.

    Args:
        job: the settings.
        spill: the candidates by partition.
        writer: the pair shards' writer.
        dests: ``rows`` (kept) and ``held`` (held out): (dataset, group) -> staged folder.
        counts: the build's counts.
        rejected: where the duplicates and capped pairs go, with ``--keep-rejected``.
    """
    thresholds, boundaries, firsts = _first_pass(spill, job.cap, job.holdout, counts)
    folders: dict[tuple[str, str, str], str] = {}
    # each destination's rows, known now, let the writer put them straight into their shards
    for (dataset, group), pairs in sorted(firsts.items()):
        held = min(job.holdout or 0, pairs)
        chosen = pairs if job.cap is None else min(job.cap + held, pairs)
        for kind, rows in (("rows", chosen - held), ("held", held)):
            if rows:
                dest = folders[(kind, dataset, group)] = dests[kind](dataset, group)
                writer.declare(dest, rows)

    def write_to(kind: str, kept: pl.DataFrame) -> None:
        for (dataset, group), rows in kept.partition_by(
            "_dataset", "_group", as_dict=True, include_key=False
        ).items():
            dest = folders.get((kind, dataset, group))
            if dest is None:
                dest = folders[(kind, dataset, group)] = dests[kind](dataset, group)
            counts[(kind, dataset, group)] += rows.height
            writer.add(dest, rows)

    def write(kept: pl.DataFrame) -> None:
        if boundaries is not None:
            kept = kept.join(boundaries, on=["_dataset", "_group"], how="left")
            rank, at = pl.col("_rank"), pl.col("_h_rank")
            held = (rank < at) | ((rank == at) & (pl.col("_dedup") <= pl.col("_h_dedup")))
            held = held.fill_null(False)
            write_to("held", kept.filter(held))
            kept = kept.filter(~held)
        write_to("rows", kept)

    ties: list[pl.DataFrame] = []
    for frame in spill.frames():
        kept = _first_copies(frame, Counter(), rejected)  # the first pass counted them
        if thresholds is not None:
            kept = kept.join(thresholds, on=["_dataset", "_group"], how="left")
            rank, limit = pl.col("_rank"), pl.col("_t_rank")
            _drop_capped(kept.filter(rank > limit), counts, rejected)
            ties.append(kept.filter(rank == limit))
            kept = kept.filter(rank < limit)
        write(kept)
    if ties:  # of the pairs at a group's threshold rank, the smallest dedup keys
        tied = pl.concat(ties).sort("_dataset", "_group", "_dedup")
        first = pl.int_range(pl.len()).over("_dataset", "_group") < pl.col("_need")
        _drop_capped(tied.filter(~first), counts, rejected)
        write(tied.filter(first))


def _drop_capped(
    over: pl.DataFrame, counts: Counter[CountKey], rejected: RejectedShards | None
) -> None:
    """Count the pairs over their group's cap (and keep them aside in ``rejected``)."""
    _count_drops(over, FilterReason.CAP_OVER_LIMIT, counts)
    if rejected is not None:
        rejected.add_copies(over, FilterReason.CAP_OVER_LIMIT)

"""Bitext and ParaNMT inputs -> staged pair and dead-letter shards and counts, on this machine.

The local engine of ``corpusforge bitext build`` and ``corpusforge paranmt build`` (the
default when no ``--runner`` is given): the same rules as the Beam pipeline
(:mod:`corpusforge.pairing.candidates`), the same counts, the same shards byte for byte,
without holding the input in memory.

1. **Read** (this process): every read unit in plan order, with the readers of
   ``sources/``; skips and dead letters are counted here, dead letters staged.
2. **Filter** (``workers`` processes): batches of raw pairs go to a pool that cleans them,
   checks lengths and runs fastText on both sides (the costly step); each batch comes back
   as an Arrow table of candidates and a count of drops. Batches are handed out with a
   bounded window, so a slow pool holds back the reader instead of filling memory.
3. **Deduplicate and cap** (polars, by partition): candidates are spilled to ``partitions``
   Arrow files by a hash of their dedup key, so every copy of a pair lands in one
   partition; each partition is read alone, sorted by (group, dedup key, origin) and the
   first copy kept. With a cap, a first pass keeps each (dataset, group)'s smallest
   ``cap`` ranks (a 64-bit seeded hash and the 32-hex dedup key: about 50 bytes a pair) to
   fix its threshold, and a second pass keeps the pairs at or under it.
4. **Write**: kept rows go, a frame at a time, to
   :class:`~corpusforge.local.shards.FrameShards`, which places and sorts them as the Beam
   sink does: pair rows by (dedup key, anchor, positive), the sort key of both builds
   (``bitext_sort_key``, ``paraphrase_sort_key``); dead letters by their origin.

Memory is one partition (at most ``PARTITION_BYTES`` of input text, less under a tight
``--memory-limit``: :func:`partition_bytes`), the writer's buffer and the window of batches
in flight, whatever the input size; beside it, each filter process's own, so only the
workers that fit ``--memory-limit`` start (:func:`filter_workers`) and a budget below
:func:`floor_bytes` is refused. Nothing here depends on the
number of workers or partitions: both only decide where work happens.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import operator
import os
import shutil
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.ipc

from corpusforge.local.machine import fitting_workers
from corpusforge.local.rejects import RejectedShards
from corpusforge.local.shards import FrameShards
from corpusforge.local.spill import read_arrow
from corpusforge.local.workers import worker_pool
from corpusforge.pairing.candidates import (
    Candidate,
    Dropped,
    PairRules,
    bitext_candidate,
    cap_rank,
    paraphrase_candidate,
)
from corpusforge.pairing.filters import FilterReason
from corpusforge.pairing.rejects import rejected_row
from corpusforge.schemas import DEAD_LETTER, SchemaRef, arrow_schema
from corpusforge.sinks.shards import placement
from corpusforge.sources.opus.records import DeadLetter, RawPair, Skipped
from corpusforge.sources.paranmt.parse import RawParaphrase
from corpusforge.text.langid import LanguageIdentifier

log = logging.getLogger(__name__)

CountKey = tuple[str, ...]

BATCH_PAIRS = 2_048
"""Raw pairs per batch sent to a worker."""
IN_FLIGHT_PER_WORKER = 3
"""Batches queued per worker: enough to keep it busy while the reader reads ahead."""
PARTITION_BYTES = 16 << 20
"""Input bytes per dedup partition at most: a partition's candidates and their sorted copy
take about ``BYTES_PER_INPUT_BYTE`` times that in memory."""
BYTES_PER_INPUT_BYTE = 10
MAIN_BYTES = 176 << 20
"""This process while the filter workers run: its imports, the reader, the window of batches
in flight and the spill (measured: 150-165 MiB PSS beside 2 to 16 workers, 200k lines)."""
FILTER_WORKER_BYTES = 120 << 20
"""A filter process's own memory (PSS): the interpreter, fastText's model and the batches it
holds (measured: 91-118 MiB each beside 1 to 15 others)."""
IN_PROCESS_BYTES = 224 << 20
"""This process filtering the batches itself, one worker (measured: 186-211 MiB PSS)."""
WRITE_MAIN_BYTES = 232 << 20
"""This process once the filter workers have ended, beside the partition it deduplicates or
the shard it writes: what filtering left (measured: 231-264 MiB PSS after 200k lines, less
after a few; with a shard of them, below)."""
SHARD_BYTES_PER_ROW = 1_280
SHARD_BYTES_PER_INPUT_BYTE = 7
"""What writing one shard adds to this process, per row of the shard and, since a shard holds
at most the whole input, per byte of input (measured: this process at 441-490 MiB PSS writing
a shard of 199,977 rows from 36 MiB of Moses pairs, 338-346 MiB with shards of 20,000: 487
MiB modelled)."""
MAX_PARTITIONS = 512
"""Open spill files at most (one per partition): past 8 GiB of input, partitions grow instead."""
DEAD_ROWS = 10_000
"""Dead-letter rows held before they go to the writer's Arrow file."""
SPILL_ROWS = 16_384
"""Candidate rows gathered before they are split among the partition files: a split costs
polars and Arrow about the same for a batch's rows as for eight."""
PAIR_SORT_COLUMNS = ["_dedup", "anchor", "positive"]
"""A pair row's sort key in both builds: ``pair_key(anchor, positive)`` (the dedup key,
symmetric for paraphrases), anchor, positive."""
DEAD_SORT_COLUMNS = ["_k_archive", "_k_member", "_k_line", "reason", "detail", "excerpt"]
"""A dead-letter row's sort key, as ``corpusforge.builds.bitext._dead_key`` makes it."""

META = ("_dataset", "_group", "_dedup", "_file", "_member", "_line", "_part", "_rank", "_place")
"""A candidate's columns besides its row: grouping, origin, cap rank, and the hash that
places it in a shard (``sinks.shards.shard_of`` of its sort key, before the modulo)."""
ORDER = ["_group", "_dedup", "_dataset", "_file", "_member", "_line", "_part"]


@dataclass(frozen=True)
class PairJob:
    """What the engine runs: the per-pair rules, their model, the cap and the row schema.

    Attributes:
        kind: ``bitext`` or ``paraphrase`` (which candidate rule applies).
        rules: the per-pair settings.
        lid_model: fastText model path; ``None``: the default model.
        seed: seed of the cap's rank.
        cap: pairs kept per (dataset, group); ``None`` keeps all.
        pair_schema: the schema of the rows written.
        rows_per_shard: target rows per shard.
        workers: filter processes; 1 filters in this process (:func:`filter_workers`
            of the budget: the driver starts only those that fit).
        memory_budget: bytes the engine plans for (``None``: no limit beyond
            ``PARTITION_BYTES`` of input per partition).
        keep_rejected: write every dropped pair, with its reason and the value that failed
            (``schemas/rejected.v1``, :mod:`corpusforge.local.rejects`).
        holdout: pairs of each (dataset, group) set aside for evaluation: those of the
            smallest cap ranks, before the cap keeps the next ``cap``; ``None``: none.
    """

    kind: str
    rules: PairRules
    lid_model: str | None
    seed: int
    cap: int | None
    pair_schema: SchemaRef
    rows_per_shard: int
    workers: int = 1
    memory_budget: int | None = None
    keep_rejected: bool = False
    holdout: int | None = None

    @property
    def ranked(self) -> bool:
        """The candidates carry their cap rank: a cap or a holdout chooses by it."""
        return self.cap is not None or self.holdout is not None


def partition_bytes(memory_budget: int | None) -> int:
    """Input bytes per dedup partition: ``PARTITION_BYTES``, or less where one partition
    beside this process's own memory would not fit ``memory_budget`` (never below 1 MiB). The
    partitions are read once the filter workers have ended, so the workers take nothing."""
    if memory_budget is None:
        return PARTITION_BYTES
    free = memory_budget - WRITE_MAIN_BYTES
    return max(1 << 20, min(PARTITION_BYTES, free // BYTES_PER_INPUT_BYTE))


def filter_workers(memory_budget: int, requested: int) -> int:
    """How many of ``requested`` filter processes fit ``memory_budget`` beside this process
    (1: this process filters); a log line says so when fewer start."""
    return fitting_workers(
        memory_budget, requested, main=MAIN_BYTES, worker=FILTER_WORKER_BYTES, stage="bitext"
    )


def floor_bytes(input_bytes: int, rows_per_shard: int) -> int:
    """The least memory a build of ``input_bytes`` keeps: this process filtering alone with
    the smallest partition, or writing one shard (at most ``rows_per_shard`` rows, at most the
    whole input), whichever is more."""
    shard = min(SHARD_BYTES_PER_INPUT_BYTE * input_bytes, SHARD_BYTES_PER_ROW * rows_per_shard)
    least_partition = min(input_bytes, 1 << 20) * BYTES_PER_INPUT_BYTE
    return max(IN_PROCESS_BYTES, WRITE_MAIN_BYTES + max(least_partition, shard))


@dataclass
class Staged:
    """What the engine leaves for publishing: the staged files and every count."""

    files: list[dict[str, Any]]
    counts: Counter[CountKey]


def run_pairs(
    job: PairJob,
    records: Iterable[Any],
    *,
    pair_dest: Callable[[str, str], str],
    dead_dest: str,
    scratch: str,
    input_bytes: int,
    rejected_dest: Callable[[str, str], str] | None = None,
    heldout_dest: Callable[[str, str], str] | None = None,
) -> Staged:
    """Run the engine over ``records`` (what the readers yield, with their read counts).

    Args:
        job: the rules and settings.
        records: raw pairs, :class:`DeadLetter` and :class:`Skipped` items, and
            ``(count key, n)`` tuples for counts the reader keeps itself (units read).
        pair_dest: (dataset, group) -> the staged folder of its shards.
        dead_dest: the staged folder of the dead letters.
        scratch: a local folder for spill files, removed at the end.
        input_bytes: bytes of the inputs, which size the partitions.
        rejected_dest: (dataset, group) -> the staged folder of its rejected pairs (with
            ``job.keep_rejected``).
        heldout_dest: (dataset, group) -> the staged folder of its held-out pairs (with
            ``job.holdout``).
    """
    per_partition = partition_bytes(job.memory_budget)
    partitions = max(1, min(MAX_PARTITIONS, math.ceil(input_bytes / per_partition)))
    os.makedirs(scratch, exist_ok=True)
    counts: Counter[CountKey] = Counter()
    dead = _DeadLetters(
        FrameShards(
            DEAD_LETTER, DEAD_SORT_COLUMNS, job.rows_per_shard, os.path.join(scratch, "dead")
        ),
        dead_dest,
    )
    spill = _Partitions(os.path.join(scratch, "candidates"), partitions)
    rejected = None
    if job.keep_rejected:
        assert rejected_dest is not None
        spill_rejected = os.path.join(scratch, "rejected")
        rejected = RejectedShards(
            rejected_dest, job.rows_per_shard, spill_rejected, with_part=job.kind == "bitext"
        )
    try:
        batches = _batches(records, counts, dead)
        for table, batch_counts, batch_rejected in _filtered(job, batches):
            counts.update(batch_counts)
            spill.add(table)
            if rejected is not None:
                rejected.add_rows(batch_rejected)
        spill.close()
        pairs = FrameShards(
            job.pair_schema,
            PAIR_SORT_COLUMNS,
            job.rows_per_shard,
            os.path.join(scratch, "pairs"),
            placement="_place",
        )
        dests = {"rows": pair_dest, "held": heldout_dest or pair_dest}
        _keep_and_write(job, spill, pairs, dests, counts, rejected)
        files = pairs.close() + dead.close()
        if rejected is not None:
            files += rejected.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    log.info("local engine: %d workers, %d partitions", max(job.workers, 1), partitions)
    return Staged(files, counts)


class _DeadLetters:
    """Dead-letter rows -> their writer, a frame of ``DEAD_ROWS`` at a time, with the columns
    of their sort key."""

    def __init__(self, writer: FrameShards, dest: str) -> None:
        self._writer = writer
        self._dest = dest
        self._rows: list[dict[str, Any]] = []

    def add(self, row: dict[str, Any]) -> None:
        line = row["origin_line"]
        self._rows.append(
            {
                **row,
                "_k_archive": row["origin_archive"] or "",
                "_k_member": row["origin_member"] or "",
                "_k_line": line if line is not None else -1,
            }
        )
        if len(self._rows) >= DEAD_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self._rows:
            schema = {**_DEAD_FRAME_SCHEMA}
            self._writer.add(self._dest, pl.DataFrame(self._rows, schema=schema))
            self._rows = []

    def close(self) -> list[dict[str, Any]]:
        self._flush()
        return self._writer.close()


_DEAD_FRAME_SCHEMA: dict[str, Any] = {
    **{f.name: pl.String for f in arrow_schema(DEAD_LETTER)},
    "origin_line": pl.Int64,
    "_k_archive": pl.String,
    "_k_member": pl.String,
    "_k_line": pl.Int64,
}


# -- 1. read -----------------------------------------------------------------------------


_FIELDS: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    cls: operator.attrgetter(*(f.name for f in dataclasses.fields(cls)))
    for cls in (RawPair, RawParaphrase)
}
"""A raw pair's fields as a tuple: what a batch carries to a worker (a tuple pickles in a
fraction of a dataclass's time)."""


def _batches(
    records: Iterable[Any], counts: Counter[CountKey], dead: _DeadLetters
) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    for record in records:
        if isinstance(record, RawPair | RawParaphrase):
            counts[("read", "records")] += 1
            batch.append(_FIELDS[type(record)](record))
            if len(batch) >= BATCH_PAIRS:
                yield batch
                batch = []
        elif isinstance(record, Skipped):
            counts[("skip", str(record.reason))] += 1
            counts[("read", "records")] += 1
        elif isinstance(record, DeadLetter):
            counts[("dead", record.reason)] += 1
            counts[("read", "records")] += record.records
            counts[("read", "dead_letter_lines")] += record.records
            dead.add(record.to_row())
        else:
            key, n = record
            counts[key] += n
    if batch:
        yield batch


# -- 2. filter ---------------------------------------------------------------------------

_worker: dict[str, Any] = {}


def _start_worker(job: PairJob) -> None:
    _worker["job"] = job
    _worker["lid"] = LanguageIdentifier.load(job.lid_model)


_RULES: dict[str, tuple[Callable[..., Candidate | Dropped], Callable[..., Any]]] = {
    "bitext": (bitext_candidate, RawPair),
    "paraphrase": (paraphrase_candidate, RawParaphrase),
}
"""Each job kind's candidate rule, and the raw pair it takes."""


def _filter_batch(
    batch: list[tuple[Any, ...]],
) -> tuple[pa.Table, Counter[CountKey], list[tuple[str, dict[str, Any]]]]:
    """A batch of raw pairs (their fields) -> their candidates as a table, the filter's
    counts, and with ``keep_rejected`` the ``(group, rejected row)`` of each pair dropped."""
    job: PairJob = _worker["job"]
    lid: LanguageIdentifier = _worker["lid"]
    rule, raw_of = _RULES[job.kind]
    counts: Counter[CountKey] = Counter()
    kept: list[Candidate] = []
    rejected: list[tuple[str, dict[str, Any]]] = []
    for fields in batch:
        result = rule(raw_of(*fields), job.rules, lid)
        counts[("cand", result.dataset, result.group)] += 1
        if isinstance(result, Dropped):
            counts[("drop", result.dataset, result.group, str(result.reason))] += 1
            if job.keep_rejected:
                rejected.append((result.group, rejected_row(result, job.rules, lid)))
        else:
            kept.append(result)
    return _table(job, kept), counts, rejected


def _table(job: PairJob, kept: list[Candidate]) -> pa.Table:
    schema = _candidate_schema(job.pair_schema)
    names = schema.names[: -len(META)]
    seed = job.seed
    # column by column: a tuple per row and their transposition cost more than the rows
    rows = [c.row for c in kept]
    orders = [c.order for c in kept]
    columns: list[list[Any]] = [[row[name] for row in rows] for name in names]
    columns += [
        [c.dataset for c in kept],
        [c.group for c in kept],
        [c.dedup for c in kept],
        [order[1] for order in orders],
        [order[2] for order in orders],
        [order[3] for order in orders],
        [order[4] if len(order) > 4 else 0 for order in orders],
        [cap_rank(seed, c.dataset, c.group, c.dedup)[0] for c in kept]
        if job.ranked
        else [0] * len(kept),
        [
            placement((c.dedup, row["anchor"], row["positive"]))
            for c, row in zip(kept, rows, strict=True)
        ],
    ]
    arrays = [pa.array(column, type=f.type) for column, f in zip(columns, schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


@functools.cache
def _candidate_schema(pair_schema: SchemaRef) -> pa.Schema:
    meta = [
        pa.field("_dataset", pa.string()),
        pa.field("_group", pa.string()),
        pa.field("_dedup", pa.string()),
        pa.field("_file", pa.string()),
        pa.field("_member", pa.string()),
        pa.field("_line", pa.int64()),
        pa.field("_part", pa.int64()),
        pa.field("_rank", pa.uint64()),
        pa.field("_place", pa.uint64()),
    ]
    return pa.schema([*arrow_schema(pair_schema), *meta])


Filtered = tuple[pa.Table, Counter[CountKey], list[tuple[str, dict[str, Any]]]]
"""A filtered batch: its candidates, its counts, its rejected rows (:func:`_filter_batch`)."""


def _filtered(job: PairJob, batches: Iterator[list[tuple[Any, ...]]]) -> Iterator[Filtered]:
    """Each batch filtered, in order: in this process with one worker, else in a pool
    (a worker that dies ends the build: :class:`~corpusforge.jobs.WorkerDied`)."""
    if job.workers <= 1:
        _start_worker(job)
        try:
            yield from map(_filter_batch, batches)
        finally:
            _worker.clear()
        return
    worker = _WORKER[job.kind]
    with worker_pool(worker, job.workers, initializer=_start_worker, initargs=(job,)) as pool:
        pending: deque[Future[Filtered]] = deque()
        for batch in batches:
            pending.append(pool.submit(_filter_batch, batch))
            if len(pending) >= IN_FLIGHT_PER_WORKER * job.workers:
                yield pool.result(pending.popleft())
        while pending:
            yield pool.result(pending.popleft())


_WORKER = {"bitext": "a bitext filter worker", "paraphrase": "a ParaNMT filter worker"}
"""Each job kind's filter worker, as an error names it."""


# -- 3. deduplicate and cap --------------------------------------------------------------


class _Partitions:
    """Candidate tables -> one Arrow file per hash partition of their dedup key."""

    def __init__(self, folder: str, partitions: int) -> None:
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        self.partitions = partitions
        self._writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
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
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        if self.partitions == 1:
            self._write(0, frame.to_arrow())
            return
        frame = frame.with_columns((pl.col("_dedup").hash(seed=0) % self.partitions).alias("_p"))
        for (p,), part in frame.partition_by("_p", as_dict=True).items():
            self._write(int(p), part.drop("_p").to_arrow())

    def _write(self, p: int, table: pa.Table) -> None:
        writer = self._writers.get(p)
        if writer is None:
            writer = pa.ipc.new_file(self.path(p), table.schema)
            self._writers[p] = writer
        writer.write_table(table)

    def close(self) -> None:
        self._spill()
        for writer in self._writers.values():
            writer.close()

    def frames(self, columns: list[str] | None = None) -> Iterator[pl.DataFrame]:
        """Each partition's candidates (only ``columns``, if given), one at a time."""
        for p in sorted(self._writers):
            table = read_arrow(self.path(p))
            if columns is not None:
                table = table.select(columns)
            frame = pl.from_arrow(table)
            assert isinstance(frame, pl.DataFrame)
            del table
            yield frame


def _first_copies(
    frame: pl.DataFrame, counts: Counter[CountKey], rejected: RejectedShards | None = None
) -> pl.DataFrame:
    """The copy of each (group, dedup key) with the smallest origin; the others counted
    (and kept aside in ``rejected``, if given)."""
    frame = frame.sort(ORDER)
    first = pl.struct("_group", "_dedup").is_first_distinct()
    dups = frame.filter(~first)
    _count_drops(dups, FilterReason.DEDUP_DUPLICATE, counts)
    if rejected is not None:
        rejected.add_copies(dups, FilterReason.DEDUP_DUPLICATE)
    return frame.filter(first)


def _count_drops(frame: pl.DataFrame, reason: FilterReason, counts: Counter[CountKey]) -> None:
    if not frame.height:
        return
    for dataset, group, n in frame.group_by("_dataset", "_group").len().iter_rows():
        counts[("drop", dataset, group, str(reason))] += n


def _first_pass(
    spill: _Partitions, cap: int | None, holdout: int | None, counts: Counter[CountKey]
) -> tuple[pl.DataFrame | None, pl.DataFrame | None]:
    """The cap's thresholds (:func:`_thresholds`, of the ``cap + holdout`` smallest ranks)
    and the holdout's boundaries (:func:`_boundaries`), in one read of the partitions; the
    duplicates are counted here."""
    best: pl.DataFrame | None = None
    held: pl.DataFrame | None = None
    limit = None if cap is None else cap + (holdout or 0)
    for frame in spill.frames(columns=[*ORDER, "_rank"]):
        kept = _first_copies(frame, counts).select("_dataset", "_group", "_rank", "_dedup")
        if limit is not None:
            best = _smallest(kept.drop("_dedup"), best, limit, ["_rank"])
        if holdout is not None:
            held = _smallest(kept, held, holdout, ["_rank", "_dedup"])
    thresholds = None if limit is None else _thresholds(best)
    return thresholds, None if holdout is None else _boundaries(held)


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
    a 64-bit hash, are told apart by their dedup key in :func:`_keep_and_write`, as the Beam
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


def _keep_and_write(
    job: PairJob,
    spill: _Partitions,
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
    thresholds = boundaries = None
    if job.ranked:
        thresholds, boundaries = _first_pass(spill, job.cap, job.holdout, counts)
    folders: dict[tuple[str, str, str], str] = {}

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
        part_counts: Counter[CountKey] = Counter()
        kept = _first_copies(frame, part_counts, rejected)
        if not job.ranked:
            counts.update(part_counts)  # else the first pass counted the duplicates
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

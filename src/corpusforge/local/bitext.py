"""Bitext and ParaNMT inputs -> staged pair and dead-letter shards and counts, on this machine.

The local engine of ``corpusforge bitext build`` and ``corpusforge paranmt build`` (the
default when no ``--runner`` is given): the same rules as the Beam pipeline
(:mod:`corpusforge.pairing.candidates`), the same counts, the same shards byte for byte,
without holding the input in memory.

1. **Read** (this process): every read unit in plan order, with the readers of
   ``sources/``; skips and dead letters are counted here, dead letters staged. Plain Moses
   file pairs and TSV files are only cut into byte ranges here, which the filter workers read,
   and compressed Moses file pairs and Moses zips into blocks of decompressed bytes, which they
   read alike (:mod:`corpusforge.local.bitext_plan`); what they read besides pairs is
   counted and staged here as they return it.
2. **Filter** (``workers`` processes): batches of raw pairs go to a pool that cleans them,
   checks lengths and runs fastText on both sides (the costly step); each batch comes back
   as an Arrow table of candidates and a count of drops. Batches are handed out with a
   bounded window, so a slow pool holds back the reader instead of filling memory
   (:mod:`corpusforge.local.bitext_filter`).
3. **Deduplicate and cap** (polars, by partition): candidates are spilled to ``partitions``
   Arrow files by a hash of their dedup key, so every copy of a pair lands in one
   partition; a first pass over their key columns counts each destination's pairs once
   deduplicated; then each partition is read alone and of each pair's copies, sorted by
   (group, dedup key, origin), the first kept. With a cap, the first pass also keeps each
   (dataset, group)'s smallest ``cap`` ranks (a 64-bit seeded hash and the 32-hex dedup key:
   about 50 bytes a pair) to fix its threshold, and the second keeps the pairs at or under
   it (:mod:`corpusforge.local.bitext_dedup`).
4. **Write**: kept rows go, a frame at a time, to
   :class:`~corpusforge.local.shards.FrameShards`, which places and sorts them as the Beam
   sink does: pair rows by (dedup key, anchor, positive), the sort key of both builds
   (``bitext_sort_key``, ``paraphrase_sort_key``); dead letters by their origin.

Memory is one partition (at most ``PARTITION_BYTES`` of input text, less under a tight
``--memory-limit``: :func:`partition_bytes`), the writer's buffer and the window of batches
in flight, whatever the input size; beside it, each filter process's own, so only the
workers that fit ``--memory-limit`` start (:func:`filter_workers`) and a budget below
:func:`floor_bytes` is refused. Once they have ended, two pair shards are written at once
where filtering's memory holds both (:func:`shard_threads`). Nothing here depends on the number of
workers, partitions or shards written at once: they only decide where work happens.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import operator
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import polars as pl

from corpusforge.local.bitext_dedup import Partitions, keep_and_write
from corpusforge.local.bitext_filter import Batch, CountKey, PairJob, filtered
from corpusforge.local.bitext_plan import Range
from corpusforge.local.bitext_read import UnitTallies, tally
from corpusforge.local.machine import fitting_workers
from corpusforge.local.rejects import RejectedShards
from corpusforge.local.shards import FrameShards
from corpusforge.local.spill import pyarrow_without_pandas
from corpusforge.pairing.columns import RAW_FIELDS
from corpusforge.schemas import DEAD_LETTER, arrow_schema
from corpusforge.sources.opus.records import DeadLetter, RawPair, Skipped
from corpusforge.sources.paranmt.parse import RawParaphrase

log = logging.getLogger(__name__)

BATCH_PAIRS = 2_048
"""Raw pairs per batch sent to a worker."""
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
PAIR_SORT_COLUMNS = ["_dedup", "anchor", "positive"]
"""A pair row's sort key in both builds: ``pair_key(anchor, positive)`` (the dedup key,
symmetric for paraphrases), anchor, positive."""
DEAD_SORT_COLUMNS = ["_k_archive", "_k_member", "_k_line", "reason", "detail", "excerpt"]
"""A dead-letter row's sort key, as ``corpusforge.builds.bitext._dead_key`` makes it."""


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
    least_partition = min(input_bytes, 1 << 20) * BYTES_PER_INPUT_BYTE
    return max(
        IN_PROCESS_BYTES,
        WRITE_MAIN_BYTES + max(least_partition, _shard(input_bytes, rows_per_shard)),
    )


def shard_threads(
    memory_budget: int | None, input_bytes: int, rows_per_shard: int, workers: int
) -> int:
    """Pair shards written at once: two where the build has two or more filter ``workers``
    and two shards beside this process fit what filtering took (this process and the
    workers, as modelled) and the budget: the tail then never plans more memory than
    filtering did; else one (the floor's). The budget alone is not enough: without
    ``--memory-limit`` it is half the machine's memory, and two shards at once took this
    process to 542-639 MiB PSS at 2M bench lines (250,000 rows a shard; one: 405)."""
    if workers < 2:
        return 1
    filtering = MAIN_BYTES + workers * FILTER_WORKER_BYTES
    given = filtering if memory_budget is None else min(memory_budget, filtering)
    return 2 if given >= WRITE_MAIN_BYTES + 2 * _shard(input_bytes, rows_per_shard) else 1


def _shard(input_bytes: int, rows_per_shard: int) -> int:
    """What writing one pair shard adds to this process (``SHARD_BYTES_*``)."""
    return min(SHARD_BYTES_PER_INPUT_BYTE * input_bytes, SHARD_BYTES_PER_ROW * rows_per_shard)


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
        records: raw pairs, :class:`DeadLetter` and :class:`Skipped` items,
            :class:`~corpusforge.local.bitext_plan.MosesRange`, ``MosesBlock`` and ``TsvRange``
            items (read by the workers),
            and ``(count key, n)`` tuples for counts the reader keeps itself (units read).
        pair_dest: (dataset, group) -> the staged folder of its shards.
        dead_dest: the staged folder of the dead letters.
        scratch: a local folder for spill files, removed at the end.
        input_bytes: bytes of the inputs, which size the partitions.
        rejected_dest: (dataset, group) -> the staged folder of its rejected pairs (with
            ``job.keep_rejected``).
        heldout_dest: (dataset, group) -> the staged folder of its held-out pairs (with
            ``job.holdout``).
    """
    pyarrow_without_pandas()  # before the filter workers fork
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
    spill = Partitions(os.path.join(scratch, "candidates"), partitions)
    rejected = None
    if job.keep_rejected:
        assert rejected_dest is not None
        spill_rejected = os.path.join(scratch, "rejected")
        rejected = RejectedShards(
            rejected_dest, job.rows_per_shard, spill_rejected, with_part=job.kind == "bitext"
        )
    units = UnitTallies()
    try:
        batches = _batches(records, counts, dead)
        for (table, batch_counts, batch_rejected), read in filtered(job, batches):
            counts.update(batch_counts)
            if read is not None:
                counts.update(read.counts)
                for letter in read.dead:
                    dead.add(letter.to_row())
                units.add(read)
            spill.add(table)
            if rejected is not None:
                rejected.add_rows(batch_rejected)
        for note in units.notes():
            dead.add(_counted(note, counts))
        spill.close()
        pairs = FrameShards(
            job.pair_schema,
            PAIR_SORT_COLUMNS,
            job.rows_per_shard,
            os.path.join(scratch, "pairs"),
            placement="_place",
            threads=shard_threads(job.memory_budget, input_bytes, job.rows_per_shard, job.workers),
        )
        dests = {"rows": pair_dest, "held": heldout_dest or pair_dest}
        keep_and_write(job, spill, pairs, dests, counts, rejected)
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
    RawPair: RAW_FIELDS,
    RawParaphrase: operator.attrgetter(*(f.name for f in dataclasses.fields(RawParaphrase))),
}
"""A raw pair's fields as a tuple: what a batch carries to a worker (a tuple pickles in a
fraction of a dataclass's time)."""


def _batches(
    records: Iterable[Any], counts: Counter[CountKey], dead: _DeadLetters
) -> Iterator[Batch]:
    batch: list[tuple[Any, ...]] = []
    for record in records:
        if isinstance(record, RawPair | RawParaphrase):
            counts[("read", "records")] += 1
            batch.append(_FIELDS[type(record)](record))
            if len(batch) >= BATCH_PAIRS:
                yield batch
                batch = []
        elif isinstance(record, Range):
            yield record
        elif isinstance(record, Skipped | DeadLetter):
            letter = tally(record, counts)
            if letter is not None:
                dead.add(letter.to_row())
        else:
            key, n = record
            counts[key] += n
    if batch:
        yield batch


def _counted(letter: DeadLetter, counts: Counter[CountKey]) -> dict[str, Any]:
    """``letter`` counted; its dead-letter row."""
    tally(letter, counts)
    return letter.to_row()

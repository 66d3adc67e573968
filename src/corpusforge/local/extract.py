"""One archive -> its extract folder, on every core, within bounded memory: the local extract.

The extract stage of ``corpusforge twitter build`` on this machine (``--extract-engine
local``; ``auto`` picks it whenever no ``--runner`` is given). It calls the functions the Beam
composite :class:`corpusforge.transforms.twitter.ExtractedTweets` wraps and imports neither
the transforms nor Beam, and writes the Beam pipeline's files and counts, byte for byte,
whatever the number of workers (``tests/twitter/test_local_extract.py``):

1. **List** (this process): :func:`~corpusforge.sources.twitter.read.list_archive`.
2. **Read** (``workers`` processes): each worker takes the next member, decodes and parses it
   with :func:`~corpusforge.sources.twitter.read.read_member` and appends its tweet records
   and delete notices, in Arrow batches, to its own file per key-space partition of the
   tweet id (:mod:`corpusforge.local.spill`), and its dead letters to one more file. Every
   row carries its read position (``_seq``: member index, then output number), so what
   follows does not depend on which worker read which member, and its shard placement
   (``_place``, the seeded hash the Beam sink computes), hashed where it was parsed.
3. **Merge** (this process, one partition at a time, with polars): a tweet's records are
   merged as :func:`~corpusforge.sources.twitter.parse.merge_records` does (stream line
   before embedded copy, longer text, smaller origin; links, language and time from the
   first record that has them) and a deleted id keeps its
   :func:`~corpusforge.sources.twitter.read.first_origin`; ties go to the earlier read, as
   in one process.
4. **Write**: :class:`~corpusforge.local.shards.FrameShards` writes the shards.

Memory: a worker holds one member's lines and one batch of rows; this process holds one
partition. Partitions are sized from the archive's bytes (``partition_bytes`` of archive per
partition, :func:`partition_bytes` from ``--memory-limit``), and only the workers that fit the
budget beside this process start (:func:`read_workers`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import queue
import shutil
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa

from corpusforge import progress
from corpusforge.local.machine import (
    fitting_workers,
    keep_freed_blocks,
    process_context,
    release_unused_memory,
)
from corpusforge.local.shards import FrameShards
from corpusforge.local.spill import PartitionWriter, pyarrow_without_pandas, read_partition
from corpusforge.local.workers import dead_worker, start_worker
from corpusforge.release.io import COUNTS, FILES, ensure_dir, file_list, join, write_json
from corpusforge.schemas import DEAD_LETTER, DELETE, TWEET, arrow_schema
from corpusforge.sinks.shards import placements
from corpusforge.sources.twitter.archive import MemberRef, ReadLimits, archive_name
from corpusforge.sources.twitter.read import ReadOutput, Tally, list_archive, read_member

log = logging.getLogger(__name__)

RowKey = Callable[[Mapping[str, Any]], Any]

PARTITION_BYTES = 128 * 2**20
"""Archive bytes per partition by default (about 150k lines of bz2 JSON): one partition's
records, merged in polars, take a few hundred MB."""
BATCH_ROWS = 4_000
"""Rows a worker holds of each kind before it appends them to its spill files (20,000 cost
about 0.8 µs of CPU a line more, the rows waiting out of the cache; ``benchmarks/RESULTS.md``,
issue 38, fifth session)."""
MAX_PARTITIONS = 4096
MEMBER_SEQ_BITS = 32
"""``_seq`` is ``member << 32 | output``: a member yields fewer than 2**32 rows (its
decompressed bytes are capped at 4 GiB by default, and every row takes a line)."""
MERGE_BYTES_PER_ARCHIVE_BYTE = 4.0
"""Peak memory of merging a partition, per byte of archive it covers (measured on bz2
archives, ``benchmarks/RESULTS.md``): sizes partitions under ``--memory-limit``."""
WORKER_BYTES = 128 * 2**20
"""A read worker's own memory (PSS): one member's decoder and a batch of rows of each kind
(measured: 118-127 MiB each beside one other after 38 members of a 200k-tweet zip; 30-42 MiB
beside 15 others after about 5). It does not grow with the members read: it climbs while the
first :data:`BATCH_ROWS` rows of a kind wait as dicts (about 7 members of 3,000 lines), then
stays (one reader: 229 MiB RSS after 10 members, 239-246 from 50 to 130)."""
READ_MAIN_BYTES = 64 * 2**20
"""This process while the read workers run: it lists members and counts (measured: 35-63 MiB
PSS beside two workers)."""
MERGE_MAIN_BYTES = 192 * 2**20
"""This process's own memory beside the partition it merges, the workers gone (measured:
158-199 MiB PSS between merges)."""
HEAP_BLOCK_BYTES = 32 * 2**20
"""A read worker's blocks up to this size come from its heap and are reused member after
member (:func:`~corpusforge.local.machine.keep_freed_blocks`): a decoded member is held in
blocks of about a megabyte. Measured on a 200k-tweet day zip, two readers: their kernel
time 1.10 -> 0.14 CPU-seconds, the read 10.1-10.3 -> 9.3-9.6 s (``benchmarks/RESULTS.md``,
issue 38, eighth session)."""
HEAP_HELD_BYTES = 64 * 2**20
"""Freed bytes a read worker's heap keeps at its top rather than trimming."""
EXTRACT_WORKER = "a Twitter extract worker"
"""A read worker, as an error names it."""

_SEQ = pa.field("_seq", pa.uint64())
_PLACE = pa.field("_place", pa.uint64())
_FILLED = ("reply_to_id", "quote_of_id", "lang", "created_at")


def partition_bytes(memory_limit: int) -> int:
    """Archive bytes per partition so that one partition's merge, beside this process's own
    memory, fits ``memory_limit`` bytes (never below 8 MiB of archive). Partitions are merged
    once the read workers have ended, so the workers take nothing."""
    free = memory_limit - MERGE_MAIN_BYTES
    return max(8 * 2**20, int(free / MERGE_BYTES_PER_ARCHIVE_BYTE))


def floor_bytes() -> int:
    """The least memory the extract keeps: this process merging the smallest partition."""
    return MERGE_MAIN_BYTES + int(8 * 2**20 * MERGE_BYTES_PER_ARCHIVE_BYTE)


def read_workers(memory_limit: int, requested: int) -> int:
    """How many of ``requested`` read processes fit ``memory_limit`` bytes beside this process
    (1: this process reads); a log line says so when fewer start."""
    return fitting_workers(
        memory_limit, requested, main=READ_MAIN_BYTES, worker=WORKER_BYTES, stage="Twitter extract"
    )


@dataclass(frozen=True)
class ExtractJob:
    """What a read worker needs: picklable, so it reaches spawned processes too."""

    limits: ReadLimits
    spill: str
    partitions: int
    tweet_key: RowKey
    dead_key: RowKey


def extract_archive(
    uri: str,
    folder: str,
    dead_folder: str,
    limits: ReadLimits,
    rows_per_shard: int,
    *,
    tweet_key: RowKey,
    dead_key: RowKey,
    workers: int = 1,
    archive_bytes_per_partition: int = PARTITION_BYTES,
    release_root: str | None = None,
) -> None:
    """Extract ``uri`` into ``folder`` (tweets, deletes, ``_files.json``, ``_counts.json``)
    and ``dead_folder`` (dead letters), as the Beam extract pipeline does for one archive.

    Args:
        uri: the archive (a local path).
        folder: its extract folder.
        dead_folder: its dead-letter folder.
        limits: read caps.
        rows_per_shard: target rows per shard.
        tweet_key: sort key of tweet and delete rows (the Beam sink's; places them in shards).
        dead_key: sort key of dead-letter rows: a tuple of ``str`` and ``int``.
        workers: read processes (1 reads in this process).
        archive_bytes_per_partition: archive bytes per key-space partition of the merge.
        release_root: the release folder; ``_files.json`` holds paths relative to it.
    """
    ensure_dir(folder)
    spill = tempfile.mkdtemp(prefix="_spill-", dir=folder)
    try:
        partitions = min(
            MAX_PARTITIONS, max(1, math.ceil(os.path.getsize(uri) / archive_bytes_per_partition))
        )
        job = ExtractJob(_worker_limits(limits, workers), spill, partitions, tweet_key, dead_key)
        counts = _read(uri, job, workers)
        files = _merge_and_write(job, folder, dead_folder, rows_per_shard)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
        release_unused_memory()
    write_json(join(folder, FILES), file_list(files, release_root))
    write_json(join(folder, COUNTS), dict(sorted(counts.items())))


def _worker_limits(limits: ReadLimits, workers: int) -> ReadLimits:
    """The read caps each worker runs with: the bz2 decoder's threads shared among the
    workers (speed only: the output is the same whatever the threads)."""
    if workers <= 1 or limits.bz2_threads <= 1:
        return limits
    return dataclasses.replace(limits, bz2_threads=max(1, limits.bz2_threads // workers))


# -- 1 and 2. list and read ----------------------------------------------------------------


def _read(uri: str, job: ExtractJob, workers: int) -> Counter[str]:
    """List the archive here, read its members on ``workers`` processes; the counts."""
    counts: Counter[str] = Counter()
    refs: list[MemberRef] = []
    pyarrow_without_pandas()
    listing = _Spill(job, writer=0)
    for seq, item in enumerate(list_archive(uri, Tally(counts))):
        if isinstance(item, MemberRef):
            refs.append(item)
        else:
            listing.add(ReadOutput.DEAD, item, seq)
    listing.close()
    progress.members_listed(archive_name(uri), len(refs))
    members = list(enumerate(refs, start=1))
    if workers <= 1 or len(refs) <= 1:
        results: Iterable[_MemberRead] = _read_members(job, 1, iter(members))
    else:
        results = _pool_read(job, workers, members)
    for done in results:
        counts.update(done.counts)
        progress.member_done(done.archive, done.member, done.counts["lines_read"])
    log.info("%s: %d members read on %d worker(s)", uri, len(refs), min(workers, len(refs)))
    return counts


@dataclass(frozen=True)
class _MemberRead:
    archive: str
    member: str
    counts: Counter[str]


class _Spill:
    """One process's rows -> its spill files: records and deletes by id partition, dead
    letters in one partition of their own.

    A row's ``_seq`` and sort key wait in lists of their own, beside the rows, and join them
    as columns when a batch is written (the keys as their ``_place``, hashed for the whole
    batch at once), rather than two more keys in every row's dict (whose table, ten keys,
    would grow). Batches of :data:`BATCH_ROWS` keep the rows waiting
    few enough to stay in the processor's cache.
    """

    def __init__(self, job: ExtractJob, writer: int) -> None:
        self._job = job
        self._schemas = {
            output: arrow_schema(ref)
            for output, ref in (
                (ReadOutput.RECORD, TWEET),
                (ReadOutput.DELETE, DELETE),
                (ReadOutput.DEAD, DEAD_LETTER),
            )
        }
        self._out = {
            ReadOutput.RECORD: PartitionWriter(job.spill, "records", writer, job.partitions, "id"),
            ReadOutput.DELETE: PartitionWriter(job.spill, "deletes", writer, job.partitions, "id"),
            ReadOutput.DEAD: PartitionWriter(job.spill, "dead", writer, 1, "_seq"),
        }
        # rows, _seq and sort keys of each output, by ReadOutput's value: an enum member
        # hashes in Python, its value (a str) in C
        self._rows: dict[str, _Batch] = {output.value: _Batch() for output in self._out}

    def add(self, output: ReadOutput, row: dict[str, Any], seq: int) -> None:
        job = self._job
        key = job.dead_key(row) if output is ReadOutput.DEAD else job.tweet_key(row)
        batch = self._rows[output.value]
        batch.rows.append(row)
        batch.seqs.append(seq)
        batch.keys.append(key)
        if len(batch.rows) >= BATCH_ROWS:
            self._flush(output)

    def _flush(self, output: ReadOutput) -> None:
        batch = self._rows[output.value]
        if not batch.rows:
            return
        table = pa.Table.from_pylist(batch.rows, schema=self._schemas[output])
        table = table.append_column(_SEQ, pa.array(batch.seqs, _SEQ.type))
        table = table.append_column(_PLACE, pa.array(placements(batch.keys), _PLACE.type))
        if output is ReadOutput.DEAD:
            for i, values in enumerate(zip(*batch.keys, strict=True)):
                table = table.append_column(f"_k{i}", pa.array(values))
        self._out[output].add(table)
        self._rows[output.value] = _Batch()

    def close(self) -> None:
        for output, writer in self._out.items():
            self._flush(output)
            writer.close()


@dataclass
class _Batch:
    """Rows of one output waiting to be written, with their ``_seq`` and their sort keys,
    whose ``_place`` is hashed by batch (:func:`~corpusforge.sinks.shards.placements`)."""

    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    seqs: list[int] = dataclasses.field(default_factory=list)
    keys: list[Any] = dataclasses.field(default_factory=list)


def _read_members(
    job: ExtractJob, writer: int, members: Iterator[tuple[int, MemberRef]]
) -> Iterator[_MemberRead]:
    """Read ``members`` in this process into spill files of number ``writer``."""
    spill = _Spill(job, writer)
    try:
        for index, ref in members:
            tally = Tally()
            base = index << MEMBER_SEQ_BITS
            for n, (output, row) in enumerate(read_member(ref, job.limits, tally)):
                spill.add(output, row, base | n)
            yield _MemberRead(ref.archive, ref.member, tally.counts)
    finally:
        spill.close()


def _pool_read(
    job: ExtractJob, workers: int, members: list[tuple[int, MemberRef]]
) -> Iterator[_MemberRead]:
    """Read ``members`` on ``workers`` processes; each result as it comes.

    A worker that raises sends its traceback and the read fails with it; one that dies
    without a word (killed, out of memory) fails the read too, within a second, with
    :class:`~corpusforge.jobs.WorkerDied`, never hangs it. Leaving stops the workers.
    """
    context = process_context()
    tasks = context.Queue()
    # The members not yet taken go with the workers when the read is left early: without
    # this, the interpreter's exit waits for the queue's thread to write them, which it never
    # can past the pipe's 64 KiB with no worker left to read (Ctrl-C on a day's 1,440
    # members hung the build). A read that ends well leaves nothing unread.
    tasks.cancel_join_thread()
    results = context.Queue()
    for item in members:
        tasks.put(item)
    workers = min(workers, len(members))
    for _ in range(workers):
        tasks.put(None)
    procs = [
        context.Process(target=_work, args=(job, w, tasks, results), daemon=True)
        for w in range(1, workers + 1)
    ]
    running = workers
    try:
        for proc in procs:
            proc.start()
        while running:
            died = dead_worker(EXTRACT_WORKER, procs)
            if died is not None:
                raise died
            try:
                kind, payload = results.get(timeout=1.0)
            except queue.Empty:
                continue
            if kind == "member":
                yield payload
            elif kind == "done":
                running -= 1
            else:
                raise RuntimeError(f"an extract worker failed:\n{payload}")
        for proc in procs:
            proc.join()
    finally:
        for proc in procs:
            if proc.is_alive():  # a process not started is not alive
                proc.terminate()
                proc.join()


def _work(job: ExtractJob, writer: int, tasks: Any, results: Any) -> None:
    """A read worker: members from ``tasks`` until ``None``; each member's counts to
    ``results``, then ``done`` (or ``error`` with the traceback)."""
    start_worker(keep_freed_blocks, HEAP_BLOCK_BYTES, HEAP_HELD_BYTES)
    try:
        for done in _read_members(job, writer, iter(tasks.get, None)):
            results.put(("member", done))
    except BaseException:
        results.put(("error", traceback.format_exc()))
        return
    results.put(("done", writer))


# -- 3 and 4. merge and write ------------------------------------------------------------


def _merge_and_write(
    job: ExtractJob, folder: str, dead_folder: str, rows_per_shard: int
) -> list[dict[str, Any]]:
    """Merge each partition's records and delete notices and write every shard."""
    by_id = FrameShards(
        TWEET, ["id"], rows_per_shard, os.path.join(job.spill, "tweets"), placement="_place"
    )
    deleted = FrameShards(
        DELETE, ["id"], rows_per_shard, os.path.join(job.spill, "deletes"), placement="_place"
    )
    tweets_dest, deletes_dest = join(folder, "tweets"), join(folder, "deletes")
    for p in range(job.partitions):
        records = read_partition(job.spill, "records", p)
        if records is not None:
            by_id.add(tweets_dest, merge_records(records))
        del records
        notices = read_partition(job.spill, "deletes", p)
        if notices is not None:
            deleted.add(deletes_dest, first_origins(notices))
    dead = read_partition(job.spill, "dead", 0)
    key_columns = [c for c in (dead.columns if dead is not None else []) if c.startswith("_k")]
    dead_shards = FrameShards(
        DEAD_LETTER,
        [*key_columns, "_seq"],
        rows_per_shard,
        os.path.join(job.spill, "dead"),
        placement="_place",
    )
    if dead is not None:
        dead_shards.add(dead_folder, dead)
    for dest in (tweets_dest, deletes_dest, dead_folder):
        ensure_dir(dest)
    return by_id.close() + deleted.close() + dead_shards.close()


def merge_records(records: pl.DataFrame) -> pl.DataFrame:
    """One row per tweet id, as :func:`corpusforge.sources.twitter.parse.merge_records`
    keeps it from that id's records (ties go to the earlier ``_seq``); sorted by id."""
    ranked = records.sort(
        [
            "id",
            "embedded_only",
            pl.col("text").str.len_chars(),
            "origin_archive",
            "origin_member",
            "origin_line",
            "_seq",
        ],
        descending=[False, False, True, False, False, False, False],
    )
    first = [c for c in ranked.columns if c not in (*_FILLED, "id", "embedded_only")]
    return ranked.group_by("id", maintain_order=True).agg(
        pl.col(first).first(),
        pl.col("embedded_only").all(),
        *(pl.col(c).drop_nulls().first() for c in _FILLED),
    )


def first_origins(notices: pl.DataFrame) -> pl.DataFrame:
    """One delete notice per id, the one :func:`~corpusforge.sources.twitter.read.first_origin`
    keeps (ties go to the earlier ``_seq``); sorted by id."""
    return notices.sort(["id", "origin_archive", "origin_member", "origin_line", "_seq"]).unique(
        subset=["id"], keep="first", maintain_order=True
    )

"""Batches of raw pairs -> candidate tables, counts and rejected rows, on worker processes.

Step 2 of the local bitext and ParaNMT engine (:mod:`corpusforge.local.bitext`): each batch
of raw pairs (their fields as tuples) goes to a pool of ``workers`` processes that run the
rule both engines share over the batch as a block (:mod:`corpusforge.pairing.candidates`:
clean, lengths, noise filters, decontamination, fastText on both sides) and return the kept
pairs as an Arrow table of candidates (the row, then :data:`META`), the drops counted, and with
``--keep-rejected`` each dropped pair's rejected row. Batches go out with a bounded window
(:data:`IN_FLIGHT_PER_WORKER`), so a slow pool holds back the reader instead of filling
memory; with one worker this process filters them itself. A batch may instead be a byte
range of a plain Moses or TSV unit, which the worker reads itself
(:mod:`corpusforge.local.bitext_read`) and returns with what it read besides the pairs.
"""

from __future__ import annotations

import functools
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from corpusforge.local.bitext_plan import Range
from corpusforge.local.bitext_read import RangeRead, read_range
from corpusforge.local.workers import worker_pool
from corpusforge.pairing.candidates import (
    Candidate,
    Dropped,
    PairRules,
    cap_rank,
    paraphrase_candidates,
)
from corpusforge.pairing.columns import RawPairs, bitext_block
from corpusforge.pairing.rejects import rejected_row
from corpusforge.schemas import SchemaRef, arrow_schema
from corpusforge.sinks.shards import placements
from corpusforge.sources.paranmt.parse import RawParaphrase
from corpusforge.text.langid import LanguageIdentifier

CountKey = tuple[str, ...]

IN_FLIGHT_PER_WORKER = 3
"""Batches queued per worker: enough to keep it busy while the reader reads ahead."""
META = ("_dataset", "_group", "_dedup", "_file", "_member", "_line", "_part", "_rank", "_place")
"""A candidate's columns besides its row: grouping, origin, cap rank, and the hash that
places it in a shard (``sinks.shards.shard_of`` of its sort key, before the modulo)."""


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


_worker: dict[str, Any] = {}


def _start_worker(job: PairJob) -> None:
    _worker["job"] = job
    _worker["lid"] = LanguageIdentifier.load(job.lid_model)


def _filter_batch(batch: list[tuple[Any, ...]]) -> Filtered:
    """A batch of raw pairs (their fields) -> their candidates as a table, the filter's
    counts, and with ``keep_rejected`` the ``(group, rejected row)`` of each pair dropped."""
    job: PairJob = _worker["job"]
    lid: LanguageIdentifier = _worker["lid"]
    if job.kind == "bitext":
        return _filter_bitext(job, lid, RawPairs.of_fields(batch))
    counts: Counter[CountKey] = Counter()
    kept: list[Candidate] = []
    rejected: list[tuple[str, dict[str, Any]]] = []
    # the block rule: fastText once a side over the batch's survivors, as the Beam filter
    for result in paraphrase_candidates([RawParaphrase(*f) for f in batch], job.rules, lid):
        counts[("cand", result.dataset, result.group)] += 1
        if isinstance(result, Dropped):
            _count_drop(job, lid, result, counts, rejected)
        else:
            kept.append(result)
    return _table(job, _columns(job, kept)), counts, rejected


def _filter_range(task: Range) -> tuple[Filtered, RangeRead]:
    """A range of a plain Moses or TSV unit, read here
    (:func:`~corpusforge.local.bitext_read.read_range`) and filtered as :func:`_filter_batch`
    filters a batch; and what was read besides pairs."""
    pairs, read = read_range(task)
    return _filter_bitext(_worker["job"], _worker["lid"], pairs), read


def _filter_bitext(job: PairJob, lid: LanguageIdentifier, pairs: RawPairs) -> Filtered:
    """:func:`_filter_batch` of bitext pairs: the rule over the batch as a block, its kept
    pairs taken by column (:func:`~corpusforge.pairing.columns.bitext_block`)."""
    block = bitext_block(pairs, job.rules, lid)
    tallied = Counter(zip(block.pairs.dataset, block.group, strict=True))
    counts: Counter[CountKey] = Counter({("cand", *key): n for key, n in tallied.items()})
    rejected: list[tuple[str, dict[str, Any]]] = []
    for dropped in block.dropped():
        _count_drop(job, lid, dropped, counts, rejected)
    return _table(job, block.columns()), counts, rejected


def _count_drop(
    job: PairJob,
    lid: LanguageIdentifier,
    dropped: Dropped,
    counts: Counter[CountKey],
    rejected: list[tuple[str, dict[str, Any]]],
) -> None:
    counts[("drop", dropped.dataset, dropped.group, str(dropped.reason))] += 1
    if job.keep_rejected:
        rejected.append((dropped.group, rejected_row(dropped, job.rules, lid)))


def _columns(job: PairJob, kept: list[Candidate]) -> dict[str, list[Any]]:
    """Candidates by column: their rows' (the schema's) and :data:`META`'s first seven."""
    names = _candidate_schema(job.pair_schema).names[: -len(META)]
    # column by column: a tuple per row and their transposition cost more than the rows
    rows = [c.row for c in kept]
    orders = [c.order for c in kept]
    columns: dict[str, list[Any]] = {name: [row[name] for row in rows] for name in names}
    columns["_dataset"] = [c.dataset for c in kept]
    columns["_group"] = [c.group for c in kept]
    columns["_dedup"] = [c.dedup for c in kept]
    columns["_file"] = [order[1] for order in orders]
    columns["_member"] = [order[2] for order in orders]
    columns["_line"] = [order[3] for order in orders]
    columns["_part"] = [order[4] if len(order) > 4 else 0 for order in orders]
    return columns


def _table(job: PairJob, columns: dict[str, Any]) -> pa.Table:
    """The candidate table of ``columns`` (:func:`_columns`), with each row's cap rank and
    shard placement."""
    schema = _candidate_schema(job.pair_schema)
    seed = job.seed
    datasets, groups, dedups = columns["_dataset"], columns["_group"], columns["_dedup"]
    columns["_rank"] = (
        [cap_rank(seed, *key)[0] for key in zip(datasets, groups, dedups, strict=True)]
        if job.ranked
        else np.zeros(len(dedups), dtype=np.uint64)
    )
    sort_keys = zip(dedups, columns["anchor"], columns["positive"], strict=True)
    columns["_place"] = placements(sort_keys)  # a uint64 array, which Arrow takes as it is
    arrays = [pa.array(columns[f.name], type=f.type) for f in schema]
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


Batch = list[tuple[Any, ...]] | Range
"""Work for a filter process: raw pairs' fields, or a range of a unit it reads."""
Done = tuple[Filtered, RangeRead | None]
"""A batch filtered, and for a range what was read besides its pairs."""


def _filter_work(batch: Batch) -> Done:
    if isinstance(batch, list):
        return _filter_batch(batch), None
    return _filter_range(batch)


def filtered(job: PairJob, batches: Iterator[Batch]) -> Iterator[Done]:
    """Each batch filtered, in order: in this process with one worker, else in a pool
    (a worker that dies ends the build: :class:`~corpusforge.jobs.WorkerDied`)."""
    if job.workers <= 1:
        _start_worker(job)
        try:
            yield from map(_filter_work, batches)
        finally:
            _worker.clear()
        return
    worker = _WORKER[job.kind]
    with worker_pool(worker, job.workers, initializer=_start_worker, initargs=(job,)) as pool:
        pending: deque[Future[Done]] = deque()
        for batch in batches:
            pending.append(pool.submit(_filter_work, batch))
            if len(pending) >= IN_FLIGHT_PER_WORKER * job.workers:
                yield pool.result(pending.popleft())
        while pending:
            yield pool.result(pending.popleft())


_WORKER = {"bitext": "a bitext filter worker", "paraphrase": "a ParaNMT filter worker"}
"""Each job kind's filter worker, as an error names it."""

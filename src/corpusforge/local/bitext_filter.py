"""Batches of raw pairs -> candidate tables, counts and rejected rows, on worker processes.

Step 2 of the local bitext and ParaNMT engine (:mod:`corpusforge.local.bitext`): each batch
of raw pairs (their fields as tuples) goes to a pool of ``workers`` processes that run the
per-pair rule both engines share (:mod:`corpusforge.pairing.candidates`: clean, lengths,
noise filters, decontamination, fastText on both sides) and return the kept pairs as an
Arrow table of candidates (the row, then :data:`META`), the drops counted, and with
``--keep-rejected`` each dropped pair's rejected row. Batches go out with a bounded window
(:data:`IN_FLIGHT_PER_WORKER`), so a slow pool holds back the reader instead of filling
memory; with one worker this process filters them itself.
"""

from __future__ import annotations

import functools
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from corpusforge.local.workers import worker_pool
from corpusforge.pairing.candidates import (
    Candidate,
    Dropped,
    PairRules,
    bitext_candidate,
    cap_rank,
    paraphrase_candidate,
)
from corpusforge.pairing.rejects import rejected_row
from corpusforge.schemas import SchemaRef, arrow_schema
from corpusforge.sinks.shards import placement
from corpusforge.sources.opus.records import RawPair
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


def filtered(job: PairJob, batches: Iterator[list[tuple[Any, ...]]]) -> Iterator[Filtered]:
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

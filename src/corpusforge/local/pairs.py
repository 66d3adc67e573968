"""Normalised tweets -> pairs, benchmarks and counts on this machine: the local pair engine.

The pair stage of ``corpusforge twitter build`` when it runs on this machine
(``--pair-engine local``; ``auto`` picks it whenever no ``--runner`` is given). It calls the
same pure functions as the Beam composite :class:`corpusforge.transforms.twitter.TwitterPairs`
(:func:`~corpusforge.pairing.conversations.tweet_node`,
:func:`~corpusforge.pairing.conversations.pair_conversation`,
:func:`~corpusforge.pairing.benchmarks.query_candidates`, …) in the same order of
choice, so the rows, the benchmarks and every count are identical; ``tests/twitter/
test_local_pairs.py`` compares the two engines on every synthetic layout and on the real
sample.

What it does not do is pay Beam's per-element price: on the in-process runner each tweet
crossed four shuffles as a pickled Python object, and the runner held every one of them in
memory at about three times its size. Here the cheap steps are columnar (language and
conversation filters, parent ids and delete notices are Arrow and NumPy columns, decided by id
bucket on disk, in :mod:`corpusforge.local.tweet_rows`), only conversation tweets ever become
Python objects, and those live once, in plain lists and dicts.

Memory is bounded by ``partitions``: the tweets are processed in key-space partitions by
root id (every root and its quotes and replies fall in one partition), whose rows are written
to one Arrow file each in a single read of the extracts, and a partition's conversation
objects are released before the next is read. With ``workers``, partitions are built on
forked worker processes and their results taken here in partition order. Benchmarks are
chosen in a first pass over the partitions that keeps only each partition's best candidates
(enough for the global choice to be exact); pairs are chosen in a second pass, once the
benchmarks' tweets are known. The rows do not depend on the number of partitions or workers
(tested).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from corpusforge.local.chosen import BenchmarkChoice, PairRows, pair_table, summarise_part
from corpusforge.local.machine import process_context, release_unused_memory
from corpusforge.local.spill import (
    PAIR_SPILL_ROWS,
    partition_of,
    pyarrow_without_pandas,
    read_arrow,
    write_arrow,
)
from corpusforge.local.tweet_rows import BYTES_PER_LINK_ROW, MAX_PARTITIONS, TweetRows
from corpusforge.local.workers import shared_at_fork, worker_pool
from corpusforge.pairing.benchmarks import BENCHMARKS, BenchmarkConfig
from corpusforge.pairing.conversations import (
    Conversation,
    DropReason,
    HeldOut,
    Node,
    pair_conversation,
    tweet_node,
)
from corpusforge.text.clean import CleanProfile
from corpusforge.text.decontam import Decontaminator

log = logging.getLogger(__name__)

ROWS_PER_PARTITION = 4_000_000
"""Conversation records per partition when no memory budget is given."""
ROWS_PER_WORKER = 12_500
"""Conversation records each worker process must have, or fewer are started. The split costs
its own work (the spread, conversation files, pickled summaries: about 0.15 CPU-s at 30k
records) but puts the first pass on both cores: at 30k records (a 200k-tweet day) the pair
stage took 1.07 s on two workers against 1.20 s in one process, the build's tail 1.26 s
against 1.39 s (``benchmarks/RESULTS.md``)."""
PAIR_WORKER = "a Twitter pair worker"
"""A partition's worker process, as an error names it."""
BYTES_PER_PARTITION_RECORD = 1_500
"""Peak memory per conversation record of the partition being built (measured: one partition
of 194k records took 567 MB, of 729k records 1,252 MB, ``benchmarks/RESULTS.md``)."""


WORK_SHARE = 0.75
"""The share of the memory budget the pair stage's largest data may take (partitions with
their workers, or the counting pass's id bucket); the rest is margin for what the models
leave out."""
WORKER_BYTES = 192 * 2**20
"""A pair worker's own memory beside its partition: the pages it no longer shares with this
process, its interpreter's heap (measured: workers building partitions of 130k and 174k
records peaked at 390 and 428 MB, ``benchmarks/RESULTS.md``)."""
MAIN_BYTES = 192 * 2**20
"""This process's own memory while partitions are built, beside the benchmark choice: its
heap and the chosen pairs it groups (measured: 191 MB as the first pass began,
``benchmarks/RESULTS.md``)."""
BYTES_PER_BENCHMARK_QUERY = 24 * 2**10
"""The benchmark choice this process merges in the first pass, per query of each benchmark:
up to two candidates with their query and positives as Python objects, the negatives under
their roots, the ``pool_size`` best elsewhere, and their copies while merging (measured: it
grew by 425 MB at 5,000 queries and four benchmarks, about 21 KB a query)."""


def main_bytes(benchmark_queries: int) -> int:
    """This process's memory while partitions are built: its own and its benchmark choice."""
    return MAIN_BYTES + len(BENCHMARKS) * benchmark_queries * BYTES_PER_BENCHMARK_QUERY


def _held(memory_budget: int, benchmark_queries: int) -> float:
    """The bytes of ``memory_budget`` for the partitions being built and their workers: what
    this process leaves, at most :data:`WORK_SHARE` of it."""
    return min(memory_budget * WORK_SHARE, memory_budget - main_bytes(benchmark_queries))


def spare_bytes(memory_budget: int, benchmark_queries: int = 0) -> int:
    """What ``memory_budget`` leaves beside this process's memory and the partitions with
    their workers at their most: the margin kept for what the model leaves out, where another
    process may still fit (none where this process's memory takes it all)."""
    held = _held(memory_budget, benchmark_queries)
    return max(0, int(memory_budget - main_bytes(benchmark_queries) - held))


def pair_workers(memory_budget: int, workers: int, benchmark_queries: int = 0) -> int:
    """How many of ``workers`` processes build partitions: as many as fit beside this process,
    each with its own memory and a partition of :data:`ROWS_PER_WORKER` records; 1 (the
    partitions built in this process, no worker's own memory) where two do not."""
    each = WORKER_BYTES + ROWS_PER_WORKER * BYTES_PER_PARTITION_RECORD
    return max(1, min(workers, int(_held(memory_budget, benchmark_queries) // each)))


def rows_per_partition(memory_budget: int, workers: int = 1, benchmark_queries: int = 0) -> int:
    """Conversation records per round of partitions (one partition a worker) so that the
    partitions being built, each worker's own memory (none with one: this process builds
    them) and this process's fit in ``memory_budget`` bytes, with a quarter of it to spare
    where the budget is large."""
    own = workers * WORKER_BYTES if workers > 1 else 0
    room = _held(memory_budget, benchmark_queries) - own
    return max(50_000, int(room / BYTES_PER_PARTITION_RECORD))


def rows_per_bucket(memory_budget: int) -> int:
    """Extract rows per id bucket of the counting pass so that three quarters of
    ``memory_budget`` bytes hold the bucket being decided. The pass runs in this process before
    any worker starts, so the workers take nothing from it."""
    return max(500_000, int(memory_budget * WORK_SHARE / BYTES_PER_LINK_ROW))


T = TypeVar("T")


@dataclass
class PairStage:
    """What the pair stage produces.

    Attributes:
        pairs: deduplicated (and, with ``pairs_per_dataset``, sampled) ``pair.v1`` rows; they
            may live in the stage's spill folder, so read them before :meth:`close`.
        benchmarks: ``benchmark.v1`` rows per benchmark name.
        counts: the same accounting keys the Beam composite emits.
        spill: the folder holding spilled rows, removed by :meth:`close`.
    """

    pairs: PairRows
    spill: str
    benchmarks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)

    def close(self) -> None:
        shutil.rmtree(self.spill, ignore_errors=True)

    def __enter__(self) -> PairStage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class PairSettings:
    """The settings of :class:`~corpusforge.transforms.twitter.TwitterPairs`, same meaning."""

    profile: CleanProfile
    min_chars: int
    langs: tuple[str, ...]
    seed: int
    benchmarks: BenchmarkConfig | None = None
    pairs_per_dataset: int | None = None
    decontaminator: Decontaminator | None = None
    lid_model: str | None = None


def _home(ids: Sequence[int], partition: int, partitions: int) -> list[bool]:
    """Whether each id falls in ``partition``."""
    values = np.asarray(ids, dtype=np.int64)
    return list(partition_of(values, partitions) == partition)


class _Nodes:
    """Partition rows -> merged, cleaned nodes -> conversations of the partition's roots."""

    def __init__(self, settings: PairSettings) -> None:
        self._settings = settings
        self._profile = settings.profile
        self._langs = frozenset(settings.langs)

    def conversations(
        self,
        rows: Iterable[tuple[dict[str, Any], bool, bool]],
        partition: int,
        partitions: int,
        counts: Counter[str],
    ) -> list[Conversation]:
        """Conversations whose root id falls in ``partition``, in root-id order.

        ``rows`` come with whether their tweet is counted here and whether it is deleted
        (:meth:`~corpusforge.local.tweet_rows.TweetRows.rows`): node counts (``tweets_*``,
        ``decontaminated.*``) are added for the counted tweets, so each tweet is counted once
        over all partitions.
        """
        by_id: dict[int, list[dict[str, Any]]] = defaultdict(list)
        counted: set[int] = set()
        deleted: set[int] = set()
        for row, is_counted, is_deleted in rows:
            by_id[row["id"]].append(row)
            if is_counted:
                counted.add(row["id"])
            if is_deleted:
                deleted.add(row["id"])
        nodes: dict[int, Node] = {}
        quotes: dict[int, list[Node]] = defaultdict(list)
        replies: dict[int, list[Node]] = defaultdict(list)
        for tweet_id in sorted(by_id):
            is_counted = tweet_id in counted
            node = self._node(
                by_id.pop(tweet_id), tweet_id in deleted, counts if is_counted else None
            )
            nodes[tweet_id] = node
            if node.quote_of is not None:
                quotes[node.quote_of].append(node)
            if node.reply_to is not None:
                replies[node.reply_to].append(node)
        roots = sorted(set(quotes) | set(replies))
        mine = _home(roots, partition, partitions)
        return [
            (r, nodes.get(r), quotes.get(r, []), replies.get(r, []))
            for r, is_mine in zip(roots, mine, strict=True)
            if is_mine
        ]

    def _node(
        self, records: list[dict[str, Any]], deleted: bool, counts: Counter[str] | None
    ) -> Node:
        s = self._settings
        node, keys = tweet_node(
            records,
            deleted=deleted,
            profile=self._profile,
            min_chars=s.min_chars,
            langs=self._langs,
            decontaminator=s.decontaminator,
        )
        if counts is not None:
            counts.update(keys)
        return node


def pair_tweets(
    tweet_files: Sequence[str],
    delete_files: Sequence[str],
    settings: PairSettings,
    *,
    partitions: int = 1,
    partition_rows: int = ROWS_PER_PARTITION,
    bucket_rows: int | None = None,
    workdir: str | None = None,
    spill_rows: int = PAIR_SPILL_ROWS,
    workers: int = 1,
    on_benchmarks: Callable[[dict[str, list[dict[str, Any]]]], object] | None = None,
) -> PairStage:
    """Run the whole pair stage over extracts of ``schemas/tweet.v1`` and ``delete.v1``.

    Args:
        tweet_files: tweet Parquet files of every archive.
        delete_files: delete-notice Parquet files of every archive.
        settings: what the rows depend on.
        partitions: key-space partitions by root id; more partitions hold fewer tweets in
            memory at once and read the extracts more often. The rows are the same. ``0``:
            one per ``partition_rows`` conversation records.
        partition_rows: conversation records per partition with ``partitions=0``
            (:func:`rows_per_partition` of a memory budget).
        bucket_rows: extract rows per id bucket of the counting pass
            (:class:`~corpusforge.local.tweet_rows.TweetRows`; :func:`rows_per_bucket` of a
            memory budget); ``None``: as many as the memory of ``partition_rows``
            conversation records holds. The rows are the same.
        workdir: where the spill folder is made (the system's temporary folder if ``None``).
        spill_rows: chosen pairs grouped and written to disk at a time.
        workers: processes that build and look at partitions at once (Linux; speed only:
            the rows are the same). With ``partitions=0`` each holds a ``workers``-th of
            ``partition_rows``, and there are at least ``workers`` partitions; inputs of
            fewer than ``workers × ROWS_PER_WORKER`` conversation records use fewer.
        on_benchmarks: called with the ``benchmark.v1`` rows per benchmark as soon as they
            are chosen, after the first pass and before the second (never without
            benchmarks): what only needs them can go on beside the pair choice.

    Returns:
        The stage; use it in a ``with`` block (or call ``close``), which removes its spill
        folder once the pairs have been read.
    """
    if not 0 <= partitions <= MAX_PARTITIONS:
        raise ValueError(f"partitions must be in [0, {MAX_PARTITIONS}], got {partitions}")
    if partition_rows < 1:
        raise ValueError(f"partition_rows must be >= 1, got {partition_rows}")
    if bucket_rows is None:
        bucket_rows = partition_rows * BYTES_PER_PARTITION_RECORD // BYTES_PER_LINK_ROW
    if bucket_rows < 1:
        raise ValueError(f"bucket_rows must be >= 1, got {bucket_rows}")
    pyarrow_without_pandas()  # a rebuild reuses the extracts: no reader has asked before
    spill = tempfile.mkdtemp(prefix="corpusforge-pairs-", dir=workdir)
    try:
        return _pair_stage(
            tweet_files,
            delete_files,
            settings,
            partitions,
            partition_rows,
            bucket_rows,
            spill,
            spill_rows,
            workers,
            on_benchmarks,
        )
    except BaseException:
        shutil.rmtree(spill, ignore_errors=True)
        raise


def _pair_stage(
    tweet_files: Sequence[str],
    delete_files: Sequence[str],
    settings: PairSettings,
    partitions: int,
    partition_rows: int,
    bucket_rows: int,
    spill: str,
    spill_rows: int,
    workers: int,
    on_benchmarks: Callable[[dict[str, list[dict[str, Any]]]], object] | None,
) -> PairStage:
    counts: Counter[str] = Counter()
    tweets = TweetRows(
        tweet_files, settings.langs, settings.lid_model, settings.profile, spill, bucket_rows
    )
    tweets.count(delete_files, counts)
    forks = process_context().get_start_method() == "fork"  # the workers' tasks are closures
    workers = max(1, min(workers, tweets.kept_rows // ROWS_PER_WORKER)) if forks else 1
    if partitions == 0:
        per_partition = max(1, partition_rows // workers)
        needed = max(workers, -(-tweets.kept_rows // per_partition))
        partitions = min(MAX_PARTITIONS, needed)
    log.info(
        "pair stage: %d conversation records, %d partitions on %d process(es)",
        tweets.kept_rows,
        partitions,
        min(workers, partitions),
    )
    tweets.plan(partitions)
    release_unused_memory()  # the spread's batches
    nodes = _Nodes(settings)

    out = PairStage(PairRows(partitions, spill, spill_rows), spill, counts=counts)
    bench = settings.benchmarks
    parts = _Partitions(tweets, nodes, partitions, spill, workers)

    def take_pairs(chosen: tuple[pa.Table, Counter[str]]) -> None:
        table, pair_counts = chosen
        counts.update(pair_counts)
        out.pairs.add(table)

    if bench is not None and bench.queries > 0:
        choice = BenchmarkChoice(settings.seed, bench, counts)
        parts.first_pass(
            counts, partial(summarise_part, seed=settings.seed, config=bench), choice.merge
        )
        out.benchmarks, held = choice.result()
        del choice
        release_unused_memory()  # the negatives, before the second pass
        if on_benchmarks is not None:
            on_benchmarks(out.benchmarks)
        parts.second_pass(partial(_chosen_pairs, held=held, seed=settings.seed), take_pairs)
    else:
        no_one: HeldOut = (frozenset(), frozenset())
        parts.first_pass(
            counts, partial(_chosen_pairs, held=no_one, seed=settings.seed), take_pairs, keep=False
        )
    out.pairs.finish(settings.pairs_per_dataset, counts)
    return out


R = TypeVar("R")


class _Partitions:
    """Each partition's conversations, built once and handed to a visitor, partition after
    partition: kept for the second pass when there is one partition, else written to an
    Arrow file under ``spill`` (:func:`_write_conversations`) and read back.

    A visit is split in two: ``look`` makes a picklable result from a partition's
    conversations, ``take`` folds it into the stage, in partition order. With ``workers``
    above one, the partitions are built and looked at in forked worker processes, a
    partition each, and only ``take`` runs here; memory is then a partition per worker.
    """

    def __init__(
        self, tweets: TweetRows, nodes: _Nodes, partitions: int, spill: str, workers: int
    ) -> None:
        self._tweets = tweets
        self._nodes = nodes
        self._n = partitions
        self._spill = spill
        self._workers = min(workers, partitions)
        self._kept: list[Conversation] | None = None

    def first_pass(
        self,
        counts: Counter[str],
        look: Callable[[list[Conversation]], R],
        take: Callable[[R], None],
        *,
        keep: bool = True,
    ) -> None:
        def build(p: int) -> tuple[Counter[str], R]:
            node_counts: Counter[str] = Counter()
            part = self._nodes.conversations(self._tweets.rows(p), p, self._n, node_counts)
            if keep and self._n == 1:
                self._kept = part
            elif keep:
                _write_conversations(self._path(p), part)
            return node_counts, look(part)

        for p, (node_counts, result) in enumerate(self._map(build)):
            log.info("pair partition %d of %d", p + 1, self._n)
            counts.update(node_counts)
            take(result)
            del result  # before the next partition is taken

    def second_pass(
        self, look: Callable[[list[Conversation]], R], take: Callable[[R], None]
    ) -> None:
        def read(p: int) -> R:
            if self._kept is not None:
                part, self._kept = self._kept, None
            else:
                part = _read_conversations(self._path(p))
                os.remove(self._path(p))
            return look(part)

        # One round of partitions (one a worker): the pass is short, about a third of the
        # first, and a pool more would cost what it saves; the reference scores
        # (corpusforge.builds.twitter) take the other core meanwhile. This process then holds
        # one partition's conversations at a time, as a worker would.
        one_round = self._n <= self._workers
        for result in self._map(read, workers=1 if one_round else self._workers):
            take(result)
            del result

    def _map(self, task: Callable[[int], T], workers: int | None = None) -> Iterator[T]:
        """``task`` of each partition, in partition order: here, or on ``workers`` processes
        (default: the stage's; forked after ``task`` is set, so nothing of it is pickled but
        the results)."""
        workers = self._workers if workers is None else workers
        if workers <= 1:
            for p in range(self._n):
                yield task(p)
            return
        with (
            shared_at_fork(),
            worker_pool(PAIR_WORKER, workers, initializer=_set_task, initargs=(task,)) as pool,
        ):  # a worker that dies fails the stage (WorkerDied), never hangs it
            pending: deque[Future[T]] = deque()
            for p in range(self._n):
                pending.append(pool.submit(_run_task, p))
                if len(pending) > workers:  # at most a partition ahead per worker
                    yield pool.result(pending.popleft())
            while pending:
                yield pool.result(pending.popleft())

    def _path(self, p: int) -> str:
        return os.path.join(self._spill, f"conversations-{p}.arrow")


_TASK: Callable[[int], Any] | None = None
"""A pair-stage worker's task, inherited at fork (:meth:`_Partitions._map`)."""


def _set_task(task: Callable[[int], Any]) -> None:
    global _TASK
    _TASK = task


def _run_task(p: int) -> Any:
    assert _TASK is not None
    return _TASK(p)


CONVERSATION_NODES = pa.schema(
    [
        ("root_id", pa.int64()),
        ("role", pa.int8()),  # ROOT (its node, or none: id null), QUOTE or REPLY
        ("id", pa.int64()),
        ("text", pa.string()),
        ("lang", pa.string()),
        ("reason", pa.string()),
        ("reply_to", pa.int64()),
        ("quote_of", pa.int64()),
    ]
)
ROOT, QUOTE, REPLY = 0, 1, 2


def _write_conversations(path: str, part: list[Conversation]) -> None:
    """A partition's conversations as one Arrow file: a row per node, in order."""
    columns: dict[str, list[Any]] = {name: [] for name in CONVERSATION_NODES.names}
    row = [columns[name].append for name in CONVERSATION_NODES.names]

    def add(root_id: int, role: int, node: Node | None) -> None:
        values = (None,) * len(Node._fields) if node is None else node
        for append, value in zip(row, (root_id, role, *values), strict=True):
            append(value)

    for root_id, root, quotes, replies in part:
        add(root_id, ROOT, root)
        for node in quotes:
            add(root_id, QUOTE, node)
        for node in replies:
            add(root_id, REPLY, node)
    write_arrow(path, pa.Table.from_pydict(columns, schema=CONVERSATION_NODES))


def _read_conversations(path: str) -> list[Conversation]:
    """The conversations :func:`_write_conversations` wrote, as they were."""
    columns = read_arrow(path).to_pydict()
    part: list[Conversation] = []
    fields = [columns[name] for name in CONVERSATION_NODES.names]
    for root_id, role, tweet_id, text, lang, reason, reply_to, quote_of in zip(
        *fields, strict=True
    ):
        node = None
        if tweet_id is not None:
            why = DropReason(reason) if reason is not None else None
            node = Node(tweet_id, text, lang, why, reply_to, quote_of)
        if role == ROOT:
            quotes: list[Node] = []
            replies: list[Node] = []
            part.append((root_id, node, quotes, replies))
        else:
            assert node is not None
            (quotes if role == QUOTE else replies).append(node)
    return part


def _chosen_pairs(
    part: list[Conversation], held: HeldOut, seed: int
) -> tuple[pa.Table, Counter[str]]:
    """Each conversation's pairs, as a table (:func:`pair_table`: a worker hands back Arrow
    buffers, not a dict per row), and the counts of the choice."""
    rows: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for conversation in part:
        result = pair_conversation(conversation, held, seed=seed)
        for key, n in result.count_items():
            counts[key] += n
        rows += result.pairs
    return pair_table(rows, seed), counts

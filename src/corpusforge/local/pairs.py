"""Normalised tweets -> pairs, benchmarks and counts in one process: the local pair engine.

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
conversation filters, parent ids and delete notices are Arrow and NumPy arrays), only
conversation tweets ever become Python objects, and those live once, in plain lists and
dicts.

Memory is bounded by ``partitions``: the tweets are processed in key-space partitions by
root id (every root and its quotes and replies fall in one partition), each read from the
extracts with a columnar filter, and a partition's conversation objects are released before
the next is read. Benchmarks are chosen in a first pass over the partitions that keeps only
each partition's best candidates (enough for the global choice to be exact); pairs are
chosen in a second pass, once the benchmarks' tweets are known. The rows do not depend on
the number of partitions (tested).
"""

from __future__ import annotations

import heapq
import logging
import operator
import os
import pickle
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import Any, Generic, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from corpusforge.local.spill import PAIR_SPILL_ROWS
from corpusforge.pairing.benchmarks import (
    BenchmarkConfig,
    PoolItem,
    QueryCandidate,
    assemble,
    held_out_items,
    held_out_sets,
    pool_items,
    query_candidates,
    rank_key,
)
from corpusforge.pairing.conversations import (
    CHILDREN_PER_PAIR,
    Conversation,
    DropReason,
    HeldOut,
    Node,
    keep_first_duplicate,
    pair_conversation,
    sample_key,
    tweet_node,
)
from corpusforge.sources.twitter import idsets
from corpusforge.text.clean import CleanProfile, clean_text
from corpusforge.text.decontam import Decontaminator

log = logging.getLogger(__name__)

LINK_COLUMNS = ["id", "lang", "reply_to_id", "quote_of_id"]
BATCH_ROWS = 65_536
MAX_PARTITIONS = 64  # one bit each in a uint64 mask
ROWS_PER_PARTITION = 4_000_000
SMALLEST_SLACK = 1024  # items a _Smallest holds beyond 2 n before it trims

T = TypeVar("T")


PAIR_FIELDS = ("anchor", "positive", "anchor_id", "positive_id", "root_id", "dataset", "lang")
PairValues = tuple[str, str, int, int, int, str, str]  # a pair.v1 row, in PAIR_FIELDS order


def _pair_dict(values: PairValues) -> dict[str, Any]:
    return dict(zip(PAIR_FIELDS, values, strict=True))


class PairRows:
    """The chosen pair rows, in groups of identical-text candidates, within bounded memory.

    Rows are placed in ``groups`` groups by their (dataset, anchor, positive) texts, so every
    duplicate of a pair is in its group and each group is deduplicated alone, exactly. Groups
    stay in memory until ``buffer_rows`` rows are held, then go to run files under ``spill``.
    The grouping uses Python's per-process string hash: it decides only which rows are
    compared with which, never which row is kept, so the output does not depend on it.

    Iterating gives the deduplicated (and, with ``pairs_per_dataset``, sampled) rows as dicts,
    group by group, after :meth:`finish`.
    """

    def __init__(self, groups: int, spill: str, buffer_rows: int) -> None:
        self._n = groups
        self._spill = spill
        self._buffer_rows = buffer_rows
        self._groups: list[list[PairValues]] = [[] for _ in range(groups)]
        self._runs: list[list[str]] = [[] for _ in range(groups)]
        self._held = 0
        self._values = operator.itemgetter(*PAIR_FIELDS)
        self._keep: dict[str, tuple[int, int, int]] | None = None
        self._seed = 0

    def add(self, row: dict[str, Any]) -> None:
        values: PairValues = self._values(row)
        self._groups[hash((values[5], values[0], values[1])) % self._n].append(values)
        self._held += 1
        if self._held >= self._buffer_rows:
            for g in range(self._n):
                self._write_run(g, self._groups[g])
                self._groups[g] = []
            self._held = 0

    def finish(self, seed: int, pairs_per_dataset: int | None, counts: Counter[str]) -> None:
        """Deduplicate every group (counting the drops) and fix the sample, if any.

        Each deduplicated group replaces its runs (or stays in memory if it had none).
        """
        self._seed = seed
        smallest: dict[str, _Smallest[tuple[int, int, int]]] = {}
        for g in range(self._n):
            deduped = _deduplicate(self._group(g), seed, counts)
            if self._runs[g]:
                self._write_run(g, deduped)
                self._groups[g] = []
            else:
                self._groups[g] = deduped
            for values in deduped:
                dataset = values[5]
                if pairs_per_dataset is None:
                    counts[f"pairs.{dataset}.rows"] += 1
                    continue
                counts[f"pairs.{dataset}.deduped"] += 1
                smallest.setdefault(dataset, _Smallest(pairs_per_dataset, lambda k: k)).add(
                    sample_key(seed, _pair_dict(values))
                )
        if pairs_per_dataset is not None:
            self._keep = {}
            for dataset, keys in smallest.items():
                kept = keys.result()
                counts[f"pairs.{dataset}.rows"] += len(kept)
                self._keep[dataset] = kept[-1]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for g in range(self._n):
            for values in self._group(g, keep=True):
                row = _pair_dict(values)
                if self._keep is None or sample_key(self._seed, row) <= self._keep[values[5]]:
                    yield row

    def _group(self, g: int, *, keep: bool = False) -> list[PairValues]:
        rows = list(self._groups[g])
        for path in self._runs[g]:
            with open(path, "rb") as f:
                rows += pickle.load(f)
            if not keep:
                os.remove(path)
        if not keep:
            self._runs[g] = []
        return rows

    def _write_run(self, g: int, rows: list[PairValues]) -> None:
        if not rows:
            return
        path = os.path.join(self._spill, f"pairs-{g}-{len(self._runs[g])}.pickle")
        with open(path, "wb") as f:
            pickle.dump(rows, f, protocol=pickle.HIGHEST_PROTOCOL)
        self._runs[g].append(path)


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


class _Smallest(Generic[T]):
    """The ``n`` items with the smallest keys, holding at most about ``2 n`` at a time."""

    def __init__(self, n: int, key: Callable[[T], Any]) -> None:
        self._n = n
        self._key = key
        self._items: list[T] = []

    def add(self, item: T) -> None:
        self._items.append(item)
        if len(self._items) >= 2 * self._n + SMALLEST_SLACK:
            self._items = heapq.nsmallest(self._n, self._items, key=self._key)

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self.add(item)

    def result(self) -> list[T]:
        return heapq.nsmallest(self._n, self._items, key=self._key)


def partition_of(ids: np.ndarray, partitions: int) -> np.ndarray:
    """The partition of each id (a stable integer mix, the same on every machine)."""
    x = ids.astype(np.uint64, copy=True)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return (x % np.uint64(partitions)).astype(np.int64)


def _ids(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """An int64 column as NumPy, nulls as ``-1`` (no tweet id is negative)."""
    return np.asarray(pc.fill_null(column, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


@dataclass(frozen=True)
class _Decision:
    """What the counting pass decided for one batch of rows: which rows are kept (packed
    bits) and, with fastText, the language predicted for each kept row (an index into the
    selected languages)."""

    rows: int
    keep: np.ndarray
    langs: np.ndarray | None


class _Tweets:
    """The selected-language conversation rows of the extracts, read in column batches.

    The language (Twitter's field, or fastText's prediction on the cleaned text) and the
    conversation test (replies, quotes, or is replied to or quoted) are decided once, in a
    counting pass, and kept (one bit a row, one byte a kept row's predicted language); later
    passes read only the rows of one partition and decide nothing again.
    """

    def __init__(self, files: Sequence[str], settings: PairSettings) -> None:
        self._files = list(files)
        self._langs = pa.array(sorted(settings.langs), pa.string())
        self._lid = None
        if settings.lid_model is not None:
            from corpusforge.text.langid import LanguageIdentifier

            self._lid = LanguageIdentifier.load(settings.lid_model or None)
            self._profile = settings.profile
        self.parents = self._parent_ids()
        self._decisions: list[_Decision] = []

    def _batches(self, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
        for path in self._files:
            yield from pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, columns=columns)

    def _parent_ids(self) -> np.ndarray:
        """Ids some selected tweet replies to or quotes (every tweet's, with fastText)."""
        parts = []
        for batch in self._batches(LINK_COLUMNS):
            if self._lid is None:
                batch = batch.filter(pc.fill_null(pc.is_in(batch["lang"], self._langs), False))
            for column in ("reply_to_id", "quote_of_id"):
                values = _ids(batch[column])
                parts.append(values[values >= 0])
        return idsets.union(parts)

    def _decide(self, batch: pa.RecordBatch, counts: Counter[str]) -> _Decision:
        """Which of the batch's rows are in a selected language and in a conversation."""
        langs = batch["lang"]
        if self._lid is not None:
            texts = batch["text"].to_pylist()
            langs = pa.array(
                [self._lid.predict(clean_text(t, self._profile))[0] for t in texts], pa.string()
            )
        in_lang = pc.fill_null(pc.is_in(langs, self._langs), False).to_numpy(zero_copy_only=False)
        linked = (_ids(batch["reply_to_id"]) >= 0) | (_ids(batch["quote_of_id"]) >= 0)
        keep = in_lang & (linked | idsets.member_of(_ids(batch["id"]), self.parents))
        _add(counts, "records_in", batch.num_rows)
        _add(counts, "records_lang_not_selected", int(batch.num_rows - in_lang.sum()))
        _add(counts, "records_in_conversations", int(keep.sum()))
        _add(counts, "records_outside_conversations", int(in_lang.sum() - keep.sum()))
        codes = None
        if self._lid is not None:
            kept_langs = pc.index_in(langs.filter(pa.array(keep)), self._langs)
            codes = kept_langs.to_numpy().astype(np.min_scalar_type(len(self._langs)))
        return _Decision(batch.num_rows, np.packbits(keep), codes)

    def count_and_ids(self, counts: Counter[str]) -> np.ndarray:
        """Count every row read (the accounting of the record filter); the kept ids, sorted.

        Keeps each kept row's id and links (24 bytes a row) for :meth:`plan`.
        """
        columns = LINK_COLUMNS + (["text"] if self._lid is not None else [])
        links: list[list[np.ndarray]] = [[], [], []]
        for batch in self._batches(columns):
            decision = self._decide(batch, counts)
            self._decisions.append(decision)
            kept = self._kept(batch, decision)
            for i, column in enumerate(("id", "reply_to_id", "quote_of_id")):
                links[i].append(_ids(kept[column]))
        self._links = [np.concatenate(parts) if parts else np.empty(0, np.int64) for parts in links]
        return np.unique(self._links[0])

    def _kept(self, batch: pa.RecordBatch, decision: _Decision) -> pa.RecordBatch:
        """The batch's kept rows, with the predicted language when fastText decided it."""
        if batch.num_rows != decision.rows:
            raise RuntimeError(
                f"a batch of {batch.num_rows} rows where the counting pass read {decision.rows}:"
                " the extracts changed during the pair stage"
            )
        kept = batch.filter(pa.array(np.unpackbits(decision.keep, count=decision.rows) == 1))
        if decision.langs is None:
            return kept
        langs = self._langs.take(pa.array(decision.langs))
        return kept.set_column(kept.schema.get_field_index("lang"), "lang", langs)

    @property
    def kept_rows(self) -> int:
        return len(self._links[0])

    def plan(self, partitions: int) -> None:
        """Record, per kept id, the partitions any of its records belongs to.

        A record belongs to the partition of its own id and of each id it links to, so each
        partition later reads every record of a tweet it needs, even where the records of
        one tweet disagree about its links.
        """
        ids, reply, quote = self._links
        del self._links
        if partitions == 1 or len(ids) == 0:
            self._ids = self._masks = np.empty(0, np.int64)
            return
        mask = np.zeros(len(ids), dtype=np.uint64)
        for column in (ids, reply, quote):
            bits = np.left_shift(np.uint64(1), partition_of(column, partitions).astype(np.uint64))
            mask |= np.where(column >= 0, bits, np.uint64(0))
        order = np.argsort(ids, kind="stable")
        ids, mask = ids[order], mask[order]
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        self._ids, self._masks = ids[starts], np.bitwise_or.reduceat(mask, starts)

    def rows(self, partition: int, partitions: int) -> Iterator[dict[str, Any]]:
        """The kept rows of every tweet that is, replies to or quotes a root of ``partition``."""
        bit = np.uint64(1) << np.uint64(partition)
        for batch, decision in zip(self._batches(), self._decisions, strict=True):
            kept = self._kept(batch, decision)
            if partitions > 1:
                i, near = idsets.find(_ids(kept["id"]), self._ids)
                near[near] = (self._masks[i[near]] & bit) != 0  # found, and in this partition
                kept = kept.filter(pa.array(near))
            yield from kept.to_pylist()


def _add(counts: Counter[str], key: str, n: int) -> None:
    """Add ``n`` to ``key``; a zero creates no key (as no element would in Beam)."""
    if n:
        counts[key] += n


def _home(ids: Iterable[int | None], partition: int, partitions: int) -> list[bool]:
    values = np.fromiter((-1 if i is None else i for i in ids), dtype=np.int64)
    return list((values >= 0) & (partition_of(values, partitions) == partition))


class _Nodes:
    """Partition rows -> merged, cleaned nodes -> conversations of the partition's roots."""

    def __init__(self, settings: PairSettings, deleted: np.ndarray) -> None:
        self._settings = settings
        self._deleted = deleted
        self._profile = settings.profile
        self._langs = frozenset(settings.langs)

    def conversations(
        self, rows: Iterable[dict[str, Any]], partition: int, partitions: int, counts: Counter[str]
    ) -> list[Conversation]:
        """Conversations whose root id falls in ``partition``, in root-id order.

        Node counts (``tweets_*``, ``decontaminated.*``) are added for the tweets whose own
        id falls in ``partition``, so each tweet is counted once over all partitions.
        """
        by_id: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            by_id[row["id"]].append(row)
        ids = sorted(by_id)
        deleted = idsets.member_of(np.asarray(ids, dtype=np.int64), self._deleted)
        home = _home(ids, partition, partitions)
        nodes: dict[int, Node] = {}
        quotes: dict[int, list[Node]] = defaultdict(list)
        replies: dict[int, list[Node]] = defaultdict(list)
        for tweet_id, is_deleted, is_home in zip(ids, deleted, home, strict=True):
            node = self._node(by_id.pop(tweet_id), bool(is_deleted), counts if is_home else None)
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


def _deleted_ids(delete_files: Sequence[str], kept: np.ndarray) -> np.ndarray:
    parts = []
    for path in delete_files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, columns=["id"]):
            ids = _ids(batch["id"])
            parts.append(ids[idsets.member_of(ids, kept)])
    return idsets.union(parts)


def pair_tweets(
    tweet_files: Sequence[str],
    delete_files: Sequence[str],
    settings: PairSettings,
    *,
    partitions: int = 1,
    workdir: str | None = None,
    spill_rows: int = PAIR_SPILL_ROWS,
) -> PairStage:
    """Run the whole pair stage over extracts of ``schemas/tweet.v1`` and ``delete.v1``.

    Args:
        tweet_files: tweet Parquet files of every archive.
        delete_files: delete-notice Parquet files of every archive.
        settings: what the rows depend on.
        partitions: key-space partitions by root id; more partitions hold fewer tweets in
            memory at once and read the extracts more often. The rows are the same. ``0``:
            one per ``ROWS_PER_PARTITION`` conversation records.
        workdir: where the spill folder is made (the system's temporary folder if ``None``).
        spill_rows: chosen pairs held in memory before they are spilled to disk.

    Returns:
        The stage; use it in a ``with`` block (or call ``close``), which removes its spill
        folder once the pairs have been read.
    """
    if not 0 <= partitions <= MAX_PARTITIONS:
        raise ValueError(f"partitions must be in [0, {MAX_PARTITIONS}], got {partitions}")
    spill = tempfile.mkdtemp(prefix="corpusforge-pairs-", dir=workdir)
    try:
        return _pair_stage(tweet_files, delete_files, settings, partitions, spill, spill_rows)
    except BaseException:
        shutil.rmtree(spill, ignore_errors=True)
        raise


def _pair_stage(
    tweet_files: Sequence[str],
    delete_files: Sequence[str],
    settings: PairSettings,
    partitions: int,
    spill: str,
    spill_rows: int,
) -> PairStage:
    counts: Counter[str] = Counter()
    tweets = _Tweets(tweet_files, settings)
    kept = tweets.count_and_ids(counts)
    if partitions == 0:
        partitions = min(MAX_PARTITIONS, max(1, -(-tweets.kept_rows // ROWS_PER_PARTITION)))
    log.info("pair stage: %d conversation records, %d partitions", tweets.kept_rows, partitions)
    tweets.plan(partitions)
    nodes = _Nodes(settings, _deleted_ids(delete_files, kept))
    del kept

    out = PairStage(PairRows(partitions, spill, spill_rows), spill, counts=counts)
    bench = settings.benchmarks
    parts = _Partitions(tweets, nodes, partitions, spill)

    choose_pairs = partial(_choose_pairs, seed=settings.seed, counts=counts, pairs=out.pairs)
    if bench is not None and bench.queries > 0:
        choice = _BenchmarkChoice(settings.seed, bench, counts)
        parts.first_pass(counts, choice.add, keep=True)
        out.benchmarks, held = choice.result()
        parts.second_pass(partial(choose_pairs, held=held))
    else:
        parts.first_pass(counts, partial(choose_pairs, held=(frozenset(), frozenset())), keep=False)
    out.pairs.finish(settings.seed, settings.pairs_per_dataset, counts)
    return out


Visit = Callable[[list[Conversation]], None]


class _Partitions:
    """Each partition's conversations, built once and handed to a visitor, one partition in
    memory at a time: kept for the second pass when there is one partition, else spilled to
    ``spill`` (pickled) and read back."""

    def __init__(self, tweets: _Tweets, nodes: _Nodes, partitions: int, spill: str) -> None:
        self._tweets = tweets
        self._nodes = nodes
        self._n = partitions
        self._spill = spill
        self._kept: list[Conversation] | None = None

    def first_pass(self, counts: Counter[str], visit: Visit, *, keep: bool) -> None:
        for p in range(self._n):
            log.info("pair partition %d of %d", p + 1, self._n)
            part = self._nodes.conversations(self._tweets.rows(p, self._n), p, self._n, counts)
            if keep and self._n == 1:
                self._kept = part
            elif keep:
                with open(self._path(p), "wb") as f:
                    pickle.dump(part, f, protocol=pickle.HIGHEST_PROTOCOL)
            visit(part)
            del part  # before the next partition is built

    def second_pass(self, visit: Visit) -> None:
        if self._kept is not None:
            part, self._kept = self._kept, None
            visit(part)
            return
        for p in range(self._n):
            with open(self._path(p), "rb") as f:
                part = pickle.load(f)
            os.remove(self._path(p))
            visit(part)
            del part  # before the next partition is read

    def _path(self, p: int) -> str:
        return os.path.join(self._spill, f"{p}.pickle")


def _choose_pairs(
    part: list[Conversation],
    held: HeldOut,
    seed: int,
    counts: Counter[str],
    pairs: PairRows,
) -> None:
    """Each conversation's pairs, added to ``pairs``."""
    for conversation in part:
        result = pair_conversation(conversation, held, seed=seed)
        for key, n in result.count_items():
            counts[key] += n
        for row in result.pairs:
            pairs.add(row)


class _BenchmarkChoice:
    """Choose the queries and negatives, partition by partition, exactly as over the whole
    input.

    A partition keeps its ``queries`` best candidates per benchmark (the global best are
    among them) and every negative under those candidates' roots (one of them may become a
    chosen query's root, or not). A negative elsewhere can never be excluded as a chosen
    query's own, so of those only the ``pool_size`` best over all partitions so far are
    kept: memory is bounded by the benchmark size, not by the input or the partitions.
    """

    def __init__(self, seed: int, config: BenchmarkConfig, counts: Counter[str]) -> None:
        self._seed = seed
        self._config = config
        self._counts = counts
        self._queries: dict[str, _Smallest[QueryCandidate]] = {}
        self._pool: dict[str, list[PoolItem]] = defaultdict(list)
        self._elsewhere: defaultdict[str, _Smallest[PoolItem]] = defaultdict(
            lambda: _Smallest(config.pool_size, rank_key)
        )

    def add(self, part: list[Conversation]) -> None:
        seed, config, counts = self._seed, self._config, self._counts
        local: dict[str, _Smallest[QueryCandidate]] = {}
        for conversation in part:
            for bench, candidate in query_candidates(*conversation, seed=seed, config=config):
                counts[f"benchmarks.{bench}.eligible_queries"] += 1
                local.setdefault(bench, _Smallest(config.queries, rank_key)).add(candidate)
        best = {bench: s.result() for bench, s in local.items()}
        roots = {bench: {c.root_id for c in chosen} for bench, chosen in best.items()}
        for root_id, _, quotes, replies in part:
            for bench, item in pool_items(root_id, quotes, replies, seed=seed):
                if item.root_id in roots.get(bench, ()):
                    self._pool[bench].append(item)
                else:
                    self._elsewhere[bench].add(item)
        for bench, chosen in best.items():
            self._queries.setdefault(bench, _Smallest(config.queries, rank_key)).extend(chosen)

    def result(self) -> tuple[dict[str, list[dict[str, Any]]], HeldOut]:
        """The ``benchmark.v1`` rows per benchmark and the tweets they hold out."""
        config, counts = self._config, self._counts
        selected = {bench: s.result() for bench, s in self._queries.items()}
        elsewhere = {bench: s.result() for bench, s in self._elsewhere.items()}
        rows: dict[str, list[dict[str, Any]]] = {}
        for bench in sorted(set(selected) | set(self._pool) | set(elsewhere)):
            taken = {q.root_id for q in selected.get(bench, [])}
            pool = chain(self._pool.get(bench, []), elsewhere.get(bench, []))
            negatives = heapq.nsmallest(
                config.pool_size, (p for p in pool if p.root_id not in taken), key=rank_key
            )
            assembled = assemble(
                bench, selected.get(bench, []), negatives, seed=self._seed, config=config
            )
            counts[f"benchmarks.{bench}.selected_queries"] += assembled.eligible_queries
            counts[f"benchmarks.{bench}.queries_without_negatives"] += (
                assembled.queries_without_negatives
            )
            counts[f"benchmarks.{bench}.rows"] += len(assembled.rows)
            if assembled.rows:
                rows[bench] = assembled.rows
        held = held_out_sets(
            item for bench_rows in rows.values() for r in bench_rows for item in held_out_items(r)
        )
        return rows, held


def _deduplicate(group: list[PairValues], seed: int, counts: Counter[str]) -> list[PairValues]:
    """Of pairs with identical texts in one dataset, the one :func:`keep_first_duplicate` keeps."""
    by_text: dict[tuple[str, str, str], list[PairValues]] = defaultdict(list)
    for values in group:
        by_text[values[5], values[0], values[1]].append(values)
    group.clear()
    out = []
    for (dataset, _, _), rows in by_text.items():
        if len(rows) == 1:
            out.append(rows[0])
            continue
        kept, dropped = keep_first_duplicate(seed, [_pair_dict(v) for v in rows])
        counts[f"pairs.{dataset}.dropped.{DropReason.PAIR_DUPLICATE_TEXT}"] += (
            dropped * CHILDREN_PER_PAIR[dataset]
        )
        out.append(tuple(kept[name] for name in PAIR_FIELDS))
    return out

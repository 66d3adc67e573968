"""Beam wiring of the Twitter pair stage: normalised tweets and delete notices -> pairs.

:class:`TwitterPairs` keeps the tweets that can be in a pair (:class:`ConversationRecords`:
language and conversation filters and the delete notices, every row counted), cleans each
tweet into a conversation node, groups the nodes by root, chooses the benchmarks
(:class:`TwitterBenchmarks`) and holds their tweets out, then gives one pair per root and
dataset, keeps exact-duplicate texts once and, with ``pairs_per_dataset``, samples each
dataset by seeded hash; with counts for every drop. Every choice is a pure function of
``corpusforge.pairing`` and ``corpusforge.text``, the ones the local engine
(:mod:`corpusforge.local.pairs`) calls in the same order, so both write the same rows.

Scale out, not up: whatever grows with the input travels through groupings keyed by tweet
id, root, text, dataset or shard, never as a side input or a global combine, so no worker
holds the input's ids. What stays is bounded by the configuration (:data:`BOUNDED_SIDE_INPUTS`
and :data:`BOUNDED_GLOBAL`, checked on the job graph by ``tests/twitter/test_scale_out.py``):

- ``NotUnderQueryRoots`` reads the chosen queries' root ids: ``--benchmark-queries`` a
  benchmark;
- ``PairRoots`` reads the held-out tweet ids and text hashes, gathered by the global
  ``HeldOutList``: ``--benchmark-queries`` rows a benchmark, each of a root and
  ``--benchmark-positives`` plus ``--benchmark-negatives`` tweets;
- ``SamplePerDataset`` reads one sample priority per dataset (:class:`SampledPairs`), with
  ``--pairs-per-dataset``;
- the sink's ``AssignShard`` reads one row count per output folder (each dataset, and all).

The per-key tops are bounded the same way: ``ChooseQueries`` by ``--benchmark-queries``,
``ChooseNegatives`` by the benchmarks' pool size (``--benchmark-queries`` times
``--benchmark-negatives``, with slack), ``SamplePerDataset`` by ``--pairs-per-dataset``
integers, never rows.

Counts travel as ``(key, n)`` elements (summed later) and as Beam metrics, so the release's
accounting does not depend on a runner's metrics support.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput

from corpusforge import heap
from corpusforge.pairing.benchmarks import (
    BenchmarkConfig,
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
from corpusforge.text.clean import CleanProfile, clean_text
from corpusforge.text.decontam import Decontaminator
from corpusforge.transforms.tags import COUNTS


class _SelectLangFn(beam.DoFn):
    """Tweet rows -> the rows in a selected language (main); counts of the others.

    With a language identifier (``lid_model`` set, ``--lid fasttext``), the language is
    fastText's prediction on the cleaned text instead of Twitter's ``lang`` field.
    """

    def __init__(
        self, langs: tuple[str, ...], lid_model: str | None, profile: CleanProfile
    ) -> None:
        self._langs = frozenset(langs)
        self._lid_model = lid_model
        self._profile = profile

    def setup(self) -> None:
        heap.bound_worker_heap()
        self._lid = None
        if self._lid_model is not None:
            from corpusforge.text.langid import LanguageIdentifier

            self._lid = LanguageIdentifier.load(self._lid_model or None)

    def process(self, row: dict[str, Any]) -> Iterator[Any]:
        yield TaggedOutput(COUNTS, ("records_in", 1))
        if self._lid is not None:
            lang, _ = self._lid.predict(clean_text(row["text"], self._profile))
            row = {**row, "lang": lang}
        if row["lang"] in self._langs:
            yield row
        else:
            yield TaggedOutput(COUNTS, ("records_lang_not_selected", 1))


BOUNDED_SIDE_INPUTS = {
    "Pairs/Benchmarks/NotUnderQueryRoots": "the chosen queries' roots: --benchmark-queries "
    "a benchmark",
    "Pairs/PairRoots": "the benchmarks' tweet ids and text hashes: --benchmark-queries rows a "
    "benchmark, each of a root, its positives and negatives",
    "Pairs/SamplePerDataset/KeepSampled": "the last sample priority kept: one integer per "
    "dataset (--pairs-per-dataset only)",
    "WritePairs/AssignShard": "one row count per output folder: the datasets and all",
}
"""The side inputs of the pair pipeline (``builds/twitter_beam.py``), by the label of the step
that reads them, and why their size is bounded by the configuration, not by the input."""

BOUNDED_GLOBAL = {
    "Pairs/Benchmarks/HeldOutList": "the benchmarks' held-out items, as for Pairs/PairRoots",
}
"""The global combines of the pair pipeline, and why their size is bounded."""

RECORD, LINKED, DELETED = "record", "linked", "deleted"
"""What a value grouped under a tweet id says (:class:`_KeepConversationsFn`)."""


class _KeepConversationsFn(beam.DoFn):
    """(id, [(role, value)]) -> (id, (conversation records, deleted)); counts of every record.

    The roles: ``record`` (a selected row of that id, from one archive), ``linked`` (some
    row replies to or quotes the id), ``deleted`` (a delete notice of the id). A record is
    kept when it replies, quotes, or is replied to or quoted. The links and delete notices
    are read as flags, never held: a tweet replied to a million times costs one flag.
    """

    def process(self, element: tuple[int, Iterable[tuple[str, Any]]]) -> Iterator[Any]:
        tweet_id, values = element
        records: list[dict[str, Any]] = []
        linked = deleted = False
        for role, value in values:
            if role == RECORD:
                records.append(value)
            elif role == LINKED:
                linked = True
            else:
                deleted = True
        kept = [
            r
            for r in records
            if linked or r["reply_to_id"] is not None or r["quote_of_id"] is not None
        ]
        if len(kept) < len(records):
            yield TaggedOutput(COUNTS, ("records_outside_conversations", len(records) - len(kept)))
        if kept:  # a delete notice of a tweet outside the conversations goes no further
            yield TaggedOutput(COUNTS, ("records_in_conversations", len(kept)))
            yield tweet_id, (kept, deleted)


def _parent_links(row: dict[str, Any]) -> list[tuple[int, tuple[str, None]]]:
    return [(i, (LINKED, None)) for i in (row["reply_to_id"], row["quote_of_id"]) if i is not None]


class ConversationRecords(beam.PTransform):
    """``{"rows", "deletes"?}`` -> ``{"records", "counts"}``: the rows that can be in a pair.

    A tweet can be in a pair only when its language is selected and it replies, quotes, or
    is replied to or quoted. Every selected row is keyed by its own id, every reply or quote
    by the id it points to, every delete notice by its id, and one grouping by id decides
    (:class:`_KeepConversationsFn`): no set of ids is gathered in one place, so the work
    spreads over the workers by id whatever the input's size. ``records`` holds ``(id,
    (records, deleted))``: the conversation records of one tweet id (one per archive that
    has it) and whether a delete notice names it. Every row in is counted:
    ``records_in == records_lang_not_selected + records_outside_conversations +
    records_in_conversations``.

    Args:
        langs: languages kept.
        lid_model: ``None`` to trust Twitter's ``lang`` field; a model path (``""``: the
            packaged lid.176) to predict languages with fastText instead.
        profile: cleaning profile applied before prediction.
    """

    def __init__(
        self,
        langs: tuple[str, ...],
        lid_model: str | None,
        profile: CleanProfile,
    ) -> None:
        super().__init__()
        self._langs = langs
        self._lid_model = lid_model
        self._profile = profile

    def expand(self, inputs: dict[str, beam.PCollection]) -> dict[str, beam.PCollection]:
        selected = inputs["rows"] | "SelectLang" >> beam.ParDo(
            _SelectLangFn(self._langs, self._lid_model, self._profile)
        ).with_outputs(COUNTS, main="rows")
        # by the lang field, only selected children link; with fastText every child's links
        # count (a superset, so no parent is missed), as the local engine counts them
        children = selected.rows if self._lid_model is None else inputs["rows"]
        tagged = [
            selected.rows | "KeyRecordsById" >> beam.Map(lambda r: (r["id"], (RECORD, r))),
            children | "KeyLinksByParentId" >> beam.FlatMap(_parent_links),
        ]
        if "deletes" in inputs:
            tagged.append(
                inputs["deletes"]
                | "KeyDeletesById" >> beam.Map(lambda r: (r["id"], (DELETED, None)))
            )
        kept = (
            tuple(tagged)
            | "TagById" >> beam.Flatten()
            | "GroupById" >> beam.GroupByKey()
            | "KeepConversations"
            >> beam.ParDo(_KeepConversationsFn()).with_outputs(COUNTS, main="records")
        )
        counts = (selected[COUNTS], kept[COUNTS]) | "RecordCounts" >> beam.Flatten()
        return {"records": kept.records, "counts": counts}


class _NodeFn(beam.DoFn):
    """(id, (records, deleted)) -> conversation edges of the cleaned node; counts."""

    def __init__(
        self,
        profile: CleanProfile,
        min_chars: int,
        langs: tuple[str, ...],
        decontaminator: Decontaminator | None,
    ) -> None:
        self._profile = profile
        self._min_chars = min_chars
        self._langs = frozenset(langs)
        self._decontaminator = decontaminator

    def process(self, element: tuple[int, tuple[list[dict[str, Any]], bool]]) -> Iterator[Any]:
        tweet_id, (records, deleted) = element
        node, keys = tweet_node(
            records,
            deleted=deleted,
            profile=self._profile,
            min_chars=self._min_chars,
            langs=self._langs,
            decontaminator=self._decontaminator,
        )
        for key in keys:
            yield TaggedOutput(COUNTS, (key, 1))
        if node.reason is not None:
            Metrics.counter("clean", str(node.reason)).inc()
        yield tweet_id, ("self", node)
        if node.quote_of is not None:
            yield node.quote_of, ("quote", node)
        if node.reply_to is not None:
            yield node.reply_to, ("reply", node)


def _conversation(element: tuple[int, Iterable[tuple[str, Node]]]) -> Iterator[Conversation]:
    """(root id, [(role, node)]) -> (root id, root node or None, quotes, replies)."""
    root_id, members = element
    root: Node | None = None
    quotes: list[Node] = []
    replies: list[Node] = []
    for role, node in members:
        if role == "self":
            root = node
        elif role == "quote":
            quotes.append(node)
        else:
            replies.append(node)
    if quotes or replies:
        yield root_id, root, sorted(quotes, key=_node_id), sorted(replies, key=_node_id)


def _node_id(node: Node) -> int:
    return node.id


class _PairRootFn(beam.DoFn):
    """A conversation -> (dedup key, pair row); counts of candidates and drops.

    Side input ``held``: the benchmarks' ids and text hashes (:func:`pair_conversation`).
    """

    def __init__(self, seed: int) -> None:
        self._seed = seed

    def process(self, conversation: Conversation, held: HeldOut) -> Iterator[Any]:
        result = pair_conversation(conversation, held, seed=self._seed)
        for item in result.count_items():
            yield TaggedOutput(COUNTS, item)
        for (dataset, reason), n in result.dropped.items():
            Metrics.counter(f"pairs_{dataset}", str(reason)).inc(n)
        for row in result.pairs:
            yield (row["dataset"], row["anchor"], row["positive"]), row


class _DedupTextFn(beam.DoFn):
    def __init__(self, seed: int) -> None:
        self._seed = seed

    def process(
        self, element: tuple[tuple[str, str, str], Iterable[dict[str, Any]]]
    ) -> Iterator[Any]:
        (dataset, _, _), rows = element
        kept, dropped = keep_first_duplicate(self._seed, list(rows))
        if dropped:
            n = dropped * CHILDREN_PER_PAIR[dataset]
            yield TaggedOutput(
                COUNTS, (f"pairs.{dataset}.dropped.{DropReason.PAIR_DUPLICATE_TEXT}", n)
            )
            Metrics.counter(f"pairs_{dataset}", str(DropReason.PAIR_DUPLICATE_TEXT)).inc(n)
        yield dict(kept)


class _AssembleFn(beam.DoFn):
    def __init__(self, seed: int, config: BenchmarkConfig) -> None:
        self._seed = seed
        self._config = config

    def process(self, element: tuple[str, dict[str, list[Any]]]) -> Iterator[Any]:
        bench, groups = element
        queries = [q for chosen in groups["queries"] for q in chosen]
        pool = [p for chosen in groups["pool"] for p in chosen]
        assembled = assemble(bench, queries, pool, seed=self._seed, config=self._config)
        yield TaggedOutput(
            COUNTS, (f"benchmarks.{bench}.selected_queries", assembled.eligible_queries)
        )
        yield TaggedOutput(
            COUNTS,
            (f"benchmarks.{bench}.queries_without_negatives", assembled.queries_without_negatives),
        )
        yield TaggedOutput(COUNTS, (f"benchmarks.{bench}.rows", len(assembled.rows)))
        for row in assembled.rows:
            yield bench, row


class TwitterBenchmarks(beam.PTransform):
    """Conversations -> ``{"rows": (benchmark, row), "held": HeldOut singleton, "counts"}``.

    Args:
        seed: seed of every choice.
        config: benchmark sizes.
    """

    def __init__(self, seed: int, config: BenchmarkConfig) -> None:
        super().__init__()
        self._seed = seed
        self._config = config

    def expand(self, conversations: beam.PCollection) -> dict[str, beam.PCollection]:
        seed, config = self._seed, self._config
        candidates = conversations | "QueryCandidates" >> beam.FlatMap(
            lambda c: query_candidates(*c, seed=seed, config=config)
        )
        eligible = (
            candidates
            | "EligibleKey" >> beam.Map(lambda kv: (f"benchmarks.{kv[0]}.eligible_queries", 1))
            | "CountEligible" >> beam.CombinePerKey(sum)
        )
        selected = candidates | "ChooseQueries" >> beam.combiners.Top.PerKey(
            config.queries, key=rank_key, reverse=True
        )
        roots = selected | "QueryRoots" >> beam.Map(
            lambda kv: (kv[0], frozenset(q.root_id for q in kv[1]))
        )
        pool = (
            conversations
            | "PoolItems" >> beam.FlatMap(lambda c: pool_items(c[0], c[2], c[3], seed=seed))
            | "NotUnderQueryRoots"
            >> beam.Filter(
                lambda kv, r: kv[1].root_id not in r.get(kv[0], ()), r=beam.pvalue.AsDict(roots)
            )
            | "ChooseNegatives"
            >> beam.combiners.Top.PerKey(config.pool_size, key=rank_key, reverse=True)
        )
        assembled = (
            {"queries": selected, "pool": pool}
            | "JoinQueriesPool" >> beam.CoGroupByKey()
            | "Assemble" >> beam.ParDo(_AssembleFn(seed, config)).with_outputs(COUNTS, main="rows")
        )
        held = (
            assembled.rows
            | "HeldOutItems" >> beam.FlatMap(lambda kv: held_out_items(kv[1]))
            | "HeldOutList" >> beam.combiners.ToList()
            | "HeldOutSets" >> beam.Map(held_out_sets)
        )
        counts = (eligible, assembled[COUNTS]) | "BenchmarkCounts" >> beam.Flatten()
        return {"rows": assembled.rows, "held": held, "counts": counts}


_UNSIGNED = 2**63
"""Added to an int64 id to make it an unsigned 64-bit integer of the same order."""


def sample_priority(seed: int, row: dict[str, Any]) -> int:
    """A pair's priority in ``--pairs-per-dataset`` sampling: the larger, the sooner kept.

    Its :func:`sample_key` (the smallest kept) as one integer, negated: the key's hash, then
    its anchor and positive ids made unsigned, side by side in 192 bits, so the order is the
    key's. Beam's ``Top`` keeps plain integers as they are (any other order wraps each one),
    so it holds ``n`` of them in about 60 bytes each; a tuple key took about 250.

    Args:
        seed: seed of the sample.
        row: a ``pair.v1`` row.
    """
    h, anchor, positive = sample_key(seed, row)
    return -((h << 128) | ((anchor + _UNSIGNED) << 64) | (positive + _UNSIGNED))


def _threshold(element: tuple[str, list[int]], n: int) -> Iterator[tuple[str, int]]:
    """(dataset, its largest priorities) -> (dataset, the smallest priority kept), when it
    has ``n``."""
    dataset, largest = element
    if len(largest) >= n:  # fewer: the dataset is kept whole
        yield dataset, min(largest)


class _KeepSampledFn(beam.DoFn):
    """(priority, pair row) -> the row, when its priority is at least its dataset's threshold.

    Side input ``thresholds``: dataset -> the smallest priority kept (:func:`_threshold`); a
    dataset without one is kept whole. The rows sampled out are counted by ``SumPairCounts``
    (``deduped`` minus ``rows``) and here as metrics.
    """

    def process(
        self, ranked: tuple[int, dict[str, Any]], thresholds: dict[str, int]
    ) -> Iterator[Any]:
        priority, row = ranked
        threshold = thresholds.get(row["dataset"])
        if threshold is None or priority >= threshold:
            yield row
        else:
            dataset = row["dataset"]
            reason = str(DropReason.PAIR_SAMPLED_OUT)
            Metrics.counter(f"pairs_{dataset}", reason).inc(CHILDREN_PER_PAIR[dataset])


class SampledPairs(beam.PTransform):
    """Pair rows -> each dataset's ``n`` rows with the smallest :func:`sample_key`.

    Only one integer a row meets the others: the ``n`` largest priorities of each dataset
    (:func:`sample_priority`, in a ``Top`` per dataset) fix the dataset's threshold, the
    smallest priority kept; the rows are then filtered against the thresholds, a side input
    of one integer per dataset. So a bundle's precombine and the
    merge of a dataset hold at most ``n`` integers, never rows, whatever the input's size.
    The keys of a dataset are distinct (its pairs' ids; two pairs of the same ids have the
    same texts and were deduplicated), so the rows kept are exactly the ``n`` of smallest
    key, as the local engine keeps them (``corpusforge.local.chosen``).

    Args:
        n: the pairs kept per dataset (``--pairs-per-dataset``).
        seed: seed of the sample keys.
    """

    def __init__(self, n: int, seed: int) -> None:
        super().__init__()
        self._n = n
        self._seed = seed

    def expand(self, pairs: beam.PCollection) -> beam.PCollection:
        seed, n = self._seed, self._n
        # each row's priority hashed once, for the Top and for the filter
        ranked = pairs | "Rank" >> beam.Map(lambda r: (sample_priority(seed, r), r))
        thresholds = (
            ranked
            | "Priorities" >> beam.Map(lambda pr: (pr[1]["dataset"], pr[0]))
            | "TopPriorities" >> beam.combiners.Top.LargestPerKey(n)
            | "Thresholds" >> beam.FlatMap(_threshold, n)
        )
        return ranked | "KeepSampled" >> beam.ParDo(
            _KeepSampledFn(), thresholds=beam.pvalue.AsDict(thresholds)
        )


class TwitterPairs(beam.PTransform):
    """Tweet rows and delete rows -> ``{"pairs", "benchmarks", "counts"}``.

    Tweets are merged across archives by id, deleted ones removed, the rest cleaned and
    length- and language-filtered (and checked against external evaluation sets when a
    decontaminator is given). The benchmarks are chosen first and their tweets held out;
    each root then gives at most one pair per dataset; identical texts are kept once and,
    with ``pairs_per_dataset``, each dataset is sampled by seeded hash.

    Args:
        profile: the cleaning profile (the config's resolved ``profile``).
        min_chars: minimum cleaned length.
        langs: languages kept.
        seed: seed of every choice.
        benchmarks: benchmark sizes, or ``None`` for no benchmarks.
        pairs_per_dataset: keep at most this many pairs per dataset.
        decontaminator: external evaluation sets to keep out of training.
        lid_model: predict languages with fastText (``""``: the packaged model) instead of
            trusting Twitter's ``lang`` field; ``None``: the field.
    """

    def __init__(
        self,
        profile: CleanProfile,
        min_chars: int,
        langs: tuple[str, ...],
        seed: int,
        benchmarks: BenchmarkConfig | None = None,
        pairs_per_dataset: int | None = None,
        decontaminator: Decontaminator | None = None,
        lid_model: str | None = None,
    ) -> None:
        super().__init__()
        self._lid_model = lid_model
        self._profile = profile
        self._min_chars = min_chars
        self._langs = langs
        self._seed = seed
        self._benchmarks = benchmarks
        self._pairs_per_dataset = pairs_per_dataset
        self._decontaminator = decontaminator

    def expand(self, inputs: dict[str, beam.PCollection]) -> dict[str, beam.PCollection]:
        relevant = {
            "rows": inputs["tweets"],
            "deletes": inputs["deletes"],
        } | "InConversations" >> ConversationRecords(self._langs, self._lid_model, self._profile)
        nodes = relevant["records"] | "CleanNodes" >> beam.ParDo(
            _NodeFn(self._profile, self._min_chars, self._langs, self._decontaminator)
        ).with_outputs(COUNTS, main="edges")
        conversations = (
            nodes.edges
            | "GroupByRoot" >> beam.GroupByKey()
            | "Conversations" >> beam.FlatMap(_conversation)
        )
        all_counts = [relevant["counts"], nodes[COUNTS]]
        pipeline = conversations.pipeline
        if self._benchmarks is not None and self._benchmarks.queries > 0:
            bench = conversations | "Benchmarks" >> TwitterBenchmarks(self._seed, self._benchmarks)
            bench_rows, held = bench["rows"], bench["held"]
            all_counts.append(bench["counts"])
        else:
            bench_rows = pipeline | "NoBenchmarks" >> beam.Create([])
            held = pipeline | "NothingHeldOut" >> beam.Create([(frozenset(), frozenset())])
        chosen = conversations | "PairRoots" >> beam.ParDo(
            _PairRootFn(self._seed), held=beam.pvalue.AsSingleton(held)
        ).with_outputs(COUNTS, main="pairs")
        deduped = (
            chosen.pairs
            | "GroupSameText" >> beam.GroupByKey()
            | "DropDuplicateText"
            >> beam.ParDo(_DedupTextFn(self._seed)).with_outputs(COUNTS, main="pairs")
        )
        pairs = deduped.pairs
        all_counts += [chosen[COUNTS], deduped[COUNTS]]
        if self._pairs_per_dataset is not None:
            all_counts.append(
                pairs | "DedupedKey" >> beam.Map(lambda r: (f"pairs.{r['dataset']}.deduped", 1))
            )
            pairs = pairs | "SamplePerDataset" >> SampledPairs(self._pairs_per_dataset, self._seed)
        all_counts.append(
            pairs | "RowsKey" >> beam.Map(lambda r: (f"pairs.{r['dataset']}.rows", 1))
        )
        counts = (
            tuple(all_counts)
            | "AllPairCounts" >> beam.Flatten()
            | "SumPairCounts" >> beam.CombinePerKey(sum)
        )
        return {"pairs": pairs, "benchmarks": bench_rows, "counts": counts}

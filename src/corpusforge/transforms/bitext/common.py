"""What the bitext and ParaNMT composites share: rejects, candidates, counts, language id.

A filter ``DoFn`` turns each raw pair into a :class:`Candidate` keyed for deduplication or a
:class:`Rejected` with its reason code (a ``Metrics.counter(stage, reason)`` next to it,
:func:`reject`); :func:`keep_one_copy` keeps the copy with the smallest origin and rejects
the others; :func:`summed_counts` takes the drop and row counts from the outputs themselves,
so counts and rejects cannot disagree. :class:`LanguageCheckFn` loads the fastText model
once per worker and times its checks (namespace :data:`LID_NAMESPACE`). The rules
themselves are the pure functions of ``corpusforge.pairing.filters`` and
``corpusforge.text``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.pvalue import DoOutputsTuple, TaggedOutput
from apache_beam.transforms.window import GlobalWindows

from corpusforge.pairing.candidates import (
    Candidate,
    Dropped,
    PairRules,
    cap_rank,
    checked_by_language,
)
from corpusforge.pairing.filters import FilterReason, LanguageFilterConfig
from corpusforge.pairing.rejects import copy_row, rejected_row
from corpusforge.sources.opus.records import DeadLetter, Skipped
from corpusforge.text.langid import LanguageIdentifier
from corpusforge.transforms.tags import COUNTS, DEAD, HELDOUT, REJECTED

LID_NAMESPACE = "lid"
"""Metrics namespace of the language-id counters: ``pairs_checked``, and the wall-clock and
thread CPU time of those checks, ``check_micros`` and ``check_cpu_micros``."""

CountKey = tuple[str, ...]


class _DropStringHintNotes(logging.Filter):
    """Beam logs "Converting string literal type hint to Any" for every annotation it meets
    as a string; with postponed annotations (PEP 563) that is every one of these DoFns' and
    transforms', on every run. They declare no Beam type hints, so the note says nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Converting string literal type hint")


logging.getLogger("apache_beam.typehints.native_type_compatibility").addFilter(
    _DropStringHintNotes()
)


@dataclass(frozen=True, slots=True)
class Rejected:
    """A pair that was read but not kept.

    Attributes:
        reason: a :class:`~corpusforge.pairing.filters.FilterReason` value.
        dataset: the pair's dataset.
        group: its language pair after orientation (``en-de``; ``en-en`` for ParaNMT).
        key: its deterministic origin key (``RawPair.key`` / ``RawParaphrase.key``).
        row: with ``--keep-rejected``, its ``schemas/rejected.v1`` row
            (:mod:`corpusforge.pairing.rejects`); else ``None``.
    """

    reason: str
    dataset: str
    group: str
    key: str
    row: dict[str, Any] | None = None


def reject(
    reason: FilterReason | str,
    dataset: str,
    group: str,
    key: str,
    row: dict[str, Any] | None = None,
) -> TaggedOutput:
    """A :class:`Rejected` output, counted in ``Metrics.counter(stage, reason)`` (the stage is
    the reason's prefix).

    Args:
        reason: the reason code.
        dataset: the pair's dataset.
        group: its language pair.
        key: its origin key.
        row: its rejected row, when the build keeps them.
    """
    reason = str(reason)
    Metrics.counter(reason.split("_", 1)[0], reason).inc()
    return TaggedOutput(REJECTED, Rejected(reason, dataset, group, key, row))


def reject_copy(reason: FilterReason, candidate: Candidate, keep: bool) -> TaggedOutput:
    """A candidate set aside after the filters (a duplicate, over the cap) as a reject, with
    its rejected row when ``keep``.

    Args:
        reason: ``dedup_duplicate`` or ``cap_over_limit``.
        candidate: the candidate.
        keep: the build keeps its rejected pairs.
    """
    c = candidate
    row = copy_row(c.row, c.dataset, c.group, str(reason), c.key) if keep else None
    return reject(reason, c.dataset, c.group, c.key, row)


def rejected_rows(rejected: beam.PCollection) -> beam.PCollection:
    """:class:`Rejected` items -> ``((dataset, group), rejected row)`` for the release."""
    return rejected | "RejectedRows" >> beam.Map(lambda r: ((r.dataset, r.group), r.row))


def dead_letter(item: DeadLetter, counts: Counter[CountKey]) -> TaggedOutput:
    """A reader's dead letter as a row on the ``dead`` output, counted in ``counts``.

    Args:
        item: the dead letter.
        counts: the reading ``DoFn``'s counts.
    """
    counts[("dead", item.reason)] += 1
    counts[("read", "records")] += item.records
    counts[("read", "dead_letter_lines")] += item.records
    Metrics.counter(item.stage, item.reason).inc()
    return TaggedOutput(DEAD, item.to_row())


def skipped(item: Skipped, counts: Counter[CountKey]) -> None:
    """Count a record a reader skipped on purpose (no output).

    Args:
        item: the skip.
        counts: the reading ``DoFn``'s counts.
    """
    counts[("skip", str(item.reason))] += 1
    counts[("read", "records")] += 1
    Metrics.counter(item.stage, str(item.reason)).inc()


def emit_counts(counts: Counter[CountKey]) -> Iterator[TaggedOutput]:
    """``counts`` as ``(key, n)`` elements on the ``counts`` output, in key order."""
    for key, n in sorted(counts.items()):
        yield TaggedOutput(COUNTS, (key, n))


class _BundleCountsFn(beam.DoFn):
    """A DoFn that sums its counts over a bundle and emits them (tag ``counts``) at its end."""

    def start_bundle(self) -> None:
        self._counts: Counter[CountKey] = Counter()

    def finish_bundle(self) -> Iterator[Any]:
        for key, n in sorted(self._counts.items()):
            yield TaggedOutput(COUNTS, GlobalWindows.windowed_value((key, n)))
        self._counts.clear()


class _TallyFn(beam.DoFn):
    """element -> ``(key_fn(element), n)`` on the main output, summed over a bundle."""

    def __init__(self, key_fn: Callable[[Any], CountKey]) -> None:
        self._key_fn = key_fn

    def start_bundle(self) -> None:
        self._counts: Counter[CountKey] = Counter()

    def process(self, element: Any) -> None:
        self._counts[self._key_fn(element)] += 1

    def finish_bundle(self) -> Iterator[Any]:
        for key, n in sorted(self._counts.items()):
            yield GlobalWindows.windowed_value((key, n))
        self._counts.clear()


def _drop_key(rejected: Rejected) -> CountKey:
    return ("drop", rejected.dataset, rejected.group, rejected.reason)


def _rows_key(element: tuple[tuple[str, str], dict[str, Any]]) -> CountKey:
    (dataset, group), _ = element
    return ("rows", dataset, group)


def _held_key(element: tuple[tuple[str, str], dict[str, Any]]) -> CountKey:
    (dataset, group), _ = element
    return ("held", dataset, group)


class LanguageCheckFn(_BundleCountsFn):
    """Shared by the two filters: the model, loaded once per worker, and its timing."""

    def __init__(self, lid_model: str | None, language: LanguageFilterConfig) -> None:
        self._lid_model = lid_model
        self._language = language

    def setup(self) -> None:
        self._lid = LanguageIdentifier.load(self._lid_model)

    def start_bundle(self) -> None:
        super().start_bundle()
        self._lid_pairs = 0
        self._lid_ns = 0
        self._lid_cpu_ns = 0

    def finish_bundle(self) -> Iterator[Any]:
        Metrics.counter(LID_NAMESPACE, "pairs_checked").inc(self._lid_pairs)
        Metrics.counter(LID_NAMESPACE, "check_micros").inc(self._lid_ns // 1000)
        Metrics.counter(LID_NAMESPACE, "check_cpu_micros").inc(self._lid_cpu_ns // 1000)
        yield from super().finish_bundle()

    def _timed(self, check: Callable[[], FilterReason | None]) -> FilterReason | None:
        start, start_cpu = time.perf_counter_ns(), time.thread_time_ns()
        reason = check()
        self._lid_ns += time.perf_counter_ns() - start
        self._lid_cpu_ns += time.thread_time_ns() - start_cpu
        return reason


BLOCK = 2048
"""Pairs a filter runs its rule over at once (the local engine's batch): fastText and the
column steps called once a block instead of once a pair. Results do not depend on it."""


class FilterFn(LanguageCheckFn):
    """Raw pairs -> the candidate ``rule`` makes of each (:mod:`corpusforge.pairing.candidates`,
    the local engine's rule too), keyed for deduplication by ``key``, or a reject with its
    reason.

    The pairs are held until ``block`` of them are in hand, or the bundle ends, and the rule
    runs over them at once; a pair's result does not depend on its block. What is flushed at
    the end of a bundle goes to the global window, as the counts do: the filters run in a
    batch pipeline's global window.

    Args:
        rule: ``bitext_candidates`` or ``paraphrase_candidates``: raw pairs -> each one's
            candidate or reason, in order.
        rules: the per-pair settings.
        lid_model: fastText model path; ``None``: the default model.
        key: the candidate's deduplication key.
        keep_rejected: give each reject its rejected row.
        block: pairs a block holds at most.
    """

    def __init__(
        self,
        rule: Callable[..., list[Candidate | Dropped]],
        rules: PairRules,
        lid_model: str | None,
        key: Callable[[Candidate], Any],
        keep_rejected: bool = False,
        block: int = BLOCK,
    ) -> None:
        super().__init__(lid_model, rules.language)
        self._rule = rule
        self._rules = rules
        self._key = key
        self._keep_rejected = keep_rejected
        self._block = block

    def start_bundle(self) -> None:
        super().start_bundle()
        self._pending: list[Any] = []

    def process(self, raw: Any) -> Iterator[Any]:
        self._pending.append(raw)
        if len(self._pending) >= self._block:
            yield from self._flush()

    def finish_bundle(self) -> Iterator[Any]:
        for output in self._flush():
            if isinstance(output, TaggedOutput):
                yield TaggedOutput(output.tag, GlobalWindows.windowed_value(output.value))
            else:
                yield GlobalWindows.windowed_value(output)
        yield from super().finish_bundle()

    def _flush(self) -> Iterator[Any]:
        """The pending pairs' outputs, in order: the rule over them as one block."""
        if not self._pending:
            return
        results = self._rule(self._pending, self._rules, self._lid, self._timed)
        self._pending = []
        self._lid_pairs += checked_by_language(results)
        for result in results:
            self._counts[("cand", result.dataset, result.group)] += 1
            if isinstance(result, Dropped):
                keep = self._keep_rejected
                row = rejected_row(result, self._rules, self._lid) if keep else None
                yield reject(result.reason, result.dataset, result.group, result.key, row)
            else:
                yield self._key(result), result


def fan_out_read(
    inputs: beam.PCollection, what: str, read_fn: beam.DoFn
) -> dict[str, beam.PCollection]:
    """Spread ``inputs`` over workers, read each with ``read_fn``, spread the pairs again.

    ``read_fn`` has a main output of pairs and ``DEAD`` and ``COUNTS`` tagged outputs; the
    second reshuffle lets language id run in parallel even when one input holds every pair.
    """
    read = (
        inputs
        | f"FanOut{what}" >> beam.Reshuffle()
        | f"Read{what}" >> beam.ParDo(read_fn).with_outputs(DEAD, COUNTS, main="pairs")
    )
    pairs = read.pairs | "FanOutPairs" >> beam.Reshuffle()
    counts = read[COUNTS] | "SumReadCounts" >> beam.CombinePerKey(sum)
    return {"pairs": pairs, "dead": read[DEAD], "counts": counts}


class _KeepFirstCopyFn(beam.DoFn):
    """(dedup key, copies) -> the copy with the smallest origin; the others are rejects
    (with their rejected rows when ``keep_rejected``)."""

    def __init__(self, keep_rejected: bool) -> None:
        self._keep_rejected = keep_rejected

    def process(self, element: tuple[Any, Iterable[Candidate]]) -> Iterator[Any]:
        _, copies = element
        first, *others = sorted(copies, key=_order)
        yield first
        for copy in others:
            yield reject_copy(FilterReason.DEDUP_DUPLICATE, copy, self._keep_rejected)


def _order(candidate: Candidate) -> tuple[Any, ...]:
    return candidate.order


def keep_one_copy(candidates: beam.PCollection, keep_rejected: bool = False) -> DoOutputsTuple:
    """``(dedup key, Candidate)`` -> ``kept`` (one copy per key) and ``rejected`` outputs
    (with their rejected rows when ``keep_rejected``)."""
    return (
        candidates
        | "GroupCopies" >> beam.GroupByKey()
        | "KeepFirstCopy"
        >> beam.ParDo(_KeepFirstCopyFn(keep_rejected)).with_outputs(REJECTED, main="kept")
    )


def summed_counts(
    own: list[beam.PCollection],
    kept: beam.PCollection,
    rejected: beam.PCollection,
    heldout: beam.PCollection | None = None,
) -> beam.PCollection:
    """A composite's counts summed per key: its own, then drops, rows and held-out rows
    counted from the ``rejected``, ``kept`` and ``heldout`` outputs themselves.

    Args:
        own: ``(key, n)`` collections of the composite's DoFns.
        kept: ``((dataset, group), row)`` rows kept.
        rejected: :class:`Rejected` items.
        heldout: ``((dataset, group), row)`` rows held out, with ``--holdout``.
    """
    drops = rejected | "CountRejected" >> beam.ParDo(_TallyFn(_drop_key))
    rows = kept | "CountRows" >> beam.ParDo(_TallyFn(_rows_key))
    held = []
    if heldout is not None:
        held.append(heldout | "CountHeldout" >> beam.ParDo(_TallyFn(_held_key)))
    return (
        (*own, drops, rows, *held)
        | "AllPairCounts" >> beam.Flatten()
        | "SumPairCounts" >> beam.CombinePerKey(sum)
    )


def ranked(
    candidate: Candidate, seed: int
) -> tuple[tuple[str, str], tuple[tuple[int, str], Candidate]]:
    """A candidate keyed by its (dataset, group), with its rank for the cap and the holdout:
    ``(seeded hash, dedup key)``, unique within a group."""
    c = candidate
    return (c.dataset, c.group), (cap_rank(seed, c.dataset, c.group, c.dedup), c)


def _rank_only(candidate: Candidate, seed: int) -> tuple[tuple[str, str], tuple[int, str]]:
    group_key, (rank, _) = ranked(candidate, seed)
    return group_key, rank


class _HoldOutFn(beam.DoFn):
    """A candidate ranked at or below its group's holdout boundary -> the ``heldout`` output
    (as ``((dataset, group), row)``); the others go on."""

    def __init__(self, seed: int) -> None:
        self._seed = seed

    def process(
        self, candidate: Candidate, boundaries: dict[tuple[str, str], tuple[int, str]]
    ) -> Iterator[Any]:
        group_key, (rank, _) = ranked(candidate, self._seed)
        if rank <= boundaries[group_key]:
            yield TaggedOutput(HELDOUT, keyed_row(candidate))
        else:
            yield candidate


def hold_out(
    candidates: beam.PCollection, seed: int, holdout: int
) -> tuple[beam.PCollection, beam.PCollection]:
    """Kept candidates -> (the rest, ``((dataset, group), row)`` held out): the ``holdout``
    candidates of each (dataset, group) with the smallest ranks (:func:`ranked`), the local
    engine's choice too.

    Args:
        candidates: the candidates kept (after deduplication and the cap).
        seed: the rank's seed.
        holdout: pairs held out per (dataset, group).
    """
    boundaries = (
        candidates
        | "RankForHoldout" >> beam.Map(_rank_only, seed)
        | "SmallestForHoldout" >> beam.combiners.Top.SmallestPerKey(holdout)
        | "HoldoutBoundary" >> beam.Map(lambda kv: (kv[0], max(kv[1])))
    )
    split = candidates | "HoldOut" >> beam.ParDo(
        _HoldOutFn(seed), boundaries=beam.pvalue.AsDict(boundaries)
    ).with_outputs(HELDOUT, main="kept")
    return split.kept, split[HELDOUT]


def keyed_row(candidate: Candidate) -> tuple[tuple[str, str], dict[str, Any]]:
    """A kept candidate as ``((dataset, group), row)``."""
    return (candidate.dataset, candidate.group), candidate.row


def pair_outputs(
    kept: beam.PCollection,
    rejected: Iterable[beam.PCollection],
    own_counts: beam.PCollection,
    *,
    seed: int,
    holdout: int | None,
    keep_rejected: bool,
) -> dict[str, beam.PCollection]:
    """The outputs of :class:`~corpusforge.transforms.bitext.opus.BitextPairs` and
    :class:`~corpusforge.transforms.bitext.paranmt.ParaphrasePairs` from what their rules
    kept and rejected: ``pairs`` (``((dataset, group), row)``), ``rejected`` (every
    :class:`Rejected`, flattened), ``counts`` (:func:`summed_counts`), with ``holdout`` also
    ``heldout`` (:func:`hold_out`), with ``keep_rejected`` also ``rejected_rows``.

    Args:
        kept: the candidates kept (after deduplication and any cap).
        rejected: the :class:`Rejected` collections of each step.
        own_counts: the ``(key, n)`` counts of the filter.
        seed: the holdout rank's seed.
        holdout: pairs held out per (dataset, group); ``None``: none.
        keep_rejected: give every reject its ``schemas/rejected.v1`` row.
    """
    heldout = None
    if holdout is not None:
        kept, heldout = hold_out(kept, seed, holdout)
    rows = kept | "Rows" >> beam.Map(keyed_row)
    all_rejected = tuple(rejected) | "AllRejected" >> beam.Flatten()
    counts = summed_counts([own_counts], rows, all_rejected, heldout)
    outputs = {"pairs": rows, "rejected": all_rejected, "counts": counts}
    if heldout is not None:
        outputs["heldout"] = heldout
    if keep_rejected:
        outputs["rejected_rows"] = rejected_rows(all_rejected)
    return outputs

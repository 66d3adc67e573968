"""Beam wiring of the bitext and ParaNMT pipelines: read units -> filtered, deduplicated pairs.

Four composites, each only wiring the pure functions of ``sources/opus``,
``sources/paranmt`` and ``text/``:

- :class:`ReadBitext`: planned read units (:class:`~corpusforge.sources.opus.OpusInput`,
  and the :class:`~corpusforge.sources.opus.DeadLetter` of each file that planning could
  not use) -> :class:`~corpusforge.sources.opus.RawPair` items, dead-letter rows and counts.
  Units are fanned out with a reshuffle and each is read whole by one worker; the pairs are
  reshuffled again so that language id spreads over the workers even when one file holds
  the whole corpus.
- :class:`BitextPairs`: raw pairs -> ``((dataset, "l1-l2"), bitext row)``: optional
  cleaning, English oriented into ``anchor``, 3 to 100 words per side (by letters in scripts
  without spaces) in a ratio below 3, fastText language id on both sides agreeing with the
  declared languages, duplicates (up to case and whitespace) kept once, at most 500,000
  pairs per (dataset, language pair) by seeded hash.
- :class:`ReadParaphrases`: ParaNMT file URIs -> :class:`RawParaphrase` items, dead-letter
  rows and counts.
- :class:`ParaphrasePairs`: raw paraphrases -> ``((dataset, "en-en"), paraphrase row)``:
  optional cleaning, P-SP's mean length, score and trigram-overlap filters (the overlap is
  computed once and stored in the row), both sides English by fastText, duplicates kept
  once (``(a, b)`` and ``(b, a)`` are the same pair).

Duplicates. The reference preprocessing scripts removed duplicates with ``uniq -u``, which
drops *every* copy of a duplicated pair, so a pair that occurs twice is lost altogether. We
keep exactly one copy: the one with the smallest origin (dataset, file, member, line,
part), whatever the runner or input order. Copies are found with
:func:`~corpusforge.pairing.filters.pair_key` (equal up to case and whitespace), per
language pair and across datasets and input formats; a dropped copy is counted against its
own dataset as ``dedup_duplicate``.

Language id runs on the text that goes into the row (after cleaning), loads the model once
per worker in ``DoFn.setup`` and runs after the cheap checks (length; score and overlap for
ParaNMT), only on the pairs that pass them.

Nothing is dropped silently: every filtered, duplicate or capped pair goes to the
``rejected`` output as a :class:`Rejected` with its reason code, next to a
``Metrics.counter(stage, reason)``; the drop counts are taken from that output, so counts
and rejects cannot disagree. Counts travel as ``(key, n)`` elements with tuple keys,
summed per key (``("read", "records")``: input lines or records, each pair, skip and
dead-letter line once; ``("read", "dead_letter_lines")``: the lines the dead letters stand
for; ``("dead", reason)``: dead-letter rows; ``("skip", reason)``,
``("cand", dataset, group)``, ``("drop", dataset, group, reason)``,
``("rows", dataset, group)``), so a release's accounting does not depend on a runner's
metrics support.
"""

from __future__ import annotations

import dataclasses
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

from corpusforge.keys import seeded_hash
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    FilterReason,
    LanguageFilterConfig,
    ParaphraseFilterConfig,
    check_bitext_length,
    check_language,
    check_pair_languages,
    check_paraphrase_length,
    check_paraphrase_score,
    check_trigram_overlap,
    pair_key,
)
from corpusforge.sources.opus.formats import OpusFormat, OpusInput, read_opus
from corpusforge.sources.opus.records import ENGLISH, DeadLetter, RawPair, Skipped
from corpusforge.sources.paranmt.parse import RawParaphrase, read_paranmt
from corpusforge.text.clean import CleanProfile, clean_text, one_line
from corpusforge.text.langid import LanguageIdentifier
from corpusforge.text.overlap import trigram_overlap

DEAD = "dead"
COUNTS = "counts"
REJECTED = "rejected"
PARAPHRASE_GROUP = f"{ENGLISH}-{ENGLISH}"
"""The group (language pair) of every ParaNMT pair in counts and rejects."""
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
    """

    reason: str
    dataset: str
    group: str
    key: str


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A pair that passed the filters, on its way through deduplication and the cap."""

    order: tuple[Any, ...]  # the origin; among duplicates the smallest is kept
    key: str
    dedup: str  # pair_key of the two sides
    dataset: str
    group: str
    row: dict[str, Any]


def prepare_text(text: str, profile: CleanProfile | None, lowercase: bool) -> str:
    """The text that goes into a row: cleaned with ``profile``, else made one line.

    Args:
        text: one side as read.
        profile: a cleaning profile, or ``None`` for none: then only line and paragraph
            breaks inside the text (``\\r``, U+2028, ...) become spaces
            (:func:`~corpusforge.text.clean.one_line`).
        lowercase: with no profile, lowercase (a profile carries its own setting).
    """
    if profile is not None:
        return clean_text(text, profile)
    text = one_line(text)
    return text.lower() if lowercase else text


def _reject(reason: FilterReason | str, dataset: str, group: str, key: str) -> TaggedOutput:
    reason = str(reason)
    Metrics.counter(reason.split("_", 1)[0], reason).inc()
    return TaggedOutput(REJECTED, Rejected(reason, dataset, group, key))


def _dead_letter(item: DeadLetter, counts: Counter[CountKey]) -> TaggedOutput:
    counts[("dead", item.reason)] += 1
    counts[("read", "records")] += item.records
    counts[("read", "dead_letter_lines")] += item.records
    Metrics.counter(item.stage, item.reason).inc()
    return TaggedOutput(DEAD, item.to_row())


def _skipped(item: Skipped, counts: Counter[CountKey]) -> None:
    counts[("skip", str(item.reason))] += 1
    counts[("read", "records")] += 1
    Metrics.counter(item.stage, str(item.reason)).inc()


def _emit_counts(counts: Counter[CountKey]) -> Iterator[TaggedOutput]:
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


class _LanguageCheckFn(_BundleCountsFn):
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
        self._lid_pairs += 1
        return reason


# ---------------------------------------------------------------------------------------
# Bitext


def reader_options(
    unit: OpusInput,
    *,
    documents_root: str | None = None,
    tsv_layout: str | None = None,
    src_lang: str | None = None,
    trg_lang: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of :func:`read_opus` that ``unit``'s reader takes.

    Args:
        unit: a read unit.
        documents_root: XCES sentence-document folder.
        tsv_layout: TSV column layout.
        src_lang: first-side language for TSV and plain Moses files.
        trg_lang: second-side language, likewise.
    """
    options: dict[str, Any] = {}
    if unit.format is OpusFormat.XCES:
        options["documents_root"] = documents_root
    elif unit.format is OpusFormat.TSV:
        options.update(layout=tsv_layout, src_lang=src_lang, trg_lang=trg_lang)
    elif unit.format is OpusFormat.MOSES and len(unit.uris) == 2:
        options.update(src_lang=src_lang, trg_lang=trg_lang)
    return {k: v for k, v in options.items() if v is not None}


class _ReadUnitFn(beam.DoFn):
    """One read unit (or a planning dead letter) -> raw pairs, dead letters, counts."""

    def __init__(self, dataset: str | None, options: dict[str, str | None]) -> None:
        self._dataset = dataset
        self._options = options

    def process(self, item: OpusInput | DeadLetter) -> Iterator[Any]:
        counts: Counter[CountKey] = Counter()
        if isinstance(item, DeadLetter):
            yield _dead_letter(item, counts)
        else:
            counts[("read", "units")] += 1
            options = reader_options(item, **self._options)
            for record in read_opus(item, dataset=self._dataset, **options):
                if isinstance(record, RawPair):
                    counts[("read", "records")] += 1
                    yield record
                elif isinstance(record, Skipped):
                    _skipped(record, counts)
                else:
                    yield _dead_letter(record, counts)
        yield from _emit_counts(counts)


class ReadBitext(beam.PTransform):
    """Read units -> ``{"pairs": RawPair, "dead": dead-letter row, "counts": (key, n)}``.

    The input holds what :func:`~corpusforge.sources.opus.plan_inputs` returned: read units,
    and a dead letter for every file planning could not use (passed on to ``dead``).
    ``counts`` are summed per key: records read (pairs and dead letters), units read, dead
    letters and skips by reason.

    Args:
        dataset: corpus name for every pair; default: what each file name says.
        documents_root: folder of the XCES sentence documents; default: each alignment
            file's folder.
        tsv_layout: TSV column layout; default: guessed per file.
        src_lang: first-side language of TSV and plain Moses files whose names lack it.
        trg_lang: second-side language, likewise.
    """

    def __init__(
        self,
        *,
        dataset: str | None = None,
        documents_root: str | None = None,
        tsv_layout: str | None = None,
        src_lang: str | None = None,
        trg_lang: str | None = None,
    ) -> None:
        super().__init__()
        self._dataset = dataset
        self._options = {
            "documents_root": documents_root,
            "tsv_layout": tsv_layout,
            "src_lang": src_lang,
            "trg_lang": trg_lang,
        }

    def expand(self, items: beam.PCollection) -> dict[str, beam.PCollection]:
        return _fan_out_read(items, "Units", _ReadUnitFn(self._dataset, self._options))


def _fan_out_read(
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


class _FilterBitextFn(_LanguageCheckFn):
    """A raw pair -> a candidate keyed for deduplication, or a reject with its reason."""

    def __init__(
        self,
        lengths: BitextFilterConfig,
        language: LanguageFilterConfig,
        lid_model: str | None,
        profile: CleanProfile | None,
        lowercase: bool,
    ) -> None:
        super().__init__(lid_model, language)
        self._lengths = lengths
        self._profile = profile
        self._lowercase = lowercase

    def process(self, raw: RawPair) -> Iterator[Any]:
        src = prepare_text(raw.src, self._profile, self._lowercase)
        trg = prepare_text(raw.trg, self._profile, self._lowercase)
        row = dataclasses.replace(raw, src=src, trg=trg).to_bitext_row()
        dataset, group = raw.dataset, f"{row['anchor_lang']}-{row['positive_lang']}"
        self._counts[("cand", dataset, group)] += 1
        reason = check_bitext_length(row["anchor"], row["positive"], self._lengths)
        if reason is None:
            reason = self._timed(
                lambda: check_pair_languages(
                    row["anchor"],
                    row["anchor_lang"],
                    row["positive"],
                    row["positive_lang"],
                    self._lid,
                    self._language,
                )
            )
        if reason is not None:
            yield _reject(reason, dataset, group, raw.key)
            return
        dedup = pair_key(row["anchor"], row["positive"])
        order = (
            dataset,
            raw.origin_file,
            raw.origin_member or "",
            raw.origin_line,
            raw.origin_part,
        )
        yield (group, dedup), _Candidate(order, raw.key, dedup, dataset, group, row)


class _KeepFirstCopyFn(beam.DoFn):
    """(dedup key, copies) -> the copy with the smallest origin; the others are rejects."""

    def process(self, element: tuple[Any, Iterable[_Candidate]]) -> Iterator[Any]:
        _, copies = element
        first, *others = sorted(copies, key=_order)
        yield first
        for copy in others:
            yield _reject(FilterReason.DEDUP_DUPLICATE, copy.dataset, copy.group, copy.key)


def _order(candidate: _Candidate) -> tuple[Any, ...]:
    return candidate.order


def _cap_rank(seed: int, candidate: _Candidate) -> tuple[int, str]:
    """Seeded hash of the pair's text (unique within a group after deduplication)."""
    rank = seeded_hash(seed, "cap", candidate.dataset, candidate.group, candidate.dedup)
    return rank, candidate.dedup


class _CapFn(beam.DoFn):
    """Keep a candidate when its rank is within its group's threshold; else reject it."""

    def process(
        self,
        element: tuple[tuple[str, str], tuple[tuple[int, str], _Candidate]],
        thresholds: dict[tuple[str, str], tuple[int, str]],
    ) -> Iterator[Any]:
        group_key, (rank, candidate) = element
        if rank <= thresholds[group_key]:
            yield candidate
        else:
            yield _reject(
                FilterReason.CAP_OVER_LIMIT, candidate.dataset, candidate.group, candidate.key
            )


def _keep_one_copy(candidates: beam.PCollection) -> DoOutputsTuple:
    return (
        candidates
        | "GroupCopies" >> beam.GroupByKey()
        | "KeepFirstCopy" >> beam.ParDo(_KeepFirstCopyFn()).with_outputs(REJECTED, main="kept")
    )


def _summed_counts(
    own: list[beam.PCollection], kept: beam.PCollection, rejected: beam.PCollection
) -> beam.PCollection:
    drops = rejected | "CountRejected" >> beam.ParDo(_TallyFn(_drop_key))
    rows = kept | "CountRows" >> beam.ParDo(_TallyFn(_rows_key))
    return (
        (*own, drops, rows)
        | "AllPairCounts" >> beam.Flatten()
        | "SumPairCounts" >> beam.CombinePerKey(sum)
    )


def _keyed_row(candidate: _Candidate) -> tuple[tuple[str, str], dict[str, Any]]:
    return (candidate.dataset, candidate.group), candidate.row


class BitextPairs(beam.PTransform):
    """Raw pairs -> ``{"pairs": ((dataset, "l1-l2"), row), "rejected", "counts"}``.

    Each pair is cleaned when a profile is given, oriented with English as the anchor,
    kept when each side has ``min_tokens``..``max_tokens`` words (whitespace tokens; letters
    in scripts without spaces), their ratio is below ``max_length_ratio``, and fastText
    predicts the declared language on both sides (P-SP; CT-XLMR-SE), deduplicated (one
    copy kept, see the module docstring) and, with ``max_pairs_per_lang``, sampled to that
    many pairs per (dataset, language pair): the pairs with the smallest seeded hash of
    their text. Rows follow ``schemas/bitext.v1``.

    Args:
        lengths: tokens per side.
        language: language-id confidence threshold.
        lid_model: fastText model path; ``None``: the default model.
        seed: seed of the sampling hash.
        max_pairs_per_lang: cap per (dataset, language pair); ``None`` keeps all.
        profile: cleaning profile, or ``None`` for none.
        lowercase: with no profile, lowercase both sides.
    """

    def __init__(
        self,
        *,
        lengths: BitextFilterConfig,
        language: LanguageFilterConfig,
        lid_model: str | None = None,
        seed: int = 0,
        max_pairs_per_lang: int | None = None,
        profile: CleanProfile | None = None,
        lowercase: bool = False,
    ) -> None:
        super().__init__()
        self._filter = _FilterBitextFn(lengths, language, lid_model, profile, lowercase)
        self._seed = seed
        self._cap = max_pairs_per_lang

    def expand(self, pairs: beam.PCollection) -> dict[str, beam.PCollection]:
        filtered = pairs | "Filter" >> beam.ParDo(self._filter).with_outputs(
            REJECTED, COUNTS, main="candidates"
        )
        deduped = _keep_one_copy(filtered.candidates)
        kept, rejected = deduped.kept, [filtered[REJECTED], deduped[REJECTED]]
        if self._cap is not None:
            ranked = kept | "RankForCap" >> beam.Map(
                lambda c, seed: ((c.dataset, c.group), (_cap_rank(seed, c), c)), self._seed
            )
            thresholds = (
                ranked
                | "RanksOnly" >> beam.Map(lambda kv: (kv[0], kv[1][0]))
                | "SmallestRanks" >> beam.combiners.Top.SmallestPerKey(self._cap)
                | "Threshold" >> beam.Map(lambda kv: (kv[0], max(kv[1])))
            )
            capped = ranked | "Cap" >> beam.ParDo(
                _CapFn(), thresholds=beam.pvalue.AsDict(thresholds)
            ).with_outputs(REJECTED, main="kept")
            kept = capped.kept
            rejected.append(capped[REJECTED])
        rows = kept | "Rows" >> beam.Map(_keyed_row)
        all_rejected = tuple(rejected) | "AllRejected" >> beam.Flatten()
        counts = _summed_counts([filtered[COUNTS]], rows, all_rejected)
        return {"pairs": rows, "rejected": all_rejected, "counts": counts}


# ---------------------------------------------------------------------------------------
# ParaNMT


class _ReadParaphraseFileFn(beam.DoFn):
    """One ParaNMT file -> raw paraphrases, dead letters, counts."""

    def __init__(self, dataset: str) -> None:
        self._dataset = dataset

    def process(self, uri: str) -> Iterator[Any]:
        counts: Counter[CountKey] = Counter({("read", "units"): 1})
        for record in read_paranmt(uri, dataset=self._dataset):
            if isinstance(record, RawParaphrase):
                counts[("read", "records")] += 1
                yield record
            else:
                yield _dead_letter(record, counts)
        yield from _emit_counts(counts)


class ReadParaphrases(beam.PTransform):
    """ParaNMT file URIs -> ``{"pairs": RawParaphrase, "dead": row, "counts": (key, n)}``.

    A line with the wrong column count, a blank side, a score that is not a finite number
    or invalid UTF-8 is a dead letter with its reason and origin; the file goes on.

    Args:
        dataset: dataset name of every pair.
    """

    def __init__(self, dataset: str) -> None:
        super().__init__()
        self._dataset = dataset

    def expand(self, uris: beam.PCollection) -> dict[str, beam.PCollection]:
        return _fan_out_read(uris, "Files", _ReadParaphraseFileFn(self._dataset))


class _FilterParaphraseFn(_LanguageCheckFn):
    """A raw paraphrase -> a candidate keyed for deduplication, or a reject."""

    def __init__(
        self,
        filters: ParaphraseFilterConfig,
        language: LanguageFilterConfig,
        lid_model: str | None,
        profile: CleanProfile | None,
        lowercase: bool,
    ) -> None:
        super().__init__(lid_model, language)
        self._filters = filters
        self._profile = profile
        self._lowercase = lowercase

    def process(self, raw: RawParaphrase) -> Iterator[Any]:
        anchor = prepare_text(raw.reference, self._profile, self._lowercase)
        positive = prepare_text(raw.paraphrase, self._profile, self._lowercase)
        dataset, group = raw.dataset, PARAPHRASE_GROUP
        self._counts[("cand", dataset, group)] += 1
        overlap = 0.0
        reason = check_paraphrase_length(anchor, positive, self._filters) or (
            check_paraphrase_score(raw.score, self._filters)
        )
        if reason is None:
            overlap = trigram_overlap(anchor, positive)
            reason = check_trigram_overlap(overlap, self._filters)
        if reason is None:
            reason = self._timed(
                lambda: (
                    check_language(anchor, ENGLISH, self._lid, self._language)
                    or check_language(positive, ENGLISH, self._lid, self._language)
                )
            )
        if reason is not None:
            yield _reject(reason, dataset, group, raw.key)
            return
        row = dataclasses.replace(raw, reference=anchor, paraphrase=positive).to_paraphrase_row(
            overlap
        )
        dedup = pair_key(anchor, positive, symmetric=True)
        order = (dataset, raw.origin_file, raw.origin_member or "", raw.origin_line)
        yield dedup, _Candidate(order, raw.key, dedup, dataset, group, row)


class ParaphrasePairs(beam.PTransform):
    """Raw paraphrases -> ``{"pairs": ((dataset, "en-en"), row), "rejected", "counts"}``.

    P-SP's ParaNMT filtering: mean whitespace-token length of the two sides in
    ``[min_mean_tokens, max_mean_tokens]``, score in ``[min_score, max_score]``, word-trigram
    overlap at most ``max_trigram_overlap`` (stored in the row), and both sides English by
    fastText; then one copy of each pair, in either order. Rows follow
    ``schemas/paraphrase.v1``.

    Args:
        filters: length, score and overlap limits.
        language: language-id confidence threshold.
        lid_model: fastText model path; ``None``: the default model.
        profile: cleaning profile, or ``None`` for none.
        lowercase: with no profile, lowercase both sides.
    """

    def __init__(
        self,
        *,
        filters: ParaphraseFilterConfig,
        language: LanguageFilterConfig,
        lid_model: str | None = None,
        profile: CleanProfile | None = None,
        lowercase: bool = False,
    ) -> None:
        super().__init__()
        self._filter = _FilterParaphraseFn(filters, language, lid_model, profile, lowercase)

    def expand(self, pairs: beam.PCollection) -> dict[str, beam.PCollection]:
        filtered = pairs | "Filter" >> beam.ParDo(self._filter).with_outputs(
            REJECTED, COUNTS, main="candidates"
        )
        deduped = _keep_one_copy(filtered.candidates)
        rows = deduped.kept | "Rows" >> beam.Map(_keyed_row)
        rejected = (filtered[REJECTED], deduped[REJECTED]) | "AllRejected" >> beam.Flatten()
        counts = _summed_counts([filtered[COUNTS]], rows, rejected)
        return {"pairs": rows, "rejected": rejected, "counts": counts}

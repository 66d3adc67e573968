"""Beam wiring of the bitext pipeline: OPUS read units -> filtered, deduplicated pairs.

- :class:`ReadBitext`: planned read units (:class:`~corpusforge.sources.opus.OpusInput`,
  and the :class:`~corpusforge.sources.opus.DeadLetter` of each file that planning could
  not use) -> :class:`~corpusforge.sources.opus.RawPair` items, dead-letter rows and counts,
  read by :func:`~corpusforge.sources.opus.formats.read_opus`.
- :class:`BitextPairs`: raw pairs -> ``((dataset, "l1-l2"), bitext row)``: optional
  cleaning, English oriented into ``anchor``, 3 to 100 words per side (by letters in scripts
  without spaces) in a ratio below 3, fastText language id on both sides agreeing with the
  declared languages, duplicates (up to case and whitespace) kept once, at most 500,000
  pairs per (dataset, language pair) by seeded hash.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import apache_beam as beam

from corpusforge.pairing.candidates import (
    Candidate,
    PairRules,
    bitext_candidates,
    cap_rank,
)
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    FilterReason,
    LanguageFilterConfig,
)
from corpusforge.sources.opus.formats import OpusInput, read_opus, reader_options
from corpusforge.sources.opus.records import DeadLetter, RawPair, Skipped
from corpusforge.text.clean import CleanProfile
from corpusforge.text.decontam import Decontaminator
from corpusforge.transforms.bitext.common import (
    CountKey,
    FilterFn,
    dead_letter,
    emit_counts,
    fan_out_read,
    keep_one_copy,
    pair_outputs,
    reject_copy,
    skipped,
)
from corpusforge.transforms.tags import COUNTS, REJECTED


class _ReadUnitFn(beam.DoFn):
    """One read unit (or a planning dead letter) -> raw pairs, dead letters, counts."""

    def __init__(self, dataset: str | None, options: dict[str, str | None]) -> None:
        self._dataset = dataset
        self._options = options

    def process(self, item: OpusInput | DeadLetter) -> Iterator[Any]:
        counts: Counter[CountKey] = Counter()
        if isinstance(item, DeadLetter):
            yield dead_letter(item, counts)
        else:
            counts[("read", "units")] += 1
            options = reader_options(item, **self._options)
            for record in read_opus(item, dataset=self._dataset, **options):
                if isinstance(record, RawPair):
                    counts[("read", "records")] += 1
                    yield record
                elif isinstance(record, Skipped):
                    skipped(record, counts)
                else:
                    yield dead_letter(record, counts)
        yield from emit_counts(counts)


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
        return fan_out_read(items, "Units", _ReadUnitFn(self._dataset, self._options))


def _group_and_dedup(candidate: Candidate) -> tuple[str, str]:
    """Copies are the same pair in one language pair, from any dataset or format."""
    return candidate.group, candidate.dedup


def _cap_rank(seed: int, candidate: Candidate) -> tuple[int, str]:
    return cap_rank(seed, candidate.dataset, candidate.group, candidate.dedup)


class _CapFn(beam.DoFn):
    """Keep a candidate when its rank is within its group's threshold; else reject it
    (with its rejected row when ``keep_rejected``)."""

    def __init__(self, keep_rejected: bool) -> None:
        self._keep_rejected = keep_rejected

    def process(
        self,
        element: tuple[tuple[str, str], tuple[tuple[int, str], Candidate]],
        thresholds: dict[tuple[str, str], tuple[int, str]],
    ) -> Iterator[Any]:
        group_key, (rank, candidate) = element
        if rank <= thresholds[group_key]:
            yield candidate
        else:
            yield reject_copy(FilterReason.CAP_OVER_LIMIT, candidate, self._keep_rejected)


class BitextPairs(beam.PTransform):
    """Raw pairs -> ``{"pairs": ((dataset, "l1-l2"), row), "rejected", "counts"}`` and, with
    ``keep_rejected``, ``"rejected_rows": ((dataset, "l1-l2"), rejected row)``, with
    ``holdout``, ``"heldout": ((dataset, "l1-l2"), row)``.

    Each pair is cleaned when a profile is given, oriented with English as the anchor,
    kept when each side has ``min_tokens``..``max_tokens`` words (whitespace tokens; letters
    in scripts without spaces), their ratio is below ``max_length_ratio``, and fastText
    predicts the declared language on both sides (P-SP; CT-XLMR-SE), deduplicated (one
    copy kept, see the module docstring) and, with ``max_pairs_per_lang``, sampled to that
    many pairs per (dataset, language pair): the pairs with the smallest seeded hash of
    their text. Rows follow ``schemas/bitext.v2``.

    Args:
        lengths: tokens per side.
        language: language-id confidence threshold.
        lid_model: fastText model path; ``None``: the default model.
        seed: seed of the sampling hash.
        max_pairs_per_lang: cap per (dataset, language pair); ``None`` keeps all.
        profile: cleaning profile, or ``None`` for none.
        lowercase: with no profile, lowercase both sides.
        keep_rejected: give every reject its ``schemas/rejected.v1`` row.
        decontaminator: the evaluation sets no side may leak from; ``None``: none.
        holdout: pairs of each (dataset, language pair) set aside (output ``heldout``):
            the smallest ranks, before the cap keeps the next ``max_pairs_per_lang``.
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
        keep_rejected: bool = False,
        decontaminator: Decontaminator | None = None,
        holdout: int | None = None,
    ) -> None:
        super().__init__()
        rules = PairRules(
            language=language,
            lengths=lengths,
            profile=profile,
            lowercase=lowercase,
            decontaminator=decontaminator,
        )
        self._filter = FilterFn(
            bitext_candidates, rules, lid_model, _group_and_dedup, keep_rejected
        )
        self._seed = seed
        self._cap = max_pairs_per_lang
        self._keep_rejected = keep_rejected
        self._holdout = holdout

    def expand(self, pairs: beam.PCollection) -> dict[str, beam.PCollection]:
        filtered = pairs | "Filter" >> beam.ParDo(self._filter).with_outputs(
            REJECTED, COUNTS, main="candidates"
        )
        deduped = keep_one_copy(filtered.candidates, self._keep_rejected)
        kept, rejected = deduped.kept, [filtered[REJECTED], deduped[REJECTED]]
        if self._cap is not None:
            ranked = kept | "RankForCap" >> beam.Map(
                lambda c, seed: ((c.dataset, c.group), (_cap_rank(seed, c), c)), self._seed
            )
            thresholds = (
                ranked
                | "RanksOnly" >> beam.Map(lambda kv: (kv[0], kv[1][0]))
                | "SmallestRanks"
                >> beam.combiners.Top.SmallestPerKey(self._cap + (self._holdout or 0))
                | "Threshold" >> beam.Map(lambda kv: (kv[0], max(kv[1])))
            )
            capped = ranked | "Cap" >> beam.ParDo(
                _CapFn(self._keep_rejected), thresholds=beam.pvalue.AsDict(thresholds)
            ).with_outputs(REJECTED, main="kept")
            kept = capped.kept
            rejected.append(capped[REJECTED])
        return pair_outputs(
            kept,
            rejected,
            filtered[COUNTS],
            seed=self._seed,
            holdout=self._holdout,
            keep_rejected=self._keep_rejected,
        )

"""Beam wiring of the ParaNMT pipeline: ParaNMT files -> filtered, deduplicated paraphrases.

- :class:`ReadParaphrases`: ParaNMT file URIs -> :class:`RawParaphrase` items, dead-letter
  rows and counts, read by :func:`~corpusforge.sources.paranmt.parse.read_paranmt`.
- :class:`ParaphrasePairs`: raw paraphrases -> ``((dataset, "en-en"), paraphrase row)``:
  optional cleaning, P-SP's mean length, score and trigram-overlap filters (the overlap is
  computed once and stored in the row), both sides English by fastText, duplicates kept
  once (``(a, b)`` and ``(b, a)`` are the same pair).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator
from typing import Any

import apache_beam as beam

from corpusforge.pairing.filters import (
    LanguageFilterConfig,
    ParaphraseFilterConfig,
    check_language,
    check_paraphrase_length,
    check_paraphrase_score,
    check_trigram_overlap,
    pair_key,
)
from corpusforge.sources.opus.records import ENGLISH
from corpusforge.sources.paranmt.parse import RawParaphrase, read_paranmt
from corpusforge.text.clean import CleanProfile, prepare_text
from corpusforge.text.overlap import trigram_overlap
from corpusforge.transforms.bitext.common import (
    Candidate,
    CountKey,
    LanguageCheckFn,
    dead_letter,
    emit_counts,
    fan_out_read,
    keep_one_copy,
    keyed_row,
    reject,
    summed_counts,
)
from corpusforge.transforms.tags import COUNTS, REJECTED

PARAPHRASE_GROUP = f"{ENGLISH}-{ENGLISH}"
"""The group (language pair) of every ParaNMT pair in counts and rejects."""


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
                yield dead_letter(record, counts)
        yield from emit_counts(counts)


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
        return fan_out_read(uris, "Files", _ReadParaphraseFileFn(self._dataset))


class _FilterParaphraseFn(LanguageCheckFn):
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
            yield reject(reason, dataset, group, raw.key)
            return
        row = dataclasses.replace(raw, reference=anchor, paraphrase=positive).to_paraphrase_row(
            overlap
        )
        dedup = pair_key(anchor, positive, symmetric=True)
        order = (dataset, raw.origin_file, raw.origin_member or "", raw.origin_line)
        yield dedup, Candidate(order, raw.key, dedup, dataset, group, row)


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
        deduped = keep_one_copy(filtered.candidates)
        rows = deduped.kept | "Rows" >> beam.Map(keyed_row)
        rejected = (filtered[REJECTED], deduped[REJECTED]) | "AllRejected" >> beam.Flatten()
        counts = summed_counts([filtered[COUNTS]], rows, rejected)
        return {"pairs": rows, "rejected": rejected, "counts": counts}

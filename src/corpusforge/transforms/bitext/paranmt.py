"""Beam wiring of the ParaNMT pipeline: ParaNMT files -> filtered, deduplicated paraphrases.

- :class:`ReadParaphrases`: ParaNMT file URIs -> :class:`RawParaphrase` items, dead-letter
  rows and counts, read by :func:`~corpusforge.sources.paranmt.parse.read_paranmt`.
- :class:`ParaphrasePairs`: raw paraphrases -> ``((dataset, "en-en"), paraphrase row)``:
  optional cleaning, P-SP's mean length, score and trigram-overlap filters (the overlap is
  computed once and stored in the row), both sides English by fastText, duplicates kept
  once (``(a, b)`` and ``(b, a)`` are the same pair).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import apache_beam as beam

from corpusforge.pairing.candidates import (
    Candidate,
    PairRules,
    paraphrase_candidates,
)
from corpusforge.pairing.filters import (
    LanguageFilterConfig,
    ParaphraseFilterConfig,
)
from corpusforge.sources.paranmt.parse import RawParaphrase, read_paranmt
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
)
from corpusforge.transforms.tags import COUNTS, REJECTED


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


def _dedup(candidate: Candidate) -> str:
    """Copies are the same two sides in either order (the symmetric dedup key)."""
    return candidate.dedup


class ParaphrasePairs(beam.PTransform):
    """Raw paraphrases -> ``{"pairs": ((dataset, "en-en"), row), "rejected", "counts"}`` and,
    with ``keep_rejected``, ``"rejected_rows": ((dataset, "en-en"), rejected row)``, with
    ``holdout``, ``"heldout": ((dataset, "en-en"), row)``.

    P-SP's ParaNMT filtering: mean whitespace-token length of the two sides in
    ``[min_mean_tokens, max_mean_tokens]``, score in ``[min_score, max_score]``, word-trigram
    overlap at most ``max_trigram_overlap`` (stored in the row), and both sides English by
    fastText; then one copy of each pair, in either order. Rows follow
    ``schemas/paraphrase.v2``.

    Args:
        filters: length, score and overlap limits.
        language: language-id confidence threshold.
        lid_model: fastText model path; ``None``: the default model.
        profile: cleaning profile, or ``None`` for none.
        lowercase: with no profile, lowercase both sides.
        keep_rejected: give every reject its ``schemas/rejected.v1`` row.
        decontaminator: the evaluation sets no side may leak from; ``None``: none.
        holdout: pairs of each dataset set aside (output ``heldout``), by the seeded hash
            of their text (seed 0).
    """

    def __init__(
        self,
        *,
        filters: ParaphraseFilterConfig,
        language: LanguageFilterConfig,
        lid_model: str | None = None,
        profile: CleanProfile | None = None,
        lowercase: bool = False,
        keep_rejected: bool = False,
        decontaminator: Decontaminator | None = None,
        holdout: int | None = None,
    ) -> None:
        super().__init__()
        rules = PairRules(
            language=language,
            paraphrase=filters,
            profile=profile,
            lowercase=lowercase,
            decontaminator=decontaminator,
        )
        self._filter = FilterFn(paraphrase_candidates, rules, lid_model, _dedup, keep_rejected)
        self._keep_rejected = keep_rejected
        self._holdout = holdout

    def expand(self, pairs: beam.PCollection) -> dict[str, beam.PCollection]:
        filtered = pairs | "Filter" >> beam.ParDo(self._filter).with_outputs(
            REJECTED, COUNTS, main="candidates"
        )
        deduped = keep_one_copy(filtered.candidates, self._keep_rejected)
        return pair_outputs(
            deduped.kept,
            [filtered[REJECTED], deduped[REJECTED]],
            filtered[COUNTS],
            seed=0,
            holdout=self._holdout,
            keep_rejected=self._keep_rejected,
        )

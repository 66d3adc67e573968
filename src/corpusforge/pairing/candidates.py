"""A raw bitext pair or paraphrase -> a candidate for deduplication, or the reason it is dropped.

The per-pair rules of the bitext and ParaNMT builds, in their order, as plain functions:
the Beam filters (:mod:`corpusforge.transforms.bitext`) and the local engine
(:mod:`corpusforge.local.bitext`) both call them, so a pair is kept or dropped for the same
reason on every engine. Each runs over a block of pairs (:func:`bitext_candidates`,
:func:`paraphrase_candidates`: fastText once a block and side) and gives every pair what it
gives that pair alone (:func:`bitext_candidate`, :func:`paraphrase_candidate`).

- Bitext (P-SP; CT-XLMR-SE): clean (or make one line), orient English into ``anchor``,
  3 to 100 words per side in a ratio below 3, the noise filters that are on (per-side words
  and characters, longest word, HTML, script, punctuation, numerals: off by default), fastText
  language id on both sides agreeing with the declared languages.
- ParaNMT (P-SP): clean, mean length, score, word-trigram overlap (computed once and kept
  in the row), both sides English by fastText.
- Both, with ``--decontaminate``: no side may leak from an evaluation set (before language
  id; :mod:`corpusforge.pairing.decontam`).

A candidate carries what deduplication and the cap need: ``dedup``
(:func:`~corpusforge.keys.pair_key`: equal up to case and whitespace; either
order for paraphrases), ``order`` (its origin: among copies the smallest is kept) and
:func:`cap_rank` (the seeded hash by which a capped group keeps its smallest pairs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from corpusforge.keys import pair_key, seeded_hash
from corpusforge.pairing.columns import Check, RawPairs, Timed, bitext_block
from corpusforge.pairing.decontam import check_contamination
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    FilterReason,
    LanguageFilterConfig,
    ParaphraseFilterConfig,
    check_paraphrase_length,
    check_paraphrase_score,
    check_trigram_overlap,
    language_reason,
)
from corpusforge.sources.opus.records import ENGLISH, RawPair
from corpusforge.sources.paranmt.parse import RawParaphrase, paraphrase_row
from corpusforge.text.clean import CleanProfile, prepare_text
from corpusforge.text.decontam import Decontaminator
from corpusforge.text.langid import LanguageIdentifier
from corpusforge.text.overlap import trigram_overlap

PARAPHRASE_GROUP = f"{ENGLISH}-{ENGLISH}"
"""The group (language pair) of every ParaNMT pair in counts and rejects."""
LANGUAGE_REASONS = frozenset({FilterReason.LANG_MISMATCH, FilterReason.LANG_LOW_CONFIDENCE})
"""What language id drops a pair for."""


def untimed(check: Check) -> FilterReason | None:
    """Run a language check as it is (the Beam filters pass one that times it)."""
    return check()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A pair that passed the filters, on its way through deduplication and the cap.

    Attributes:
        order: the origin (dataset, file, member, line[, part]); among copies the smallest
            is kept.
        key: the pair's deterministic key (``RawPair.key`` / ``RawParaphrase.key``).
        dedup: :func:`~corpusforge.keys.pair_key` of the two sides.
        dataset: the pair's dataset.
        group: its language pair after orientation (``en-de``; ``en-en`` for ParaNMT).
        row: the release row (``schemas/bitext.v2`` or ``paraphrase.v2``): the training
            columns, then the scores the filters computed (length ratio, each side's
            predicted language and its probability).
    """

    order: tuple[Any, ...]
    key: str
    dedup: str
    dataset: str
    group: str
    row: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Dropped:
    """A pair the filters refused: its reason, where it is counted, and the text the rules
    saw (``row``: a bitext row, or a paraphrase's sides and score), from which
    :mod:`corpusforge.pairing.rejects` makes its rejected row."""

    reason: FilterReason
    dataset: str
    group: str
    key: str
    row: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PairRules:
    """The per-pair settings of a bitext or ParaNMT build.

    Attributes:
        lengths: bitext tokens per side and length ratio (bitext builds).
        paraphrase: ParaNMT length, score and overlap limits (ParaNMT builds).
        language: language-id confidence threshold.
        profile: a cleaning profile, or ``None`` for none.
        lowercase: with no profile, lowercase both sides.
        decontaminator: the evaluation sets no side may leak from (``--decontaminate``),
            checked before language id; ``None``: none.
        noise: whether ``lengths`` sets any noise filter (worked out once: with none set,
            :func:`~corpusforge.pairing.noise.check_bitext_noise` passes every pair).
    """

    language: LanguageFilterConfig
    lengths: BitextFilterConfig | None = None
    paraphrase: ParaphraseFilterConfig | None = None
    profile: CleanProfile | None = None
    lowercase: bool = False
    decontaminator: Decontaminator | None = None
    noise: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        noise = self.lengths is not None and self.lengths.noise_filters_on
        object.__setattr__(self, "noise", noise)


def checked_by_language(results: Sequence[Candidate | Dropped]) -> int:
    """How many of a block's ``results`` reached language id: the kept pairs and those it
    dropped (it is the last check of both rules)."""
    return sum(
        1
        for result in results
        if isinstance(result, Candidate) or result.reason in LANGUAGE_REASONS
    )


def bitext_candidates(
    raws: Sequence[RawPair], rules: PairRules, lid: LanguageIdentifier, timed: Timed = untimed
) -> list[Candidate | Dropped]:
    """Raw translation pairs -> each one's candidate, or why it is dropped, in order: the
    block rule (:func:`~corpusforge.pairing.columns.bitext_block`) over ``raws`` at once
    (the Beam filter's blocks).

    Args:
        raws: the pairs as read.
        rules: ``lengths`` must be set.
        lid: the fastText language identifier.
        timed: runs the block's language checks (the Beam filter times them).
    """
    return bitext_block(RawPairs.of(raws), rules, lid, timed).results()


def bitext_candidate(
    raw: RawPair, rules: PairRules, lid: LanguageIdentifier, timed: Timed = untimed
) -> Candidate | Dropped:
    """A raw translation pair -> a candidate, or why it is dropped: :func:`bitext_candidates`
    of a block of one.

    Args:
        raw: the pair as read.
        rules: ``lengths`` must be set.
        lid: the fastText language identifier.
        timed: runs the language check.
    """
    (result,) = bitext_candidates([raw], rules, lid, timed)
    return result


def _paraphrase_reason(
    raw: RawParaphrase, anchor: str, positive: str, rules: PairRules
) -> tuple[FilterReason | None, float]:
    """The cheap checks of a paraphrase, in order (mean length, score, overlap,
    decontamination): the first reason, or ``None``; and its trigram overlap (0.0 when a
    check before it failed)."""
    filters = rules.paraphrase
    assert filters is not None
    overlap = 0.0
    reason = check_paraphrase_length(anchor, positive, filters) or (
        check_paraphrase_score(raw.score, filters)
    )
    if reason is None:
        overlap = trigram_overlap(anchor, positive)
        reason = check_trigram_overlap(overlap, filters)
    if reason is None and rules.decontaminator is not None:
        reason = check_contamination(anchor, positive, rules.decontaminator)
    return reason, overlap


def _english(
    sides: tuple[list[str], list[str]],
    running: list[int],
    reasons: list[FilterReason | None],
    lid: LanguageIdentifier,
    config: LanguageFilterConfig,
) -> dict[int, list[tuple[str, float]]]:
    """Language id of the anchors of the ``running`` paraphrases, then of the positives of
    those whose anchor passed (as a pair alone, which stops at the first side that fails);
    each failing pair's reason goes into ``reasons``. Returns the kept pairs' predictions
    by index."""
    predictions: dict[int, list[tuple[str, float]]] = {i: [] for i in running}
    for texts in sides:
        predicted = lid.predict_many([texts[i] for i in running])
        passing = []
        for i, prediction in zip(running, predicted, strict=True):
            reason = language_reason(prediction, ENGLISH, config)
            if reason is None:
                predictions[i].append(prediction)
                passing.append(i)
            else:
                reasons[i] = reason
                del predictions[i]
        running = passing
    return predictions


def paraphrase_candidates(
    raws: Sequence[RawParaphrase],
    rules: PairRules,
    lid: LanguageIdentifier,
    timed: Timed = untimed,
) -> list[Candidate | Dropped]:
    """Raw ParaNMT paraphrases -> each one's candidate, or why it is dropped, in order: the
    cheap checks a pair at a time, then language id of the block's survivors in one
    fastText loop a side (the Beam filter's blocks).

    Args:
        raws: the paraphrases as read.
        rules: ``paraphrase`` must be set.
        lid: the fastText language identifier.
        timed: runs the block's language checks (the Beam filter times them).
    """
    anchors = [prepare_text(raw.reference, rules.profile, rules.lowercase) for raw in raws]
    positives = [prepare_text(raw.paraphrase, rules.profile, rules.lowercase) for raw in raws]
    checked = list(map(_paraphrase_reason, raws, anchors, positives, repeat(rules)))
    reasons = [reason for reason, _ in checked]
    running = [i for i, reason in enumerate(reasons) if reason is None]
    predictions: dict[int, list[tuple[str, float]]] = {}

    def check() -> None:
        nonlocal predictions
        sides = (anchors, positives)
        predictions = _english(sides, running, reasons, lid, rules.language)

    if running:
        timed(check)
    return [
        _paraphrase_result(raw, anchor, positive, reason, overlap, predictions.get(i))
        for i, (raw, anchor, positive, reason, (_, overlap)) in enumerate(
            zip(raws, anchors, positives, reasons, checked, strict=True)
        )
    ]


def _paraphrase_result(
    raw: RawParaphrase,
    anchor: str,
    positive: str,
    reason: FilterReason | None,
    overlap: float,
    predictions: list[tuple[str, float]] | None,
) -> Candidate | Dropped:
    dataset, group = raw.dataset, PARAPHRASE_GROUP
    if reason is not None or predictions is None:
        assert reason is not None
        sides = {"anchor": anchor, "positive": positive, "score": raw.score}
        return Dropped(reason, dataset, group, raw.key, sides)
    row = paraphrase_row(raw, anchor, positive, overlap)
    (_, row["anchor_lid_prob"]), (_, row["positive_lid_prob"]) = predictions
    dedup = pair_key(anchor, positive, symmetric=True)
    order = (dataset, raw.origin_file, raw.origin_member or "", raw.origin_line)
    return Candidate(order, raw.key, dedup, dataset, group, row)


def paraphrase_candidate(
    raw: RawParaphrase, rules: PairRules, lid: LanguageIdentifier, timed: Timed = untimed
) -> Candidate | Dropped:
    """A raw ParaNMT paraphrase -> a candidate, or why it is dropped:
    :func:`paraphrase_candidates` of a block of one.

    Args:
        raw: the paraphrase as read.
        rules: ``paraphrase`` must be set.
        lid: the fastText language identifier.
        timed: runs the language check.
    """
    (result,) = paraphrase_candidates([raw], rules, lid, timed)
    return result


def cap_rank(seed: int, dataset: str, group: str, dedup: str) -> tuple[int, str]:
    """Seeded hash of the pair's text (unique within a group after deduplication): a capped
    group keeps the pairs with the smallest ranks."""
    return seeded_hash(seed, "cap", dataset, group, dedup), dedup

"""A block of raw translation pairs, by column -> what the bitext rule keeps and drops, by column.

The bitext rule of :mod:`corpusforge.pairing.candidates` (clean, orient English into
``anchor``, word counts and the length check, the noise filters that are on,
decontamination, fastText on both sides, the dedup key) run over a block of pairs at once:
each step is a ``map`` of the same pure function over a column, or a lookup made once per
distinct language pair, instead of a chain of calls a pair, so that the local engine's
filter workers spend less Python around fastText (issue 38). Only what must stay per row
is: fastText itself, the checks of the rows still in the running, and the hashes.

This is the bitext rule's one implementation: the Beam filter runs it over blocks of a
bundle's pairs (:func:`~corpusforge.pairing.candidates.bitext_candidates`; one pair is a
block of one), and the local engine's workers take :meth:`BitextBlock.columns` straight
into their Arrow table.

    >>> block = bitext_block(RawPairs.of([pair]), rules, lid)   # doctest: +SKIP
    >>> block.results()                                          # doctest: +SKIP
    [Candidate(...)]
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from itertools import compress
from typing import TYPE_CHECKING, Any

from corpusforge.keys import pair_keys
from corpusforge.pairing.decontam import check_contamination
from corpusforge.pairing.filters import (
    FilterReason,
    LanguageFilterConfig,
    bitext_length_reasons,
)
from corpusforge.pairing.noise import check_bitext_noise
from corpusforge.sources.opus.records import RawPair, english_first
from corpusforge.text.clean import prepare_texts
from corpusforge.text.langid import LanguageIdentifier, normalize_lang, same_language
from corpusforge.text.lengths import word_counts

if TYPE_CHECKING:
    from corpusforge.pairing.candidates import Candidate, Dropped, PairRules

Check = Callable[[], FilterReason | None]
Timed = Callable[[Check], FilterReason | None]

_RAW_FIELDS = tuple(f.name for f in fields(RawPair))
RAW_FIELDS = operator.attrgetter(*_RAW_FIELDS)
"""A raw pair's fields as a tuple, in :class:`RawPair`'s order: what a batch carries to a
worker (a tuple pickles in a fraction of a dataclass's time)."""
ROW_COLUMNS = (
    "anchor",
    "positive",
    "anchor_lang",
    "positive_lang",
    "dataset",
    "length_ratio",
    "anchor_lid",
    "anchor_lid_prob",
    "positive_lid",
    "positive_lid_prob",
)
"""A kept pair's row (``schemas/bitext.v2``), in the order its dict is made."""


@dataclass(frozen=True, slots=True)
class RawPairs:
    """Raw translation pairs by column: each attribute holds one :class:`RawPair` field of
    every pair, in order."""

    src: Sequence[str]
    trg: Sequence[str]
    src_lang: Sequence[str]
    trg_lang: Sequence[str]
    dataset: Sequence[str]
    origin_file: Sequence[str]
    origin_member: Sequence[str | None]
    origin_line: Sequence[int]
    origin_part: Sequence[int]
    score: Sequence[float | None]

    @classmethod
    def of_fields(cls, batch: Sequence[tuple[Any, ...]]) -> RawPairs:
        """The pairs whose fields (:data:`RAW_FIELDS` of each) ``batch`` holds."""
        if not batch:
            return cls(*([] for _ in _RAW_FIELDS))
        return cls(*zip(*batch, strict=True))

    @classmethod
    def of(cls, pairs: Sequence[RawPair]) -> RawPairs:
        """``pairs`` by column."""
        return cls.of_fields([RAW_FIELDS(pair) for pair in pairs])

    def __len__(self) -> int:
        return len(self.src)

    def pair(self, i: int) -> RawPair:
        """The ``i``-th pair."""
        return RawPair(*(getattr(self, name)[i] for name in _RAW_FIELDS))


@dataclass(frozen=True, slots=True)
class BitextBlock:
    """What the bitext rule made of a block of pairs (:func:`bitext_block`).

    Attributes:
        pairs: the pairs as read.
        anchor: each pair's anchor after cleaning and orientation (all pairs).
        positive: each pair's positive, likewise.
        anchor_lang: each anchor's labelled language.
        positive_lang: each positive's labelled language.
        group: each pair's language pair after orientation (``en-de``).
        reasons: each pair's reason for being dropped, ``None`` for a kept pair.
        kept: the indices of the kept pairs, in order.
        length_ratio: each kept pair's longer side's words over the shorter's.
        anchor_lid: each kept pair's anchor's predicted language.
        anchor_lid_prob: the probability of each of those predictions.
        positive_lid: each kept pair's positive's predicted language.
        positive_lid_prob: the probability of each of those.
        dedup: each kept pair's :func:`~corpusforge.keys.pair_key`.
    """

    pairs: RawPairs
    anchor: list[str]
    positive: list[str]
    anchor_lang: Sequence[str]
    positive_lang: Sequence[str]
    group: list[str]
    reasons: list[FilterReason | None]
    kept: list[int]
    length_ratio: list[float]
    anchor_lid: list[str]
    anchor_lid_prob: list[float]
    positive_lid: list[str]
    positive_lid_prob: list[float]
    dedup: list[str]

    def _kept(self, column: Sequence[Any]) -> list[Any]:
        if len(self.kept) == len(self.reasons):
            return list(column)
        return [column[i] for i in self.kept]

    def columns(self) -> dict[str, list[Any]]:
        """The kept pairs' rows (:data:`ROW_COLUMNS`) and what deduplication needs
        (``_dataset``, ``_group``, ``_dedup``, ``_file``, ``_member``, ``_line``,
        ``_part``), by column."""
        keep = self._kept
        return {
            "anchor": keep(self.anchor),
            "positive": keep(self.positive),
            "anchor_lang": keep(self.anchor_lang),
            "positive_lang": keep(self.positive_lang),
            "dataset": keep(self.pairs.dataset),
            "length_ratio": self.length_ratio,
            "anchor_lid": self.anchor_lid,
            "anchor_lid_prob": self.anchor_lid_prob,
            "positive_lid": self.positive_lid,
            "positive_lid_prob": self.positive_lid_prob,
            "_dataset": keep(self.pairs.dataset),
            "_group": keep(self.group),
            "_dedup": self.dedup,
            "_file": keep(self.pairs.origin_file),
            "_member": [member or "" for member in keep(self.pairs.origin_member)],
            "_line": keep(self.pairs.origin_line),
            "_part": keep(self.pairs.origin_part),
        }

    def dropped(self) -> Iterator[Dropped]:
        """Each dropped pair, in order, with the row the rules saw."""
        from corpusforge.pairing.candidates import Dropped

        for i, reason in enumerate(self.reasons):
            if reason is not None:
                row = self._row(i)
                yield Dropped(reason, row["dataset"], self.group[i], self.pairs.pair(i).key, row)

    def results(self) -> list[Candidate | Dropped]:
        """Each pair's :class:`Candidate` or :class:`Dropped`, in order."""
        from corpusforge.pairing.candidates import Candidate

        dropped = self.dropped()
        results: list[Candidate | Dropped] = []
        k = 0
        for i, reason in enumerate(self.reasons):
            if reason is not None:
                results.append(next(dropped))
                continue
            row = self._row(i)
            row["length_ratio"] = self.length_ratio[k]
            row["anchor_lid"], row["anchor_lid_prob"] = self.anchor_lid[k], self.anchor_lid_prob[k]
            row["positive_lid"] = self.positive_lid[k]
            row["positive_lid_prob"] = self.positive_lid_prob[k]
            raw = self.pairs.pair(i)
            member = raw.origin_member or ""
            order = (raw.dataset, raw.origin_file, member, raw.origin_line, raw.origin_part)
            dedup, group = self.dedup[k], self.group[i]
            results.append(Candidate(order, raw.key, dedup, raw.dataset, group, row))
            k += 1
        return results

    def _row(self, i: int) -> dict[str, Any]:
        return {
            "anchor": self.anchor[i],
            "positive": self.positive[i],
            "anchor_lang": self.anchor_lang[i],
            "positive_lang": self.positive_lang[i],
            "dataset": self.pairs.dataset[i],
        }


def _gather(column: Sequence[Any], rows: list[int]) -> list[Any]:
    """``column``'s items at ``rows`` (increasing), taken by ``map`` in C."""
    if len(rows) == len(column):
        return list(column)
    return list(map(column.__getitem__, rows))


Sides = tuple[list[str], list[str], Sequence[str], Sequence[str], list[bool], list[bool]]
"""Anchor and positive texts, their languages, and whether each text is plain."""


def _oriented(pairs: RawPairs, rules: PairRules) -> Sides:
    """Anchor and positive texts (prepared: :func:`~corpusforge.text.clean.prepare_texts`),
    languages and plainness: English first (:func:`english_first`)."""
    src, src_plain = prepare_texts(pairs.src, rules.profile, rules.lowercase)
    trg, trg_plain = prepare_texts(pairs.trg, rules.profile, rules.lowercase)
    languages = list(zip(pairs.src_lang, pairs.trg_lang, strict=True))
    first = {langs: english_first(*langs) for langs in set(languages)}
    if all(first.values()):
        return src, trg, pairs.src_lang, pairs.trg_lang, src_plain, trg_plain
    if not any(first.values()):
        return trg, src, pairs.trg_lang, pairs.src_lang, trg_plain, src_plain
    keep = [first[langs] for langs in languages]
    pick = _picker(keep)
    return (
        pick(src, trg),
        pick(trg, src),
        pick(pairs.src_lang, pairs.trg_lang),
        pick(pairs.trg_lang, pairs.src_lang),
        pick(src_plain, trg_plain),
        pick(trg_plain, src_plain),
    )


def _picker(keep: list[bool]) -> Callable[[Sequence[Any], Sequence[Any]], list[Any]]:
    def pick(when: Sequence[Any], otherwise: Sequence[Any]) -> list[Any]:
        return [a if k else b for k, a, b in zip(keep, when, otherwise, strict=True)]

    return pick


Predictions = tuple[list[str], list[float], list[str], list[float]]
"""The kept pairs' anchors' predicted languages and probabilities, then their positives'."""


def _languages(
    sides: Sides,
    running: list[int],
    reasons: list[FilterReason | None],
    lid: LanguageIdentifier,
    rules: PairRules,
) -> Predictions:
    """Language id of the anchors of the ``running`` pairs, then of the positives of those
    whose anchor passed (as the per-pair rule, which stops at the first side that fails);
    each failing pair's reason goes into ``reasons``. Returns the kept pairs' predictions."""
    anchor, positive, anchor_lang, positive_lang, anchor_plain, positive_plain = sides
    columns: list[list[Any]] = []
    for texts, langs, plain in (
        (anchor, anchor_lang, anchor_plain),
        (positive, positive_lang, positive_plain),
    ):
        # a plain text is printable: fastText is given it as it is, without asking again
        predicted, probabilities = lid.predict_columns(
            _gather(texts, running), _gather(plain, running)
        )
        judged = _language_reasons(
            predicted, probabilities, _gather(langs, running), rules.language
        )
        if any(judged):
            passing = list(map(operator.not_, judged))
            for i, reason in zip(running, judged, strict=True):
                if reason is not None:
                    reasons[i] = reason
            columns = [list(compress(column, passing)) for column in columns]
            predicted = list(compress(predicted, passing))
            probabilities = list(compress(probabilities, passing))
            running = list(compress(running, passing))
        columns += [predicted, probabilities]
    return columns[0], columns[1], columns[2], columns[3]


def _language_reasons(
    predicted: list[str],
    probabilities: list[float],
    langs: list[str],
    config: LanguageFilterConfig,
) -> list[FilterReason | None]:
    """:func:`~corpusforge.pairing.filters.language_reason` of each side, by column: whether
    the languages agree is decided once a distinct (predicted, labelled) pair, and the
    probabilities are compared by ``map`` in C."""
    pairs = list(zip(predicted, langs, strict=True))
    agree = {pair: same_language(pair[0], normalize_lang(pair[1])) for pair in set(pairs)}
    threshold = float(config.min_confidence)
    if all(agree.values()) and not any(map(threshold.__gt__, probabilities)):
        return [None] * len(pairs)
    mismatch, low = FilterReason.LANG_MISMATCH, FilterReason.LANG_LOW_CONFIDENCE
    return [
        mismatch if not agree[pair] else low if probability < threshold else None
        for pair, probability in zip(pairs, probabilities, strict=True)
    ]


def bitext_block(
    pairs: RawPairs,
    rules: PairRules,
    lid: LanguageIdentifier,
    timed: Timed | None = None,
) -> BitextBlock:
    """Raw translation pairs -> what the bitext rule keeps and why it drops the rest.

    Each text's shape (plain: printable, single spaces between words) is asked once, when
    it is prepared, and word counts, language id and the dedup key take it from there.

    Args:
        pairs: the pairs as read.
        rules: ``lengths`` must be set.
        lid: the fastText language identifier.
        timed: runs the block's language checks (the Beam filter times them); ``None``:
            they run as they are.
    """
    lengths = rules.lengths
    assert lengths is not None
    sides = _oriented(pairs, rules)
    anchor, positive, anchor_lang, positive_lang, anchor_plain, positive_plain = sides
    languages = list(zip(anchor_lang, positive_lang, strict=True))
    groups = {langs: f"{langs[0]}-{langs[1]}" for langs in set(languages)}
    group = list(map(groups.__getitem__, languages))
    anchor_counts = word_counts(anchor, anchor_plain)
    positive_counts = word_counts(positive, positive_plain)
    reasons = bitext_length_reasons(anchor_counts, positive_counts, lengths)
    if rules.noise:
        for i in [i for i, reason in enumerate(reasons) if reason is None]:
            reasons[i] = check_bitext_noise(
                anchor[i], positive[i], anchor_lang[i], positive_lang[i], lengths
            )
    if rules.decontaminator is not None:
        for i in [i for i, reason in enumerate(reasons) if reason is None]:
            reasons[i] = check_contamination(anchor[i], positive[i], rules.decontaminator)
    running = _unrejected(reasons)
    predictions: Predictions = ([], [], [], [])

    def check() -> None:
        nonlocal predictions
        predictions = _languages(sides, running, reasons, lid, rules)

    if running:
        (timed or _untimed)(check)
    kept = _unrejected(reasons)
    kept_anchor_counts = _gather(anchor_counts, kept)
    kept_positive_counts = _gather(positive_counts, kept)
    return BitextBlock(
        pairs,
        anchor,
        positive,
        anchor_lang,
        positive_lang,
        group,
        reasons,
        kept,
        # the longer side's words over the shorter's, as max(c) / min(c) of the pair c
        list(
            map(
                operator.truediv,
                map(max, kept_anchor_counts, kept_positive_counts),
                map(min, kept_anchor_counts, kept_positive_counts),
            )
        ),
        *predictions,
        pair_keys(
            _gather(anchor, kept),
            _gather(positive, kept),
            _gather(anchor_plain, kept),
            _gather(positive_plain, kept),
        ),
    )


def _unrejected(reasons: list[FilterReason | None]) -> list[int]:
    """The indices of the pairs no check has rejected yet."""
    if not any(reasons):
        return list(range(len(reasons)))
    return [i for i, reason in enumerate(reasons) if reason is None]


def _untimed(check: Callable[[], object]) -> None:
    check()

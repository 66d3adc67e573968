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
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

from corpusforge.keys import pair_key
from corpusforge.pairing.decontam import check_contamination
from corpusforge.pairing.filters import (
    FilterReason,
    bitext_length_reasons,
    language_reason,
)
from corpusforge.pairing.noise import check_bitext_noise
from corpusforge.sources.opus.records import RawPair, english_first
from corpusforge.text.clean import one_line, prepare_text
from corpusforge.text.langid import LanguageIdentifier
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
        anchor_lid: each kept pair's anchor's predicted language and its probability.
        positive_lid: each kept pair's positive's prediction.
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
    anchor_lid: list[tuple[str, float]]
    positive_lid: list[tuple[str, float]]
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
            "anchor_lid": [lid for lid, _ in self.anchor_lid],
            "anchor_lid_prob": [prob for _, prob in self.anchor_lid],
            "positive_lid": [lid for lid, _ in self.positive_lid],
            "positive_lid_prob": [prob for _, prob in self.positive_lid],
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
            row["anchor_lid"], row["anchor_lid_prob"] = self.anchor_lid[k]
            row["positive_lid"], row["positive_lid_prob"] = self.positive_lid[k]
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


def _prepared(texts: Sequence[str], rules: PairRules) -> list[str]:
    if rules.profile is None and not rules.lowercase:
        return list(map(one_line, texts))  # all prepare_text does then, a call a text less
    return list(map(prepare_text, texts, repeat(rules.profile), repeat(rules.lowercase)))


def _oriented(
    pairs: RawPairs, src: list[str], trg: list[str]
) -> tuple[list[str], list[str], Sequence[str], Sequence[str]]:
    """Anchor and positive texts and languages: English first (:func:`english_first`)."""
    languages = list(zip(pairs.src_lang, pairs.trg_lang, strict=True))
    first = {langs: english_first(*langs) for langs in set(languages)}
    if all(first.values()):
        return src, trg, pairs.src_lang, pairs.trg_lang
    keep = [first[langs] for langs in languages]
    pick = _picker(keep)
    return (
        pick(src, trg),
        pick(trg, src),
        pick(pairs.src_lang, pairs.trg_lang),
        pick(pairs.trg_lang, pairs.src_lang),
    )


def _picker(keep: list[bool]) -> Callable[[Sequence[Any], Sequence[Any]], list[Any]]:
    def pick(when: Sequence[Any], otherwise: Sequence[Any]) -> list[Any]:
        return [a if k else b for k, a, b in zip(keep, when, otherwise, strict=True)]

    return pick


def _languages(
    block_in: tuple[list[str], list[str], Sequence[str], Sequence[str]],
    running: list[int],
    reasons: list[FilterReason | None],
    lid: LanguageIdentifier,
    rules: PairRules,
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """Language id of the anchors of the ``running`` pairs, then of the positives of those
    whose anchor passed (as the per-pair rule, which stops at the first side that fails);
    each failing pair's reason goes into ``reasons``. Returns the kept pairs' predictions."""
    anchor, positive, anchor_lang, positive_lang = block_in
    config = rules.language
    predictions: list[list[tuple[str, float]]] = []
    for texts, langs in ((anchor, anchor_lang), (positive, positive_lang)):
        predicted = lid.predict_many([texts[i] for i in running])
        judged = list(map(language_reason, predicted, [langs[i] for i in running], repeat(config)))
        passing = [reason is None for reason in judged]
        for i, reason in zip(running, judged, strict=True):
            if reason is not None:
                reasons[i] = reason
        predictions = [list(compress(p, passing)) for p in predictions]
        predictions.append(list(compress(predicted, passing)))
        running = list(compress(running, passing))
    return predictions[0], predictions[1]


def bitext_block(
    pairs: RawPairs,
    rules: PairRules,
    lid: LanguageIdentifier,
    timed: Timed | None = None,
) -> BitextBlock:
    """Raw translation pairs -> what the bitext rule keeps and why it drops the rest.

    Args:
        pairs: the pairs as read.
        rules: ``lengths`` must be set.
        lid: the fastText language identifier.
        timed: runs the block's language checks (the Beam filter times them); ``None``:
            they run as they are.
    """
    lengths = rules.lengths
    assert lengths is not None
    src, trg = _prepared(pairs.src, rules), _prepared(pairs.trg, rules)
    anchor, positive, anchor_lang, positive_lang = oriented = _oriented(pairs, src, trg)
    languages = list(zip(anchor_lang, positive_lang, strict=True))
    groups = {langs: f"{langs[0]}-{langs[1]}" for langs in set(languages)}
    group = [groups[langs] for langs in languages]
    anchor_counts, positive_counts = word_counts(anchor), word_counts(positive)
    reasons = bitext_length_reasons(anchor_counts, positive_counts, lengths)
    if rules.noise:
        for i in [i for i, reason in enumerate(reasons) if reason is None]:
            reasons[i] = check_bitext_noise(
                anchor[i], positive[i], anchor_lang[i], positive_lang[i], lengths
            )
    if rules.decontaminator is not None:
        for i in [i for i, reason in enumerate(reasons) if reason is None]:
            reasons[i] = check_contamination(anchor[i], positive[i], rules.decontaminator)
    running = [i for i, reason in enumerate(reasons) if reason is None]
    predictions: tuple[list[tuple[str, float]], list[tuple[str, float]]] = ([], [])

    def check() -> None:
        nonlocal predictions
        predictions = _languages(oriented, running, reasons, lid, rules)

    if running:
        (timed or _untimed)(check)
    kept = [i for i, reason in enumerate(reasons) if reason is None]
    kept_counts = [(anchor_counts[i], positive_counts[i]) for i in kept]
    return BitextBlock(
        pairs,
        anchor,
        positive,
        anchor_lang,
        positive_lang,
        group,
        reasons,
        kept,
        [max(c) / min(c) for c in kept_counts],
        predictions[0],
        predictions[1],
        list(map(pair_key, [anchor[i] for i in kept], [positive[i] for i in kept])),
    )


def _untimed(check: Callable[[], object]) -> None:
    check()

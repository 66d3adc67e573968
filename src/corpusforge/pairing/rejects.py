"""A pair the rules dropped -> its row of ``schemas/rejected.v1``: the reason and the value
that failed.

What ``--keep-rejected`` writes under ``rejected/`` (OpusFilter's ``filterfalse``, with the
reason beside each pair): both engines call :func:`rejected_row` on the same
:class:`~corpusforge.pairing.candidates.Dropped` and :func:`copy_row` on the duplicates and
capped pairs they set aside, so the rows are the same on every engine.

The value is recomputed from the text the rules saw, only for the pairs dropped and only
when the flag asks for them, so the kept pairs' path is unchanged: words of the failing side
(``bitext_too_short``/``_too_long``), the length ratio, the mean words of a paraphrase, its
score or trigram overlap, and the language-id probability of the side that failed with the
language predicted (``lang_mismatch``: ``detail`` ``anchor:fr``); a leak from an evaluation
set names the side and the set (``detail`` ``positive:sts-test.csv``); a noise filter's value
is :func:`~corpusforge.pairing.noise.noise_value`'s. A reason without a value
(a duplicate, the cap, a filter added later) has ``value`` and ``detail`` null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corpusforge.pairing.candidates import Dropped, PairRules
from corpusforge.pairing.decontam import contamination
from corpusforge.pairing.filters import (
    FilterReason,
    LanguagePredictor,
    check_language,
    token_count,
)
from corpusforge.pairing.noise import NOISE_REASONS, noise_value
from corpusforge.text.overlap import trigram_overlap

SORT_COLUMNS = ["origin"]
"""A rejected row's sort key in both engines: its origin, unique among the pairs read."""

_LANGUAGE = (FilterReason.LANG_MISMATCH, FilterReason.LANG_LOW_CONFIDENCE)
_MEAN_WORDS = (FilterReason.PARAPHRASE_TOO_SHORT, FilterReason.PARAPHRASE_TOO_LONG)
_SCORE = (FilterReason.PARAPHRASE_SCORE_TOO_LOW, FilterReason.PARAPHRASE_SCORE_TOO_HIGH)
_DECONTAM = (FilterReason.DECONTAM_EXACT, FilterReason.DECONTAM_NGRAM)


def sort_key(row: Mapping[str, Any]) -> tuple[str]:
    """The Beam sink's sort key of a rejected row (the local engine sorts by
    :data:`SORT_COLUMNS`)."""
    return (row["origin"],)


def langs_of(row: Mapping[str, Any], group: str) -> tuple[str, str]:
    """The sides' labelled languages: a bitext row's own, else its group's (``en-en``)."""
    if "anchor_lang" in row:
        return row["anchor_lang"], row["positive_lang"]
    first, _, second = group.partition("-")
    return first, second


def copy_row(
    row: Mapping[str, Any], dataset: str, group: str, reason: str, origin: str
) -> dict[str, Any]:
    """A candidate set aside after the filters (a duplicate, over the cap) as a rejected row.

    Args:
        row: its release row (``anchor``, ``positive``, and a bitext row's languages).
        dataset: its dataset.
        group: its language pair (``en-de``; ``en-en`` for ParaNMT).
        reason: ``dedup_duplicate`` or ``cap_over_limit``.
        origin: its deterministic key.
    """
    anchor_lang, positive_lang = langs_of(row, group)
    return {
        "anchor": row["anchor"],
        "positive": row["positive"],
        "anchor_lang": anchor_lang,
        "positive_lang": positive_lang,
        "dataset": dataset,
        "reason": reason,
        "value": None,
        "detail": None,
        "origin": origin,
    }


def rejected_row(dropped: Dropped, rules: PairRules, lid: LanguagePredictor) -> dict[str, Any]:
    """A pair the filters dropped as a rejected row, with the value that failed.

    Args:
        dropped: the drop, with the row the rules saw (``Dropped.row``).
        rules: the build's per-pair settings (the language threshold).
        lid: the language identifier (asked again, for a language reason only).
    """
    row = dropped.row or {"anchor": "", "positive": ""}
    row_out = copy_row(row, dropped.dataset, dropped.group, str(dropped.reason), dropped.key)
    value, detail = failed_value(dropped.reason, row, dropped.group, rules, lid)
    row_out["value"], row_out["detail"] = value, detail
    return row_out


def failed_value(
    reason: FilterReason,
    row: Mapping[str, Any],
    group: str,
    rules: PairRules,
    lid: LanguagePredictor,
) -> tuple[float | None, str | None]:
    """``(value, detail)`` of the check that failed with ``reason`` on ``row``.

    Args:
        reason: the drop's reason.
        row: ``anchor`` and ``positive`` as the rules saw them; a paraphrase's ``score``.
        group: the pair's language pair (the sides' languages where the row lacks them).
        rules: the build's per-pair settings.
        lid: the language identifier.
    """
    anchor, positive = row["anchor"], row["positive"]
    if reason in (FilterReason.BITEXT_TOO_SHORT, FilterReason.BITEXT_TOO_LONG):
        words = {"anchor": token_count(anchor), "positive": token_count(positive)}
        pick = min if reason is FilterReason.BITEXT_TOO_SHORT else max
        side = pick(words, key=lambda s: words[s])
        return float(words[side]), side
    if reason is FilterReason.BITEXT_LENGTH_RATIO:
        short, long = sorted((token_count(anchor), token_count(positive)))
        return long / short, None
    if reason in _MEAN_WORDS:
        return (token_count(anchor) + token_count(positive)) / 2, None
    if reason in _SCORE:
        return row.get("score"), None
    if reason is FilterReason.PARAPHRASE_OVERLAP_TOO_HIGH:
        return trigram_overlap(anchor, positive), None
    if reason in _LANGUAGE:
        return _language_value(row, group, rules, lid)
    if reason in NOISE_REASONS and rules.lengths is not None:
        return noise_value(reason, anchor, positive, *langs_of(row, group), rules.lengths)
    if reason in _DECONTAM and rules.decontaminator is not None:
        found = contamination(anchor, positive, rules.decontaminator)
        return None, None if found is None else f"{found[1]}:{found[2]}"
    return None, None


def _language_value(
    row: Mapping[str, Any], group: str, rules: PairRules, lid: LanguagePredictor
) -> tuple[float | None, str | None]:
    """The probability and the language fastText gave the first side that fails, as the
    language check orders them (anchor, then positive)."""
    langs = langs_of(row, group)
    for side, lang in zip(("anchor", "positive"), langs, strict=True):
        text = row[side]
        if check_language(text, lang, lid, rules.language) is not None:
            predicted, confidence = lid.predict(text)
            return confidence, f"{side}:{predicted}"
    return None, None

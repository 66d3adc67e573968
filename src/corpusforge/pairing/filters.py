"""Pure checks on a text pair: each returns a :class:`FilterReason` or ``None`` (keep).

Defaults follow the papers whose corpora corpusforge rebuilds:

* Bitext, following P-SP (Wieting et al., "Paraphrastic Representations at Scale",
  EMNLP 2022 demos) and CT-XLMR-SE (Lamsal et al., ISCRAM 2024): each side has 3 to 100
  whitespace-separated tokens, and each side is in its labelled language according to
  fastText ``lid.176`` (:mod:`corpusforge.text.langid`). Added, as the standard bitext
  sanity check: the longer side is less than 3 times as long as the shorter
  (OpusFilter's ``LengthRatioFilter``, Aulamo et al., ACL 2020 demos, threshold 3 in
  their examples), which catches many pairs of a corpus shifted by a line. Off by
  default, the noise filters OPUS data needs (:mod:`corpusforge.pairing.noise`, after
  OpusFilter's filters of the same purpose): per-side word and character limits, the
  longest word, HTML tags, the share of letters in each language's script, terminal
  punctuation and non-zero numerals.
* ParaNMT (P-SP's filtering of ParaNMT-50M): the mean whitespace-token length of the two
  sides is in [5, 40], the paraphrase score is in [0.4, 1.0], and the word-trigram
  overlap of the two sides (:func:`corpusforge.text.overlap.trigram_overlap`) is at most
  0.7, so that near-copies do not teach the model to match surface form.

Inputs are the two sides as ``str`` (``anchor``/``positive`` or ``src``/``trg``), the
ParaNMT ``score`` and, for language id, the sides' language labels; checks never change
the text. "Tokens" are words as :func:`corpusforge.text.lengths.word_count` counts them:
whitespace tokens, except in scripts written without spaces (Chinese, Japanese, Thai,
Lao, Khmer, Burmese), where letters are divided by the script's typical letters per word,
so that the limits mean the same in every script.

Duplicates (equal up to case and whitespace) and the per-(dataset, language pair) caps
are applied later, in Beam, by seeded hash; :func:`pair_key` is the pure key for the
first. Their reason codes are here so every drop in the pipeline has one.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from corpusforge.config.flags import FlagError
from corpusforge.config.settings import flag_name, setting
from corpusforge.text.langid import normalize_lang, same_language
from corpusforge.text.lengths import word_count
from corpusforge.text.overlap import trigram_overlap


class FilterReason(enum.StrEnum):
    """Why a pair is dropped (prefix = stage)."""

    BITEXT_TOO_SHORT = "bitext_too_short"
    BITEXT_TOO_LONG = "bitext_too_long"
    BITEXT_LENGTH_RATIO = "bitext_length_ratio"
    BITEXT_CHARS_TOO_SHORT = "bitext_chars_too_short"
    BITEXT_CHARS_TOO_LONG = "bitext_chars_too_long"
    BITEXT_WORD_TOO_LONG = "bitext_word_too_long"
    BITEXT_HTML_TAGS = "bitext_html_tags"
    BITEXT_SCRIPT_RATIO = "bitext_script_ratio"
    BITEXT_TERMINAL_PUNCTUATION = "bitext_terminal_punctuation"
    BITEXT_NUMERALS_MISMATCH = "bitext_numerals_mismatch"
    PARAPHRASE_TOO_SHORT = "paraphrase_too_short"
    PARAPHRASE_TOO_LONG = "paraphrase_too_long"
    PARAPHRASE_SCORE_TOO_LOW = "paraphrase_score_too_low"
    PARAPHRASE_SCORE_TOO_HIGH = "paraphrase_score_too_high"
    PARAPHRASE_OVERLAP_TOO_HIGH = "paraphrase_overlap_too_high"
    LANG_MISMATCH = "lang_mismatch"
    LANG_LOW_CONFIDENCE = "lang_low_confidence"
    DECONTAM_EXACT = "decontam_exact"
    DECONTAM_NGRAM = "decontam_ngram"
    DEDUP_DUPLICATE = "dedup_duplicate"
    CAP_OVER_LIMIT = "cap_over_limit"


def _require(ok: bool, config: type, field: str, problem: str) -> None:
    """Refuse a value with a :class:`FlagError` naming the field's flag (``--max-overlap``)."""
    if not ok:
        raise FlagError(flag_name(config, field), problem)


def _finite(config: type, field: str, value: float) -> None:
    _require(
        isinstance(value, int | float) and math.isfinite(value),
        config,
        field,
        f"must be a finite number, got {value!r}",
    )


def _side_limit(help: str) -> Any:
    """An optional limit, off by default (``0`` on the command line)."""
    return setting(None, help=f"{help}; 0: no limit", zero_is_none=True)


def _ratio_limit(help: str) -> Any:
    """A lowest share in [0, 1], off at 0 (nothing scores below it)."""
    return setting(0.0, help=help)


NOISE_FILTERS = (
    "min_anchor_tokens",
    "max_anchor_tokens",
    "min_positive_tokens",
    "max_positive_tokens",
    "min_anchor_chars",
    "max_anchor_chars",
    "min_positive_chars",
    "max_positive_chars",
    "max_word_chars",
    "drop_html",
    "min_script_ratio",
    "min_punctuation_score",
    "min_numeral_similarity",
)
"""The :class:`BitextFilterConfig` settings of the filters OPUS data needs (issue 38), off
by default; the manifest records them only when one is on, so that a release built without
them keeps its bytes."""


@dataclass(frozen=True, slots=True)
class BitextFilterConfig:
    """Length limits and noise filters for a translation pair.

    The sides are the release's: ``anchor`` (English, where the pair has it) and
    ``positive``. Every limit after ``max_length_ratio`` is off by default; they follow
    OpusFilter's filters of the same purpose (:mod:`corpusforge.text.noise`).

    Attributes:
        min_tokens: fewest words on each side (P-SP: 3 whitespace tokens; see
            :func:`token_count` for scripts without spaces).
        max_tokens: most words on each side (P-SP: 100).
        max_length_ratio: drop a pair whose longer side has at least this many times the
            tokens of the shorter (OpusFilter's ``LengthRatioFilter``: 3); ``None`` turns
            the check off.
        min_anchor_tokens: fewest words of the anchor, besides ``min_tokens``
            (``bitext_too_short``); ``None``: no limit of its own.
        max_anchor_tokens: most words of the anchor (``bitext_too_long``).
        min_positive_tokens: fewest words of the positive.
        max_positive_tokens: most words of the positive.
        min_anchor_chars: fewest characters (code points, spaces included) of the anchor
            (``bitext_chars_too_short``; OpusFilter's ``LengthFilter`` with ``unit: char``).
        max_anchor_chars: most characters of the anchor (``bitext_chars_too_long``).
        min_positive_chars: fewest characters of the positive.
        max_positive_chars: most characters of the positive.
        max_word_chars: most characters in one whitespace token of either side
            (``bitext_word_too_long``; OpusFilter's ``LongWordFilter`` threshold 40 keeps
            words of up to 39).
        drop_html: drop a pair with an HTML tag on either side (``bitext_html_tags``;
            ``HtmlTagFilter``).
        min_script_ratio: lowest share of each side's letters in its language's script
            (``bitext_script_ratio``; ``CharacterScoreFilter``, threshold 1 there); 0: off.
            A side whose language has no known script is not checked.
        min_punctuation_score: lowest terminal-punctuation score
            (``bitext_terminal_punctuation``; ``TerminalPunctuationFilter``, -2 there);
            ``None``: off.
        min_numeral_similarity: lowest similarity of the sides' non-zero digits
            (``bitext_numerals_mismatch``; ``NonZeroNumeralsFilter``, 0.5 there); 0: off.
    """

    min_tokens: int = setting(3, help="fewest words per side (scripts without spaces: by letters)")
    max_tokens: int = setting(100, help="most words per side")
    max_length_ratio: float | None = setting(
        3.0,
        help="drop a pair whose longer side has this many times the tokens of the shorter "
        "(OpusFilter's LengthRatioFilter); 0: no limit",
        zero_is_none=True,
    )
    min_anchor_tokens: int | None = _side_limit(
        "fewest words of the anchor (the English side, if any)"
    )
    max_anchor_tokens: int | None = _side_limit(
        "most words of the anchor (the English side, if any)"
    )
    min_positive_tokens: int | None = _side_limit("fewest words of the positive side")
    max_positive_tokens: int | None = _side_limit("most words of the positive side")
    min_anchor_chars: int | None = _side_limit(
        "fewest characters of the anchor (the English side, if any)"
    )
    max_anchor_chars: int | None = _side_limit(
        "most characters of the anchor (the English side, if any)"
    )
    min_positive_chars: int | None = _side_limit("fewest characters of the positive side")
    max_positive_chars: int | None = _side_limit("most characters of the positive side")
    max_word_chars: int | None = _side_limit(
        "most characters in one word of either side (OpusFilter's LongWordFilter threshold "
        "40 is 39 here)"
    )
    drop_html: bool = setting(
        False, help="drop a pair with an HTML tag on either side (OpusFilter's HtmlTagFilter)"
    )
    min_script_ratio: float = _ratio_limit(
        "lowest share of each side's letters in its language's script "
        "(OpusFilter's CharacterScoreFilter; 1: all); 0: off"
    )
    min_punctuation_score: float | None = setting(
        None,
        help="lowest terminal-punctuation score, -log(penalty + 1) "
        "(OpusFilter's TerminalPunctuationFilter, -2 there); default: off",
    )
    min_numeral_similarity: float = _ratio_limit(
        "lowest similarity of the two sides' non-zero digits "
        "(OpusFilter's NonZeroNumeralsFilter, 0.5 there); 0: off"
    )

    def __post_init__(self) -> None:
        cls = BitextFilterConfig
        _require(
            isinstance(self.min_tokens, int) and self.min_tokens >= 1,
            cls,
            "min_tokens",
            f"must be an integer >= 1, got {self.min_tokens!r}",
        )
        _require(
            isinstance(self.max_tokens, int) and self.max_tokens >= self.min_tokens,
            cls,
            "max_tokens",
            f"must be an integer >= the fewest words per side ({self.min_tokens}), "
            f"got {self.max_tokens!r}",
        )
        if self.max_length_ratio is not None:
            _finite(cls, "max_length_ratio", self.max_length_ratio)
            _require(
                self.max_length_ratio > 1,
                cls,
                "max_length_ratio",
                f"must be > 1 (or 0 for no limit), got {self.max_length_ratio!r}",
            )
        self._check_noise_filters()

    def _check_noise_filters(self) -> None:
        cls = BitextFilterConfig
        for side in ("anchor", "positive"):
            for unit in ("tokens", "chars"):
                low, high = f"min_{side}_{unit}", f"max_{side}_{unit}"
                for name in (low, high):
                    value = getattr(self, name)
                    _require(
                        value is None or (isinstance(value, int) and value >= 1),
                        cls,
                        name,
                        f"must be an integer >= 1 (or 0 for no limit), got {value!r}",
                    )
                least, most = getattr(self, low), getattr(self, high)
                _require(
                    least is None or most is None or most >= least,
                    cls,
                    high,
                    f"must be >= that side's lowest limit ({least}), got {most!r}",
                )
        _require(
            self.max_word_chars is None
            or (isinstance(self.max_word_chars, int) and self.max_word_chars >= 1),
            cls,
            "max_word_chars",
            f"must be an integer >= 1 (or 0 for no limit), got {self.max_word_chars!r}",
        )
        _require(
            isinstance(self.drop_html, bool),
            cls,
            "drop_html",
            f"must be on or off, got {self.drop_html!r}",
        )
        for name in ("min_script_ratio", "min_numeral_similarity"):
            value = getattr(self, name)
            _finite(cls, name, value)
            _require(0.0 <= value <= 1.0, cls, name, f"must be in [0, 1], got {value!r}")
        if self.min_punctuation_score is not None:
            _finite(cls, "min_punctuation_score", self.min_punctuation_score)
            _require(
                self.min_punctuation_score <= 0,
                cls,
                "min_punctuation_score",
                f"must be <= 0 (the best score), got {self.min_punctuation_score!r}",
            )

    @property
    def noise_filters_on(self) -> bool:
        """Whether any of :data:`NOISE_FILTERS` is set."""
        return self != BitextFilterConfig(self.min_tokens, self.max_tokens, self.max_length_ratio)

    def to_json(self) -> dict[str, Any]:
        """The settings as the manifest records them: :data:`NOISE_FILTERS` only when one
        is on, so that releases built before them, or without them, keep their bytes."""
        doc = dataclasses.asdict(self)
        if not self.noise_filters_on:
            for name in NOISE_FILTERS:
                del doc[name]
        return doc


@dataclass(frozen=True, slots=True)
class ParaphraseFilterConfig:
    """Limits for a ParaNMT-style paraphrase pair.

    Attributes:
        min_mean_tokens: lowest mean whitespace-token length of the two sides (P-SP: 5).
        max_mean_tokens: highest mean whitespace-token length (P-SP: 40).
        min_score: lowest paraphrase score kept (P-SP: 0.4).
        max_score: highest paraphrase score kept (P-SP: 1.0).
        max_trigram_overlap: highest word-trigram overlap kept (P-SP: 0.7).
    """

    min_mean_tokens: float = setting(
        5.0, help="lowest mean whitespace-token length of the two sides"
    )
    max_mean_tokens: float = setting(
        40.0, help="highest mean whitespace-token length of the two sides"
    )
    min_score: float = setting(0.4, help="lowest paraphrase score kept")
    max_score: float = setting(1.0, help="highest paraphrase score kept")
    max_trigram_overlap: float = setting(
        0.7, help="highest word-trigram overlap of the two sides kept", flag="max_overlap"
    )

    def __post_init__(self) -> None:
        cls = ParaphraseFilterConfig
        for name in (
            "min_mean_tokens",
            "max_mean_tokens",
            "min_score",
            "max_score",
            "max_trigram_overlap",
        ):
            _finite(cls, name, getattr(self, name))
        _require(
            self.min_mean_tokens >= 0,
            cls,
            "min_mean_tokens",
            f"must be >= 0, got {self.min_mean_tokens!r}",
        )
        _require(
            self.max_mean_tokens >= self.min_mean_tokens,
            cls,
            "max_mean_tokens",
            f"must be >= the lowest mean length ({self.min_mean_tokens}), "
            f"got {self.max_mean_tokens!r}",
        )
        _require(
            self.max_score >= self.min_score,
            cls,
            "max_score",
            f"must be >= the lowest score ({self.min_score}), got {self.max_score!r}",
        )
        _require(
            0.0 <= self.max_trigram_overlap <= 1.0,
            cls,
            "max_trigram_overlap",
            f"must be in [0, 1], got {self.max_trigram_overlap!r}",
        )


@dataclass(frozen=True, slots=True)
class LanguageFilterConfig:
    """Language-id check on each side.

    Attributes:
        min_confidence: lowest fastText probability for the expected language; 0.0 (the
            default) only asks that the top prediction is the labelled language.
    """

    min_confidence: float = setting(
        0.0,
        help="lowest fastText probability of each side's expected language (0: top-1 only)",
        flag="min_lid_confidence",
    )

    def __post_init__(self) -> None:
        _finite(LanguageFilterConfig, "min_confidence", self.min_confidence)
        _require(
            0.0 <= self.min_confidence <= 1.0,
            LanguageFilterConfig,
            "min_confidence",
            f"must be in [0, 1], got {self.min_confidence!r}",
        )


class LanguagePredictor(Protocol):
    """What the language check needs: :class:`corpusforge.text.langid.LanguageIdentifier`."""

    def predict(self, text: str) -> tuple[str, float]: ...


def token_count(text: str) -> int:
    """Number of words: whitespace tokens, by letters in scripts without spaces.

    See :func:`corpusforge.text.lengths.word_count`.
    """
    return word_count(text)


def check_bitext_length(
    src: str,
    trg: str,
    config: BitextFilterConfig = BitextFilterConfig(),
    counts: tuple[int, int] | None = None,
) -> FilterReason | None:
    """Both sides have ``min_tokens``..``max_tokens`` tokens, and each side's own limits
    where they are set, in a ratio below the limit (:func:`bitext_length_reasons` of one
    pair).

    Args:
        src: one side (the anchor).
        trg: the other side (the positive).
        config: the limits.
        counts: the sides' :func:`token_count`, when the caller has them (it keeps the
            length ratio of the pairs it keeps).

    Returns:
        ``bitext_too_short``, ``bitext_too_long`` or ``bitext_length_ratio`` (checked in
        that order), else ``None``.
    """
    if counts is None:
        counts = (token_count(src), token_count(trg))
    return bitext_length_reasons([counts[0]], [counts[1]], config)[0]


_LENGTH_REASONS = (
    None,
    FilterReason.BITEXT_TOO_SHORT,
    FilterReason.BITEXT_TOO_LONG,
    FilterReason.BITEXT_LENGTH_RATIO,
)


def bitext_length_reasons(
    anchor_counts: Sequence[int],
    positive_counts: Sequence[int],
    config: BitextFilterConfig = BitextFilterConfig(),
) -> list[FilterReason | None]:
    """The bitext length rule of each pair, by column: :func:`check_bitext_length`'s reason
    (or ``None``) for each pair whose sides have these word counts.

    Args:
        anchor_counts: each pair's anchor's :func:`token_count`.
        positive_counts: each pair's positive's, in the same order.
        config: the limits.
    """
    import numpy as np  # here: the flags' module imports this one, and numpy takes 0.1 s

    anchor = np.asarray(anchor_counts, dtype=np.int64)
    positive = np.asarray(positive_counts, dtype=np.int64)
    least, most = np.minimum(anchor, positive), np.maximum(anchor, positive)
    short = least < config.min_tokens
    long = most > config.max_tokens
    for side, low, high in (
        (anchor, config.min_anchor_tokens, config.max_anchor_tokens),
        (positive, config.min_positive_tokens, config.max_positive_tokens),
    ):
        if low is not None:
            short |= side < low
        if high is not None:
            long |= side > high
    codes = np.where(short, 1, np.where(long, 2, 0))
    if config.max_length_ratio is not None:
        skewed = most >= config.max_length_ratio * least
        codes = np.where(codes == 0, np.where(skewed, 3, 0), codes)
    if not codes.any():
        return [None] * len(codes)
    return [_LENGTH_REASONS[code] for code in codes.tolist()]


def check_paraphrase_length(
    reference: str, paraphrase: str, config: ParaphraseFilterConfig = ParaphraseFilterConfig()
) -> FilterReason | None:
    """The mean token length of the two sides is within the configured range.

    Returns:
        ``paraphrase_too_short`` or ``paraphrase_too_long``, else ``None``.
    """
    mean = (token_count(reference) + token_count(paraphrase)) / 2
    if mean < config.min_mean_tokens:
        return FilterReason.PARAPHRASE_TOO_SHORT
    if mean > config.max_mean_tokens:
        return FilterReason.PARAPHRASE_TOO_LONG
    return None


def check_paraphrase_score(
    score: float, config: ParaphraseFilterConfig = ParaphraseFilterConfig()
) -> FilterReason | None:
    """The score is within ``[min_score, max_score]`` (NaN counts as too low).

    Returns:
        ``paraphrase_score_too_low`` or ``paraphrase_score_too_high``, else ``None``.
    """
    if not score >= config.min_score:
        return FilterReason.PARAPHRASE_SCORE_TOO_LOW
    if score > config.max_score:
        return FilterReason.PARAPHRASE_SCORE_TOO_HIGH
    return None


def check_trigram_overlap(
    overlap: float, config: ParaphraseFilterConfig = ParaphraseFilterConfig()
) -> FilterReason | None:
    """The trigram overlap of the two sides is at most ``max_trigram_overlap``.

    Args:
        overlap: :func:`corpusforge.text.overlap.trigram_overlap` of the two sides,
            computed once by the caller, who also writes it to the ``paraphrase`` table.
        config: the limit.

    Returns:
        ``paraphrase_overlap_too_high``, else ``None``.
    """
    if overlap > config.max_trigram_overlap:
        return FilterReason.PARAPHRASE_OVERLAP_TOO_HIGH
    return None


def check_paraphrase(
    reference: str,
    paraphrase: str,
    score: float,
    config: ParaphraseFilterConfig = ParaphraseFilterConfig(),
    *,
    overlap: float | None = None,
) -> FilterReason | None:
    """All ParaNMT checks in order: length, score, trigram overlap.

    Args:
        reference: the reference sentence (anchor).
        paraphrase: the paraphrase (positive).
        score: the score given with the pair.
        config: the limits.
        overlap: the pair's trigram overlap if already computed; else computed here.

    Returns:
        The first failing check's reason, else ``None``.
    """
    reason = check_paraphrase_length(reference, paraphrase, config) or check_paraphrase_score(
        score, config
    )
    if reason is not None:
        return reason
    if overlap is None:
        overlap = trigram_overlap(reference, paraphrase)
    return check_trigram_overlap(overlap, config)


def check_language(
    text: str,
    lang: str,
    identifier: LanguagePredictor,
    config: LanguageFilterConfig = LanguageFilterConfig(),
) -> FilterReason | None:
    """``text`` is predicted to be in ``lang`` with at least ``min_confidence``.

    Args:
        text: one side of a pair.
        lang: its labelled language, any form :func:`normalize_lang` accepts.
        identifier: a loaded :class:`~corpusforge.text.langid.LanguageIdentifier`.
        config: the confidence threshold.

    Returns:
        ``lang_mismatch`` when another language is predicted (a member of the labelled
        macrolanguage, Cantonese for ``zh``, is not another), ``lang_low_confidence``
        when the right one is predicted below the threshold, else ``None``.
    """
    return language_reason(identifier.predict(text), lang, config)


def language_reason(
    prediction: tuple[str, float],
    lang: str,
    config: LanguageFilterConfig = LanguageFilterConfig(),
) -> FilterReason | None:
    """:func:`check_language` of a side whose ``(language, confidence)`` is predicted."""
    predicted, confidence = prediction
    if not same_language(predicted, normalize_lang(lang)):
        return FilterReason.LANG_MISMATCH
    if confidence < config.min_confidence:
        return FilterReason.LANG_LOW_CONFIDENCE
    return None


def check_pair_languages(
    src: str,
    src_lang: str,
    trg: str,
    trg_lang: str,
    identifier: LanguagePredictor,
    config: LanguageFilterConfig = LanguageFilterConfig(),
) -> FilterReason | None:
    """Both sides of a translation pair are in their labelled languages.

    Returns:
        The first side's reason from :func:`check_language`, else the second's, else ``None``.
    """
    return check_language(src, src_lang, identifier, config) or check_language(
        trg, trg_lang, identifier, config
    )

"""The noise filters OPUS data needs: a bitext pair -> a :class:`FilterReason` or ``None``.

Each is off unless its :class:`~corpusforge.pairing.filters.BitextFilterConfig` setting is
given (:data:`~corpusforge.pairing.filters.NOISE_FILTERS`), so a release built without
them keeps its bytes: per-side characters, the longest word, HTML tags, the share of
letters in each language's script, terminal punctuation and non-zero numerals, after
OpusFilter's filters of the same purpose (Aulamo et al., ACL 2020 demos). The measures are
pure functions of :mod:`corpusforge.text.noise` and :mod:`corpusforge.text.scripts`;
:func:`noise_value` recomputes the one that failed for ``--keep-rejected``.
"""

from __future__ import annotations

from corpusforge.pairing.filters import BitextFilterConfig, FilterReason
from corpusforge.text.lengths import above_limits, below_limits
from corpusforge.text.noise import (
    has_html_tag,
    longest_word,
    numeral_similarity,
    terminal_punctuation_score,
)
from corpusforge.text.scripts import expected_scripts, script_ratio

_ALL_OFF = BitextFilterConfig()


def _off_script(text: str, lang: str, least: float) -> bool:
    """Whether fewer than ``least`` of ``text``'s letters are in ``lang``'s script (a
    language whose script is not known is never off script)."""
    scripts = expected_scripts(lang)
    return scripts is not None and script_ratio(text, scripts) < least


def check_bitext_noise(
    anchor: str,
    positive: str,
    anchor_lang: str,
    positive_lang: str,
    config: BitextFilterConfig = _ALL_OFF,
) -> FilterReason | None:
    """The noise filters OPUS data needs, each off unless its setting is given.

    Inputs are a bitext row's ``anchor``, ``positive`` and their labelled languages; the
    measures are OpusFilter's (Aulamo et al., ACL 2020 demos), defined in
    :mod:`corpusforge.text.noise` and :mod:`corpusforge.text.scripts`.

    Args:
        anchor: the anchor side.
        positive: the positive side.
        anchor_lang: the anchor's language label (``en``, ``eng``).
        positive_lang: the positive's language label.
        config: the limits (:data:`NOISE_FILTERS`).

    Returns:
        The first failing check's reason, in this order: ``bitext_chars_too_short``,
        ``bitext_chars_too_long``, ``bitext_word_too_long``, ``bitext_html_tags``,
        ``bitext_script_ratio``, ``bitext_terminal_punctuation``,
        ``bitext_numerals_mismatch``; else ``None``.
    """
    chars = (len(anchor), len(positive))
    if below_limits(chars, config.min_anchor_chars, config.min_positive_chars):
        return FilterReason.BITEXT_CHARS_TOO_SHORT
    if above_limits(chars, config.max_anchor_chars, config.max_positive_chars):
        return FilterReason.BITEXT_CHARS_TOO_LONG
    most = config.max_word_chars
    if most is not None and max(longest_word(anchor), longest_word(positive)) > most:
        return FilterReason.BITEXT_WORD_TOO_LONG
    if config.drop_html and (has_html_tag(anchor) or has_html_tag(positive)):
        return FilterReason.BITEXT_HTML_TAGS
    least = config.min_script_ratio
    if least > 0 and (
        _off_script(anchor, anchor_lang, least) or _off_script(positive, positive_lang, least)
    ):
        return FilterReason.BITEXT_SCRIPT_RATIO
    lowest = config.min_punctuation_score
    if lowest is not None and terminal_punctuation_score(anchor, positive) < lowest:
        return FilterReason.BITEXT_TERMINAL_PUNCTUATION
    similar = config.min_numeral_similarity
    if similar > 0 and numeral_similarity(anchor, positive) < similar:
        return FilterReason.BITEXT_NUMERALS_MISMATCH
    return None


NOISE_REASONS = frozenset(
    {
        FilterReason.BITEXT_CHARS_TOO_SHORT,
        FilterReason.BITEXT_CHARS_TOO_LONG,
        FilterReason.BITEXT_WORD_TOO_LONG,
        FilterReason.BITEXT_HTML_TAGS,
        FilterReason.BITEXT_SCRIPT_RATIO,
        FilterReason.BITEXT_TERMINAL_PUNCTUATION,
        FilterReason.BITEXT_NUMERALS_MISMATCH,
    }
)
"""The reasons :func:`check_bitext_noise` gives."""


def noise_value(
    reason: FilterReason,
    anchor: str,
    positive: str,
    anchor_lang: str,
    positive_lang: str,
    config: BitextFilterConfig,
) -> tuple[float | None, str | None]:
    """The value that failed a noise check, and the side it failed on (``--keep-rejected``).

    Recomputed from the pair, only for a dropped one, so the kept pairs' path does no more.

    Args:
        reason: one of :data:`NOISE_REASONS`.
        anchor: the anchor side.
        positive: the positive side.
        anchor_lang: the anchor's language label.
        positive_lang: the positive's language label.
        config: the limits the pair failed.

    Returns:
        ``(characters, side)``, ``(longest word, side)``, ``(None, side)`` for HTML,
        ``(script ratio, side)``, ``(punctuation score, None)`` or ``(numeral similarity,
        None)``; the side is the first that fails, anchor before positive.
    """
    sides = {"anchor": (anchor, anchor_lang), "positive": (positive, positive_lang)}
    if reason is FilterReason.BITEXT_TERMINAL_PUNCTUATION:
        return terminal_punctuation_score(anchor, positive), None
    if reason is FilterReason.BITEXT_NUMERALS_MISMATCH:
        return numeral_similarity(anchor, positive), None
    for side, (text, lang) in sides.items():
        if reason in (FilterReason.BITEXT_CHARS_TOO_SHORT, FilterReason.BITEXT_CHARS_TOO_LONG):
            least = getattr(config, f"min_{side}_chars")
            most = getattr(config, f"max_{side}_chars")
            if (least is not None and len(text) < least) or (most is not None and len(text) > most):
                return float(len(text)), side
        elif reason is FilterReason.BITEXT_WORD_TOO_LONG:
            if config.max_word_chars is not None and longest_word(text) > config.max_word_chars:
                return float(longest_word(text)), side
        elif reason is FilterReason.BITEXT_HTML_TAGS:
            if has_html_tag(text):
                return None, side
        elif reason is FilterReason.BITEXT_SCRIPT_RATIO:
            scripts = expected_scripts(lang)
            if scripts is not None and script_ratio(text, scripts) < config.min_script_ratio:
                return script_ratio(text, scripts), side
    return None, None

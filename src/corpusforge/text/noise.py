"""Cheap measures of the noise found in crawled and aligned bitext: text -> a number or a flag.

Each follows the OpusFilter filter of the same purpose (Aulamo et al., "OpusFilter: A
Configurable Parallel Corpus Filtering Toolbox", ACL 2020 demos; its documentation defines
them), and :func:`corpusforge.pairing.noise.check_bitext_noise` turns them into reason
codes:

- :func:`longest_word`: characters in the longest whitespace token (``LongWordFilter``):
  URLs, base64 and words glued together by a lost space.
- :func:`has_html_tag`: a start, end or self-closing tag or a comment (``HtmlTagFilter``);
  a lone ``<`` or an unclosed tag is text, as in OpusFilter 3.3.1.
- :func:`terminal_punctuation_score`: ``-log(penalty + 1)`` where the penalty is the
  difference of the two sides' counts of ``.``, ``…``, ``?`` and ``!`` plus each side's
  marks beyond its first (``TerminalPunctuationFilter``, after Vázquez et al., 2019): 0 when
  both sides have one mark or none, lower for a sentence translated by two, or a list.
- :func:`numeral_similarity`: the ``difflib`` ratio of the two sides' sequences of non-zero
  digits (``NonZeroNumeralsFilter``): 1 when they agree (zeros are left out, as ``1.5``
  and ``1,50`` agree), 0 when only one side has any. Digits of every script count, by
  value, so ``١٩٩٢`` agrees with ``1992``.

    >>> terminal_punctuation_score("Go home.", "Rentre !")
    0.0
    >>> numeral_similarity("in 1992", "en 1993")
    0.75
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from typing import Final

TERMINAL_PUNCTUATION: Final = ".…?!"
_DIGIT: Final = re.compile(r"\d")  # a decimal digit of any script

_TAG: Final = re.compile(
    r"<(?:"
    r"/?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?"  # <b>, </b>, <br/>, <a href="x">
    r"|!--.*?--"  # <!-- comment -->
    r"|![A-Za-z][^<>]*"  # <!DOCTYPE html>
    r")>",
    re.DOTALL,
)


def longest_word(text: str) -> int:
    """Characters (code points) in the longest whitespace-separated token; 0 for none."""
    return max(map(len, text.split()), default=0)


def has_html_tag(text: str) -> bool:
    """Whether ``text`` holds an HTML (or XML) tag or comment: ``<b>``, ``</p>``, ``<br/>``."""
    return "<" in text and _TAG.search(text) is not None


def terminal_punctuation_penalty(src: str, trg: str) -> int:
    """OpusFilter's terminal-punctuation penalty of a pair (see the module docstring).

    Args:
        src: one side.
        trg: the other side.

    Returns:
        ``|s - t| + max(s - 1, 0) + max(t - 1, 0)`` for the sides' counts ``s`` and ``t``
        of ``.``, ``…``, ``?`` and ``!``.
    """
    s = sum(map(src.count, TERMINAL_PUNCTUATION))
    t = sum(map(trg.count, TERMINAL_PUNCTUATION))
    return abs(s - t) + max(s - 1, 0) + max(t - 1, 0)


def terminal_punctuation_score(src: str, trg: str) -> float:
    """``-log(penalty + 1)`` of :func:`terminal_punctuation_penalty`: 0 at best, negative
    below (OpusFilter's score, whose default threshold is -2)."""
    return 0.0 - math.log(terminal_punctuation_penalty(src, trg) + 1)  # 0.0, not -0.0


def nonzero_digits(text: str) -> list[int]:
    """The values of ``text``'s decimal digits of any script, in order, zeros left out."""
    return [value for digit in _DIGIT.findall(text) if (value := unicodedata.decimal(digit))]


def numeral_similarity(src: str, trg: str) -> float:
    """How alike the two sides' non-zero digits are: ``difflib.SequenceMatcher``'s ratio.

    Args:
        src: one side.
        trg: the other side.

    Returns:
        ``2 * matches / (len(a) + len(b))`` for the digit sequences ``a`` and ``b``; 1.0 when
        neither side has a non-zero digit.
    """
    a, b = nonzero_digits(src), nonzero_digits(trg)
    if a == b:
        return 1.0  # the same digits, or none
    if not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, a, b).ratio()

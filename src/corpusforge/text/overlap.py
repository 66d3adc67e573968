"""Word n-gram overlap: two texts turn into the share of word trigrams they have in common.

ParaNMT filtering (P-SP, Wieting et al., "Paraphrastic Representations at Scale", 2022,
``preprocess/paranmt/add_overlap_labels.py``) keeps a pair only when its trigram overlap
is at most 0.7, so that the two sides are not near copies; decontamination uses the same
tokens and n-grams to find training texts that repeat evaluation texts.

Tokens follow P-SP, which lowercases and runs NLTK's ``word_tokenize`` (Penn Treebank
rules): words and numbers are tokens, punctuation marks are tokens of their own, and the
English clitics split off as Treebank does (``don't`` -> ``do n't``, ``I'm`` -> ``i 'm``).
Keeping punctuation matters: ParaNMT text is already tokenised (``i 'm not sure .``), and
a tokeniser that puts punctuation on its own gives the same tokens for that text and for
its untokenised form, so the overlap does not depend on how a corpus was spaced. A regex
replaces NLTK to keep the dependency out; it differs from Treebank on rarer cases (each
punctuation character is one token, so ``...`` is three; no quote rewriting).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

_TOKEN_RE: Final = re.compile(
    r"\w+?(?=n['’]t\b)"  # the stem before n't: "do" of "don't", "ca" of "can't"
    r"|n['’]t\b"  # the negation clitic itself, also when already split off ("do n't")
    r"|['’](?:s|m|d|re|ve|ll)\b"  # the other Treebank clitics: 's 'm 'd 're 've 'll
    r"|\w+"  # any other run of word characters (letters, digits, underscore)
    r"|[^\w\s]"  # one punctuation mark or symbol
)

_NO_NEGATION_RE: Final = re.compile(r"['’](?:s|m|d|re|ve|ll)\b|\w+|[^\w\s]")
"""``_TOKEN_RE`` without its two ``n't`` rules, for text holding no ``n't``: the lazy stem
rule tries every prefix of every word, and costs half the tokenising."""


def word_tokens(text: str) -> list[str]:
    """Lowercased word tokens, punctuation and clitics as tokens of their own.

    Args:
        text: any text, tokenised or not.

    Returns:
        The tokens in order, e.g. ``["i", "do", "n't", "know", "."]`` for
        ``"I don't know."``.
    """
    text = text.lower()
    if "n't" in text or "n’t" in text:
        return _TOKEN_RE.findall(text)
    return _NO_NEGATION_RE.findall(text)  # the same tokens: the n't rules cannot match


def word_ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """Every run of ``n`` consecutive tokens, in order and with repeats.

    Args:
        tokens: the tokens of one text.
        n: the n-gram length, at least 1.

    Returns:
        ``len(tokens) - n + 1`` tuples, or none when there are fewer than ``n`` tokens.

    Raises:
        ValueError: ``n`` is below 1.
    """
    if n < 1:
        raise ValueError(f"n-gram length must be at least 1, got {n!r}")
    return list(zip(*(tokens[i:] for i in range(n)), strict=False))


def trigram_overlap(a: str, b: str) -> float:
    """P-SP's trigram overlap of two texts.

    The side with fewer word trigrams is the base; the result is the number of its
    trigrams that also occur in the other side, divided by its number of trigrams.
    Trigrams are counted as occurrences, as in P-SP: a trigram repeated in the base counts
    each time it occurs, and it is shared when it occurs at least once in the other side.
    When both sides have as many trigrams, ``a`` is the base (P-SP takes its first
    column, the ParaNMT reference; pass the sides in that order). The result is then
    symmetric unless the base repeats a trigram: ``"x x x x"`` against ``"x x x y"`` is
    1.0, the other way round 0.5.

    Args:
        a: the first text (the reference side of a ParaNMT pair).
        b: the second text.

    Returns:
        A share in ``[0.0, 1.0]``; 0.0 when the base has no trigram (fewer than three
        tokens).
    """
    trigrams_a = word_ngrams(word_tokens(a), 3)
    trigrams_b = word_ngrams(word_tokens(b), 3)
    if len(trigrams_b) < len(trigrams_a):
        base, other = trigrams_b, trigrams_a
    else:
        base, other = trigrams_a, trigrams_b
    if not base:
        return 0.0
    in_other = set(other)
    return sum(map(in_other.__contains__, base)) / len(base)

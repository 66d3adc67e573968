"""Sentence length in words for every script: text -> an estimated word count.

The length filters (:mod:`corpusforge.pairing.filters`) count words, which for most
scripts are whitespace tokens. Chinese, Japanese, Thai, Lao, Khmer and Burmese are written
without spaces between words, so a whole sentence is one token and would always be "too
short". For those scripts :func:`word_count` estimates words from letters, using the
typical number of letters per word (combining marks, such as Thai vowel signs or the
Burmese asat, are not letters and are not counted):

==============================  ================  ==========================================
script                          letters per word  e.g.
==============================  ================  ==========================================
Han (Chinese, kanji)            1.5               我们试试看 (5 letters: 4 words)
Hiragana, Katakana              2                 私は学生です (Han 3 + kana 3: 4 words)
Thai, Lao, Khmer, Myanmar       2.5               ฉันรักคุณ (6 letters: 3 words)
anything else                   whitespace token  Ich habe Zeit. (3 words)
==============================  ================  ==========================================

The ratios are rounded from short real sentences split into words by hand (Chinese 1.4,
Japanese 2.1, Thai 2.8, Lao 2.7, Khmer 2.3, Burmese 2.5 letters per word): estimates that
make the limits mean about the same everywhere, not a segmenter. Within one whitespace
token the letters of each such script are divided by its ratio, summed and rounded up; a
token that also holds other letters or digits (``iPhone很好用``) counts one word more for
them. A token with none of these scripts counts one word, as before. So ``min_tokens=3``
asks for about three words in every script: 我不知道 (4 Han letters: 3 words) passes,
你好 (2: 2 words) does not, as "Hello there" would not.

    >>> word_count("Two dogs play.")
    3
    >>> word_count("我们试试看！")
    4
"""

from __future__ import annotations

import math
import operator
import re
import unicodedata
from collections.abc import Sequence
from itertools import compress, repeat
from typing import Final

from corpusforge.text.plain import false_at

HAN: Final = "han"
KANA: Final = "kana"
SOUTHEAST_ASIAN: Final = "southeast_asian"

LETTERS_PER_WORD: Final[dict[str, float]] = {HAN: 1.5, KANA: 2.0, SOUTHEAST_ASIAN: 2.5}
"""Typical letters per word of each script written without spaces."""

# (first, last, script) code point ranges of the scripts written without spaces
_RANGES: Final[tuple[tuple[int, int, str], ...]] = (
    (0x0E00, 0x0E7F, SOUTHEAST_ASIAN),  # Thai
    (0x0E80, 0x0EFF, SOUTHEAST_ASIAN),  # Lao
    (0x1000, 0x109F, SOUTHEAST_ASIAN),  # Myanmar
    (0x1780, 0x17FF, SOUTHEAST_ASIAN),  # Khmer
    (0x19E0, 0x19FF, SOUTHEAST_ASIAN),  # Khmer symbols
    (0x3005, 0x3007, HAN),  # 々 〆 〇
    (0x3040, 0x30FF, KANA),  # Hiragana, Katakana
    (0x31F0, 0x31FF, KANA),  # Katakana phonetic extensions
    (0x3400, 0x4DBF, HAN),  # CJK extension A
    (0x4E00, 0x9FFF, HAN),  # CJK unified ideographs
    (0xA9E0, 0xA9FF, SOUTHEAST_ASIAN),  # Myanmar extended-B
    (0xAA60, 0xAA7F, SOUTHEAST_ASIAN),  # Myanmar extended-A
    (0xF900, 0xFAFF, HAN),  # CJK compatibility ideographs
    (0xFF66, 0xFF9D, KANA),  # half-width Katakana
    (0x20000, 0x3134F, HAN),  # CJK extensions B to G
)
_FIRST_SPACELESS: Final = 0x0E00
_FIRST_SPACELESS_CHAR: Final = chr(_FIRST_SPACELESS)
_FROM_FIRST_SPACELESS: Final = re.compile(f"[{_FIRST_SPACELESS_CHAR}-\U0010ffff]")
"""Any character from the first space-less script's on: a scan in C, where ``max(text)``
makes a string of every character (a quarter of a microsecond against two thirds for a
German sentence)."""


def script_of(char: str) -> str | None:
    """The space-less script of a letter (``han``, ``kana``, ``southeast_asian``) or ``None``.

    Args:
        char: one character; combining marks, digits and punctuation give ``None``.
    """
    point = ord(char)
    if point < _FIRST_SPACELESS or not unicodedata.category(char).startswith("L"):
        return None
    for first, last, script in _RANGES:
        if first <= point <= last:
            return script
    return None


def _token_words(token: str) -> int:
    letters: dict[str, int] = {}
    other = False
    for char in token:
        script = script_of(char)
        if script is not None:
            letters[script] = letters.get(script, 0) + 1
        elif char.isalnum():
            other = True
    if not letters:
        return 1
    estimate = sum(n / LETTERS_PER_WORD[script] for script, n in letters.items())
    return math.ceil(estimate) + other


def word_count(text: str) -> int:
    """Estimated words in ``text``: whitespace tokens, with space-less scripts by letters.

    Args:
        text: one sentence, any script.

    Returns:
        The number of whitespace tokens, where a token written in Chinese, Japanese, Thai,
        Lao, Khmer or Burmese counts its letters divided by the script's letters per word
        (:data:`LETTERS_PER_WORD`), rounded up.
    """
    tokens = text.split()
    if text.isascii() or _FROM_FIRST_SPACELESS.search(text) is None:
        return len(tokens)  # no letter of a space-less script: one word per token
    return sum(1 if max(token) < _FIRST_SPACELESS_CHAR else _token_words(token) for token in tokens)


def word_counts(texts: Sequence[str], plain: Sequence[bool] | None = None) -> list[int]:
    """:func:`word_count` of each of ``texts``: whitespace tokens counted by ``map`` in C,
    and :func:`word_count` itself only for the texts holding a character of a space-less
    script (none in most bitext), looked for by ``map`` in C in the texts that are neither
    ASCII (``isascii`` reads a flag) nor Latin-1.

    Args:
        texts: the texts.
        plain: for each text, ``True`` if the caller knows it is plain: printable, its only
            whitespace single spaces between words (``" ".join(text.split())`` is itself),
            so that its tokens are its spaces and one, counted without splitting it;
            ``False``: not known; ``None``: not known of any.
    """
    if plain is None:
        counts = list(map(len, map(str.split, texts)))
    else:
        counts = list(map(operator.add, map(str.count, texts, repeat(" ")), repeat(1)))
        for i in false_at(plain):
            counts[i] = len(texts[i].split())
        for i in false_at(texts):
            counts[i] = 0  # an empty text is plain, and has no token
    wide = list(false_at(map(str.isascii, texts)))
    # nor in those all of whose characters are Latin-1 (below U+0100, and every space-less
    # range starts at U+0E00): encoding drops none of them, and for such a text (German,
    # French) that encoding is a copy, where the regex would test each character
    wide_texts = list(map(texts.__getitem__, wide))
    encoded = map(str.encode, wide_texts, repeat("latin-1"), repeat("ignore"))
    latin = map(operator.eq, map(len, encoded), map(len, wide_texts))
    wide = list(compress(wide, map(operator.not_, latin)))
    # a text none of whose characters is in a space-less script's range counts one word a
    # token in word_count too: _token_words gives 1 to a token without such letters
    for i in compress(wide, map(_SPACELESS.search, map(texts.__getitem__, wide))):
        counts[i] = word_count(texts[i])
    return counts


_SPACELESS: Final = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b, _ in _RANGES) + "]")
"""Any character in a space-less script's range (:data:`_RANGES`)."""


def below_limits(values: tuple[int, int], anchor: int | None, positive: int | None) -> bool:
    """Whether a side's value (``values``: anchor, positive) is below that side's lowest
    limit (``None``: none)."""
    return (anchor is not None and values[0] < anchor) or (
        positive is not None and values[1] < positive
    )


def above_limits(values: tuple[int, int], anchor: int | None, positive: int | None) -> bool:
    """Whether a side's value (``values``: anchor, positive) is above that side's highest
    limit (``None``: none)."""
    return (anchor is not None and values[0] > anchor) or (
        positive is not None and values[1] > positive
    )

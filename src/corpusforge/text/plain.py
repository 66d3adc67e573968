"""A text's shape, asked once: whether it is plain, and where a column of answers says no.

A plain text is printable and its only whitespace is single spaces between words, so
``" ".join(text.split())`` is the text itself (every whitespace character but the space is
unprintable). The bitext rule asks it once a text, when it prepares the text
(:func:`corpusforge.text.clean.prepare_texts`), and word counts, language id and the dedup
key take the answer instead of asking again. Standard library only: :mod:`corpusforge.keys`
imports it.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator
from itertools import compress, count


def is_plain(text: str) -> bool:
    """Whether ``text`` is printable and its only whitespace is single spaces between words:
    ``" ".join(text.split())`` is ``text``."""
    return text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "


def false_at(flags: Iterable[object]) -> Iterator[int]:
    """The indices of the false items of ``flags``, in order, found by ``map`` in C: where a
    column of answers (plain, printable, non-empty) says no, so only those rows take the
    slow path."""
    return compress(count(), map(operator.not_, flags))

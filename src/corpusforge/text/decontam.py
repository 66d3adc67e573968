"""Evaluation sets -> a :class:`Decontaminator` that names the set a training text leaks from.

Readers turn external evaluation files into their sentences: STS-style ``score\\ts1\\ts2``,
the STS benchmark layout ``genre\\tfile\\tyear\\tid\\tscore\\ts1\\ts2[\\t...]``, SemEval-2015
PIT ``.data`` files, the Twitter URL paraphrase corpus ``s1\\ts2\\t(n, 6)\\turl`` and plain
text, one sentence a line. Every tab-separated format is read with quoting off (a ``"`` is
just a character) and extra trailing columns are ignored, as the STS benchmark needs.

A training text collides with an evaluation set when the two share a word 13-gram, or, for
texts shorter than 13 words, when their word sequences are equal; words are :func:`tokens`.
The 13-gram rule is the one GPT-3 used to decontaminate its training data (Brown et al.,
"Language models are few-shot learners", NeurIPS 2020, appendix C). Evaluation texts must be
cleaned with the same function as the training texts, which :class:`Decontaminator` takes
as ``normalise``.

    deco = Decontaminator.from_files({"stsb-test": "sts-test.csv"}, normalise=clean_text)
    deco.collides_with(clean_text(tweet))  # -> "stsb-test" or None
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from corpusforge.text.overlap import word_tokens

NGRAM = 13

_VOTES = re.compile(r"^\(\s*\d+\s*,\s*\d+\s*\)$")  # "(3, 2)": PIT and Twitter URL labels


class EvalFormat(StrEnum):
    """Layouts of the evaluation files :func:`read_records` understands."""

    STS = "sts"  # score \t s1 \t s2
    STSB = "stsb"  # genre \t file \t year \t id \t score \t s1 \t s2 [\t ...]
    PIT = "pit"  # Topic_Id \t Topic_Name \t Sent_1 \t Sent_2 \t Label [\t tags ...]
    URL = "url"  # s1 \t s2 \t (n, 6) \t url
    LINES = "lines"  # one sentence a line


@dataclass(frozen=True)
class EvalRecord:
    """One line of an evaluation file.

    Attributes:
        texts: the sentences on the line: two for pair formats, one for plain text.
        score: the gold similarity of STS and STSb lines, ``None`` for the other formats.
        line: 1-based line number in the file, for error messages.
    """

    texts: tuple[str, ...]
    score: float | None
    line: int


# Fewest tab-separated columns a line of each format must have.
_MIN_COLUMNS = {
    EvalFormat.STS: 3,
    EvalFormat.STSB: 7,
    EvalFormat.PIT: 5,
    EvalFormat.URL: 3,
    EvalFormat.LINES: 1,
}


def tokens(text: str) -> list[str]:
    """The words of ``text``: :func:`~corpusforge.text.overlap.word_tokens` minus punctuation.

    The single definition of a "word" for decontamination, applied alike to evaluation and
    training texts: lowercase, Treebank clitics split off as for the trigram overlap, and
    punctuation marks dropped, so that ``"A man is dancing."`` and ``"a man is dancing"``
    are the same 4 words. ``"Don't panic!"`` -> ``["do", "n't", "panic"]``.
    """
    # word_tokens yields runs of word characters, clitics ("n't", "'s": 2+ characters with
    # a letter), and single punctuation characters; the latter are the 1-character tokens
    # that are not word characters (\w is alphanumerics and "_").
    return [t for t in word_tokens(text) if len(t) > 1 or t.isalnum() or t == "_"]


def ngram_hashes(words: Sequence[str], n: int = NGRAM) -> list[int]:
    """64-bit hashes of the word ``n``-grams of ``words`` (none when fewer than ``n`` words).

    BLAKE2b cut to 8 bytes, not Python's ``hash``: string hashes are salted per process,
    and a Decontaminator built on one machine is used on Beam workers elsewhere.
    """
    return [_hash64(" ".join(words[i : i + n])) for i in range(len(words) - n + 1)]


def detect_format(path: str | Path) -> EvalFormat:
    """Guess the layout of an evaluation file from its extension and its first line.

    Rules, in order: a ``.data`` file is PIT; a line whose 5th column is a vote pair like
    ``(3, 2)`` is PIT; 7 or more columns with a number in the 5th is STSb; a vote pair in
    the 3rd column is the Twitter URL corpus; 3 columns with a number first is STS; a line
    without a tab is plain text. Anything else is an error: pass ``format=`` explicitly.

    Args:
        path: the evaluation file.

    Raises:
        ValueError: a ``.label`` file (PIT labels hold no sentences), an empty file, or a
            first line that fits no rule.
    """
    path = Path(path)
    if path.suffix == ".data":
        return EvalFormat.PIT
    if path.suffix == ".label":
        raise ValueError(f"{path}: a PIT .label file holds no sentences; read its .data file")
    cols: list[str] = []
    for _, line in _lines(path):
        if line.strip():
            cols = line.split("\t")
            break
    if not cols:
        raise ValueError(f"{path}: no text in the file, cannot detect its format")
    if len(cols) >= 5 and _VOTES.match(cols[4]):
        return EvalFormat.PIT
    if len(cols) >= 7 and _is_number(cols[4]):
        return EvalFormat.STSB
    if len(cols) >= 3 and _VOTES.match(cols[2]):
        return EvalFormat.URL
    if len(cols) == 3 and _is_number(cols[0]):
        return EvalFormat.STS
    if len(cols) == 1:
        return EvalFormat.LINES
    known = ", ".join(f.value for f in EvalFormat)
    raise ValueError(
        f"{path}: cannot tell the format of a first line with {len(cols)} tab-separated "
        f"columns; pass format= one of {known}"
    )


def read_records(path: str | Path, format: str | None = None) -> Iterator[EvalRecord]:
    """The records of an evaluation file, blank lines skipped.

    Args:
        path: the evaluation file, UTF-8.
        format: an :class:`EvalFormat` value (``"sts"``, ``"stsb"``, ``"pit"``, ``"url"``,
            ``"lines"``); ``None`` detects it with :func:`detect_format`.

    Yields:
        One :class:`EvalRecord` per non-blank line, in file order.

    Raises:
        ValueError: an unknown format, a line with too few columns, or an STS score that is
            not a number; the message names the file and line.
    """
    path = Path(path)
    fmt = detect_format(path) if format is None else EvalFormat(format)
    need = _MIN_COLUMNS[fmt]
    for number, line in _lines(path):
        if not line.strip():
            continue
        if fmt is EvalFormat.LINES:
            yield EvalRecord(texts=(line,), score=None, line=number)
            continue
        cols = line.split("\t")
        if len(cols) < need:
            raise ValueError(
                f"{path}:{number}: {fmt.value} needs {need} tab-separated columns, "
                f"found {len(cols)}"
            )
        if fmt is EvalFormat.STS:
            yield EvalRecord((cols[1], cols[2]), _score(cols[0], path, number), number)
        elif fmt is EvalFormat.STSB:
            yield EvalRecord((cols[5], cols[6]), _score(cols[4], path, number), number)
        elif fmt is EvalFormat.PIT:
            yield EvalRecord((cols[2], cols[3]), None, number)
        else:  # EvalFormat.URL
            yield EvalRecord((cols[0], cols[1]), None, number)


def read_texts(path: str | Path, format: str | None = None) -> list[str]:
    """Every sentence of an evaluation file, in file order (both sides of each pair).

    Args:
        path: the evaluation file, UTF-8.
        format: as for :func:`read_records`; ``None`` detects it.
    """
    return [text for record in read_records(path, format) for text in record.texts]


@dataclass(frozen=True)
class SourceStats:
    """What one evaluation set contributed to a :class:`Decontaminator`.

    Attributes:
        texts: texts read.
        ngrams: distinct word 13-grams of its texts of 13 words or more.
        short: distinct word sequences of its texts shorter than 13 words.
        empty: texts with no word at all after normalisation (they can match nothing).
    """

    texts: int
    ngrams: int
    short: int
    empty: int


class Decontaminator:
    """Tells whether a cleaned training text overlaps an evaluation set, and which one.

    Holds the 64-bit hashes of the word 13-grams of every evaluation text and of the whole
    word sequence of each text shorter than 13 words, each mapped to the first source (in
    the order given) that has it. It keeps no reference to ``normalise``, so it pickles
    small and can travel to Beam workers as a side input.

    Args:
        sources: ``(name, texts)`` per evaluation set, names unique, in priority order.
        normalise: the cleaning function applied to the training texts; applied here to
            every evaluation text before tokenising, so both sides are compared alike.
        n: n-gram length in words (13 by default).

    Raises:
        ValueError: ``n`` below 1 or a repeated source name.
    """

    def __init__(
        self,
        sources: Iterable[tuple[str, Iterable[str]]],
        *,
        normalise: Callable[[str], str],
        n: int = NGRAM,
    ) -> None:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self._n = n
        self._names: list[str] = []
        self._ngrams: dict[int, int] = {}  # n-gram hash -> index of the first source with it
        self._short: dict[int, int] = {}  # hash of a whole short word sequence -> source
        self._stats: dict[str, SourceStats] = {}
        for name, texts in sources:
            if name in self._stats:
                raise ValueError(f"source name {name!r} given twice")
            self._add(name, texts, normalise)

    @classmethod
    def from_files(
        cls,
        files: Mapping[str, str | Path] | Iterable[tuple[str, str | Path]],
        *,
        normalise: Callable[[str], str],
        format: str | None = None,
        n: int = NGRAM,
    ) -> Decontaminator:
        """Build from evaluation files, one source per file.

        Args:
            files: ``{name: path}`` or ``(name, path)`` pairs, in priority order.
            normalise: the training texts' cleaning function (see the class).
            format: an :class:`EvalFormat` value for every file; ``None`` detects each.
            n: n-gram length in words.
        """
        items = files.items() if isinstance(files, Mapping) else files
        return cls(
            ((name, read_texts(path, format)) for name, path in items),
            normalise=normalise,
            n=n,
        )

    @property
    def sources(self) -> tuple[str, ...]:
        """Source names in priority order."""
        return tuple(self._names)

    @property
    def stats(self) -> dict[str, SourceStats]:
        """Per source: texts read, distinct n-grams and short texts, empty texts."""
        return dict(self._stats)

    def collides_with(self, text: str) -> str | None:
        """The first source that ``text`` collides with, or ``None`` when it is clean.

        Args:
            text: a training text, already cleaned by the ``normalise`` function given at
                construction (it is not cleaned again here).

        Returns:
            The name of the earliest source (in construction order) that shares a word
            n-gram with ``text``, or, when ``text`` has fewer than ``n`` words, that holds a
            text with the same words; ``None`` otherwise, and for a text without words.
        """
        words = tokens(text)
        if not words:
            return None
        if len(words) < self._n:
            hit = self._short.get(_hash64(" ".join(words)))
        else:
            hits = [self._ngrams[h] for h in ngram_hashes(words, self._n) if h in self._ngrams]
            hit = min(hits, default=None)
        return None if hit is None else self._names[hit]

    def _add(self, name: str, texts: Iterable[str], normalise: Callable[[str], str]) -> None:
        index = len(self._names)
        self._names.append(name)
        read = empty = 0
        ngrams: set[int] = set()
        short: set[int] = set()
        for text in texts:
            read += 1
            words = tokens(normalise(text))
            if not words:
                empty += 1
            elif len(words) < self._n:
                short.add(_hash64(" ".join(words)))
            else:
                ngrams.update(ngram_hashes(words, self._n))
        for h in ngrams:
            self._ngrams.setdefault(h, index)
        for h in short:
            self._short.setdefault(h, index)
        self._stats[name] = SourceStats(read, len(ngrams), len(short), empty)


def _hash64(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` without its line ending; only ``\\n`` ends a line.

    Universal newlines would also split on a lone ``\\r`` inside a sentence, and
    ``str.splitlines`` on ``\\u2028`` and friends, both of which occur in web text.
    """
    with path.open(encoding="utf-8", newline="\n") as handle:
        for number, raw in enumerate(handle, start=1):
            yield number, raw.rstrip("\r\n")


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def _score(field: str, path: Path, line: int) -> float:
    try:
        return float(field)
    except ValueError:
        raise ValueError(f"{path}:{line}: score {field!r} is not a number") from None

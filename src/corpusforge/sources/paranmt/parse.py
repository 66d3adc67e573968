"""ParaNMT-50M lines (``reference\\tparaphrase\\tscore``) -> :class:`RawParaphrase` items.

ParaNMT-50M (Wieting and Gimpel, 2018) pairs an English reference with the back-translation
of its Czech side and the paragram-phrase similarity of the two; P-SP trains on it after
the filters in :mod:`corpusforge.pairing.filters`. Lines are split on ``\\n`` only and on
tabs only; a line with the wrong number of columns, a blank side, or a score that is not a
finite number is a dead letter, and the file goes on.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from corpusforge.sources.opus.records import DeadLetter, Origin, SourceReason
from corpusforge.sources.opus.streams import (
    STREAM_ERRORS,
    LineTooLong,
    decode_line,
    file_name,
    iter_lines,
    open_decompressed,
)

DATASET = "paranmt"
COLUMNS = 3


@dataclass(frozen=True, slots=True)
class RawParaphrase:
    """One paraphrase pair as read, before cleaning and filtering.

    Attributes:
        reference: the English reference sentence (the anchor).
        paraphrase: its paraphrase (the positive).
        score: the similarity given in the file.
        dataset: ``paranmt`` unless the reader was told otherwise.
        origin_file: input file name.
        origin_member: member inside the input, or ``None``.
        origin_line: 1-based line number.
    """

    reference: str
    paraphrase: str
    score: float
    dataset: str
    origin_file: str
    origin_member: str | None
    origin_line: int

    @property
    def key(self) -> str:
        """The pair's deterministic key: dataset, file, member and line."""
        return "|".join(
            (self.dataset, self.origin_file, self.origin_member or "", str(self.origin_line))
        )

    def to_paraphrase_row(self, trigram_overlap: float) -> dict[str, Any]:
        """The row for ``schemas/paraphrase.v1.json``.

        Args:
            trigram_overlap: :func:`corpusforge.text.overlap.trigram_overlap` of
                ``(reference, paraphrase)``, as computed for the filter.
        """
        return paraphrase_row(self, self.reference, self.paraphrase, trigram_overlap)


def paraphrase_row(
    raw: RawParaphrase, anchor: str, positive: str, trigram_overlap: float
) -> dict[str, Any]:
    """The ``schemas/paraphrase.v1.json`` row of ``raw`` with sides ``anchor`` and
    ``positive`` (its texts after cleaning).

    Args:
        raw: the paraphrase as read (its score).
        anchor: the reference, as it goes into the row.
        positive: the paraphrase, likewise.
        trigram_overlap: :func:`corpusforge.text.overlap.trigram_overlap` of the two.
    """
    return {
        "anchor": anchor,
        "positive": positive,
        "score": raw.score,
        "trigram_overlap": trigram_overlap,
    }


def parse_paranmt_line(
    line: str | bytes, origin: Origin, *, dataset: str = DATASET
) -> RawParaphrase | DeadLetter:
    """Parse one line of a ParaNMT file.

    Args:
        line: the line, with or without its ``\\n``; bytes are decoded as strict UTF-8.
        origin: where the line comes from.
        dataset: dataset name for the record.

    Returns:
        A :class:`RawParaphrase`, or a :class:`DeadLetter` with ``read_decode_error``,
        ``parse_column_count``, ``parse_empty_side`` or ``parse_bad_score``.
    """
    if isinstance(line, bytes):
        try:
            line = decode_line(line, origin.line)
        except UnicodeDecodeError as exc:
            return DeadLetter.of(SourceReason.READ_DECODE_ERROR, origin, str(exc), line)
    line = line.removesuffix("\n").removesuffix("\r")
    cols = line.split("\t")
    if len(cols) != COLUMNS:
        return DeadLetter.of(
            SourceReason.PARSE_COLUMN_COUNT,
            origin,
            f"want {COLUMNS} tab-separated columns (reference, paraphrase, score), got {len(cols)}",
            line,
        )
    reference, paraphrase, raw_score = (col.strip() for col in cols)
    if not reference or not paraphrase:
        side = "reference" if not reference else "paraphrase"
        return DeadLetter.of(SourceReason.PARSE_EMPTY_SIDE, origin, f"blank {side}", line)
    try:
        score = float(raw_score)
    except ValueError:
        score = math.nan
    if not math.isfinite(score):
        return DeadLetter.of(
            SourceReason.PARSE_BAD_SCORE,
            origin,
            f"score {raw_score!r} is not a finite number",
            line,
        )
    return RawParaphrase(
        reference, paraphrase, score, dataset, origin.file, origin.member, origin.line
    )


def read_paranmt(uri: str, *, dataset: str = DATASET) -> Iterator[RawParaphrase | DeadLetter]:
    """Read a ParaNMT file (optionally gzip/bz2/xz compressed), one line at a time.

    Args:
        uri: path or URI of ``para-nmt-50m.txt`` or a slice of it.
        dataset: dataset name for the records.

    Yields:
        What :func:`parse_paranmt_line` returns for each line (a blank line is a
        ``parse_column_count`` dead letter), a ``read_line_too_long`` dead letter per line
        over 1 MiB, and a
        ``read_unreadable`` dead letter if the stream breaks part-way.
    """
    origin_file = file_name(uri)
    line_no = 0
    try:
        with open_decompressed(uri) as stream:
            for line_no, raw in enumerate(iter_lines(stream), start=1):
                origin = Origin(origin_file, None, line_no)
                if isinstance(raw, LineTooLong):
                    yield DeadLetter.line_too_long(origin, raw.head, raw.limit)
                    continue
                yield parse_paranmt_line(raw, origin, dataset=dataset)
    except STREAM_ERRORS as exc:
        yield DeadLetter.of(
            SourceReason.READ_UNREADABLE,
            Origin(origin_file, None, line_no + 1),
            f"stream broke after line {line_no}: {exc!r}",
        )

"""Tab-separated bitext -> :class:`RawPair` items, in the four layouts seen in the wild.

=================  ==========================================  ===========================
layout             columns                                     languages from
=================  ==========================================  ===========================
``pair``           ``src  trg``                                 arguments or file name
``tatoeba``        ``src_lang  trg_lang  src  trg``             columns 1-2 (639-3 or -1)
``wikimatrix``     ``score  src  trg``                          arguments or file name
``english_first``  ``english  translation [translation ...]``  ``en`` + argument/file name
=================  ==========================================  ===========================

``english_first`` is sentence-transformers' parallel-sentences format
(``TED2020-en-de-train.tsv.gz``); every translation column becomes its own pair, told
apart by ``origin_part``. Fields are split on tabs only: no CSV quoting. A line with the
wrong number of columns is a ``parse_column_count`` dead letter and the file goes on.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterator

from corpusforge.sources.opus.names import infer_dataset, languages_from_name
from corpusforge.sources.opus.records import (
    ENGLISH,
    DeadLetter,
    Origin,
    RawPair,
    Skipped,
    SkipReason,
    SourceItem,
    SourceReason,
)
from corpusforge.sources.opus.streams import (
    STREAM_ERRORS,
    LineTooLong,
    decode_line,
    file_name,
    iter_lines,
    open_decompressed,
)
from corpusforge.text.langid import is_lang_code, normalize_lang


class TsvLayout(enum.StrEnum):
    """The column layouts :func:`read_tsv` understands."""

    PAIR = "pair"
    TATOEBA = "tatoeba"
    WIKIMATRIX = "wikimatrix"
    ENGLISH_FIRST = "english_first"


_COLUMNS = {TsvLayout.PAIR: 2, TsvLayout.TATOEBA: 4, TsvLayout.WIKIMATRIX: 3}


def detect_tsv_layout(line: str) -> TsvLayout | None:
    """Guess the layout from one data line; ``english_first`` is never guessed.

    Four columns whose first two are language codes: ``tatoeba``; three columns whose
    first is a number: ``wikimatrix``; two columns: ``pair``; else ``None``.
    """
    cols = line.split("\t")
    if len(cols) == 4 and is_lang_code(cols[0]) and is_lang_code(cols[1]):
        return TsvLayout.TATOEBA
    if len(cols) == 3 and _score(cols[0]) is not None:
        return TsvLayout.WIKIMATRIX
    if len(cols) == 2:
        return TsvLayout.PAIR
    return None


def _score(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_tsv_line(
    text: str,
    layout: TsvLayout,
    origin: Origin,
    *,
    dataset: str,
    src_lang: str | None = None,
    trg_lang: str | None = None,
) -> Iterator[SourceItem]:
    """Parse one decoded line (no line ending) of a TSV bitext file.

    Args:
        text: the line.
        layout: its column layout.
        origin: where the line comes from.
        dataset: corpus name for the records.
        src_lang: normalised language of the first text column (not for ``tatoeba``;
            ignored for ``english_first``, which is always ``en``).
        trg_lang: normalised language of the second text column (not for ``tatoeba``).

    Yields:
        :class:`RawPair` items (several for ``english_first`` with several translations),
        :class:`Skipped` for a blank side, or one :class:`DeadLetter`
        (``parse_column_count``, ``parse_bad_score``, ``parse_missing_lang``).
    """
    cols = text.split("\t")
    expected = _COLUMNS.get(layout)
    if (expected is not None and len(cols) != expected) or len(cols) < 2:
        want = expected if expected is not None else "at least 2"
        yield DeadLetter.of(
            SourceReason.PARSE_COLUMN_COUNT,
            origin,
            f"{layout.value} layout wants {want} tab-separated columns, got {len(cols)}",
            text,
        )
        return
    score: float | None = None
    if layout is TsvLayout.TATOEBA:
        try:
            src_lang, trg_lang = normalize_lang(cols[0]), normalize_lang(cols[1])
        except ValueError as exc:
            yield DeadLetter.of(SourceReason.PARSE_MISSING_LANG, origin, str(exc), text)
            return
        texts = cols[2:]
    elif layout is TsvLayout.WIKIMATRIX:
        score = _score(cols[0])
        if score is None:
            yield DeadLetter.of(
                SourceReason.PARSE_BAD_SCORE, origin, f"score {cols[0]!r} is not a number", text
            )
            return
        texts = cols[1:]
    elif layout is TsvLayout.ENGLISH_FIRST:
        src_lang = ENGLISH
        texts = cols
    else:
        texts = cols
    if src_lang is None or trg_lang is None:
        yield DeadLetter.of(
            SourceReason.PARSE_MISSING_LANG, origin, "no languages for this file", text
        )
        return
    src = texts[0].strip()
    for part, raw_trg in enumerate(texts[1:]):
        trg = raw_trg.strip()
        if not src or not trg:
            yield Skipped.of(SkipReason.ALIGN_EMPTY_SIDE, origin)
            continue
        yield RawPair(
            src,
            trg,
            src_lang,
            trg_lang,
            dataset,
            origin.file,
            origin.member,
            origin.line,
            origin_part=part,
            score=score,
        )


def read_tsv(
    uri: str,
    *,
    layout: TsvLayout | str | None = None,
    src_lang: str | None = None,
    trg_lang: str | None = None,
    dataset: str | None = None,
) -> Iterator[SourceItem]:
    """Read a TSV bitext file (optionally gzip/bz2/xz compressed).

    Args:
        uri: path or URI.
        layout: one of :class:`TsvLayout`; default: guessed from the first non-blank line.
        src_lang: language of the first text column; default: from the file name's
            ``l1-l2`` (the first; for ``english_first`` the non-English one is ``trg``).
        trg_lang: language of the second text column; default: from the file name.
        dataset: corpus name; default: inferred from the file name.

    Yields:
        See :func:`parse_tsv_line`; plus ``read_decode_error`` per undecodable line,
        ``read_line_too_long`` per line over 1 MiB,
        ``parse_unknown_layout`` for each line before the first one a layout can be
        guessed from,
        ``read_unreadable`` when the stream breaks.
    """
    origin_file = file_name(uri)
    chosen = TsvLayout(layout) if layout is not None else None
    dataset = dataset or infer_dataset(uri)
    src_lang, trg_lang = default_langs(uri, chosen, src_lang, trg_lang)
    line_no = 0
    try:
        with open_decompressed(uri) as stream:
            for line_no, raw in enumerate(iter_lines(stream), start=1):
                origin = Origin(origin_file, None, line_no)
                if isinstance(raw, LineTooLong):
                    yield DeadLetter.line_too_long(origin, raw.head, raw.limit)
                    continue
                try:
                    text = decode_line(raw, line_no)
                except UnicodeDecodeError as exc:
                    yield DeadLetter.of(SourceReason.READ_DECODE_ERROR, origin, str(exc), raw)
                    continue
                if chosen is None:
                    chosen = detect_tsv_layout(text)
                    if chosen is None:
                        yield DeadLetter.of(
                            SourceReason.PARSE_UNKNOWN_LAYOUT,
                            origin,
                            "cannot tell the TSV layout from this line; pass layout=",
                            text,
                        )
                        continue
                    src_lang, trg_lang = default_langs(uri, chosen, src_lang, trg_lang)
                yield from parse_tsv_line(
                    text, chosen, origin, dataset=dataset, src_lang=src_lang, trg_lang=trg_lang
                )
    except STREAM_ERRORS as exc:
        yield DeadLetter.of(
            SourceReason.READ_UNREADABLE,
            Origin(origin_file, None, line_no + 1),
            f"stream broke after line {line_no}: {exc!r}",
        )


def default_langs(
    uri: str, layout: TsvLayout | None, src_lang: str | None, trg_lang: str | None
) -> tuple[str | None, str | None]:
    """The languages of a file's first and second text columns: those given, else its
    name's (for ``english_first``: English, and the name's other language)."""
    src = normalize_lang(src_lang) if src_lang else None
    trg = normalize_lang(trg_lang) if trg_lang else None
    from_name = languages_from_name(uri)
    if layout is TsvLayout.ENGLISH_FIRST:
        if trg is None and from_name is not None:
            others = [lang for lang in from_name if lang != ENGLISH]
            trg = others[0] if others else None
        return ENGLISH, trg
    if from_name is not None:
        src = src or from_name[0]
        trg = trg or from_name[1]
    return src, trg

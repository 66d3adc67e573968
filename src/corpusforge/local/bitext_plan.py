"""Read units -> raw-pair records, or the ranges and blocks of them that workers read.

Step 1 of the local bitext engine (:mod:`corpusforge.local.bitext`). A unit of two plain
(uncompressed) local Moses files is not read here a line at a time: one pass over each side
counts its lines and finds where every ``RANGE_LINES``-th line ends (a vectorised newline
scan), and the unit becomes :class:`MosesRange` items, each ``RANGE_LINES`` lines of both
sides with their byte offsets and first line number. A filter worker reads its range
itself (:func:`~corpusforge.local.bitext_read.read_range`): the same pairs, skips and dead
letters, with the same origins, as :func:`~corpusforge.sources.opus.moses.read_moses_files`,
whose :func:`~corpusforge.sources.opus.moses.pair_lines` it calls for every line that is
not a plain pair (line 1, a blank side, bad UTF-8, a line over the length limit). Sides whose
line counts differ are refused here, as that reader refuses them, and a unit that gives
no pair gets its ``read_no_records`` note once all its ranges are back
(:class:`~corpusforge.local.bitext_read.UnitTallies`).

A plain local TSV file whose layout is given, or told by its first line as
:func:`~corpusforge.sources.opus.tsv.read_tsv` tells it, becomes :class:`TsvRange` items;
a worker reads each line of its range as that reader does once the layout is known
(:func:`~corpusforge.sources.opus.tsv.parse_tsv_line`).

Any other Moses pair of files (gzip, bz2 or xz compressed, or URIs) cannot be read by
ranges, but is not read here a line at a time either: a first pass counts each side's lines
and finds the same cuts in its decompressed bytes, and a second cuts the decompressed
streams there into :class:`MosesBlock` items, which carry their bytes to a worker that reads
them as it reads a range. A side that cannot be read to its end in the first pass is read by
``read_opus``, which reports the damage after the lines before it.

An OPUS Moses zip's member pairs become blocks the same way (:func:`_zip_blocks`), unless
the zip does not read whole, holds no pair or no line, or has a pair whose sides differ in
length: ``read_opus`` then reads the whole zip, and says what is wrong where it is.

A TSV file that is compressed or a URI becomes :class:`TsvBlock` items alike.

Every other unit (TMX, XCES, a TSV file whose first line tells no layout) is read here by
:func:`~corpusforge.sources.opus.formats.read_opus`, as before.
"""

from __future__ import annotations

import itertools
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from corpusforge.sources.opus.formats import (
    OpusFormat,
    OpusInput,
    read_opus,
    reader_options,
)
from corpusforge.sources.opus.moses import (
    member_corpus,
    mismatch_letter,
    moses_members,
    side_lang,
)
from corpusforge.sources.opus.names import infer_dataset
from corpusforge.sources.opus.streams import (
    MAX_LINE_BYTES,
    STREAM_ERRORS,
    ZIP_ERRORS,
    LineTooLong,
    decode_line,
    file_name,
    is_compressed,
    open_decompressed,
)
from corpusforge.sources.opus.tsv import TsvLayout, default_langs, detect_tsv_layout
from corpusforge.sources.uris import is_uri, open_bytes
from corpusforge.text.langid import normalize_lang

CountKey = tuple[str, ...]
FIRST_LINE_ERRORS: tuple[type[Exception], ...] = (*STREAM_ERRORS, UnicodeDecodeError)
"""What reading a TSV file's first line may raise: the reader then reads it, and says so."""
RANGE_LINES = 2_048
"""Lines of each side in a range: a filter batch's pairs (``local.bitext.BATCH_PAIRS``)."""
SCAN_BYTES = 8 << 20
"""Bytes of a side read at a time while its lines are counted and cut into ranges."""


@dataclass(frozen=True, slots=True)
class MosesUnit:
    """A Moses pair of sides that workers read by ranges or blocks.

    Attributes:
        input: the read unit (its two files, or its zip).
        src_lang: the first side's language.
        trg_lang: the second side's language.
        dataset: the corpus name of its pairs.
        member: in a zip, the first side's member (the pairs' ``origin_member``).
    """

    input: OpusInput
    src_lang: str
    trg_lang: str
    dataset: str
    member: str | None = None


@dataclass(frozen=True, slots=True)
class MosesRange:
    """Lines ``first_line`` on of both sides of ``unit``: byte ``[start, end)`` of each.

    Attributes:
        unit: the unit.
        first_line: the 1-based number of the range's first line.
        src: the first side's byte offsets.
        trg: the second side's byte offsets.
    """

    unit: MosesUnit
    first_line: int
    src: tuple[int, int]
    trg: tuple[int, int]


@dataclass(frozen=True, slots=True)
class MosesBlock:
    """Lines ``first_line`` on of both sides of ``unit``, decompressed: the bytes a
    :class:`MosesRange` would read, carried to the worker.

    Attributes:
        unit: the unit.
        first_line: the 1-based number of the block's first line.
        src: the first side's bytes of these lines.
        trg: the second side's.
    """

    unit: MosesUnit
    first_line: int
    src: bytes
    trg: bytes


@dataclass(frozen=True, slots=True)
class TsvUnit:
    """A plain TSV file that workers read by ranges, its layout known from its first line
    or given.

    Attributes:
        input: the read unit (its file).
        layout: the column layout.
        src_lang: the first text column's language, if known (``tatoeba``: per line).
        trg_lang: the second's.
        dataset: the corpus name of its pairs.
    """

    input: OpusInput
    layout: TsvLayout
    src_lang: str | None
    trg_lang: str | None
    dataset: str


@dataclass(frozen=True, slots=True)
class TsvRange:
    """Lines ``first_line`` on of ``unit``'s file: its bytes ``span`` (``[start, end)``).

    Attributes:
        unit: the unit.
        first_line: the 1-based number of the range's first line.
        span: the byte offsets.
    """

    unit: TsvUnit
    first_line: int
    span: tuple[int, int]


@dataclass(frozen=True, slots=True)
class TsvBlock:
    """Lines ``first_line`` on of ``unit``'s file, decompressed: the bytes a
    :class:`TsvRange` would read, carried to the worker.

    Attributes:
        unit: the unit.
        first_line: the 1-based number of the block's first line.
        data: the bytes of these lines.
    """

    unit: TsvUnit
    first_line: int
    data: bytes


MosesTask = MosesRange | MosesBlock
"""Lines of a Moses unit that a worker reads."""
Range = MosesRange | MosesBlock | TsvRange | TsvBlock
"""A range that a worker reads."""
Unit = MosesUnit | TsvUnit
"""A unit read by ranges."""


def read_unit(unit: OpusInput, *, dataset: str | None = None, **options: Any) -> Iterator[Any]:
    """One unit's records (:func:`~corpusforge.sources.opus.formats.read_opus`'s items), or,
    for a Moses pair of files, its ranges (plain local files) or blocks for the workers.

    Args:
        unit: a read unit.
        dataset: corpus name; default: inferred from file names.
        options: the build's reader options (``reader_options`` picks the unit's).
    """
    options = reader_options(unit, **options)
    if unit.format is OpusFormat.TSV:
        tsv = _tsv(unit, dataset, options)
        plain = _plain_local(unit.uris[0])
        try:
            lines, cuts = _file_cuts(unit.uris[0], plain) if tsv is not None else (0, [])
        except STREAM_ERRORS:  # read_opus says what failed
            lines, cuts = 0, []
        if tsv is None or not lines:
            yield from read_opus(unit, dataset=dataset, **options)
        elif not plain:
            with open_decompressed(unit.uris[0]) as f:
                for k, data in enumerate(_pieces(f, cuts)):
                    yield TsvBlock(tsv, 1 + k * RANGE_LINES, data)
        else:
            for k in range(len(cuts) - 1):
                yield TsvRange(tsv, 1 + k * RANGE_LINES, (cuts[k], cuts[k + 1]))
        return
    if unit.format is OpusFormat.MOSES and len(unit.uris) == 1:
        yield from _zip_blocks(unit, dataset)
        return
    moses = _moses(unit, dataset, options)
    if moses is None:
        yield from read_opus(unit, dataset=dataset, **options)
        return
    plain = all(_plain_local(uri) for uri in unit.uris)
    try:
        (n_src, src_cuts), (n_trg, trg_cuts) = (_file_cuts(uri, plain) for uri in unit.uris)
    except STREAM_ERRORS:  # read_opus says what failed
        yield from read_opus(unit, dataset=dataset, **options)
        return
    names = (file_name(unit.uris[0]), file_name(unit.uris[1]))
    mismatch = mismatch_letter((n_src, n_trg), names=names, origin_file=names[0])
    if mismatch is not None:
        yield mismatch
    elif n_src == 0:  # read_opus's note for an input that holds no record
        yield from read_opus(unit, dataset=dataset, **options)
    elif not plain:
        src_uri, trg_uri = unit.uris
        with open_decompressed(src_uri) as src_f, open_decompressed(trg_uri) as trg_f:
            yield from _blocks(moses, (src_f, trg_f), src_cuts, trg_cuts)
    else:
        for k in range(len(src_cuts) - 1):
            src, trg = (src_cuts[k], src_cuts[k + 1]), (trg_cuts[k], trg_cuts[k + 1])
            yield MosesRange(moses, 1 + k * RANGE_LINES, src, trg)


def _zip_blocks(unit: OpusInput, dataset: str | None) -> Iterator[Any]:
    """An OPUS Moses zip's member pairs as blocks, as ``read_moses_zip`` reads them: a first
    pass counts every pair's lines and finds its cuts, a second cuts the members there.
    A zip that does not read whole, holds no pair or no line, or a pair whose sides differ
    in length, is read by ``read_opus`` instead, which says what is wrong where it is."""
    uri = unit.uris[0]
    try:
        with open_bytes(uri) as raw, zipfile.ZipFile(raw) as zf:
            counted: list[tuple[MosesUnit, str, int, list[int], list[int]]] = []
            for src_member, trg_member, l1, l2 in moses_members(zf.namelist()):
                with zf.open(src_member) as src, zf.open(trg_member) as trg:
                    (n_src, src_cuts), (n_trg, trg_cuts) = _cuts(src), _cuts(trg)
                if n_src != n_trg:
                    counted = []
                    break
                langs = normalize_lang(l1), normalize_lang(l2)
                corpus = dataset or member_corpus(src_member)
                moses = MosesUnit(unit, *langs, corpus, member=src_member)
                counted.append((moses, trg_member, n_src, src_cuts, trg_cuts))
    except ZIP_ERRORS:
        counted = []
    if not sum(lines for _, _, lines, _, _ in counted):
        yield from read_opus(unit, dataset=dataset)
        return
    with open_bytes(uri) as raw, zipfile.ZipFile(raw) as zf:
        for moses, trg_member, _, src_cuts, trg_cuts in counted:
            assert moses.member is not None
            with zf.open(moses.member) as src, zf.open(trg_member) as trg:
                yield from _blocks(moses, (src, trg), src_cuts, trg_cuts)


def _blocks(
    unit: MosesUnit, sides: tuple[IO[bytes], IO[bytes]], src_cuts: list[int], trg_cuts: list[int]
) -> Iterator[MosesBlock]:
    """Both sides' decompressed streams, read again, cut where the first pass found the cuts.

    Raises:
        OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile: a side no longer
            reads as it did in the first pass.
    """
    src, trg = sides
    pieces = zip(_pieces(src, src_cuts), _pieces(trg, trg_cuts), strict=True)
    for k, (src_data, trg_data) in enumerate(pieces):
        yield MosesBlock(unit, 1 + k * RANGE_LINES, src_data, trg_data)


def _pieces(stream: IO[bytes], cuts: list[int]) -> Iterator[bytes]:
    """The bytes of ``stream`` between each two of ``cuts`` (offsets from its start, the
    first 0), read on from where it is.

    Raises:
        EOFError: it ended before a cut (it changed since its lines were counted).
    """
    for start, end in itertools.pairwise(cuts):
        data = stream.read(end - start)
        while len(data) < end - start:
            more = stream.read(end - start - len(data))
            if not more:
                raise EOFError(
                    f"{len(data)} of {end - start} bytes: the input changed while it was read"
                )
            data += more
        yield data


def _moses(unit: OpusInput, dataset: str | None, options: dict[str, Any]) -> MosesUnit | None:
    """``unit`` as a :class:`MosesUnit` when it is two files whose languages are known;
    else ``None`` (read as before)."""
    if unit.format is not OpusFormat.MOSES or len(unit.uris) != 2:
        return None
    src_uri, trg_uri = unit.uris
    src_lang = side_lang(src_uri, options.get("src_lang"))
    trg_lang = side_lang(trg_uri, options.get("trg_lang"))
    if src_lang is None or trg_lang is None:
        return None
    return MosesUnit(unit, src_lang, trg_lang, dataset or infer_dataset(src_uri))


def _tsv(unit: OpusInput, dataset: str | None, options: dict[str, Any]) -> TsvUnit | None:
    """``unit`` as a :class:`TsvUnit` when its layout is given or known from its first line,
    as ``read_tsv`` knows it; else ``None`` (read as before)."""
    uri = unit.uris[0]
    layout = options.get("layout")
    if layout not in (None, *TsvLayout):
        return None
    chosen = TsvLayout(layout) if layout is not None else None
    src_lang, trg_lang = default_langs(
        uri, chosen, options.get("src_lang"), options.get("trg_lang")
    )
    if chosen is None:
        try:
            with open_decompressed(uri) as f:
                first = as_read(f.readline(MAX_LINE_BYTES + 1).removesuffix(b"\n"), True)
            chosen = detect_tsv_layout(decode_line(first, 1)) if isinstance(first, bytes) else None
        except FIRST_LINE_ERRORS:
            return None
        if chosen is None:
            return None
        src_lang, trg_lang = default_langs(uri, chosen, src_lang, trg_lang)
    return TsvUnit(unit, chosen, src_lang, trg_lang, dataset or infer_dataset(uri))


def _plain_local(uri: str) -> bool:
    """Whether ``uri`` is a local file that is not gzip, bz2 or xz compressed."""
    if is_uri(uri):
        return False
    try:
        with open(uri, "rb") as f:
            head = f.read(6)
    except OSError:
        return False
    return not is_compressed(head)


def _file_cuts(uri: str, plain: bool) -> tuple[int, list[int]]:
    """:func:`_cuts` of a file: offsets in the file itself if ``plain``, else in its
    decompressed bytes.

    Raises:
        OSError, EOFError, zlib.error, lzma.LZMAError: the file cannot be read to its end.
    """
    with open(uri, "rb") if plain else open_decompressed(uri) as f:
        return _cuts(f)


def _cuts(f: IO[bytes]) -> tuple[int, list[int]]:
    """A stream's line count (as ``streams.count_lines`` counts them) and the byte offsets
    that cut it into ranges of ``RANGE_LINES`` lines, from 0 to its size."""
    cuts, newlines, offset, last = [0], 0, 0, b"\n"
    while block := f.read(SCAN_BYTES):
        ends = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
        # the newlines that end a range: the (RANGE_LINES * j)-th of the file
        nth = np.arange((-newlines - 1) % RANGE_LINES, len(ends), RANGE_LINES)
        cuts.extend((ends[nth] + offset + 1).tolist())
        newlines += len(ends)
        offset += len(block)
        last = block[-1:]
    if cuts[-1] != offset:
        cuts.append(offset)
    return newlines + (last != b"\n"), cuts


def as_read(line: bytes, ended: bool) -> bytes | LineTooLong:
    """A line as ``streams.iter_lines`` yields it: without its ``\\r\\n`` ending (when it
    ended with a ``\\n``), or a :class:`LineTooLong` in place of a line over the limit."""
    if len(line) > MAX_LINE_BYTES:
        return LineTooLong(line[:1024], MAX_LINE_BYTES)
    return line[:-1] if ended and line.endswith(b"\r") else line

"""Which OPUS distribution format a file is in, which files go together, and reading them.

OPUS ships every corpus in four formats; :func:`detect_format` tells them apart from the
name, then the content:

=========  ==================================================  =====================
format     files                                               reader
=========  ==================================================  =====================
``moses``  ``de-en.txt.zip``, or two plain files ``X.de``      :mod:`.moses`
           + ``X.en`` (any compression)
``tmx``    ``de-en.tmx``, ``de-en.tmx.gz``                     :mod:`.tmx`
``xces``   ``de-en.xml.gz`` alignments + ``de/...xml.gz``      :mod:`.xces`
           sentence documents
``tsv``    ``*.tsv(.gz)``, Tatoeba ``*.txt``, WikiMatrix,      :mod:`.tsv`
           sentence-transformers parallel sentences
=========  ==================================================  =====================

:func:`plan_inputs` turns a list of files into :class:`OpusInput` read units (pairing
plain Moses sides by their common stem), :func:`read_opus` reads one unit.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from corpusforge.sources.opus.moses import read_moses_files, read_moses_zip
from corpusforge.sources.opus.names import languages_from_name, side_language
from corpusforge.sources.opus.records import DeadLetter, SourceItem, SourceReason
from corpusforge.sources.opus.streams import (
    ZIP_ERRORS,
    file_name,
    open_decompressed,
    strip_compression,
)
from corpusforge.sources.opus.tmx import read_tmx
from corpusforge.sources.opus.tsv import read_tsv
from corpusforge.sources.opus.xces import read_xces

SNIFF_BYTES = 4096


class OpusFormat(enum.StrEnum):
    """The four OPUS distribution formats."""

    MOSES = "moses"
    TMX = "tmx"
    XCES = "xces"
    TSV = "tsv"


class UnknownFormatError(ValueError):
    """A file is in none of the four formats (or is an XCES sentence document)."""


def detect_format(uri: str, *, head: bytes | None = None) -> OpusFormat:
    """The OPUS format of one file, from its name, else its first bytes.

    Args:
        uri: path or URI.
        head: the file's first (decompressed) bytes, when the caller has them; else they
            are read only if the name does not decide.

    Raises:
        UnknownFormatError: when neither name nor content decides, or the file is a
            sentence document (pass its alignment file instead).
    """
    name = strip_compression(file_name(uri)).lower()
    if name.endswith(".tmx"):
        return OpusFormat.TMX
    if name.endswith(".zip"):
        return OpusFormat.MOSES
    if name.endswith(".tsv"):
        return OpusFormat.TSV
    if head is None:
        head = _sniff(uri)
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if start.startswith(b"<"):
        if b"<cesAlign" in head:
            return OpusFormat.XCES
        if b"<tmx" in head:
            return OpusFormat.TMX
        raise UnknownFormatError(
            f"{file_name(uri)}: XML that is neither a <cesAlign> alignment nor <tmx> "
            "(an XCES sentence document? give the alignment file)"
        )
    if side_language(uri) is not None and not name.endswith(".txt"):
        return OpusFormat.MOSES
    if b"\t" in head.split(b"\n", 1)[0]:
        return OpusFormat.TSV
    raise UnknownFormatError(f"{file_name(uri)}: cannot tell the format from name or content")


def _sniff(uri: str) -> bytes:
    with open_decompressed(uri) as stream:
        return stream.read(SNIFF_BYTES)


@dataclass(frozen=True, slots=True)
class OpusInput:
    """One read unit: a file, or the two sides of a plain Moses pair.

    Attributes:
        format: the unit's format.
        uris: one path/URI, or ``(src, trg)`` for plain Moses files.
    """

    format: OpusFormat
    uris: tuple[str, ...]

    def __post_init__(self) -> None:
        want = 2 if self.format is OpusFormat.MOSES and not _is_zip(self.uris[0]) else 1
        if len(self.uris) != want:
            raise ValueError(f"a {self.format.value} input takes {want} file(s), got {self.uris}")


def _is_zip(uri: str) -> bool:
    return file_name(uri).lower().endswith(".zip")


def plan_inputs(
    uris: Iterable[str], *, format: OpusFormat | str | None = None
) -> list[OpusInput | DeadLetter]:
    """Group files into read units, detecting each file's format unless ``format`` is given.

    Plain Moses sides are paired by their common stem (``X.de`` + ``X.en``); when the stem
    ends in ``.l1-l2`` the ``l1`` side comes first, else the alphabetically first language.

    Args:
        uris: paths or URIs.
        format: the format of every file (the explicit override).

    Returns:
        :class:`OpusInput` units in input order, and a :class:`DeadLetter` per file that
        cannot be used (``read_unknown_format``, ``read_unpaired_file``, ``read_unreadable``).
    """
    forced = OpusFormat(format) if format is not None else None
    units: list[OpusInput | DeadLetter] = []
    sides: dict[str, list[str]] = collections.OrderedDict()
    for uri in uris:
        try:
            fmt = forced or detect_format(uri)
        except UnknownFormatError as exc:
            units.append(_file_problem(SourceReason.READ_UNKNOWN_FORMAT, uri, str(exc)))
            continue
        except ZIP_ERRORS as exc:
            units.append(_file_problem(SourceReason.READ_UNREADABLE, uri, repr(exc)))
            continue
        if fmt is OpusFormat.MOSES and not _is_zip(uri):
            stem = strip_compression(uri).rpartition(".")[0]
            sides.setdefault(stem, []).append(uri)
        else:
            units.append(OpusInput(fmt, (uri,)))
    for stem, group in sides.items():
        if len(group) != 2:
            for uri in group:
                units.append(
                    _file_problem(
                        SourceReason.READ_UNPAIRED_FILE,
                        uri,
                        f"{len(group)} plain Moses file(s) share the stem {file_name(stem)!r}; "
                        "need exactly two (one per language)",
                    )
                )
            continue
        units.append(OpusInput(OpusFormat.MOSES, _order_sides(stem, group)))
    return units


def _order_sides(stem: str, group: list[str]) -> tuple[str, str]:
    a, b = group
    la, lb = side_language(a) or "", side_language(b) or ""
    declared = languages_from_name(stem)
    if declared is not None and {la, lb} == set(declared):
        return (a, b) if la == declared[0] else (b, a)
    return (a, b) if la <= lb else (b, a)


def _file_problem(reason: SourceReason, uri: str, detail: str) -> DeadLetter:
    return DeadLetter.of(reason, (file_name(uri), None, None), detail)


def read_opus(
    unit: OpusInput, *, dataset: str | None = None, **options: Any
) -> Iterator[SourceItem]:
    """Read one unit with the reader for its format.

    Args:
        unit: what :func:`plan_inputs` returned (or built by hand).
        dataset: corpus name; default: inferred by each reader from file names.
        options: passed to the reader: ``documents_root`` (xces); ``layout``,
            ``src_lang``, ``trg_lang`` (tsv); ``src_lang``, ``trg_lang`` (plain moses).

    Yields:
        :class:`RawPair`, :class:`DeadLetter` and :class:`Skipped` items, never raising
        on bad input.
    """
    if unit.format is OpusFormat.MOSES:
        if len(unit.uris) == 1:
            yield from read_moses_zip(unit.uris[0], dataset=dataset)
        else:
            yield from read_moses_files(*unit.uris, dataset=dataset, **options)
    elif unit.format is OpusFormat.TMX:
        yield from read_tmx(unit.uris[0], dataset=dataset)
    elif unit.format is OpusFormat.XCES:
        yield from read_xces(unit.uris[0], dataset=dataset, **options)
    else:
        yield from read_tsv(unit.uris[0], dataset=dataset, **options)

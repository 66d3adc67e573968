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
from corpusforge.sources.opus.names import languages_from_name, named_language, side_language
from corpusforge.sources.opus.records import DeadLetter, RawPair, SourceItem, SourceReason
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
    uris: Iterable[str],
    *,
    format: OpusFormat | str | None = None,
    src_lang: str | None = None,
    trg_lang: str | None = None,
) -> list[OpusInput | DeadLetter]:
    """Group files into read units, detecting each file's format unless ``format`` is given.

    Plain Moses sides are paired by their common stem (``X.de`` + ``X.en``); when the stem
    ends in ``.l1-l2`` the ``l1`` side comes first, else the alphabetically first language.
    With ``src_lang`` and ``trg_lang`` given, plain text files whose names carry no language
    (``source.txt``, ``train.src``) are Moses sides too, and two of them are one pair: in
    name order, the first being ``src_lang``'s.

    Args:
        uris: paths or URIs.
        format: the format of every file (the explicit override).
        src_lang: ``--src-lang``: the language of the first of two nameless Moses sides.
        trg_lang: ``--trg-lang``: the language of the second.

    Returns:
        :class:`OpusInput` units in input order, and a :class:`DeadLetter` per file that
        cannot be used (``read_unknown_format``, ``read_unpaired_file``, ``read_unreadable``).
    """
    forced = OpusFormat(format) if format is not None else None
    languages_given = bool(src_lang and trg_lang)
    units: list[OpusInput | DeadLetter] = []
    sides: dict[str, list[str]] = collections.OrderedDict()
    nameless: list[str] = []
    for uri in uris:
        try:
            fmt = forced or detect_format(uri)
        except UnknownFormatError as exc:
            if not (languages_given and _plain_text(uri)):
                units.append(_file_problem(SourceReason.READ_UNKNOWN_FORMAT, uri, str(exc)))
                continue
            fmt = OpusFormat.MOSES
        except ZIP_ERRORS as exc:
            units.append(_file_problem(SourceReason.READ_UNREADABLE, uri, repr(exc)))
            continue
        if fmt is OpusFormat.MOSES and not _is_zip(uri):
            if languages_given and named_language(uri) is None:
                nameless.append(uri)
                continue
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
    if len(nameless) == 2:
        first, second = sorted(nameless, key=file_name)
        units.append(OpusInput(OpusFormat.MOSES, (first, second)))
    else:
        for uri in nameless:
            units.append(
                _file_problem(
                    SourceReason.READ_UNPAIRED_FILE,
                    uri,
                    f"{len(nameless)} plain files without a language in their names; "
                    "--src-lang/--trg-lang pair exactly two (in name order, the first is "
                    "--src-lang's)",
                )
            )
    return units


def _plain_text(uri: str) -> bool:
    """Whether a file of no known format is plain text (not XML): a nameless Moses side."""
    try:
        head = _sniff(uri)
    except ZIP_ERRORS:
        return False
    return not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


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
    """Read one unit with the reader for its format; never silently nothing.

    Args:
        unit: what :func:`plan_inputs` returned (or built by hand).
        dataset: corpus name; default: inferred by each reader from file names.
        options: passed to the reader: ``documents_root`` (xces); ``layout``,
            ``src_lang``, ``trg_lang`` (tsv); ``src_lang``, ``trg_lang`` (plain moses).

    Yields:
        :class:`RawPair`, :class:`DeadLetter` and :class:`Skipped` items, never raising
        on bad input. A unit that gives no pair and no dead letter about the whole input
        ends with a ``read_no_records`` dead letter naming its files and what was read
        instead, so that an input in which nothing could be read is always visible.
    """
    pairs, problems = 0, collections.Counter[str]()
    whole_input_letter = False
    for item in _read_unit(unit, dataset=dataset, **options):
        if isinstance(item, RawPair):
            pairs += 1
        else:
            problems[str(item.reason)] += 1
            whole_input_letter |= isinstance(item, DeadLetter) and item.origin_line is None
        yield item
    if not pairs and not whole_input_letter:
        yield no_records_letter(unit, problems)


def no_records_letter(unit: OpusInput, problems: collections.Counter[str]) -> DeadLetter:
    """The ``read_no_records`` note of a unit that gave no pair, and no dead letter about
    the whole input.

    Args:
        unit: the read unit.
        problems: how many of its records were skipped or dead-lettered, by reason.
    """
    names = " + ".join(file_name(uri) for uri in unit.uris)
    seen = ", ".join(f"{reason} {n}" for reason, n in sorted(problems.items()))
    return DeadLetter.of(
        SourceReason.READ_NO_RECORDS,
        (file_name(unit.uris[0]), None, None),
        f"no pair could be read from {names} ({unit.format.value}): "
        + (f"only {seen}" if seen else "the input holds no record"),
        lines=0,
    )


def reader_options(
    unit: OpusInput,
    *,
    documents_root: str | None = None,
    tsv_layout: str | None = None,
    src_lang: str | None = None,
    trg_lang: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of :func:`read_opus` that ``unit``'s reader takes, of those
    a build was given.

    Args:
        unit: a read unit.
        documents_root: XCES sentence-document folder.
        tsv_layout: TSV column layout.
        src_lang: first-side language for TSV and plain Moses files.
        trg_lang: second-side language, likewise.
    """
    options: dict[str, Any] = {}
    if unit.format is OpusFormat.XCES:
        options["documents_root"] = documents_root
    elif unit.format is OpusFormat.TSV:
        options.update(layout=tsv_layout, src_lang=src_lang, trg_lang=trg_lang)
    elif unit.format is OpusFormat.MOSES and len(unit.uris) == 2:
        options.update(src_lang=src_lang, trg_lang=trg_lang)
    return {k: v for k, v in options.items() if v is not None}


def _read_unit(
    unit: OpusInput, *, dataset: str | None = None, **options: Any
) -> Iterator[SourceItem]:
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

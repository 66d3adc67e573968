"""TMX translation memories (``de-en.tmx``, ``.tmx.gz``) -> :class:`RawPair` items.

Each ``<tu>`` holds ``<tuv xml:lang="..."><seg>...</seg></tuv>`` segments: two languages
make one pair (the first is ``src``); more, as in a memory with several target languages,
make one pair of English with each other language (:func:`parse_tu`). ``<tu>`` elements
are streamed one at a time (:mod:`xmlstream`), so memory does not grow with the file.
Inline markup inside ``<seg>`` keeps its text for ``<hi>`` and ``<sub>`` and drops the
native codes of ``<bpt>``, ``<ept>``, ``<ph>``, ``<it>`` and ``<ut>``, as TMX 1.4 defines
them.
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from corpusforge.sources.opus.names import infer_dataset
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
from corpusforge.sources.opus.streams import STREAM_ERRORS, file_name, open_decompressed
from corpusforge.sources.opus.xmlstream import XmlStreamError, iter_elements
from corpusforge.text.langid import normalize_lang

_CODE_TAGS = frozenset({"bpt", "ept", "ph", "it", "ut"})
_LANG_ATTRS = ("xml:lang", "lang")


def seg_text(seg: ET.Element) -> str:
    """The text of a ``<seg>``: native-code elements dropped, whitespace collapsed."""
    parts = [seg.text or ""]
    for child in seg:
        if child.tag not in _CODE_TAGS:
            parts.append(seg_text(child))
        parts.append(child.tail or "")
    return " ".join("".join(parts).split())


def _tuv_label(tuv: ET.Element) -> str | None:
    """A ``<tuv>``'s language label as written (``xml:lang``, else ``lang``)."""
    return next((tuv.get(a) for a in _LANG_ATTRS if tuv.get(a)), None)


def _tuv_lang(tuv: ET.Element) -> str | None:
    return _lang_code(_tuv_label(tuv) or "")


@functools.lru_cache(maxsize=1024)
def _lang_code(lang: str) -> str | None:
    """:func:`normalize_lang` of a ``<tuv>``'s label, or ``None``; cached: a memory has few."""
    try:
        return normalize_lang(lang)
    except ValueError:
        return None


def parse_tu(tu: ET.Element, origin: Origin, dataset: str) -> list[SourceItem]:
    """One ``<tu>`` element -> its pairs, skips (blank segments) or a dead letter.

    A unit of two languages is one pair, in the order of its ``<tuv>``. A unit of more
    (a memory with several target languages) gives one pair of its English segment with
    each other segment, English first, ``origin_part`` being the other ``<tuv>``'s index;
    English variants (``en-US``, ``en-GB``) are one English side: the first is used and
    each further one is a counted ``align_extra_english`` skip, never an en-en pair.

    Args:
        tu: the complete ``<tu>`` element.
        origin: its file and start line.
        dataset: corpus name for the records.

    Returns:
        :class:`RawPair` items and :class:`Skipped` ones (``align_empty_side`` for a pair
        with a blank side, ``align_extra_english``); or one :class:`DeadLetter`:
        ``parse_segment_count`` (fewer than two ``<tuv>`` with a ``<seg>``),
        ``parse_missing_lang`` (a ``<tuv>`` without a usable ``xml:lang``),
        ``parse_one_language`` (every segment in one language) or ``parse_no_english``
        (more than two segments, none English: which pairs to make is not clear).
    """
    tuvs = tu.findall("tuv")
    with_seg = [(tuv, seg) for tuv in tuvs if (seg := tuv.find("seg")) is not None]
    if len(with_seg) < 2:
        return [
            DeadLetter.of(
                SourceReason.PARSE_SEGMENT_COUNT,
                origin,
                f"<tu> has {len(tuvs)} <tuv> and {len(with_seg)} <seg>; want at least 2 of each",
                _excerpt(tu),
            )
        ]
    sides: list[tuple[str, str]] = []
    for tuv, seg in with_seg:
        code = _tuv_lang(tuv)
        if code is None:
            lang = _tuv_label(tuv)
            return [
                DeadLetter.of(
                    SourceReason.PARSE_MISSING_LANG,
                    origin,
                    f"<tuv> language {lang!r}",
                    _excerpt(tu),
                )
            ]
        sides.append((code, seg_text(seg)))
    langs = [lang for lang, _ in sides]
    if len(set(langs)) == 1:
        return [
            DeadLetter.of(
                SourceReason.PARSE_ONE_LANGUAGE,
                origin,
                f"every <tuv> of the <tu> is {langs[0]!r}: no translation pair",
                _excerpt(tu),
            )
        ]
    if len(sides) == 2:
        return [_pair(sides[0], sides[1], origin, dataset, 0)]
    english = [i for i, lang in enumerate(langs) if lang == ENGLISH]
    if not english:
        return [
            DeadLetter.of(
                SourceReason.PARSE_NO_ENGLISH,
                origin,
                f"<tu> has {len(sides)} segments in {sorted(set(langs))} and none in English; "
                "only pairs with English are made from a unit of more than two",
                _excerpt(tu),
            )
        ]
    anchor = english[0]
    items: list[SourceItem] = []
    for part, side in enumerate(sides):
        if part == anchor:
            continue
        if side[0] == ENGLISH:
            items.append(Skipped.of(SkipReason.ALIGN_EXTRA_ENGLISH, origin))
        else:
            items.append(_pair(sides[anchor], side, origin, dataset, part))
    return items


def _excerpt(tu: ET.Element) -> str:
    """A dead-lettered unit's XML (serialised for dead letters only: it cost as much as the
    rest of a unit's parse)."""
    return ET.tostring(tu, encoding="unicode")


def _pair(
    src: tuple[str, str], trg: tuple[str, str], origin: Origin, dataset: str, part: int
) -> SourceItem:
    (src_lang, src_text), (trg_lang, trg_text) = src, trg
    if not src_text or not trg_text:
        return Skipped.of(SkipReason.ALIGN_EMPTY_SIDE, origin)
    return RawPair(
        src_text,
        trg_text,
        src_lang,
        trg_lang,
        dataset,
        origin.file,
        origin.member,
        origin.line,
        origin_part=part,
    )


def read_tmx(uri: str, *, dataset: str | None = None) -> Iterator[SourceItem]:
    """Read a TMX file (optionally gzip/bz2/xz compressed), one ``<tu>`` at a time.

    Args:
        uri: path or URI.
        dataset: corpus name; default: inferred from the file name.

    Yields:
        What :func:`parse_tu` returns for each ``<tu>``; ``read_xml_error`` (malformed XML
        stops the parser, after every unit before it) or ``read_unreadable``.
    """
    origin_file = file_name(uri)
    dataset = dataset or infer_dataset(uri)
    last_line = 0
    try:
        with open_decompressed(uri) as stream:
            for item in iter_elements(stream, frozenset({"tu"})):
                last_line = item.line
                yield from parse_tu(item.element, Origin(origin_file, None, item.line), dataset)
    except XmlStreamError as exc:
        yield DeadLetter.of(
            SourceReason.READ_XML_ERROR, (origin_file, None, exc.line), f"malformed XML: {exc}"
        )
    except STREAM_ERRORS as exc:
        yield DeadLetter.of(
            SourceReason.READ_UNREADABLE,
            (origin_file, None, None),
            f"stream broke after the <tu> on line {last_line}: {exc!r}",
        )

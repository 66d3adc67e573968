"""TMX translation memories (``de-en.tmx``, ``.tmx.gz``) -> :class:`RawPair` items.

Each ``<tu>`` must hold exactly two ``<tuv xml:lang="..."><seg>...</seg></tuv>``; the first
is ``src``. ``<tu>`` elements are streamed one at a time (:mod:`xmlstream`), so memory
does not grow with the file. Inline markup inside ``<seg>`` keeps its text for ``<hi>``
and ``<sub>`` and drops the native codes of ``<bpt>``, ``<ept>``, ``<ph>``, ``<it>`` and
``<ut>``, as TMX 1.4 defines them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

from corpusforge.sources.opus.names import infer_dataset
from corpusforge.sources.opus.records import (
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


def parse_tu(tu: ET.Element, origin: Origin, dataset: str) -> SourceItem:
    """One ``<tu>`` element -> a pair, a skip (blank segment) or a dead letter.

    Args:
        tu: the complete ``<tu>`` element.
        origin: its file and start line.
        dataset: corpus name for the record.

    Returns:
        :class:`RawPair`; :class:`Skipped` (``align_empty_side``); or :class:`DeadLetter`
        with ``parse_segment_count`` (not exactly two ``<tuv>`` with a ``<seg>``) or
        ``parse_missing_lang`` (a ``<tuv>`` without a usable ``xml:lang``).
    """
    tuvs = tu.findall("tuv")
    with_seg = [(tuv, seg) for tuv in tuvs if (seg := tuv.find("seg")) is not None]
    excerpt = ET.tostring(tu, encoding="unicode")
    if len(tuvs) != 2 or len(with_seg) != 2:
        return DeadLetter.of(
            SourceReason.PARSE_SEGMENT_COUNT,
            origin,
            f"<tu> has {len(tuvs)} <tuv> and {len(with_seg)} <seg>; want exactly 2 of each",
            excerpt,
        )
    sides: list[tuple[str, str]] = []
    for tuv, seg in with_seg:
        lang = next((tuv.get(a) for a in _LANG_ATTRS if tuv.get(a)), None)
        try:
            code = normalize_lang(lang or "")
        except ValueError:
            return DeadLetter.of(
                SourceReason.PARSE_MISSING_LANG, origin, f"<tuv> language {lang!r}", excerpt
            )
        sides.append((code, seg_text(seg)))
    (src_lang, src), (trg_lang, trg) = sides
    if not src or not trg:
        return Skipped.of(SkipReason.ALIGN_EMPTY_SIDE, origin)
    return RawPair(src, trg, src_lang, trg_lang, dataset, origin.file, origin.member, origin.line)


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
                yield parse_tu(item.element, Origin(origin_file, None, item.line), dataset)
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

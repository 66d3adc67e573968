"""Stream chosen elements out of a large XML file, each with the line of its start tag.

:func:`iter_elements` drives expat directly rather than ``ElementTree.iterparse``: it
builds a subtree only for the elements asked for (``<tu>``, ``<link>``, ``<s>``), keeps
nothing else, and knows the line each one starts on, which ``iterparse`` cannot report.
Memory is bounded by the largest wanted element, not by the file. External DTDs
(``dtd/xcesAlign.dtd``) are never fetched.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO
from xml.parsers import expat

CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class XmlElement:
    """A complete wanted element (``kind="element"``) or a start tag only (``"start"``)."""

    kind: str
    line: int
    element: ET.Element


class XmlStreamError(ValueError):
    """The XML is malformed at ``line``; elements before it were already yielded."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


class _Collector:
    def __init__(
        self, parser: expat.XMLParserType, collect: frozenset[str], announce: frozenset[str]
    ) -> None:
        self._parser = parser
        self._collect = collect
        self._announce = announce
        self._builder: ET.TreeBuilder | None = None
        self._depth = 0
        self._line = 0
        self.ready: list[XmlElement] = []

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if self._builder is not None:
            self._depth += 1
            self._builder.start(tag, attrs)
        elif tag in self._collect:
            self._builder = ET.TreeBuilder()
            self._depth = 1
            self._line = self._parser.CurrentLineNumber
            self._builder.start(tag, attrs)
        elif tag in self._announce:
            line = self._parser.CurrentLineNumber
            self.ready.append(XmlElement("start", line, ET.Element(tag, attrs)))

    def end(self, tag: str) -> None:
        if self._builder is None:
            return
        self._builder.end(tag)
        self._depth -= 1
        if self._depth == 0:
            self.ready.append(XmlElement("element", self._line, self._builder.close()))
            self._builder = None

    def data(self, text: str) -> None:
        if self._builder is not None:
            self._builder.data(text)


def iter_elements(
    stream: IO[bytes],
    collect: frozenset[str],
    announce: frozenset[str] = frozenset(),
) -> Iterator[XmlElement]:
    """Yield each ``collect`` element complete and each ``announce`` start tag, in order.

    Args:
        stream: the (decompressed) XML bytes.
        collect: tags whose whole subtree is wanted (nested wanted tags stay inside).
        announce: tags whose start tag and attributes are wanted (``<linkGrp>``).

    Raises:
        XmlStreamError: on malformed XML, after everything before it was yielded.
        OSError, EOFError, zlib.error, lzma.LZMAError: when a compressed stream breaks
            part-way, likewise after every complete element before the damage.
    """
    parser = expat.ParserCreate()
    parser.buffer_text = True
    collector = _Collector(parser, collect, announce)
    parser.StartElementHandler = collector.start
    parser.EndElementHandler = collector.end
    parser.CharacterDataHandler = collector.data
    # read1: what a compressed stream has decoded so far, so that a truncated .gz still
    # gives every element before the damage (read(n) would drop its last partial block)
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(CHUNK)
        try:
            parser.Parse(chunk, not chunk)
        except expat.ExpatError as exc:
            yield from collector.ready
            raise XmlStreamError(expat.ErrorString(exc.code), exc.lineno) from exc
        if collector.ready:
            ready, collector.ready = collector.ready, []
            yield from ready
        if not chunk:
            return


def element_text(element: ET.Element) -> str:
    """All text inside ``element`` with whitespace runs collapsed to single spaces."""
    return " ".join("".join(element.itertext()).split())

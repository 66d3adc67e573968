"""XCES sentence alignments (``de-en.xml.gz``) + sentence documents -> :class:`RawPair` items.

An alignment file holds ``<linkGrp fromDoc="de/1988.xml.gz" toDoc="en/1988.xml.gz">``
groups of ``<link xtargets="s4.1;s4.1 s4.2"/>`` links; the ids point at ``<s id=...>``
sentences in the two documents, whose paths are relative to the folder that holds the
alignment file (OPUS's ``xml/``) unless ``documents_root`` says otherwise. A sentence is
its ``<w>`` tokens joined with spaces or, in raw documents, its text. Documents may be
gzipped, or members of OPUS's per-language ``{lang}.zip`` (``{Corpus}/xml/de/1988.xml``;
``opus_get`` saves it as ``{Corpus}_{release}_xml_{lang}.zip``).

Links are taken as they come (any order): many-to-one sides join their sentences with a
space; a side with no ids is a counted skip (``align_empty_side``), not an error; an id
missing from its document is an ``align_missing_sentence`` dead letter. A group whose
document cannot be found or read gives one dead letter, and each of its links a counted
``align_group_unavailable`` skip; a document that breaks part-way (a truncated ``.gz``)
keeps its complete sentences, with one ``read_unreadable`` dead letter for the group.
Each group's two languages come from the documents' folders (``de/...``), else from the
file name's ``l1-l2``.
"""

from __future__ import annotations

import collections
import os
import posixpath
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from corpusforge.sources.opus.names import infer_dataset, is_lang_suffix, languages_from_name
from corpusforge.sources.opus.records import (
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
    ZIP_ERRORS,
    decompressed,
    file_name,
    open_decompressed,
)
from corpusforge.sources.opus.xmlstream import XmlStreamError, element_text, iter_elements
from corpusforge.sources.uris import is_uri, open_bytes
from corpusforge.text.langid import normalize_lang

_ZIP_PREFIX = re.compile(r"^(?:.*?/)?(?:xml|raw)/")


class DocumentNotFoundError(FileNotFoundError):
    """A ``fromDoc``/``toDoc`` document is neither a file nor a zip member under the root."""


def sentence_text(s: ET.Element) -> str:
    """The text of one ``<s>``: its ``<w>`` tokens joined by spaces, else its own text."""
    words = [w.text.strip() for w in s.iter("w") if w.text and w.text.strip()]
    if words:
        return " ".join(words)
    return element_text(s)


class DocumentBrokenError(Exception):
    """A sentence document's stream broke part-way (a truncated ``.gz``).

    Attributes:
        sentences: every complete sentence before the damage, id -> text.
        cause: the stream's error.
    """

    def __init__(self, sentences: dict[str, str], cause: BaseException) -> None:
        super().__init__(f"stream broke after {len(sentences):,} sentences: {cause!r}")
        self.sentences = sentences
        self.cause = cause


def load_sentences(stream: IO[bytes]) -> dict[str, str]:
    """Every ``<s id=...>`` of a sentence document, id -> text (the first of duplicate ids).

    Raises:
        XmlStreamError: when the document is malformed.
        DocumentBrokenError: when the stream breaks part-way; it holds the sentences before.
    """
    sentences: dict[str, str] = {}
    try:
        for item in iter_elements(stream, frozenset({"s"})):
            sid = item.element.get("id")
            if sid is not None and sid not in sentences:
                sentences[sid] = sentence_text(item.element)
    except STREAM_ERRORS as exc:
        raise DocumentBrokenError(sentences, exc) from exc
    return sentences


def parse_xtargets(value: str) -> tuple[list[str], list[str]]:
    """``"s1 s2;s1"`` -> ``(["s1", "s2"], ["s1"])``; either side may be empty.

    Raises:
        ValueError: when ``value`` does not have exactly one ``;``.
    """
    sides = value.split(";")
    if len(sides) != 2:
        raise ValueError(f"xtargets {value!r} does not have exactly one ';'")
    return sides[0].split(), sides[1].split()


class DocumentStore:
    """Finds, parses and caches the sentence documents that alignments point into.

    Args:
        root: the folder that ``fromDoc``/``toDoc`` are relative to (a path or URI).
        cache_size: how many parsed documents to keep (a group needs two).
    """

    def __init__(self, root: str, *, cache_size: int = 4) -> None:
        self.root = root
        self._cache: collections.OrderedDict[str, dict[str, str]] = collections.OrderedDict()
        self._cache_size = cache_size
        self._zips: dict[str, _ZipIndex | None] = {}
        self.broken: dict[str, str] = {}
        """Documents whose stream broke part-way -> why; their complete sentences are kept."""

    def sentences(self, doc: str) -> dict[str, str]:
        """The sentences of ``doc`` (``de/1988.xml.gz``), id -> text.

        A document whose stream breaks part-way gives its complete sentences before the
        damage and is listed in :attr:`broken`.

        Raises:
            DocumentNotFoundError: when no file or zip member matches.
            XmlStreamError: when the document is malformed.
            OSError, EOFError: when it cannot be read.
        """
        if doc in self._cache:
            self._cache.move_to_end(doc)
            return self._cache[doc]
        try:
            sentences = self._load(doc)
        except DocumentBrokenError as exc:
            sentences = exc.sentences
            self.broken[doc] = str(exc)
        self._cache[doc] = sentences
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return sentences

    def _load(self, doc: str) -> dict[str, str]:
        tried = []
        for candidate in _variants(doc):
            uri = _join(self.root, candidate)
            tried.append(uri)
            if _exists(uri):
                with open_decompressed(uri) as stream:
                    return load_sentences(stream)
        lang = doc.lstrip("/").split("/", 1)[0]
        for uri in self._zip_candidates(lang):
            tried.append(uri)
            index = self._zip_index(uri)
            member = index.find(doc) if index is not None else None
            if index is not None and member is not None:
                with index.zf.open(member) as raw:
                    return load_sentences(decompressed(raw))
        raise DocumentNotFoundError(f"document {doc!r} not found; tried {tried}")

    def _zip_candidates(self, lang: str) -> list[str]:
        """``{lang}.zip``, and in a local root also opus_get's ``{Corpus}_{v}_xml_{lang}.zip``."""
        names = [f"{lang}.zip"]
        if not is_uri(self.root) and os.path.isdir(self.root):
            names += sorted(
                name
                for name in os.listdir(self.root)
                if name.endswith((f"_xml_{lang}.zip", f"_raw_{lang}.zip"))
            )
        return [_join(self.root, name) for name in names]

    def _zip_index(self, uri: str) -> _ZipIndex | None:
        if uri not in self._zips:
            self._zips[uri] = _ZipIndex.open(uri) if _exists(uri) else None
        return self._zips[uri]

    def close(self) -> None:
        """Close the zip archives opened so far."""
        for index in self._zips.values():
            if index is not None:
                index.close()
        self._zips.clear()


@dataclass
class _ZipIndex:
    raw: IO[bytes]
    zf: zipfile.ZipFile
    by_doc: dict[str, str] = field(default_factory=dict)

    @classmethod
    def open(cls, uri: str) -> _ZipIndex:
        raw = open_bytes(uri)
        try:
            zf = zipfile.ZipFile(raw)
        except BaseException:
            raw.close()
            raise
        index = cls(raw, zf)
        for name in zf.namelist():
            # {Corpus}/xml/de/1988.xml (or /raw/) -> de/1988.xml
            key = _ZIP_PREFIX.sub("", name, count=1)
            index.by_doc.setdefault(key, name)
        return index

    def find(self, doc: str) -> str | None:
        for variant in _variants(doc):
            if variant in self.by_doc:
                return self.by_doc[variant]
        return None

    def close(self) -> None:
        self.zf.close()
        self.raw.close()


def _variants(doc: str) -> list[str]:
    doc = doc.lstrip("/")
    other = doc[: -len(".gz")] if doc.endswith(".gz") else doc + ".gz"
    return [doc, other]


def _join(root: str, rel: str) -> str:
    if is_uri(root):
        return posixpath.join(root, rel)
    return os.path.join(root, *rel.split("/"))


def _exists(uri: str) -> bool:
    if not is_uri(uri):
        return os.path.isfile(uri)
    try:
        with open_bytes(uri):
            return True
    except OSError:
        return False


@dataclass
class _Group:
    """The ``<linkGrp>`` being read: its documents, languages and sentences."""

    from_doc: str
    to_doc: str
    src_lang: str = ""
    trg_lang: str = ""
    src: dict[str, str] = field(default_factory=dict)
    trg: dict[str, str] = field(default_factory=dict)
    available: bool = False

    @property
    def member(self) -> str:
        return f"{self.from_doc}|{self.to_doc}"


def _doc_lang(doc: str) -> str | None:
    parts = doc.strip("/").split("/")
    if "xml" in parts[:-1]:
        parts = parts[len(parts) - parts[::-1].index("xml") :]
    if len(parts) < 2 or not is_lang_suffix(parts[0]):
        return None
    return normalize_lang(parts[0])


def _open_group(
    attrs: ET.Element,
    store: DocumentStore,
    name_langs: tuple[str, str] | None,
    origin: Origin,
) -> tuple[_Group, DeadLetter | None]:
    group = _Group(attrs.get("fromDoc", ""), attrs.get("toDoc", ""))
    origin = origin._replace(member=group.member)
    if not group.from_doc or not group.to_doc:
        return group, DeadLetter.of(
            SourceReason.ALIGN_MISSING_DOCUMENT,
            origin,
            "<linkGrp> without fromDoc and toDoc",
            ET.tostring(attrs, encoding="unicode"),
        )
    src_lang = _doc_lang(group.from_doc) or (name_langs[0] if name_langs else None)
    trg_lang = _doc_lang(group.to_doc) or (name_langs[1] if name_langs else None)
    if src_lang is None or trg_lang is None:
        return group, DeadLetter.of(
            SourceReason.PARSE_MISSING_LANG,
            origin,
            "no language in the document paths or the file name",
            group.member,
        )
    group.src_lang, group.trg_lang = src_lang, trg_lang
    loaded: list[dict[str, str]] = []
    for doc in (group.from_doc, group.to_doc):
        try:
            loaded.append(store.sentences(doc))
        except DocumentNotFoundError as exc:
            return group, DeadLetter.of(SourceReason.ALIGN_MISSING_DOCUMENT, origin, str(exc))
        except XmlStreamError as exc:
            return group, DeadLetter.of(
                SourceReason.READ_XML_ERROR,
                origin,
                f"malformed XML in {doc} at line {exc.line}: {exc}",
            )
        except ZIP_ERRORS as exc:
            return group, DeadLetter.of(
                SourceReason.READ_UNREADABLE, origin, f"cannot read {doc}: {exc!r}"
            )
    group.src, group.trg = loaded
    group.available = True
    damaged = [
        f"{doc}: {store.broken[doc]}"
        for doc in (group.from_doc, group.to_doc)
        if doc in store.broken
    ]
    if damaged:
        return group, DeadLetter.of(
            SourceReason.READ_UNREADABLE,
            origin,
            f"damaged document(s), their complete sentences used ({'; '.join(damaged)}); "
            "links to the lost ones are align_missing_sentence dead letters",
        )
    return group, None


def link_item(link: ET.Element, group: _Group | None, origin: Origin, dataset: str) -> SourceItem:
    """One ``<link>`` of ``group`` -> a pair, a counted skip or a dead letter."""
    if group is None:
        return DeadLetter.of(
            SourceReason.ALIGN_LINK_OUTSIDE_GROUP,
            origin,
            "<link> outside any <linkGrp>",
            ET.tostring(link, encoding="unicode"),
        )
    origin = origin._replace(member=group.member)
    if not group.available:
        return Skipped.of(SkipReason.ALIGN_GROUP_UNAVAILABLE, origin)
    xtargets = link.get("xtargets")
    try:
        src_ids, trg_ids = parse_xtargets(xtargets or "")
    except ValueError as exc:
        return DeadLetter.of(
            SourceReason.ALIGN_BAD_XTARGETS, origin, str(exc), ET.tostring(link, "unicode")
        )
    if not src_ids or not trg_ids:
        return Skipped.of(SkipReason.ALIGN_EMPTY_SIDE, origin)
    missing = [f"{group.from_doc}#{i}" for i in src_ids if i not in group.src]
    missing += [f"{group.to_doc}#{i}" for i in trg_ids if i not in group.trg]
    if missing:
        return DeadLetter.of(
            SourceReason.ALIGN_MISSING_SENTENCE,
            origin,
            f"sentence ids not in their documents: {', '.join(missing)}",
            ET.tostring(link, encoding="unicode"),
        )
    src = " ".join(t for t in (group.src[i] for i in src_ids) if t)
    trg = " ".join(t for t in (group.trg[i] for i in trg_ids) if t)
    if not src or not trg:
        return Skipped.of(SkipReason.ALIGN_EMPTY_SIDE, origin)
    return RawPair(
        src,
        trg,
        group.src_lang,
        group.trg_lang,
        dataset,
        origin.file,
        origin.member,
        origin.line,
        score=_certainty(link.get("certainty")),
    )


def _certainty(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def read_xces(
    uri: str,
    *,
    documents_root: str | None = None,
    dataset: str | None = None,
    store: DocumentStore | None = None,
) -> Iterator[SourceItem]:
    """Read an XCES alignment file and the sentences its links point at.

    Args:
        uri: path or URI of the alignment file (``de-en.xml.gz`` or plain ``.xml``).
        documents_root: the folder ``fromDoc``/``toDoc`` are relative to; default: the
            alignment file's folder.
        dataset: corpus name; default: inferred from the file name.
        store: a :class:`DocumentStore` to share between alignment files; default: a new
            one, closed at the end.

    Yields:
        A :class:`RawPair` per usable link (``origin_member`` = ``fromDoc|toDoc``,
        ``origin_line`` = the link's line, ``score`` = its ``certainty``), counted
        :class:`Skipped` items and :class:`DeadLetter` items as the module docstring says;
        ``read_xml_error`` when the alignment file itself is malformed.
    """
    origin_file = file_name(uri)
    dataset = dataset or infer_dataset(uri)
    root = documents_root if documents_root is not None else _parent(uri)
    own_store = store is None
    docs = store if store is not None else DocumentStore(root)
    name_langs = languages_from_name(uri)
    group: _Group | None = None
    last_line = 0
    try:
        with open_decompressed(uri) as stream:
            wanted, announced = frozenset({"link"}), frozenset({"linkGrp"})
            for item in iter_elements(stream, wanted, announced):
                last_line = item.line
                origin = Origin(origin_file, None, item.line)
                if item.kind == "start":
                    group, problem = _open_group(item.element, docs, name_langs, origin)
                    if problem is not None:
                        yield problem
                    continue
                yield link_item(item.element, group, origin, dataset)
    except XmlStreamError as exc:
        yield DeadLetter.of(
            SourceReason.READ_XML_ERROR, (origin_file, None, exc.line), f"malformed XML: {exc}"
        )
    except STREAM_ERRORS as exc:
        yield DeadLetter.of(
            SourceReason.READ_UNREADABLE,
            (origin_file, None, None),
            f"stream broke after line {last_line}: {exc!r}",
        )
    finally:
        if own_store:
            docs.close()


def _parent(uri: str) -> str:
    if is_uri(uri):
        return posixpath.dirname(uri)
    return os.path.dirname(os.path.abspath(uri))

"""Records that the bitext and paraphrase readers yield: a pair, a dead letter or a skip.

Every reader in ``sources/opus`` and ``sources/paranmt`` yields a union of

- :class:`RawPair` (or :class:`corpusforge.sources.paranmt.RawParaphrase`): one usable pair,
  uncleaned, with the place it came from;
- :class:`DeadLetter`: a record that could not be used, with a :class:`SourceReason` and
  its origin (file, member, line), to be written to the dead-letter table;
- :class:`Skipped`: an expected gap, counted but not dead-lettered (an alignment link with
  one empty side, for instance).

so that a Beam ``DoFn`` can route each item with one ``isinstance`` test. Readers never
raise on bad input, and one bad record never ends the rest of its file.

``origin_line`` is the 1-based line number of the record: the line of a plain-text or TSV
file, or the line of the start tag (``<tu>``, ``<link>``) in an XML file.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

EXCERPT_CHARS = 200
ENGLISH = "en"


class SourceReason(enum.StrEnum):
    """Why a record from a bitext or paraphrase file is dead-lettered (prefix = stage)."""

    READ_UNREADABLE = "read_unreadable"
    READ_UNKNOWN_FORMAT = "read_unknown_format"
    READ_DECODE_ERROR = "read_decode_error"
    READ_LINE_TOO_LONG = "read_line_too_long"
    READ_XML_ERROR = "read_xml_error"
    READ_MISSING_MEMBER = "read_missing_member"
    READ_UNPAIRED_FILE = "read_unpaired_file"
    READ_NO_RECORDS = "read_no_records"
    PARSE_COLUMN_COUNT = "parse_column_count"
    PARSE_UNKNOWN_LAYOUT = "parse_unknown_layout"
    PARSE_BAD_SCORE = "parse_bad_score"
    PARSE_EMPTY_SIDE = "parse_empty_side"
    PARSE_MISSING_LANG = "parse_missing_lang"
    PARSE_SEGMENT_COUNT = "parse_segment_count"
    PARSE_ONE_LANGUAGE = "parse_one_language"
    PARSE_NO_ENGLISH = "parse_no_english"
    PARSE_LINE_COUNT_MISMATCH = "parse_line_count_mismatch"
    ALIGN_LINE_COUNT_MISMATCH = "align_line_count_mismatch"
    ALIGN_MISSING_DOCUMENT = "align_missing_document"
    ALIGN_MISSING_SENTENCE = "align_missing_sentence"
    ALIGN_BAD_XTARGETS = "align_bad_xtargets"
    ALIGN_LINK_OUTSIDE_GROUP = "align_link_outside_group"


class SkipReason(enum.StrEnum):
    """Why a record is skipped on purpose: counted with a metric, not dead-lettered."""

    ALIGN_EMPTY_SIDE = "align_empty_side"
    ALIGN_GROUP_UNAVAILABLE = "align_group_unavailable"
    ALIGN_EXTRA_ENGLISH = "align_extra_english"


class Origin(NamedTuple):
    """Where a record comes from: input file, member inside it (or ``None``) and line."""

    file: str
    member: str | None
    line: int


@dataclass(frozen=True, slots=True)
class RawPair:
    """One translation pair as read, before cleaning and filtering.

    Attributes:
        src: text of the first side, in the order of the input (OPUS: alphabetical).
        trg: text of the second side.
        src_lang: normalised ISO 639-1 code of ``src`` (639-3 when no 639-1 code exists).
        trg_lang: normalised code of ``trg``.
        dataset: corpus name (``Tatoeba``, ``RF``, ``WikiMatrix``, ...).
        origin_file: input file name (the alignment file for XCES, the ``src`` file for
            plain Moses pairs).
        origin_member: zip member of ``src`` for Moses zips, ``fromDoc|toDoc`` for XCES,
            else ``None``.
        origin_line: 1-based line (see the module docstring).
        origin_part: 0, or the index of the translation when one input line or TMX unit
            holds several
            (sentence-transformers' ``english\\ttr1\\ttr2``), so that keys stay unique.
        score: the input's own score when it has one (WikiMatrix margin, XCES
            ``certainty``), else ``None``.
    """

    src: str
    trg: str
    src_lang: str
    trg_lang: str
    dataset: str
    origin_file: str
    origin_member: str | None
    origin_line: int
    origin_part: int = 0
    score: float | None = None

    @property
    def key(self) -> str:
        """The pair's deterministic key: dataset, file, member, line and part."""
        return "|".join(
            (
                self.dataset,
                self.origin_file,
                self.origin_member or "",
                str(self.origin_line),
                str(self.origin_part),
            )
        )

    @property
    def lang_pair(self) -> str:
        """``src_lang-trg_lang``, the unit of the per-language-pair caps."""
        return f"{self.src_lang}-{self.trg_lang}"

    def to_bitext_row(self) -> dict[str, Any]:
        """The row for ``schemas/bitext.v1.json``, oriented with :func:`orient_english`."""
        return bitext_row(self, self.src, self.trg)


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A record that could not be used, for the dead-letter table.

    Attributes:
        stage: the pipeline stage, the reason's prefix (``read``, ``parse``, ``align``).
        reason: the reason code.
        origin_file: input file name.
        origin_member: member inside the input, or ``None``.
        origin_line: 1-based line, or ``None`` when the problem is the whole file.
        detail: human-readable explanation.
        excerpt: the start of the offending record (at most 200 characters).
        lines: the input lines (records) it stands for, when not what :attr:`records`
            says by default: the line count of a refused file pair, or 0 for a note that
            reads no line (``read_no_records``).
    """

    stage: str
    reason: str
    origin_file: str
    origin_member: str | None
    origin_line: int | None
    detail: str
    excerpt: str = ""
    lines: int | None = None

    @property
    def records(self) -> int:
        """Input lines (records) this dead letter stands for, for the accounting.

        ``lines`` when given; else 1 for a record (one with a line), 0 for a problem with a
        whole input, which read no line (an unknown format, a file that cannot be opened).
        """
        if self.lines is not None:
            return self.lines
        return 0 if self.origin_line is None else 1

    @classmethod
    def of(
        cls,
        reason: SourceReason,
        origin: Origin | tuple[str, str | None, int | None],
        detail: str,
        excerpt: str | bytes = "",
        *,
        lines: int | None = None,
    ) -> DeadLetter:
        """A dead letter for ``reason`` at ``origin``; the stage is the reason's prefix.

        Args:
            reason: the reason code.
            origin: ``(file, member, line)``; ``line`` may be ``None`` for a whole file.
            detail: human-readable explanation.
            excerpt: the offending record; bytes are decoded with replacement and the
                text is cut to 200 characters.
            lines: the input lines it stands for, when not :attr:`records`' default.
        """
        if isinstance(excerpt, bytes):
            excerpt = excerpt[: EXCERPT_CHARS * 4].decode("utf-8", "replace")
        file, member, line = origin
        return cls(
            stage=reason.value.split("_", 1)[0],
            reason=reason.value,
            origin_file=file,
            origin_member=member,
            origin_line=line,
            detail=detail,
            excerpt=excerpt[:EXCERPT_CHARS],
            lines=lines,
        )

    @classmethod
    def line_too_long(cls, origin: Origin, head: bytes, limit: int) -> DeadLetter:
        """A ``read_line_too_long`` dead letter for a line skipped for its length.

        Args:
            origin: the line.
            head: its first bytes.
            limit: the limit in bytes it exceeded.
        """
        return cls.of(
            SourceReason.READ_LINE_TOO_LONG,
            origin,
            f"line longer than {limit:,} bytes, skipped without reading it whole",
            head,
        )

    def to_row(self) -> dict[str, Any]:
        """The row for ``schemas/dead_letter.v1.json`` (``origin_file`` -> ``origin_archive``)."""
        return {
            "stage": self.stage,
            "reason": self.reason,
            "origin_archive": self.origin_file,
            "origin_member": self.origin_member,
            "origin_line": self.origin_line,
            "detail": self.detail,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True, slots=True)
class Skipped:
    """An expected gap, counted with ``Metrics.counter(stage, reason)``, never written."""

    reason: SkipReason
    origin_file: str
    origin_member: str | None
    origin_line: int

    @classmethod
    def of(cls, reason: SkipReason, origin: Origin) -> Skipped:
        """A skip for ``reason`` at ``origin``."""
        return cls(reason, origin.file, origin.member, origin.line)

    @property
    def stage(self) -> str:
        """The reason's prefix."""
        return self.reason.value.split("_", 1)[0]


SourceItem = RawPair | DeadLetter | Skipped


def orient_english(pair: RawPair) -> RawPair:
    """Put English on the ``src`` (anchor) side whenever one side is English.

    OPUS orders a pair's languages alphabetically (``de-en``, ``en-fr``), so English is
    sometimes the second side. When neither side is English the alphabetically first
    language goes first, as ``schemas/bitext.v1.json`` documents.

    Args:
        pair: a pair in any order.

    Returns:
        ``pair`` itself when it is already oriented, else a copy with the sides swapped
        (origin unchanged).
    """
    if english_first(pair.src_lang, pair.trg_lang):
        return pair
    return replace(pair, src=pair.trg, trg=pair.src, src_lang=pair.trg_lang, trg_lang=pair.src_lang)


def english_first(src_lang: str, trg_lang: str) -> bool:
    """Whether a pair of these languages keeps its order as the anchor and positive: the
    first is English, or neither is and the first sorts first (:func:`orient_english`)."""
    return src_lang == ENGLISH or (trg_lang != ENGLISH and src_lang <= trg_lang)


def bitext_row(pair: RawPair, src: str, trg: str) -> dict[str, Any]:
    """The ``schemas/bitext.v1.json`` row of ``pair`` with sides ``src`` and ``trg`` (its
    texts after cleaning), oriented as :func:`orient_english` orients ``pair``.

    Args:
        pair: the pair as read (its languages and dataset).
        src: the text of its first side, as it goes into the row.
        trg: the text of its second side.
    """
    if english_first(pair.src_lang, pair.trg_lang):
        anchor, positive, anchor_lang, positive_lang = src, trg, pair.src_lang, pair.trg_lang
    else:
        anchor, positive, anchor_lang, positive_lang = trg, src, pair.trg_lang, pair.src_lang
    return {
        "anchor": anchor,
        "positive": positive,
        "anchor_lang": anchor_lang,
        "positive_lang": positive_lang,
        "dataset": pair.dataset,
    }

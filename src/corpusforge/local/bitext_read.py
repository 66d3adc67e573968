"""Ranges and blocks of read units -> raw pairs by column, read in a filter worker.

The worker side of :mod:`corpusforge.local.bitext_plan`: a worker reads its range (or the
bytes its block carries) and gives the same pairs, skips and dead letters, with the same
origins, as the readers of :mod:`corpusforge.sources.opus` (:func:`read_range`); what it
read besides pairs goes back to be counted (:class:`RangeRead`, :func:`tally`), and a unit
that gave no pair gets its ``read_no_records`` note once all its ranges are back
(:class:`UnitTallies`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from corpusforge.local.bitext_plan import (
    MosesBlock,
    MosesTask,
    Range,
    TsvBlock,
    TsvRange,
    Unit,
    as_read,
)
from corpusforge.pairing.columns import RawPairs
from corpusforge.sources.opus.formats import (
    OpusInput,
    no_records_letter,
)
from corpusforge.sources.opus.moses import pair_lines
from corpusforge.sources.opus.records import (
    DeadLetter,
    Origin,
    RawPair,
    Skipped,
    SourceItem,
    SourceReason,
)
from corpusforge.sources.opus.streams import (
    MAX_LINE_BYTES,
    LineTooLong,
    decode_line,
    file_name,
)
from corpusforge.sources.opus.tsv import parse_tsv_line

CountKey = tuple[str, ...]


@dataclass
class RangeRead:
    """What a worker read of a range, besides its pairs: for this process to count.

    Attributes:
        unit: the range's unit.
        pairs: raw pairs read.
        counts: the read counts, as :func:`tally` keeps them.
        dead: the dead letters.
    """

    unit: Unit
    pairs: int
    counts: Counter[CountKey] = field(default_factory=Counter)
    dead: list[DeadLetter] = field(default_factory=list)


def read_range(task: Range) -> tuple[RawPairs, RangeRead]:
    """A range's raw pairs by column, and its skips and dead letters counted.

    Raises:
        OSError: a side cannot be read (the file changed since it was planned).
    """
    if isinstance(task, TsvRange | TsvBlock):
        return _read_tsv(task)
    return _read_moses(task)


def _read_moses(task: MosesTask) -> tuple[RawPairs, RangeRead]:
    """:func:`read_range` of a Moses range.

    Each side is decoded whole: when both decode and hold no line over the limit, the
    lines whose sides are both non-blank (after line 1) are pairs as they are, and only
    the others go through :func:`~corpusforge.sources.opus.moses.pair_lines`; else every
    line is decoded alone (:func:`_line_by_line`).
    """
    unit = task.unit
    if isinstance(task, MosesBlock):
        src_data, trg_data = task.src, task.trg
    else:
        src_data = _bytes(unit.input.uris[0], *task.src)
        trg_data = _bytes(unit.input.uris[1], *task.trg)
    read = RangeRead(unit, 0)
    src: list[str] = []
    trg: list[str] = []
    line_nos: list[int] = []
    texts = _decoded(src_data, trg_data)
    if texts is None:
        _line_by_line(task, src_data, trg_data, (src, trg, line_nos), read)
    else:
        src_texts, trg_texts = texts
        first = task.first_line
        line_nos = list(range(first, first + len(src_texts)))
        if first > 1 and all(src_texts) and all(trg_texts):
            src, trg = src_texts, trg_texts
        else:
            odd = [
                i for i, pair in enumerate(zip(src_texts, trg_texts, strict=True)) if not all(pair)
            ]
            if first == 1 and odd[:1] != [0]:
                odd.insert(0, 0)  # line 1 may start with a byte-order mark
            src, trg, line_nos = _with_odd_lines(
                task, (src_data, trg_data), (src_texts, trg_texts), odd, read
            )
    n = len(src)
    read.pairs = n
    read.counts[("read", "records")] += n
    origin_file = file_name(unit.input.uris[0])
    pairs = RawPairs(
        src,
        trg,
        [unit.src_lang] * n,
        [unit.trg_lang] * n,
        [unit.dataset] * n,
        [origin_file] * n,
        [unit.member] * n,
        line_nos,
        [0] * n,
        [None] * n,
    )
    return pairs, read


Columns = tuple[list[str], list[str], list[int]]
"""Raw pairs' first side, second side and line numbers."""


def _bytes(path: str, start: int, end: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


def _decoded(src_data: bytes, trg_data: bytes) -> tuple[list[str], list[str]] | None:
    """Both sides' lines, decoded and stripped; ``None`` when a side does not decode or
    might hold a line over the limit."""
    if max(len(src_data), len(trg_data)) > MAX_LINE_BYTES:
        return None
    try:
        return _stripped(src_data.decode("utf-8")), _stripped(trg_data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _stripped(text: str) -> list[str]:
    """The lines of a range's decoded text, each stripped (as ``pair_lines`` strips)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [line.strip() for line in lines]


def _split(data: bytes) -> tuple[list[bytes], bool]:
    """A range's lines split on ``\\n`` only, without it; and whether the last ended with one."""
    lines = data.split(b"\n")
    closed = data.endswith(b"\n")
    if closed:
        lines.pop()
    return lines, closed


def _with_odd_lines(
    task: MosesTask,
    data: tuple[bytes, bytes],
    texts: tuple[list[str], list[str]],
    odd: list[int],
    read: RangeRead,
) -> Columns:
    """The pairs of a decoded range, the ``odd`` lines (a blank side, line 1) read as the
    reader reads them."""
    (src_lines, src_closed), (trg_lines, trg_closed) = _split(data[0]), _split(data[1])
    src_texts, trg_texts = texts
    src: list[str] = []
    trg: list[str] = []
    line_nos: list[int] = []
    start = 0
    for i in [*odd, len(src_texts)]:
        src += src_texts[start:i]
        trg += trg_texts[start:i]
        line_nos += range(task.first_line + start, task.first_line + i)
        if i < len(src_texts):
            a = as_read(src_lines[i], i + 1 < len(src_lines) or src_closed)
            b = as_read(trg_lines[i], i + 1 < len(trg_lines) or trg_closed)
            _read_line(task, task.first_line + i, a, b, (src, trg, line_nos), read)
        start = i + 1
    return src, trg, line_nos


def _line_by_line(
    task: MosesTask, src_data: bytes, trg_data: bytes, columns: Columns, read: RangeRead
) -> None:
    """A range with bad UTF-8 or a line over the limit somewhere: each line decoded alone,
    into ``columns``."""
    (src_lines, src_closed), (trg_lines, trg_closed) = _split(src_data), _split(trg_data)
    src, trg, line_nos = columns
    last = task.first_line + len(src_lines) - 1
    for line_no, a, b in zip(range(task.first_line, last + 1), src_lines, trg_lines, strict=True):
        # the common line: both sides decode and neither is blank (pair_lines' own test)
        if line_no > 1 and max(len(a), len(b)) <= MAX_LINE_BYTES:
            try:
                s, t = a.decode("utf-8").strip(), b.decode("utf-8").strip()
            except UnicodeDecodeError:
                pass
            else:
                if s and t:
                    src.append(s)
                    trg.append(t)
                    line_nos.append(line_no)
                    continue
        ended = line_no < last
        a_read = as_read(a, ended or src_closed)
        b_read = as_read(b, ended or trg_closed)
        _read_line(task, line_no, a_read, b_read, columns, read)


def _read_line(
    task: MosesTask,
    line_no: int,
    a: bytes | LineTooLong,
    b: bytes | LineTooLong,
    columns: Columns,
    read: RangeRead,
) -> None:
    """One line of both sides, as ``streams.iter_lines`` gives it, through ``pair_lines``:
    a pair into ``columns``, or a skip or dead letter counted in ``read``."""
    unit = task.unit
    items = pair_lines(
        [a],
        [b],
        src_lang=unit.src_lang,
        trg_lang=unit.trg_lang,
        dataset=unit.dataset,
        origin_file=file_name(unit.input.uris[0]),
        origin_member=unit.member,
        first_line=line_no,
    )
    for item in items:
        if isinstance(item, RawPair):
            columns[0].append(item.src)
            columns[1].append(item.trg)
            columns[2].append(line_no)
        else:
            dead = tally(item, read.counts)
            if dead is not None:
                read.dead.append(dead)


def tally(record: DeadLetter | Skipped, counts: Counter[CountKey]) -> DeadLetter | None:
    """Count a skip or a dead letter as the manifest counts them; the dead letter, to be
    written."""
    if isinstance(record, Skipped):
        counts[("skip", str(record.reason))] += 1
        counts[("read", "records")] += 1
        return None
    counts[("dead", record.reason)] += 1
    counts[("read", "records")] += record.records
    counts[("read", "dead_letter_lines")] += record.records
    return record


@dataclass
class UnitTallies:
    """The pairs and problems of each unit read by ranges, for its ``read_no_records``
    note: a unit that gave no pair (all its lines blank or dead-lettered) gets one, as
    :func:`~corpusforge.sources.opus.formats.read_opus` gives it."""

    pairs: Counter[OpusInput] = field(default_factory=Counter)
    problems: dict[OpusInput, Counter[str]] = field(default_factory=dict)

    def add(self, read: RangeRead) -> None:
        """Count a range's pairs and problems (by read unit: a zip's member pairs are one)."""
        self.pairs[read.unit.input] += read.pairs
        problems = self.problems.setdefault(read.unit.input, Counter())
        for key, n in read.counts.items():
            if key[0] in ("skip", "dead"):
                problems[key[1]] += n

    def notes(self) -> Iterator[DeadLetter]:
        """The ``read_no_records`` note of each unit that gave no pair."""
        for unit, problems in self.problems.items():
            if not self.pairs[unit]:
                yield no_records_letter(unit, problems)


def _read_tsv(task: TsvRange | TsvBlock) -> tuple[RawPairs, RangeRead]:
    """:func:`read_range` of a TSV range or block: each line as ``read_tsv`` reads it once
    the layout is known (:func:`~corpusforge.sources.opus.tsv.parse_tsv_line`)."""
    unit = task.unit
    origin_file = file_name(unit.input.uris[0])
    data = task.data if isinstance(task, TsvBlock) else _bytes(unit.input.uris[0], *task.span)
    lines, closed = _split(data)
    read = RangeRead(unit, 0)
    pairs: list[RawPair] = []
    for i, raw in enumerate(lines):
        origin = Origin(origin_file, None, task.first_line + i)
        line = as_read(raw, i + 1 < len(lines) or closed)
        if isinstance(line, LineTooLong):
            items: Iterator[SourceItem] = iter(
                [DeadLetter.line_too_long(origin, line.head, line.limit)]
            )
        else:
            try:
                text = decode_line(line, origin.line)
            except UnicodeDecodeError as exc:
                items = iter(
                    [DeadLetter.of(SourceReason.READ_DECODE_ERROR, origin, str(exc), line)]
                )
            else:
                items = parse_tsv_line(
                    text,
                    unit.layout,
                    origin,
                    dataset=unit.dataset,
                    src_lang=unit.src_lang,
                    trg_lang=unit.trg_lang,
                )
        for item in items:
            if isinstance(item, RawPair):
                pairs.append(item)
            else:
                dead = tally(item, read.counts)
                if dead is not None:
                    read.dead.append(dead)
    read.pairs = len(pairs)
    read.counts[("read", "records")] += len(pairs)
    return RawPairs.of(pairs), read
